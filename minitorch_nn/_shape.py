"""Shape arithmetic shared by every backend: dims, broadcasting, ``-1`` in view sizes.

Mirrors the helpers PyTorch keeps in ``c10/core/WrapDimMinimal.h`` and
``aten/src/ATen/ExpandUtils.h``, with PyTorch's error messages.
"""

from __future__ import annotations

import operator


def wrap_dim(dim, ndim: int) -> int:
    """Turn a possibly negative ``dim`` into an index in ``range(ndim)`` (0-d tensors accept 0/-1)."""
    if not isinstance(dim, int):
        dim = dim.__index__()
    n = ndim if ndim > 0 else 1
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def wrap_dims(dims, ndim: int) -> list:
    out = [wrap_dim(d, ndim) for d in dims]
    seen = set()
    for d in out:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return out


def broadcast_shapes(*shapes) -> tuple:
    """The shape that all ``shapes`` broadcast to, or PyTorch's size-mismatch error.

    Shapes are combined pairwise from the left, as TensorIterator does (``infer_size``), so the
    dimension named in the error counts within the two shapes being combined at that point."""
    if len(shapes) == 2 and tuple(shapes[0]) == tuple(shapes[1]):
        return tuple(shapes[0])  # the common case, kept cheap
    out = ()
    for shape in shapes:
        out = _infer_size(out, tuple(shape))
    return out


def _infer_size(a: tuple, b: tuple) -> tuple:
    """The shape two shapes broadcast to (PyTorch's ``infer_size``).

    Rules:

    * the shapes are aligned at their last dim; the shorter one is padded with 1s on the left,
      so the result has ``max(len(a), len(b))`` dims;
    * in each dim the sizes must be equal, or one of them must be 1 (it stretches to the other);
      a size of 0 broadcasts only with 0 or 1;
    * otherwise raise ``RuntimeError("The size of tensor a (A) must match the size of tensor b (B)
      at non-singleton dimension D")`` where ``D`` is the dim's index in the *result*; when several
      dims mismatch, report the last one (PyTorch checks from the last dim down).

    >>> _infer_size((3, 1), (4,))
    (3, 4)
    """
    # BEGIN SOLUTION broadcast-shapes
    ndim = max(len(a), len(b))
    out = [1] * ndim
    # from the last dim down, as PyTorch's infer_size, so the first mismatch reported is the innermost
    for i in range(ndim - 1, -1, -1):
        offset = ndim - 1 - i
        size_a = a[len(a) - 1 - offset] if offset < len(a) else 1
        size_b = b[len(b) - 1 - offset] if offset < len(b) else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise RuntimeError(
                f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) at "
                f"non-singleton dimension {i}"
            )
        out[i] = size_b if size_a == 1 else size_a
    return tuple(out)
    # END SOLUTION


def check_size_nonnegative(size, message=None, itemsize=1) -> None:
    """PyTorch's check in every factory (``at::empty``): no negative sizes; ``message`` replaces the
    words for the kernels that word it their own way (cpu ``zeros``). Then the storage's byte count
    (``itemsize`` bytes an element) must fit in int64, as ``computeStorageNbytesContiguous`` checks:
    sizes whose product wraps around would otherwise make a tensor that claims 0 elements."""
    for s in size:
        if s < 0:
            raise RuntimeError(message or f"Trying to create tensor with negative dimension {s}: {list(size)}")
    nbytes = itemsize
    for s in size:
        nbytes *= s
    if nbytes >= 2**63 and 0 not in size:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={[int(s) for s in size]}")


def broadcast_shapes_public(*shapes):
    """``torch.broadcast_shapes``: like :func:`broadcast_shapes`, but an int counts as a 1-D shape,
    the result is a ``torch.Size``, and a mismatch gets the Python-level message of
    ``torch.broadcast_shapes`` (which names the argument), not the one the ops give."""
    from minitorch_nn._C import Size

    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    common = [1] * max((len(s) for s in shapes), default=0)
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            elif shape[idx] != 1 and common[idx] != shape[idx]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! Mismatching argument "
                    f"at index {arg_idx} had {shape}; but expected shape should be broadcastable to {common}"
                )
    return Size(common)


def infer_size(size, numel: int) -> tuple:
    """Resolve one ``-1`` in a view/reshape size so that the element count is ``numel``."""
    size = list(size)
    infer_at = None
    known = 1
    for i, s in enumerate(size):
        if s == -1:
            if infer_at is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer_at = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s}")
        else:
            known *= s
    if infer_at is not None:
        if known == 0:
            raise RuntimeError(
                f"cannot reshape tensor of {numel} elements into shape {list_str(size)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous"
            )
        if numel % known == 0:
            size[infer_at] = numel // known
            return tuple(size)
    elif known == numel:
        return tuple(size)
    raise RuntimeError(f"shape '{list_str(size)}' is invalid for input of size {numel}")


