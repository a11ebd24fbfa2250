"""Matrix products and the linear algebra parametrizations need, on cpu (numpy/BLAS).

Mirrors PyTorch's ``LinearAlgebra.cpp``/``BatchLinearAlgebra.cpp`` for the cpu device. The
shape checks and their messages are PyTorch's; the arithmetic is numpy's (which calls BLAS and
LAPACK, as PyTorch does).
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import compute_dtype, result_type, type_name
from minitorch_nn.backends.views import expand
from minitorch_nn.backends.cpu._numpy import as_array, fp_errors_off, fp_errors_restore, wrap, wrap_strided, write_into


def _c_name(d):
    from minitorch_nn.backends.cpu.pointwise import _c_name as c_name

    return c_name(d)


def _check_same_dtype(a, b, what="expected m1 and m2 to have the same dtype"):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{what}, but got: {_c_name(a.dtype)} != {_c_name(b.dtype)}")


def _matmul(a, b):
    # inf * 0 inside a product is nan without a numpy warning, as in PyTorch
    token = fp_errors_off()
    try:
        return np.matmul(a, b)
    finally:
        fp_errors_restore(token)


def _mat(x, d):
    return as_array(x, compute_dtype(d))


@aten.mm.default.impl("cpu")
def mm(self, mat2):
    if self.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self._impl.sizes[1] != mat2._impl.sizes[0]:  # (the sizes tuples: .shape builds a Size each time)
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})"
        )
    _check_same_dtype(self, mat2, "expected m1 and m2 to have the same dtype")
    d = self.dtype
    if d is dt.bool:
        raise RuntimeError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    return wrap(_matmul(_mat(self, d), _mat(mat2, d)), d)


@aten.bmm.default.impl("cpu")
def bmm(self, mat2):
    if self.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{self.shape[0]}, {self.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    if self.dtype is not mat2.dtype:
        raise RuntimeError(f"expected scalar type {type_name(self.dtype)} but found {type_name(mat2.dtype)}")
    d = self.dtype
    return wrap(_matmul(_mat(self, d), _mat(mat2, d)), d)


def _broadcasts_into(shape, target):
    """True when ``shape`` broadcasts to ``target`` without growing it."""
    for s, t in zip(reversed(shape), reversed(target)):
        if s != 1 and s != t:
            return False
    return True


@aten.addmm.default.impl("cpu")
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    # PyTorch checks the dtypes (self against mat2 first) before the shapes
    for name, t in (("self", self), ("mat1", mat1)):
        if t.dtype is not mat2.dtype:
            raise RuntimeError(
                f"{name} and mat2 must have the same dtype, but got {type_name(t.dtype)} and {type_name(mat2.dtype)}"
            )
    prod = mm(mat1, mat2)
    d = prod.dtype
    if not (d.is_floating_point or d.is_complex):
        if mat1.shape[1] == 0 and (isinstance(alpha, float) or isinstance(beta, float)):
            raise RuntimeError(f"result type Float can't be cast to the desired output type {type_name(d)}")
        # integer addmm casts alpha and beta to the integer type (0.5 becomes 0), as PyTorch's BLAS path does
        alpha, beta = int(alpha), int(beta)
    if self.dim() > 2 or not _broadcasts_into(self._impl.sizes, prod._impl.sizes):
        expand(self, prod.shape)  # raises PyTorch's error for a bias that cannot broadcast to the product
    cd = compute_dtype(d)
    if alpha == 1 and beta == 1 and cd is d:
        # nn.Linear's case: add the bias into the fresh product in place (no second result array);
        # inf + -inf is nan without a numpy warning, as in PyTorch
        r = _mat(prod, d)
        token = fp_errors_off()
        try:
            r += as_array(self, cd)
        finally:
            fp_errors_restore(token)
        return prod
    token = fp_errors_off()
    try:
        r = _mat(prod, d) * np.asarray(alpha, cd.numpy_dtype) if alpha != 1 else _mat(prod, d)
        if beta != 0:
            r = r + (as_array(self, cd) * np.asarray(beta, cd.numpy_dtype) if beta != 1 else as_array(self, cd))
    finally:
        fp_errors_restore(token)
    return wrap(r, d)


@aten.addmm_.default.impl("cpu")
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    result = addmm(self, mat1, mat2, beta=beta, alpha=alpha)
    if tuple(result.shape) != tuple(self.shape):
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}"
        )
    return write_into(self, as_array(result))


@aten.baddbmm.default.impl("cpu")
def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    prod = bmm(batch1, batch2)
    d = prod.dtype
    cd = compute_dtype(d)
    r = _mat(prod, d) * alpha
    if beta != 0:
        r = r + as_array(self, cd) * beta
    return wrap(r, d)


@aten.dot.default.impl("cpu")
def dot(self, tensor):
    if self.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {self.dim()}D and {tensor.dim()}D tensors"
        )
    if self.shape[0] != tensor.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{self.shape[0]}] and src [{tensor.shape[0]}] to have the same number of elements, but got {self.shape[0]} and {tensor.shape[0]} elements respectively"
        )
    if self.dtype is not tensor.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {type_name(self.dtype)} and {type_name(tensor.dtype)}"
        )
    return wrap(np.dot(_mat(self, self.dtype), _mat(tensor, self.dtype)), self.dtype)


@aten.mv.default.impl("cpu")
def mv(self, vec):
    if self.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self.dim()}, {vec.dim()}")
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({self.shape[0]}), mat ({self.shape[0]}x{self.shape[1]}), vec ({vec.shape[0]})"
        )
    if self.dtype is not vec.dtype:
        # PyTorch's mv is addmv into an output of vec's dtype, hence three names
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{type_name(vec.dtype)}, {type_name(self.dtype)}, and {type_name(vec.dtype)}"
        )
    return wrap(_matmul(_mat(self, self.dtype), _mat(vec, self.dtype)), self.dtype)


@aten.outer.default.impl("cpu")
def outer(self, vec2):
    return wrap(np.outer(_mat(self, self.dtype), _mat(vec2, self.dtype)), self.dtype)


def _einsum_check(equation, tensors):
    if not tensors:
        raise RuntimeError("einsum(): must provide at least one operand")
    lhs = equation.split("->")[0]
    if lhs.count(",") + 1 != len(tensors):
        raise RuntimeError(
            "einsum(): more operands were provided than specified in the equation"
            if lhs.count(",") + 1 < len(tensors) else
            "einsum(): fewer operands were provided than specified in the equation"
        )
    return result_type(*tensors)


@aten.einsum.default.impl("cpu")
def einsum(equation, tensors, *, path=None):
    """Einstein summation with numpy's einsum (PyTorch contracts pairwise with bmm; same values)."""
    d = _einsum_check(equation, tensors)
    cd = compute_dtype(d)
    try:
        r = np.einsum(equation, *[as_array(t, cd) for t in tensors], optimize=len(tensors) > 2)
    except ValueError as e:
        raise RuntimeError(f"einsum(): {e}") from None
    return wrap(r, d)


