"""Reductions: ``sum``, ``mean``, ``max``, ``var``, ``norm``, ``softmax``, ... (mirrors ``torch.*``).

PyTorch's Python layer picks the overload from the arguments: ``x.sum()`` is ``aten.sum.default``
and ``x.sum(1)`` is ``aten.sum.dim_IntList`` with ``[1]``; ``x.max()`` returns a tensor while
``x.max(dim)`` returns ``(values, indices)``. These functions make those choices.
"""

from __future__ import annotations

from collections import namedtuple

from minitorch_nn import _dtype as _dt
from minitorch_nn._arg_parser import Param, parse_overloads
from minitorch_nn._C import TensorBase
from minitorch_nn._functions._out import CAST, write_out, write_out_tuple, writes_out, writes_out_reduction, writes_out_tuple
from minitorch_nn._ops import aten
from minitorch_nn.overrides import public

values_indices = namedtuple("values_indices", ["values", "indices"])


class _ReturnTypes:
    """Named tuples like ``torch.return_types.max`` (they print as ``torch.return_types.max(...)``)."""

    def __init__(self):
        self._cache = {}

    def get(self, name):
        if name not in self._cache:
            base = namedtuple(name, ["values", "indices"])

            def __repr__(self, _name=name):
                return f"torch.return_types.{_name}(\nvalues={self.values!r},\nindices={self.indices!r})"

            self._cache[name] = type(name, (base,), {"__repr__": __repr__, "__slots__": ()})
        return self._cache[name]


return_types = _ReturnTypes()


def _dims(dim):
    if dim is None:
        return None
    if isinstance(dim, int):
        return [dim]
    return list(dim)


# ``sum``'s and ``mean``'s two signatures, as PyTorch's argument parser checks them (``_arg_parser.py``);
# the functions also take ``out`` (``torch.sum`` only in its second signature)
def _reduction_signatures(with_input, out_in_first=False):
    head = [Param("input", "Tensor")] if with_input else []
    dtype = Param("dtype", "dtype", None, nullable=True, keyword_only=True)
    out = [Param("out", "Tensor", None, nullable=True, keyword_only=True)] if with_input else []
    return (head + [dtype] + (out if out_in_first else []),
            head + [Param("dim", "int[1]", nullable=True), Param("keepdim", "bool", False), dtype] + out)


_REDUCTION_METHOD = _reduction_signatures(False)
_REDUCTION_FUNCTION = {"sum": _reduction_signatures(True), "mean": _reduction_signatures(True, out_in_first=True)}
_REDUCTION_KEYWORDS = frozenset(("dim", "keepdim", "dtype"))


def _plain_reduction_args(dim, keepdim, dtype) -> bool:
    """The forms that need no parsing: dim None, an int or a list/tuple; keepdim a bool; a dtype."""
    return type(keepdim) is bool and (dim is None or type(dim) in (int, list, tuple)) \
        and (dtype is None or type(dtype) is _dt.dtype)


def _reduction_method(fn, name):
    """``Tensor.sum``/``Tensor.mean``: ``x.sum(1)``, ``x.sum(dim=1, keepdim=True)``, also numpy's
    ``axis``/``keepdims``; any other form gets PyTorch's TypeError."""

    def method(self, *args, **kwargs):
        if len(args) <= 2 and (not kwargs or kwargs.keys() <= _REDUCTION_KEYWORDS) \
                and not (args and "dim" in kwargs) and not (len(args) == 2 and "keepdim" in kwargs) \
                and not ("keepdim" in kwargs and not args and "dim" not in kwargs):
            dim = args[0] if args else kwargs.get("dim")
            keepdim = args[1] if len(args) == 2 else kwargs.get("keepdim", False)
            dtype = kwargs.get("dtype")
            if _plain_reduction_args(dim, keepdim, dtype):
                return fn(self, dim, keepdim, dtype=dtype)
        which, values = parse_overloads(name, _REDUCTION_METHOD, args, kwargs)
        return fn(self, dtype=values[0]) if which == 0 else fn(self, values[0], values[1], dtype=values[2])

    method.__name__ = name
    return method


