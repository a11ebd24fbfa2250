"""The built-in parametrizations: ``orthogonal``, ``weight_norm``, ``spectral_norm`` (mirrors ``torch.nn.utils.parametrizations``).

Each is a small ``nn.Module`` registered with :func:`~minitorch_nn.nn.utils.parametrize.register_parametrization`:

* ``orthogonal``: ``_Orthogonal`` maps any matrix to one with orthonormal columns (or rows, for a
  wide matrix) by the matrix exponential or the Cayley map of a skew-symmetric matrix, or by a
  product of Householder reflections. With ``use_trivialization=True`` (the default) it also
  keeps a buffer ``base`` and returns ``base @ Q``: assigning a weight then only changes
  ``base``, and the optimizer moves in a neighbourhood of it ("dynamic trivialization").
* ``weight_norm``: ``_WeightNorm`` splits the weight into a magnitude ``g`` (``original0``) and a
  direction ``v`` (``original1``) and returns ``v * g / ||v||``.
* ``spectral_norm``: ``_SpectralNorm`` divides the weight by an estimate of its largest singular
  value, refined by power iteration on the buffers ``_u`` and ``_v`` each time the weight is read
  in training mode; in eval mode the buffers are left alone, so the weight is fixed.

The formulas and random draws follow PyTorch's, so with the same seed the values agree within
float tolerance, complex weights included (``orthogonal`` with ``matrix_exp`` or ``cayley`` gives a
unitary weight, ``spectral_norm`` runs its power iteration with conjugate transposes). Difference:
``torch.geqrf`` runs through numpy's LAPACK, one matrix of a batch at a time.
"""

from __future__ import annotations

from enum import Enum, auto

import minitorch_nn as torch
from minitorch_nn import linalg
from minitorch_nn._dtype import finfo
from minitorch_nn._tensor import Tensor
from minitorch_nn.autograd import no_grad
from minitorch_nn.nn import functional as F
from minitorch_nn.nn.modules.module import Module
from minitorch_nn.nn.utils import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ---------------------------------------------------------------------------------------------
# orthogonal
# ---------------------------------------------------------------------------------------------


def _is_orthogonal(Q) -> bool:
    """Whether ``Q^H Q`` is the identity up to ``10 * n * eps`` (the test PyTorch uses)."""
    n, k = Q.size(-2), Q.size(-1)
    Id = torch.eye(k, dtype=Q.dtype)
    eps = 10.0 * n * finfo(Q.dtype).eps
    return torch.allclose(Q.mH @ Q, Id, atol=eps)


def _make_orthogonal(A):
    """The Q of ``A = QR`` with the phases chosen so that ``diag(R)`` is real and >= 0 (a unique choice)."""
    Q, R = linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """The orthogonal parametrization. ``forward`` works on a tall matrix (a wide one is
    transposed first and back at the end)."""

    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization=True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            # The lower triangle of X (padded to n x n) defines a skew-Hermitian A (skew-symmetric
            # when real), whose exponential or Cayley transform is unitary (orthogonal).
            X = X.tril()
            if n != k:
                X = torch.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = linalg.matrix_exp(A)
            else:
                # Cayley map: (I - A/2)^{-1} (I + A/2)
                Id = torch.eye(n, dtype=A.dtype)
                Q = linalg.solve(torch.add(Id, A, alpha=-0.5), torch.add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            # Reflections from the strictly lower triangle; the diagonal's sign (+-1) flips columns.
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        """Assigning an orthogonal ``Q``: with trivialization, ``base`` becomes (an orthogonal
        completion of) ``Q`` and the original becomes the point that maps to the identity."""
        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(
                    f"Expected a matrix or batch of matrices of shape {self.shape}. "
                    f"Got a tensor of shape {Q.shape}."
                )
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False."
                    )
                # householder: the compact QR of Q, with the diagonal replaced by its signs
                A, tau = linalg.geqrf(Q)
                diag = A.diagonal(dim1=-2, dim2=-1)
                flip = torch.where(tau == 0.0, -1.0, 1.0).to(A.dtype)
                diag.copy_(diag.sign() * flip)
                return A.mT if transpose else A
            if n == k:
                Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
            else:
                # complete the k columns to an n x n orthogonal matrix with random columns
                N = torch.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype)
                Q = _make_orthogonal(torch.cat([Q, N], dim=-1))
            self.base = Q
            neg_Id = torch.zeros_like(Q_init)
            neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_Id


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Constrain ``module.<name>`` to orthogonal (or semi-orthogonal) matrices; returns ``module``.

    ``orthogonal_map`` is ``"matrix_exp"`` (default for square matrices), ``"cayley"`` or
    ``"householder"`` (default otherwise). The weight starts as the orthogonal factor of the QR
    decomposition of the current weight.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# ---------------------------------------------------------------------------------------------
# weight_norm
# ---------------------------------------------------------------------------------------------


class _WeightNorm(Module):
    """``w = g * v / ||v||``, the norm taken over every dim except ``dim`` (all dims if None)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return linalg._weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return linalg.norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0):
    """Weight normalization: ``original0`` is the magnitude ``g``, ``original1`` the direction ``v``.

    State dicts saved with the old ``torch.nn.utils.weight_norm`` (keys ``weight_g``/``weight_v``)
    still load: a load pre-hook renames them to ``parametrizations.weight.original0/1``.
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(
        state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# ---------------------------------------------------------------------------------------------
# spectral_norm
# ---------------------------------------------------------------------------------------------


class _SpectralNorm(Module):
    """``W / sigma(W)``, ``sigma`` estimated as ``u^T W v`` by power iteration on ``_u``, ``_v``."""

    def __init__(
        self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            # 1-D weights are simply normalized: no buffers, no power iteration.
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # Start from a good estimate, so the first forward is already close.
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        """``dim`` first, everything else flattened: an ``(size(dim), -1)`` matrix."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations: int) -> None:
        """Refine ``_u``/``_v`` in place (``u <- W v / |W v|``, ``v <- W^T u / |W^T u|``).

        In place, like PyTorch's ``out=``, so the buffers stay the same objects; no gradient
        flows through the estimate.
        """
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(torch.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(torch.mv(weight_mat.mH, self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # Clones, so a later in-place update of the buffers cannot corrupt this graph.
        u = self._u.clone()
        v = self._v.clone()
        sigma = linalg.vdot(u, torch.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        # Any W / sigma(W) can be obtained from W itself: the identity is a right inverse.
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Spectral normalization: ``module.<name>`` is divided by its estimated largest singular value.

    ``dim`` is the output dim (1 for ``ConvTranspose*d``, else 0). Each read in training mode
    runs ``n_power_iterations`` steps of power iteration; in eval mode none, so eval outputs are
    reproducible (and equal the last training estimate).
    """
    from minitorch_nn.nn import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
