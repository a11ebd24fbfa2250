"""Shape arithmetic shared by every backend: dims, broadcasting, ``-1`` in view sizes.

Mirrors the helpers PyTorch keeps in ``c10/core/WrapDimMinimal.h`` and
``aten/src/ATen/ExpandUtils.h``, with PyTorch's error messages.
"""

from __future__ import annotations


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


def check_size_nonnegative(size, message=None) -> None:
    """PyTorch's check in every factory (``at::empty``): no negative sizes; ``message`` replaces the
    words for the kernels that word it their own way (cpu ``zeros``)."""
    for s in size:
        if s < 0:
            raise RuntimeError(message or f"Trying to create tensor with negative dimension {s}: {list(size)}")


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


def normalize_size(args, fn_name=None) -> tuple:
    """Accept ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(torch.Size(...))`` alike.

    ``fn_name`` names the function in PyTorch's argument-parser errors (``zeros(): argument ...``).
    """
    prefix = f"{fn_name}(): " if fn_name else ""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    elif len(args) == 1 and (isinstance(args[0], bool) or not hasattr(args[0], "__index__")):
        raise TypeError(f"{prefix}argument 'size' (position 1) must be tuple of ints, not {type(args[0]).__name__}")
    out = []
    for a in args:
        if isinstance(a, bool) or not hasattr(a, "__index__"):
            raise TypeError(
                f"{prefix}argument 'size' (position 1) must be tuple of ints, but found element of type "
                f"{type(a).__name__} at pos {len(out)}"
            )
        out.append(a.__index__())
    return tuple(out)
