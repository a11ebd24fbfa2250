"""``minitorch_nn.linalg``: the linear algebra functions parametrizations need (mirrors ``torch.linalg``).

Each function checks nothing itself: it calls its ``aten.linalg_*`` op, whose cpu kernel
(``backends/cpu/linalg.py``) holds PyTorch's checks and messages and calls numpy/LAPACK. Results
with several tensors come back as named tuples that print like PyTorch's
(``torch.return_types.linalg_qr(Q=..., R=...)``).

Only what the declared ops cover is here: ``qr``, ``solve``, ``matrix_exp``, ``svd``,
``svdvals``, ``vector_norm``, ``eigh``, ``inv`` and ``det``.

The last section adds what ``nn.utils.parametrizations`` and the parametrizations tutorial
need, written with the ops above rather than as new kernels: ``householder_product`` (a product
of reflections, so it is differentiable for free), ``eigvalsh``, ``matrix_rank``, and the
top-level ``torch.geqrf``, ``torch.matrix_exp``, ``torch.dist``, ``torch.vdot``,
``torch.norm_except_dim`` and ``torch._weight_norm`` (re-exported by ``minitorch_nn``).
"""

from __future__ import annotations

from collections import namedtuple

from minitorch_nn._functions._out import writes_out, writes_out_tuple
from minitorch_nn._ops import aten
from minitorch_nn._ops import define as aten_define
from minitorch_nn.overrides import public

__all__ = [
    "det", "eigh", "eigvalsh", "householder_product", "inv", "matrix_exp", "matrix_rank", "qr", "solve",
    "svd", "svdvals", "vector_norm",
]


def _named(name, fields):
    base = namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={getattr(self, f)!r}" for f in fields)
        return f"torch.return_types.{name}(\n{body})"

    return type(name, (base,), {"__repr__": __repr__, "__slots__": ()})


_QR = _named("linalg_qr", ["Q", "R"])
_SVD = _named("linalg_svd", ["U", "S", "Vh"])
_EIGH = _named("linalg_eigh", ["eigenvalues", "eigenvectors"])
_GEQRF = _named("geqrf", ["a", "tau"])


@public
@writes_out_tuple(_QR)
def qr(A, mode="reduced", *, out=None):
    """QR decomposition ``A = Q R`` (``mode`` is ``'reduced'``, ``'complete'`` or ``'r'``)."""
    return _QR(*aten.linalg_qr.default(A, mode))


@public
@writes_out("exact", check_overlap=False)
def solve(A, B, *, left=True, out=None):
    """The ``X`` with ``A X = B`` (or ``X A = B`` when ``left=False``)."""
    return aten.linalg_solve.default(A, B, left=left) if not left else aten.linalg_solve.default(A, B)


@public
def matrix_exp(A):
    """The matrix exponential of each square matrix in ``A``."""
    return aten.linalg_matrix_exp.default(A)


@public
@writes_out_tuple(_SVD)
def svd(A, full_matrices=True, *, driver=None, out=None):
    """Singular value decomposition ``A = U diag(S) Vh``."""
    return _SVD(*aten.linalg_svd.default(A, full_matrices))


@public
@writes_out("exact", check_overlap=False)
def svdvals(A, *, driver=None, out=None):
    """The singular values of ``A``, in descending order."""
    return aten.linalg_svdvals.default(A)


@public
@writes_out("exact", check_overlap=False)
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The ``ord``-norm of ``x`` seen as a vector (over ``dim``, or over every element)."""
    if isinstance(dim, int):
        dim = [dim]
    kw = {"dtype": dtype} if dtype is not None else {}
    return aten.linalg_vector_norm.default(x, ord, dim, keepdim, **kw)


@public
@writes_out_tuple(_EIGH)
def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices."""
    return _EIGH(*aten.linalg_eigh.default(A, UPLO))


@public
@writes_out("exact", check_overlap=False)
def inv(A, *, out=None):
    """The inverse of each square matrix in ``A``."""
    return aten.linalg_inv.default(A)


@public
@writes_out("exact", check_overlap=False)
def det(A, *, out=None):
    """The determinant of each square matrix in ``A``."""
    return aten.linalg_det.default(A)


