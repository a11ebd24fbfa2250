"""Shape functions: views (``view``, ``permute``, ``expand``...), ``reshape``, joins and copies.

The composite functions here decompose the way PyTorch's do, so the dispatcher sees the same
ops: ``reshape`` is ``view`` when the strides allow it and ``clone`` + ``_unsafe_view``
otherwise; ``flatten``/``unflatten`` are views; ``narrow`` is ``slice``; ``chunk`` is ``split``;
``contiguous`` is a ``clone`` only when the tensor is not already contiguous; ``to`` is
``_to_copy`` only when something changes.
"""

from __future__ import annotations

from minitorch_nn import _dtype as dt
from minitorch_nn._arg_parser import Param, parse, parse_overloads
from minitorch_nn._C import Size, TensorBase, is_contiguous_strides
from minitorch_nn._dispatch import python_dispatch as _python_dispatch
from minitorch_nn._device import canonical
from minitorch_nn._functions._out import writes_out
from minitorch_nn._ops import aten
from minitorch_nn._shape import infer_size, normalize_size, wrap_dim
from minitorch_nn.backends.views import compute_view_strides
from minitorch_nn.overrides import public


# The signatures PyTorch's argument parser checks calls against (``_arg_parser.py``): methods
# without ``self``, functions with ``input``.
_INPUT = Param("input", "Tensor")
_SIZE_METHODS = {name: [Param(arg, "int[]")] for name, arg in
                 (("reshape", "shape"), ("permute", "dims"), ("repeat", "repeats"), ("flip", "dims"))}
_SIZE_METHODS["expand"] = [Param("size", "int[]"), Param("implicit", "bool", False, keyword_only=True)]
_VIEW_SIGNATURES = ([Param("dtype", "dtype")], [Param("size", "int[]")])
_SIZE_LISTS = (tuple, list, Size)


def size_method_args(name, args, kwargs):
    """The list of ints of ``x.reshape(2, 8)``, ``x.reshape((2, 8))``, ``x.reshape(shape=(2, 8))``
    (and of ``permute``, ``repeat``, ``flip``; ``expand`` also returns ``implicit``), or
    PyTorch's TypeError for any other form."""
    if not kwargs and args:
        sizes = args[0] if len(args) == 1 and type(args[0]) in _SIZE_LISTS else args
        if all(type(s) is int for s in sizes):   # the usual calls, without the parser
            return list(sizes) if name != "expand" else (list(sizes), False)
    values = parse(name, _SIZE_METHODS[name], args, kwargs)
    return values[0] if name != "expand" else values


def view_method_args(args, kwargs):
    """``x.view(2, 8)``, ``x.view((2, 8))``, ``x.view(size=...)``: ``(sizes, None)``;
    ``x.view(dtype)``, ``x.view(dtype=...)``: ``(None, dtype)``; else PyTorch's TypeError."""
    which, values = parse_overloads("view", _VIEW_SIGNATURES, args, kwargs)
    return (None, values[0]) if which == 0 else (values[0], None)


def _function_size_arg(name, arg, args, kwargs):
    """``(input, list of ints)`` of ``torch.reshape(input, shape)`` and the like, whose list
    must be one argument (``torch.reshape(x, 2, 8)`` is refused, as by PyTorch)."""
    if not kwargs and len(args) == 2 and isinstance(args[0], TensorBase) and type(args[1]) in _SIZE_LISTS \
            and all(type(s) is int for s in args[1]):
        return args[0], list(args[1])
    return parse(name, [_INPUT, Param(arg, "int[]")], args, kwargs)


@public
def reshape(*args, **kwargs):
    """``reshape(input, shape)``: same data in another shape, a view when possible, else a copy."""
    input, shape = _function_size_arg("reshape", "shape", args, kwargs)
    return _reshape(input, shape)


def _reshape(input, shape):
    """``reshape``'s body (``shape`` a list or tuple of ints); also ``Tensor.reshape``'s."""
    shape = normalize_size((shape,), "reshape", "shape")
    impl = input._impl
    new = infer_size(shape, input.numel())
    # a row-major tensor can always be viewed as another shape; other layouts have to be asked
    if is_contiguous_strides(impl.sizes, impl.strides):
        return aten.view.default(input, list(shape))
    strides = compute_view_strides(list(impl.sizes), list(impl.strides), list(new))
    if strides is not None:
        # PyTorch names the view of a non-contiguous tensor ``_reshape_alias`` (ReshapeAliasBackward0),
        # except when a dispatch mode or a __torch_dispatch__ subclass would see it: then ``view``
        if _python_dispatch._modes or type(input) in _python_dispatch._classes:
            return aten.view.default(input, list(shape))
        return aten._reshape_alias.default(input, list(new), list(strides))
    return aten._unsafe_view.default(aten.clone.default(input, memory_format=dt.contiguous_format), list(shape))