def _numpy_names(name, input, dim, keepdim, names):
    """``torch.sum(x, axis=1, keepdims=True)``: numpy's names, which PyTorch's parser also takes for
    ``dim``/``keepdim`` (not together with the argument under its own name)."""
    for k in names:
        if k not in ("axis", "keepdims"):
            parse_overloads(name, _REDUCTION_FUNCTION[name], _given(input, dim, keepdim), names)   # PyTorch's error
        if (k == "axis" and dim is not None) or (k == "keepdims" and keepdim is not False):
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
    return names.get("axis", dim), names.get("keepdims", keepdim)


def _check_reduction_function(name, input, dim, keepdim, dtype):
    """``torch.sum(x, 0, 1)`` and the like: PyTorch's TypeError (positions count ``input``; a
    ``keepdim`` left at False counts as not given)."""
    parse_overloads(name, _REDUCTION_FUNCTION[name], _given(input, dim, keepdim),
                    {"dtype": dtype} if dtype is not None else {})


def _given(input, dim, keepdim):
    """The positional arguments a call of ``sum``/``mean`` counts as given (a ``dim`` left at None
    and a ``keepdim`` left at False count as not given)."""
    return (input,) + (() if dim is None and keepdim is False else (dim,) if keepdim is False else (dim, keepdim))


@public
@writes_out_reduction
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None, **numpy_names):
    """Sum of all elements, or along ``dim`` (int or list of ints)."""
    if numpy_names:
        dim, keepdim = _numpy_names("sum", input, dim, keepdim, numpy_names)
    if not _plain_reduction_args(dim, keepdim, dtype):
        _check_reduction_function("sum", input, dim, keepdim, dtype)
    if dtype is None:  # the common calls, without building keyword arguments
        if dim is None:
            return aten.sum.dim_IntList(input, None, True) if keepdim else aten.sum.default(input)
        return aten.sum.dim_IntList(input, _dims(dim), keepdim) if keepdim else aten.sum.dim_IntList(input, _dims(dim))
    kw = {"dtype": dtype}
    if dim is None:
        if keepdim:
            return aten.sum.dim_IntList(input, None, True, **kw)
        return aten.sum.default(input, **kw)
    return aten.sum.dim_IntList(input, _dims(dim), keepdim, **kw) if keepdim else aten.sum.dim_IntList(input, _dims(dim), **kw)


@public
@writes_out("safe", check_overlap=False)
def mean(input, dim=None, keepdim=False, *, dtype=None, out=None, **numpy_names):
    if numpy_names:
        dim, keepdim = _numpy_names("mean", input, dim, keepdim, numpy_names)
    if not _plain_reduction_args(dim, keepdim, dtype):
        _check_reduction_function("mean", input, dim, keepdim, dtype)
    if dtype is None and dim is not None:  # the common x.mean(1), without building keyword arguments
        return aten.mean.dim(input, _dims(dim), keepdim) if keepdim else aten.mean.dim(input, _dims(dim))
    kw = {"dtype": dtype} if dtype is not None else {}
    if dim is None and not keepdim:
        return aten.mean.default(input, **kw)
    return aten.mean.dim(input, _dims(dim), keepdim, **kw) if keepdim else aten.mean.dim(input, _dims(dim), **kw)


@public
@writes_out_reduction
def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    kw = {"dtype": dtype} if dtype is not None else {}
    if dim is None:
        return aten.prod.default(input, **kw)
    return aten.prod.dim_int(input, dim, keepdim, **kw) if keepdim else aten.prod.dim_int(input, dim, **kw)


