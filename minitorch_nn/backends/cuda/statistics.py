"""Statistics built from ``reduction.py``'s kernels: ``prod``, ``var``/``std`` (and ``_mean``),
``logsumexp``, ``linalg_vector_norm``, ``all``/``any``.

Mirrors PyTorch's ``ReduceMomentKernel.cu``, ``ReduceLogicKernel.cu`` and friends by composition,
the way a student would write them on top of a tree reduction and elementwise kernels:

* ``var``: ``mean`` (a sum), then the sum of squared deviations divided by ``count - correction``
  (two sweeps, which is more accurate than ``E[x^2] - E[x]^2``); ``std`` is its square root;
* ``logsumexp``: ``m + log(sum(exp(x - m)))`` with ``m`` the max (so that ``exp`` cannot overflow),
  and ``m = 0`` where the max is infinite;
* ``vector_norm``: ``|x|`` then max / min / count / sum / ``sqrt(sum x^2)`` / ``(sum |x|^p)^(1/p)``;
* ``all``/``any``: the min/max of ``x != 0`` as 0/1 integers.

Cases whose answers and warnings are the subtle part (no degrees of freedom, empty inputs,
integer inputs) take the host path (``fallback.py``), which gives the cpu backend's.
"""

from __future__ import annotations

import math

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn._shape import wrap_dims
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cuda import elementwise as ew
from minitorch_nn.backends.cuda.copy import cast_contiguous
from minitorch_nn.backends.cuda.fallback import host_kernel
from minitorch_nn.backends.cuda.reduction import mean_dim, reduce


def _dims(self, dim):
    """The reduced dims as a sorted list (all of them for None or [])."""
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(self.dim()))
    return sorted(wrap_dims([dim] if isinstance(dim, int) else list(dim), max(self.dim(), 1)))


def _count(self, dims):
    n = 1
    for d in dims:
        n *= self.shape[d]
    return n


# -- prod --------------------------------------------------------------------------------------------


def _prod_dtype(self, dtype):
    return dtype if dtype is not None else (self.dtype if self.dtype.is_floating_point else dt.int64)


_host_prod = host_kernel(aten.prod.default)
_host_prod_dim = host_kernel(aten.prod.dim_int)


@aten.prod.default.impl("cuda")
def prod_all(self, *, dtype=None):
    out = _prod_dtype(self, dtype)
    if self.numel() == 0 or out is dt.bool:
        return _host_prod(self, dtype=dtype)
    return reduce(self if self.dtype is not dt.bool else cast_contiguous(self, out), None, False, "prod", out)


@aten.prod.dim_int.impl("cuda")
def prod_dim(self, dim, keepdim=False, *, dtype=None):
    out = _prod_dtype(self, dtype)
    if self.numel() == 0 or self.dim() == 0 or out is dt.bool:
        return _host_prod_dim(self, dim, keepdim, dtype=dtype)
    return reduce(self if self.dtype is not dt.bool else cast_contiguous(self, out), [dim], keepdim, "prod", out)


# -- var / std --------------------------------------------------------------------------------------


def _variance(self, dim, correction, keepdim):
    """The variance as a cuda tensor, or None when the host path should answer."""
    if not self.dtype.is_floating_point or self.numel() == 0:
        return None
    dims = _dims(self, dim) if self.dim() else []
    ddof = 1 if correction is None else correction
    count = _count(self, dims)
    if count - ddof <= 0:
        return None  # PyTorch's "degrees of freedom is <= 0" warning, from the host path
    d = self.dtype
    cdt = compute_dtype(d)
    mean = ew.launch(ew.f_div, [reduce(self, dims, True, "sum", cdt), count], cdt, cdt)
    dev = ew.launch(ew.f_sub, [self, mean], cdt, cdt)
    sq = reduce(ew.launch(ew.f_mul, [dev, dev], cdt, cdt), dims, keepdim, "sum", cdt)
    return ew.launch(ew.f_div, [sq, count - ddof], d, cdt)


def _sqrt(t):
    return ew.launch(ew.f_sqrt, [t], t.dtype, compute_dtype(t.dtype))


def _mean(self, dim, keepdim):
    return mean_dim(self, dim if dim is not None else [], keepdim)


def _moment(op, take_sqrt, with_mean):
    host = host_kernel(op)

    def kernel(self, dim=None, *, correction=None, keepdim=False):
        v = _variance(self, dim, correction, keepdim)
        if v is None:
            return host(self, dim, correction=correction, keepdim=keepdim)
        if take_sqrt:
            v = _sqrt(v)
        return (v, _mean(self, dim, keepdim)) if with_mean else v

    op.impl("cuda")(kernel)