@public
def flatten(input, start_dim=0, end_dim=-1):
    if input.dim() == 0:
        return _reshape(input, (1,))
    s, e = wrap_dim(start_dim, input.dim()), wrap_dim(end_dim, input.dim())
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    sizes = list(input.shape)
    n = 1
    for k in sizes[s:e + 1]:
        n *= k
    return _reshape(input, sizes[:s] + [n] + sizes[e + 1:])


@public
def unflatten(input, dim, sizes):
    d = wrap_dim(dim, input.dim())
    shape = list(input.shape)
    inner = infer_size(sizes, shape[d]) if -1 in sizes else tuple(sizes)
    prod = 1
    for k in inner:
        prod *= k
    if prod != shape[d]:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} ({shape[d]}) in the input tensor"
        )
    return aten.view.default(input, shape[:d] + list(inner) + shape[d + 1:])


@public
def permute(*args, **kwargs):
    """``permute(input, dims)``: the dims of ``input`` in another order (a view)."""
    input, dims = _function_size_arg("permute", "dims", args, kwargs)
    return aten.permute.default(input, dims)


_TRANSPOSE = [Param("dim0", "int"), Param("dim1", "int")]


@public
def transpose(*args, **kwargs):
    """``transpose(input, dim0, dim1)``: ``input`` with two dims swapped (a view)."""
    if len(args) == 3 and not kwargs and type(args[1]) is int and type(args[2]) is int:
        return aten.transpose.int(*args)
    return aten.transpose.int(*parse("transpose", [_INPUT] + _TRANSPOSE, args, kwargs))


def _transpose_method(self, *args, **kwargs):
    if len(args) == 2 and not kwargs and type(args[0]) is int and type(args[1]) is int:
        return aten.transpose.int(self, *args)
    return aten.transpose.int(self, *parse("transpose", _TRANSPOSE, args, kwargs))


transpose.__method_impl__ = _transpose_method


swapaxes = swapdims = transpose


@public
def t(input):
    return aten.t.default(input)


@public
def movedim(input, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    n = input.dim()
    src = [wrap_dim(s, n) for s in src]
    dst = [wrap_dim(d, n) for d in dst]
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    order = [o if o is not None else next(rest) for o in order]
    return aten.permute.default(input, order)


moveaxis = movedim


_UNSQUEEZE = [Param("dim", "int")]


@public
def unsqueeze(*args, **kwargs):
    """``unsqueeze(input, dim)``: ``input`` with a new dim of size 1 at ``dim`` (a view)."""
    if len(args) == 2 and not kwargs and type(args[1]) is int:
        return aten.unsqueeze.default(*args)
    return aten.unsqueeze.default(*parse("unsqueeze", [_INPUT] + _UNSQUEEZE, args, kwargs))


def _unsqueeze_method(self, *args, **kwargs):
    if len(args) == 1 and not kwargs and type(args[0]) is int:
        return aten.unsqueeze.default(self, args[0])
    return aten.unsqueeze.default(self, *parse("unsqueeze", _UNSQUEEZE, args, kwargs))


unsqueeze.__method_impl__ = _unsqueeze_method

_SQUEEZE = ([], [Param("dim", "int")], [Param("dim", "int[]")])
_SQUEEZE_FUNCTION = tuple([_INPUT] + params for params in _SQUEEZE)


def _squeeze(input, which, values):
    if which == 0:
        return aten.squeeze.default(input)
    return aten.squeeze.dim(input, values[0]) if which == 1 else aten.squeeze.dims(input, values[0])


@public
def squeeze(*args, **kwargs):
    """``squeeze(input)``, ``squeeze(input, dim)``, ``squeeze(input, dims)``: ``input`` without
    its dims of size 1 (all of them, or those of ``dim``/``dims`` that have size 1; a view)."""
    if not kwargs and 1 <= len(args) <= 2 and (len(args) == 1 or type(args[1]) is int):
        return aten.squeeze.default(args[0]) if len(args) == 1 else aten.squeeze.dim(*args)
    which, values = parse_overloads("squeeze", _SQUEEZE_FUNCTION, args, kwargs)
    return _squeeze(values[0], which, values[1:])


def _squeeze_method(self, *args, **kwargs):
    if not kwargs and len(args) <= 1 and (not args or type(args[0]) is int):
        return aten.squeeze.dim(self, args[0]) if args else aten.squeeze.default(self)
    which, values = parse_overloads("squeeze", _SQUEEZE, args, kwargs)
    return _squeeze(self, which, values)


squeeze.__method_impl__ = _squeeze_method


@public
def narrow(input, dim, start, length):
    if input.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.dim())
    n = input.shape[d]
    if isinstance(start, TensorBase):
        start = start.item()
    if start < 0:
        start += n
    if start < 0 or start + length > n or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return aten.slice.Tensor(input, dim, start, start + length)