def _max_min(name, input, dim, keepdim, other):
    packet = getattr(aten, name)
    if isinstance(dim, TensorBase):
        other, dim = dim, None
    if other is not None:
        return (aten.maximum.default if name == "max" else aten.minimum.default)(input, other)
    if dim is None:
        return packet.default(input)
    values, indices = packet.dim(input, dim, keepdim) if keepdim else packet.dim(input, dim)
    return return_types.get(name)(values, indices)


def _max_min_out(name, input, dim, keepdim, other, out):
    # with a dim, out is (values, indices), each of exactly the result's dtype; otherwise one tensor
    inputs = [t for t in (input, dim, other) if isinstance(t, TensorBase)]
    compute = lambda: _max_min(name, input, dim, keepdim, other)  # noqa: E731
    if dim is None or isinstance(dim, TensorBase) or other is not None:
        return write_out(name, out, inputs, compute, CAST["safe"], check_overlap=False)
    return write_out_tuple(name, out, inputs, compute, CAST["exact"], return_types.get(f"{name}_out"))


@public
def max(input, dim=None, keepdim=False, *, out=None, other=None):
    """The largest element; with ``dim``, ``(values, indices)`` along it; with a tensor, ``maximum``."""
    if out is not None:
        return _max_min_out("max", input, dim, keepdim, other, out)
    return _max_min("max", input, dim, keepdim, other)


@public
def min(input, dim=None, keepdim=False, *, out=None, other=None):
    if out is not None:
        return _max_min_out("min", input, dim, keepdim, other, out)
    return _max_min("min", input, dim, keepdim, other)


@public
@writes_out("amax", check_overlap=False)
def amax(input, dim=(), keepdim=False, *, out=None):
    return aten.amax.default(input, _dims(dim) if dim != () else [], keepdim) if keepdim else aten.amax.default(input, _dims(dim) if dim != () else [])


@public
@writes_out("amax", check_overlap=False)
def amin(input, dim=(), keepdim=False, *, out=None):
    return aten.amin.default(input, _dims(dim) if dim != () else [], keepdim) if keepdim else aten.amin.default(input, _dims(dim) if dim != () else [])


@public
@writes_out("exact", check_overlap=False)
def argmax(input, dim=None, keepdim=False, *, out=None):
    if dim is None and not keepdim:
        return aten.argmax.default(input)
    return aten.argmax.default(input, dim, keepdim)


@public
@writes_out("multinomial")
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Sample category indices from each row of ``input`` (1-d, or 2-d: one distribution per row).

    The weights need not sum to one, but must be finite, non-negative and not all zero. Without
    replacement each index appears at most once per row. Like ``argmax``, it maps each row to
    indices over its last dim, hence its place here. On cpu the samples are PyTorch's under the
    same ``manual_seed`` (the kernel in ``backends/cpu/random.py`` follows PyTorch's algorithms
    draw for draw).

    >>> import minitorch_nn as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.multinomial(torch.tensor([0.0, 10.0, 3.0, 0.0]), 2)
    tensor([1, 2])
    """
    if isinstance(num_samples, bool) or not hasattr(num_samples, "__index__"):
        raise TypeError(
            f"multinomial(): argument 'num_samples' (position 2) must be int, not {type(num_samples).__name__}"
        )
    kw = {"generator": generator} if generator is not None else {}
    return aten.multinomial.default(input, num_samples.__index__(), replacement, **kw)


@public
@writes_out("exact", check_overlap=False)
def argmin(input, dim=None, keepdim=False, *, out=None):
    if dim is None and not keepdim:
        return aten.argmin.default(input)
    return aten.argmin.default(input, dim, keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    if unbiased is None:
        return None
    return 1 if unbiased else 0


def _var_args(dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(x, False) means unbiased=False
        unbiased, dim = dim, None
    if dim is not None and unbiased is None and correction is None:
        unbiased = True   # PyTorch's (dim, unbiased=True) signature: the op sees correction=1
    kw = {}
    c = _correction(unbiased, correction)
    if c is not None:
        kw["correction"] = c
    if keepdim:
        kw["keepdim"] = True
    return ([_dims(dim)] if dim is not None else []), kw


@public
@writes_out("safe", check_overlap=False)
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance (Bessel-corrected by default, ``correction=1``)."""
    args, kw = _var_args(dim, unbiased, keepdim, correction)
    return aten.var.correction(input, *args, **kw)