_moment(aten.var.correction, False, False)
_moment(aten.std.correction, True, False)
_moment(aten.var_mean.correction, False, True)
_moment(aten.std_mean.correction, True, True)


# -- logsumexp ---------------------------------------------------------------------------------------


def f_finite_or_zero(m):
    if m == m and m != math.inf and m != -math.inf:
        return m
    return 0.0


def f_shifted_exp(x, m):
    v = x - m
    if v != v:
        return v
    if v > 709.0:
        return math.inf
    return math.exp(v)


def f_log_plus(s, m):
    if s > 0:
        return math.log(s) + m
    return -math.inf if s == 0 else math.nan


_host_logsumexp = host_kernel(aten.logsumexp.default)


@aten.logsumexp.default.impl("cuda")
def logsumexp(self, dim, keepdim=False):
    if not self.dtype.is_floating_point or self.numel() == 0:
        return _host_logsumexp(self, dim, keepdim)
    d = self.dtype
    cdt = compute_dtype(d)
    dims = _dims(self, dim) if self.dim() else []
    m = reduce(self, dims, True, "max", cdt)
    m = ew.launch(f_finite_or_zero, [m], cdt, cdt)  # an infinite max would give inf - inf
    s = reduce(ew.launch(f_shifted_exp, [self, m], cdt, cdt), dims, keepdim, "sum", cdt)
    if not keepdim:
        m = reduce(m, dims, False, "max", cdt)  # drop the kept dims (they have size 1)
    return ew.launch(f_log_plus, [s, m], d, cdt)


# -- vector norm ---------------------------------------------------------------------------------------


def make_pow_abs(p):
    def f(x):
        return abs(x) ** p

    return f


def f_nonzero(x):
    return 1.0 if x != 0 else 0.0


_host_norm = host_kernel(aten.linalg_vector_norm.default)


@aten.linalg_vector_norm.default.impl("cuda")
def linalg_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None):
    if not self.dtype.is_floating_point or self.numel() == 0 or isinstance(ord, bool):
        return _host_norm(self, ord, dim, keepdim, dtype=dtype)
    from minitorch_nn.backends.cuda.activations import _baked

    d = dtype if dtype is not None else self.dtype
    cdt = compute_dtype(d)
    dims = _dims(self, dim) if self.dim() else []
    a = ew.launch(ew.f_abs, [self], cdt, cdt)
    if ord == math.inf:
        r = reduce(a, dims, keepdim, "max", cdt)
    elif ord == -math.inf:
        r = reduce(a, dims, keepdim, "min", cdt)
    elif ord == 0:
        r = reduce(ew.launch(f_nonzero, [a], cdt, cdt), dims, keepdim, "sum", cdt)
    elif ord == 1:
        r = reduce(a, dims, keepdim, "sum", cdt)
    elif ord == 2:
        r = _sqrt(reduce(ew.launch(ew.f_mul, [a, a], cdt, cdt), dims, keepdim, "sum", cdt))
    else:
        s = reduce(ew.launch(_baked(make_pow_abs, float(ord)), [a], cdt, cdt), dims, keepdim, "sum", cdt)
        r = ew.launch(ew.f_pow, [s, 1.0 / ord], cdt, cdt)
    return r if r.dtype is d else cast_contiguous(r, d)


# -- all / any ---------------------------------------------------------------------------------------


def _logical(op, kind, with_dim):
    host = host_kernel(op)

    def kernel(self, *args, **kwargs):
        if self.numel() == 0:
            return host(self, *args, **kwargs)  # all([]) is True, any([]) False: the cpu answers
        dim = (args[0] if args else kwargs.get("dim")) if with_dim else None
        keepdim = (args[1] if len(args) > 1 else kwargs.get("keepdim", False)) if with_dim else False
        out = dt.uint8 if self.dtype is dt.uint8 else dt.bool
        flags = cast_contiguous(ew.pointwise(ew.f_ne, self, 0, kind="bool"), dt.int32)
        dims = _dims(self, dim) if self.dim() and with_dim else None
        return cast_contiguous(reduce(flags, dims, keepdim, kind, dt.int32), out)

    op.impl("cuda")(kernel)


_logical(aten.all.default, "min", False)
_logical(aten.all.dim, "min", True)
_logical(aten.any.default, "max", False)
_logical(aten.any.dim, "max", True)