_SELECT = [Param("dim", "int"), Param("index", "int")]


@public
def select(input, dim, index):
    """The slice at ``index`` along ``dim``, with that dim removed (a view; ``x[:, i]`` for dim 1)."""
    if type(dim) is not int or type(index) is not int:
        input, dim, index = parse("select", [_INPUT] + _SELECT, (input, dim, index), {})
    if input.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.dim())
    n = input.shape[d]
    if isinstance(index, int) and not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}")
    return aten.select.int(input, dim, index)


def _select_method(self, *args, **kwargs):
    if len(args) != 2 or kwargs or type(args[0]) is not int or type(args[1]) is not int:
        args = parse("select", _SELECT, args, kwargs)
    return select.__wrapped_impl__(self, *args)


select.__method_impl__ = _select_method


@public
def unfold(input, dimension, size, step):
    """Sliding windows of ``size`` with ``step`` along ``dimension``, as a new last dim (``Tensor.unfold``)."""
    return aten.unfold.default(input, dimension, size, step)


@public
def split(tensor, split_size_or_sections, dim=0):
    if isinstance(split_size_or_sections, int):
        return tuple(aten.split.Tensor(tensor, split_size_or_sections, dim))
    return tuple(aten.split_with_sizes.default(tensor, list(split_size_or_sections), dim))


def _split_method(self, split_size, dim=0):
    # (the method names its argument ``split_size``, the function ``split_size_or_sections``)
    return split.__wrapped_impl__(self, split_size, dim)


split.__method_impl__ = _split_method