@public
@writes_out("safe", check_overlap=False)
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    args, kw = _var_args(dim, unbiased, keepdim, correction)
    return aten.std.correction(input, *args, **kw)


@public
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    args, kw = _var_args(dim, unbiased, keepdim, correction)
    return aten.var_mean.correction(input, *args, **kw)


@public
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    args, kw = _var_args(dim, unbiased, keepdim, correction)
    return aten.std_mean.correction(input, *args, **kw)


@public
@writes_out("safe", check_overlap=False)
def logsumexp(input, dim, keepdim=False, *, out=None):
    return aten.logsumexp.default(input, _dims(dim), keepdim) if keepdim else aten.logsumexp.default(input, _dims(dim))


@public
@writes_out("bool", check_overlap=False)
def all(input, dim=None, keepdim=False, *, out=None):
    if dim is None:
        return aten.all.default(input)
    return aten.all.dim(input, dim, keepdim)


@public
@writes_out("bool", check_overlap=False)
def any(input, dim=None, keepdim=False, *, out=None):
    if dim is None:
        return aten.any.default(input)
    return aten.any.dim(input, dim, keepdim)


@public
def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """Vector norm over all elements or ``dim`` (``p`` a number, or ``'fro'`` for 2)."""
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        raise NotImplementedError("norm(p='nuc') is not implemented in minitorch_nn")
    if isinstance(p, str):   # (PyTorch treats any other string as a matrix-norm order)
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    if not isinstance(p, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not {type(p).__name__}")
    args = [input]
    if p != 2 or dim is not None or keepdim:
        args.append(p)
    if dim is not None or keepdim:
        args.append(_dims(dim))
    if keepdim:
        args.append(True)
    kw = {"dtype": dtype} if dtype is not None else {}
    if out is not None:  # ``out`` may come by position here (it is the fifth parameter)
        compute = lambda: aten.linalg_vector_norm.default(*args, **kw)  # noqa: E731
        return write_out("norm", out, [input], compute, CAST["exact"], check_overlap=False)
    return aten.linalg_vector_norm.default(*args, **kw)


@public
@writes_out_reduction(check_overlap=True)
def cumsum(input, dim, *, dtype=None, out=None):
    return aten.cumsum.default(input, dim, dtype=dtype) if dtype is not None else aten.cumsum.default(input, dim)


@public
@writes_out_reduction(check_overlap=True)
def cumprod(input, dim, *, dtype=None, out=None):
    return aten.cumprod.default(input, dim, dtype=dtype) if dtype is not None else aten.cumprod.default(input, dim)


@public
@writes_out_tuple(return_types.get("sort_out"))
def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    values, indices = aten.sort.default(input, dim, descending)
    return return_types.get("sort")(values, indices)


@public
@writes_out_tuple(return_types.get("topk_out"))
def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    values, indices = aten.topk.default(input, k, dim, largest, sorted)
    return return_types.get("topk")(values, indices)


@public
def softmax(input, dim, dtype=None, *, _stacklevel=3):
    """exp(x) / sum(exp(x)) along ``dim`` (``aten._softmax``)."""
    if dtype is not None:
        input = input.to(dtype)
    return aten._softmax.default(input, dim, False)


@public
def log_softmax(input, dim, dtype=None, *, _stacklevel=3):
    if dtype is not None:
        input = input.to(dtype)
    return aten._log_softmax.default(input, dim, False)


# the method forms parse their arguments themselves (``_tensor_methods._method`` picks these up)
sum.__method_impl__ = _reduction_method(sum.__wrapped_impl__, "sum")
mean.__method_impl__ = _reduction_method(mean.__wrapped_impl__, "mean")
