"""``minitorch_nn.linalg``: the linear algebra functions parametrizations need (mirrors ``torch.linalg``).

Each function checks nothing itself: it calls its ``aten.linalg_*`` op, whose cpu kernel
(``backends/cpu/linalg.py``) holds PyTorch's checks and messages and calls numpy/LAPACK. Results
with several tensors come back as named tuples that print like PyTorch's
(``torch.return_types.linalg_qr(Q=..., R=...)``).

Only what the declared ops cover is here: ``qr``, ``solve``, ``matrix_exp``, ``svd``,
``svdvals``, ``vector_norm``, ``eigh``, ``inv`` and ``det``.
"""

from __future__ import annotations

from collections import namedtuple

from minitorch_nn._ops import aten
from minitorch_nn.overrides import public

__all__ = ["det", "eigh", "inv", "matrix_exp", "qr", "solve", "svd", "svdvals", "vector_norm"]


def _named(name, fields):
    base = namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={getattr(self, f)!r}" for f in fields)
        return f"torch.return_types.{name}(\n{body})"

    return type(name, (base,), {"__repr__": __repr__, "__slots__": ()})


_QR = _named("linalg_qr", ["Q", "R"])
_SVD = _named("linalg_svd", ["U", "S", "Vh"])
_EIGH = _named("linalg_eigh", ["eigenvalues", "eigenvectors"])


@public
def qr(A, mode="reduced", *, out=None):
    """QR decomposition ``A = Q R`` (``mode`` is ``'reduced'``, ``'complete'`` or ``'r'``)."""
    return _QR(*aten.linalg_qr.default(A, mode))


@public
def solve(A, B, *, left=True, out=None):
    """The ``X`` with ``A X = B`` (or ``X A = B`` when ``left=False``)."""
    return aten.linalg_solve.default(A, B, left=left) if not left else aten.linalg_solve.default(A, B)


@public
def matrix_exp(A):
    """The matrix exponential of each square matrix in ``A``."""
    return aten.linalg_matrix_exp.default(A)


@public
def svd(A, full_matrices=True, *, driver=None, out=None):
    """Singular value decomposition ``A = U diag(S) Vh``."""
    return _SVD(*aten.linalg_svd.default(A, full_matrices))


@public
def svdvals(A, *, driver=None, out=None):
    """The singular values of ``A``, in descending order."""
    return aten.linalg_svdvals.default(A)


@public
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The ``ord``-norm of ``x`` seen as a vector (over ``dim``, or over every element)."""
    if isinstance(dim, int):
        dim = [dim]
    kw = {"dtype": dtype} if dtype is not None else {}
    return aten.linalg_vector_norm.default(x, ord, dim, keepdim, **kw)


@public
def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices."""
    return _EIGH(*aten.linalg_eigh.default(A, UPLO))


@public
def inv(A, *, out=None):
    """The inverse of each square matrix in ``A``."""
    return aten.linalg_inv.default(A)


@public
def det(A, *, out=None):
    """The determinant of each square matrix in ``A``."""
    return aten.linalg_det.default(A)