@public
def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[wrap_dim(dim, input.dim())]
    size = max((n + chunks - 1) // chunks, 1) if n else 0
    if size == 0:
        return tuple(aten.split_with_sizes.default(input, [0] * chunks, dim))
    return tuple(aten.split.Tensor(input, size, dim))


@public
def unbind(input, dim=0):
    return tuple(aten.unbind.int(input, dim) if dim != 0 else aten.unbind.int(input))


@public
def tensor_split(input, indices_or_sections, dim=0):
    d = wrap_dim(dim, input.dim())
    n = input.shape[d]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
    else:
        bounds = [0] + [min(max(i, 0), n) for i in indices_or_sections] + [n]
        sizes = [max(b - a, 0) for a, b in zip(bounds, bounds[1:])]
    out, start = [], 0
    for s in sizes:
        out.append(aten.slice.Tensor(input, d, start, start + s))
        start += s
    return tuple(out)


@public
def expand_as(input, other):
    return aten.expand.default(input, list(other.shape))


@public
def broadcast_to(input, size):
    return aten.expand.default(input, list(size))


@public
def broadcast_tensors(*tensors):
    from minitorch_nn._shape import broadcast_shapes

    shape = list(broadcast_shapes(*[tuple(t.shape) for t in tensors]))
    # a tensor that already has the shape is returned itself, not expanded (PyTorch's expand_outplace)
    return tuple(t if list(t._impl.sizes) == shape else aten.expand.default(t, shape) for t in tensors)


@public
@writes_out("cat")
def cat(tensors, dim=0, *, out=None):
    """Join tensors along an existing dimension."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"cat() received an invalid combination of arguments - got ({type(tensors).__name__}), expected a tuple or list of Tensors")
    return aten.cat.default(list(tensors), dim) if dim != 0 else aten.cat.default(list(tensors))


concat = concatenate = cat


@public
@writes_out("cat")
def stack(tensors, dim=0, *, out=None):
    """Join tensors along a new dimension."""
    return aten.stack.default(list(tensors), dim) if dim != 0 else aten.stack.default(list(tensors))


@public
def hstack(tensors, *, out=None):
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1, out=out)


@public
def vstack(tensors, *, out=None):
    return cat([t.unsqueeze(0) if t.dim() == 1 else t for t in tensors], 0, out=out)


@public
def clone(input, *, memory_format=None):
    if memory_format is None:
        return aten.clone.default(input)
    return aten.clone.default(input, memory_format=memory_format)


@public
def detach(input):
    return aten.detach.default(input)


@public
def as_strided(input, size, stride, storage_offset=None):
    args = [input, list(size), list(stride)]
    if storage_offset is not None:
        args.append(storage_offset)
    return aten.as_strided.default(*args)


@public
def contiguous(input, memory_format=None):
    if memory_format is dt.channels_last or memory_format is dt.channels_last_3d:
        from minitorch_nn.backends.layout import is_channels_last, is_channels_last_3d

        test = is_channels_last if memory_format is dt.channels_last else is_channels_last_3d
        if test(tuple(input.shape), input.stride()):
            return input
        return aten.clone.default(input, memory_format=memory_format)  # (raises for the wrong rank)
    if input.is_contiguous():
        return input
    return aten.clone.default(input, memory_format=dt.contiguous_format)


@public
def flip(*args, **kwargs):
    """``flip(input, dims)``: ``input`` with the order of its elements reversed along ``dims``."""
    input, dims = _function_size_arg("flip", "dims", args, kwargs)
    return aten.flip.default(input, dims)


@public
def roll(input, shifts, dims=None):
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [] if dims is None else ([dims] if isinstance(dims, int) else list(dims))
    return aten.roll.default(input, shifts, dims)


@public
@writes_out("exact", check_overlap=False)
def tril(input, diagonal=0, *, out=None):
    return aten.tril.default(input, diagonal)


@public
@writes_out("exact", check_overlap=False)
def triu(input, diagonal=0, *, out=None):
    return aten.triu.default(input, diagonal)


@public
def diagonal(input, offset=0, dim1=0, dim2=1):
    return aten.diagonal.default(input, offset, dim1, dim2)


@public
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    return aten.diag_embed.default(input, offset, dim1, dim2)


_PYTHON_TYPE_DTYPES = {int: dt.int64, float: dt.float64, bool: dt.bool}


def parse_to(self, *args, memory_format=None, **kwargs):
    """Sort out ``Tensor.to``'s many forms into (dtype, device, copy); ``memory_format`` is read by ``to``."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected keyword {next(iter(kwargs))}")
    if type(dtype) is type and dtype in (int, float, bool):
        dtype = _PYTHON_TYPE_DTYPES[dtype]
    for a in args:
        if isinstance(a, dt.dtype):
            dtype = a
        elif type(a) is type and a in (int, float, bool):   # PyTorch reads Python types as dtypes: int64, float64, bool
            dtype = _PYTHON_TYPE_DTYPES[a]
        elif isinstance(a, TensorBase):
            dtype, device = a.dtype, a.device
        elif isinstance(a, bool):
            continue
        elif a is not None:
            device = a
    return dtype, (canonical(device) if device is not None else None), copy


@public
def to(self, *args, memory_format=None, **kwargs):
    """The tensor with another dtype, device and/or memory format; ``self`` itself when nothing
    changes (as in PyTorch, a memory format counts as unchanged when it is the one the strides
    suggest, so ``x.t().to(memory_format=torch.contiguous_format)`` is ``x.t()`` itself)."""
    from minitorch_nn.backends.layout import suggest_memory_format

    dtype, device, copy = parse_to(self, *args, **kwargs)
    same_dtype = dtype is None or dtype is self.dtype
    same_device = device is None or device == self.device
    same_format = memory_format in (None, dt.preserve_format) or suggest_memory_format(self) is memory_format
    if same_dtype and same_device and not copy and same_format:
        return self
    kw = {} if memory_format in (None, dt.preserve_format) else {"memory_format": memory_format}
    if not same_dtype or (dtype is not None and copy):
        kw["dtype"] = dtype
    if not same_device:
        kw["device"] = device
    return aten._to_copy.default(self, **kw)