# -- decompositions -------------------------------------------------------------------------------

def _column_major(arr, dtype):
    """A matrix result laid out as LAPACK writes it, as PyTorch's are: each matrix column-major
    (strides ``(..., 1, rows)``), the batch row-major around them."""
    if arr.ndim < 2:
        return wrap(arr, dtype)
    m, n = arr.shape[-2:]
    strides = [1, m]
    block = m * n
    for size in reversed(arr.shape[:-2]):
        strides.insert(0, block)
        block *= size
    return wrap_strided(arr, dtype, tuple(strides))


def _float_input(A, name):
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {type_name(A.dtype)}")
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    return as_array(A, compute_dtype(A.dtype))


@aten.linalg_qr.default.impl("cpu")
def linalg_qr(A, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'")
    a = _float_input(A, "linalg.qr")
    q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        q = np.zeros((0,), dtype=a.dtype)
    return _column_major(q, A.dtype), _column_major(r, A.dtype)


@aten.linalg_solve.default.impl("cpu")
def linalg_solve(A, B, *, left=True):
    a = _float_input(A, "linalg.solve")
    b = as_array(B, compute_dtype(B.dtype))
    vector_rhs = B.dim() == A.dim() - 1
    _check_solve_shapes(A, B, left, vector_rhs)
    if not left:
        # X A = B  <=>  A^T X^T = B^T
        # (PyTorch solves the transposed system too, so its X is the transpose of a
        # column-major result: row-major)
        return wrap(np.swapaxes(_solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), vector_rhs), -1, -2), A.dtype)
    x = _solve(a, b, vector_rhs)
    return wrap(x, A.dtype) if vector_rhs else _column_major(x, A.dtype)