def list_str(size) -> str:
    return "[" + ", ".join(str(s) for s in size) + "]"


def normalize_size(args, fn_name=None, arg="size", overloads=None, position=1) -> tuple:
    """Accept ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(torch.Size(...))`` alike.

    Mirrors the int-list rules of PyTorch's Python argument parser, with its messages: ``fn_name``
    and ``arg`` name the function and its parameter (``zeros(): argument 'size' ...``). Sizes are
    ints or anything with ``__index__`` (a numpy integer, a 0-d integer tensor). The parser first
    decides which form it was given -- a single int, a sequence whose first item is an int (not a
    bool), or several arguments of which the first is an int -- and only then converts the other
    items, where a bool passes as 0/1. ``overloads``, for a function with several signatures
    (``view`` also takes a dtype), are the signatures PyTorch lists when no form fits.
    ``position`` is where the argument was passed (None: by keyword), for the messages.
    """
    prefix = f"{fn_name}(): " if fn_name else ""
    where = f" (position {position})" if position is not None else ""

    def unrecognised(message):
        # PyTorch gives the one signature's own message when only one could take these arguments
        if overloads is None or (len(args) == 1 and sum(map(_takes_one_argument, overloads)) == 1):
            return TypeError(message)
        return TypeError(_invalid_combination(fn_name, args, overloads))

    if len(args) == 1:
        first = args[0]
        if isinstance(first, (tuple, list)):
            items = first
            if items and not _is_size(items[0]):
                raise unrecognised(
                    f"{prefix}argument '{arg}'{where} must be tuple of ints, but found element of type "
                    f"{_type_name(items[0])} at pos 0"
                )
        elif _is_size(first):
            items = (first,)
        else:
            raise unrecognised(f"{prefix}argument '{arg}'{where} must be tuple of ints, not {_type_name(first)}")
    else:
        if args and not _is_size(args[0]):
            raise unrecognised(f"{fn_name or 'the function'}() takes 1 positional argument but {len(args)} were given")
        items = args
    out = []
    for item in items:
        try:
            out.append(operator.index(item))
        except TypeError:
            raise TypeError(
                f"{prefix}argument '{arg}' failed to unpack the object at pos {len(out) + 1} with error "
                f'"type must be tuple of ints,but got {_type_name(item)}"'
            ) from None
        if not -(2**63) <= out[-1] < 2**63:   # PyTorch reads each size into an int64
            raise TypeError(
                f"{prefix}argument '{arg}' failed to unpack the object at pos {len(out)} with error "
                '"Overflow when unpacking long long"'
            )
    return tuple(out)


def _is_size(x) -> bool:
    """An int for a size (not a bool): an int, or anything whose ``__index__`` gives one."""
    if type(x) is int:  # the usual case, answered without a trial __index__
        return True
    if isinstance(x, bool):
        return False
    try:
        operator.index(x)
    except TypeError:
        return False
    return True


def _type_name(x) -> str:
    """A value's type as PyTorch's messages write it: ``float``, ``Tensor``, ``numpy.float64``."""
    t = type(x)
    if t.__module__ == "builtins" or hasattr(x, "_impl"):  # (a tensor is plain ``Tensor``)
        return t.__name__
    if t.__module__.startswith("minitorch_nn") and t.__name__ == "dtype":
        return "torch.dtype"
    return f"{t.__module__.split('.')[0]}.{t.__name__}"


def _takes_one_argument(signature) -> bool:
    """Can this signature be called with one positional argument (no keyword-only one is required)?"""
    _, _, keywords = signature.partition("*, ")
    return all("=" in k for k in keywords.split(", ")) if keywords else True


def _invalid_combination(fn_name, args, overloads) -> str:
    """PyTorch's message when no signature of an overloaded function fits ``args``: each signature,
    and why the argument did not fit the ones that could have taken it (each takes one size)."""
    lines = [f"{fn_name}() received an invalid combination of arguments - got "
             f"({', '.join(_type_name(a) for a in args)}), but expected one of:"]
    for signature in overloads:
        lines.append(f" * ({signature})")
        if len(args) == 1 and _takes_one_argument(signature):
            lines.append(f"      didn't match because some of the arguments have invalid types: (!{_described(args[0])}!)")
    return "\n".join(lines) + "\n"


def _described(x) -> str:
    """``tuple of (float, int)`` / ``list of [float, int]`` / ``float``: a value's type, with its items'."""
    if isinstance(x, tuple):
        return f"tuple of ({', '.join(_type_name(i) for i in x)})"
    if isinstance(x, list):
        return f"list of [{', '.join(_type_name(i) for i in x)}]"
    return _type_name(x)