# ---------------------------------------------------------------------------------------------
# For parametrizations (see the module docstring)
# ---------------------------------------------------------------------------------------------


@public
@writes_out("exact", check_overlap=False)
def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues (ascending) of symmetric matrices."""
    return aten.linalg_eigh.default(A, UPLO)[0]


@public
@writes_out("any", check_overlap=False)
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The number of singular values above ``max(atol, rtol * largest)`` (int64).

    PyTorch's default with neither tolerance given: ``rtol = eps(dtype) * max(m, n)``.
    """
    from minitorch_nn._dtype import finfo

    S = svdvals(A)
    if atol is None and rtol is None:
        rtol = finfo(A.dtype).eps * max(A.shape[-2], A.shape[-1])
    rtol = 0.0 if rtol is None else rtol
    atol = 0.0 if atol is None else atol
    tol = (S.amax(dim=-1, keepdim=True) * rtol).clamp_min(atol) if S.shape[-1] else S
    return (S > tol).sum(dim=-1)


@public
@writes_out("any", check_overlap=False)
def householder_product(A, tau, *, out=None):
    """The first ``n`` columns of ``H_1 H_2 ... H_k`` with ``H_i = I - tau_i v_i v_i^H``.

    ``v_i`` is column ``i`` of ``A`` below the diagonal with an implicit 1 on it (LAPACK's
    ``orgqr`` format, the output of :func:`geqrf`). Built from ordinary ops, one reflection at
    a time, so autograd differentiates it without a dedicated formula.
    """
    from minitorch_nn._functions.factories import eye

    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if k > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    below = A.tril(-1) + eye(m, n, dtype=A.dtype)  # the v_i as columns, unit diagonal
    Q = eye(m, dtype=A.dtype).expand(*A.shape[:-2], m, m)
    for i in range(k):
        v = below[..., :, i : i + 1]  # (..., m, 1)
        t = tau[..., i : i + 1].unsqueeze(-1)  # (..., 1, 1)
        # Q H_i = Q - tau_i (Q v_i) v_i^H
        Q = Q - t * (Q @ v) @ v.mH
    return Q[..., :, :n]


@writes_out_tuple(_GEQRF)
def geqrf(input, *, out=None):
    """LAPACK's QR in compact form: ``(a, tau)``, R on and above the diagonal of ``a``, the
    Householder vectors below it. Not differentiable (nor is PyTorch's)."""
    import numpy as np

    from minitorch_nn._tensor import _from_array

    a = input.detach().numpy()
    batch = a.shape[:-2]
    flat = a.reshape(-1, *a.shape[-2:])
    hs, taus = [], []
    for mat in flat:
        h, tau = np.linalg.qr(mat, mode="raw")  # h is the transpose of LAPACK's a
        hs.append(h.T)
        taus.append(tau)
    m, n = a.shape[-2:]
    h = np.stack(hs).reshape(*batch, m, n) if hs else np.zeros(a.shape, a.dtype)
    tau = np.stack(taus).reshape(*batch, min(m, n)) if taus else np.zeros((*batch, min(m, n)), a.dtype)
    from minitorch_nn.backends.cpu.linalg import _column_major

    # ``a`` column-major, as LAPACK (and so PyTorch) leaves it
    return _GEQRF(_column_major(h.astype(a.dtype), input.dtype),
                  _from_array(np.ascontiguousarray(tau).astype(a.dtype), input.dtype))


def _dist_function():
    # ``torch.dist`` is one op in PyTorch, so its result prints ``grad_fn=<DistBackward0>``; a
    # small autograd Function with that node name keeps tutorial output identical.
    from minitorch_nn.autograd.function import Function

    class _Dist(Function):
        @staticmethod
        def forward(ctx, input, other, p):
            diff = input - other
            result = vector_norm(diff, p)
            ctx.save_for_backward(diff, result)
            ctx.p = p
            return result

        @staticmethod
        def backward(ctx, grad):
            diff, result = ctx.saved_tensors
            p = ctx.p
            if p == 0:
                g = diff * 0
            else:
                # d|x|_p / dx = sign(x) |x|^(p-1) / |x|_p^(p-1), and 0 where the norm is 0
                scale = (diff.abs() / result).pow(p - 1)
                g = (diff.sign() * scale).nan_to_num(0.0, 0.0, 0.0) * grad
            return g, -g, None

    _Dist._backward_cls.__name__ = "DistBackward0"
    return _Dist