def _check_solve_shapes(A, B, left, vector_rhs):
    """PyTorch's message when B's rows (or columns, for ``left=False``) do not fit A."""
    n = A.shape[-1]
    rows, cols = (B.shape[-1], 1) if vector_rhs else (B.shape[-2], B.shape[-1])
    fits = rows == n if (left or vector_rhs) else cols == A.shape[-2]
    if not fits:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation {equation} "
            f"({A.shape[-2]}x{n} and {rows}x{cols})"
        )


def _solve(a, b, vector_rhs):
    try:
        if vector_rhs:
            return np.linalg.solve(a, b[..., None])[..., 0]
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise RuntimeError(
            "torch.linalg.solve: The solver failed because the input matrix is singular."
        ) from None


@aten.linalg_matrix_exp.default.impl("cpu")
def linalg_matrix_exp(self):
    a = _float_input(self, "linalg.matrix_exp")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    from scipy.linalg import expm

    return wrap(expm(a), self.dtype)


@aten.linalg_svd.default.impl("cpu")
def linalg_svd(A, full_matrices=True, *, driver=None):
    a = _float_input(A, "linalg.svd")
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return _column_major(u, A.dtype), wrap(s, A.dtype.to_real()), _column_major(vh, A.dtype)  # (real singular values)


@aten.linalg_svdvals.default.impl("cpu")
def linalg_svdvals(A, *, driver=None):
    a = _float_input(A, "linalg.svdvals")
    return wrap(np.linalg.svd(a, compute_uv=False), A.dtype.to_real())


@aten.linalg_eigh.default.impl("cpu")
def linalg_eigh(self, UPLO="L"):
    a = _float_input(self, "linalg.eigh")
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return wrap(w, self.dtype.to_real()), _column_major(v, self.dtype)  # (a Hermitian matrix has real eigenvalues)


@aten.linalg_inv.default.impl("cpu")
def linalg_inv(A):
    a = _float_input(A, "linalg.inv")
    try:
        return _column_major(np.linalg.inv(a), A.dtype)
    except np.linalg.LinAlgError:
        raise RuntimeError("linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because the input matrix is singular.") from None


@aten.linalg_det.default.impl("cpu")
def linalg_det(A):
    return wrap(np.linalg.det(_float_input(A, "linalg.det")), A.dtype)


def _check_matrix(self, name):
    if self.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


@aten.tril.default.impl("cpu")
def tril(self, diagonal=0):
    _check_matrix(self, "tril")
    return wrap(np.tril(as_array(self), diagonal), self.dtype)


@aten.triu.default.impl("cpu")
def triu(self, diagonal=0):
    _check_matrix(self, "triu")
    return wrap(np.triu(as_array(self), diagonal), self.dtype)


@aten.diag_embed.default.impl("cpu")
def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    a = as_array(self)
    n = a.shape[-1] + abs(offset)
    out = np.zeros(a.shape[:-1] + (n, n), dtype=a.dtype)
    idx = np.arange(a.shape[-1])
    rows, cols = (idx, idx + offset) if offset >= 0 else (idx - offset, idx)
    out[..., rows, cols] = a
    return wrap(out, self.dtype)