_Dist = None


def dist(input, other, p=2):
    """``torch.dist``: the ``p``-norm of ``input - other``."""
    global _Dist
    if _Dist is None:
        _Dist = _dist_function()
    return _Dist.apply(input, other, p)


@writes_out("dot")
def vdot(input, other, *, out=None):
    """``torch.vdot``: the dot product of two 1-D tensors, the first conjugated."""
    if input.dtype.is_complex:
        input = aten._conj.default(input)
    return aten.dot.default(input, other)  # (for real dtypes conjugation is the identity)


def norm_except_dim(v, pow=2, dim=0):
    """``torch.norm_except_dim``: the norm over every dim but ``dim``, kept as size-1 dims
    (``dim=-1`` means the whole tensor, a 0-d result, as in PyTorch)."""
    if dim == -1:
        return vector_norm(v, pow)
    dims = [d for d in range(v.dim()) if d != dim]
    if not dims:
        return v.abs()  # a 1-D v: one element per "row", its norm is its absolute value
    return vector_norm(v, pow, dims, keepdim=True)


def _weight_norm(v, g, dim=0):
    """``torch._weight_norm``: ``v`` rescaled so its norm over every dim but ``dim`` is ``g``.

    Like PyTorch, the first or last dim goes through the one op ``_weight_norm_interface``
    (its node is ``WeightNormInterfaceBackward0``); any other dim, or ``-1`` (the whole
    tensor), is spelled out as ``v * (g / norm_except_dim(v))``."""
    if dim == 0 or dim == v.dim() - 1:
        return aten._weight_norm_interface.default(v.contiguous(), g.contiguous(), dim)[0]
    return v * (g / norm_except_dim(v, 2, dim))


# -- the fused op: schema, one kernel for every device, derivative ----------------------------------
aten_define('_weight_norm_interface(Tensor v, Tensor g, int dim=0) -> (Tensor, Tensor)')


def _norm_except_dim_kernel(v, dim):
    dims = [d for d in range(v.dim()) if d != dim]
    if not dims:
        return aten.abs.default.redispatch_to_backend(v)
    return aten.linalg_vector_norm.default.redispatch_to_backend(v, 2, dims, True)


@aten._weight_norm_interface.default.impl("any")
def _weight_norm_interface_kernel(v, g, dim=0):
    # below autograd: each step runs only its backend kernel (cpu, meta or cuda alike)
    norms = _norm_except_dim_kernel(v, dim)
    scale = aten.div.Tensor.redispatch_to_backend(g, norms)
    return aten.mul.Tensor.redispatch_to_backend(v, scale), norms


def _weight_norm_grad(which, grad, v, g, dim, norms):
    # w = v * g / n with n the norm of v over the other dims. Written in tensor ops so a double
    # backward runs through it; like PyTorch's formula it takes the saved norms as they are (a
    # constant there), which is what PyTorch's second derivative does too.
    dims = [d for d in range(v.dim()) if d != dim]
    n = norms
    s = (grad * v).sum(dims, keepdim=True) if dims else grad * v
    if which == "g":
        return s / n
    return (g / n) * (grad - v * (s / (n * n)))


def _register_weight_norm_derivative():
    from minitorch_nn.autograd.derivatives import derivative

    derivative(
        "_weight_norm_interface", "WeightNormInterfaceBackward0",
        v=lambda grads, v, g, dim, result1: _weight_norm_grad("v", grads[0], v, g, dim, result1),
        g=lambda grads, v, g, dim, result1: _weight_norm_grad("g", grads[0], v, g, dim, result1),
    )


def _attach_tensor_methods():
    # ``X.det()`` and ``X.matrix_exp()`` as methods (the tutorial calls ``X.det()``), only where
    # the tensor-core method table has none.
    from minitorch_nn._tensor import Tensor

    for name, fn in (("det", det), ("matrix_exp", matrix_exp)):
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)


_attach_tensor_methods()
_register_weight_norm_derivative()
