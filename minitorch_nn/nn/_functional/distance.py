"""Distances between vectors: ``cosine_similarity`` and ``pairwise_distance`` (mirror the ATen
composites ``cosine_similarity`` and ``pairwise_distance`` in ``aten/src/ATen/native/Distance.cpp``).

* ``cosine_similarity(x1, x2, dim, eps)``: each input is divided by its own norm first (clamped
  below at ``eps``, the clamp not recorded by autograd) and the products summed, so the result
  stays within [-1, 1]: ``sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps), dim)``.
* ``pairwise_distance(x1, x2, p, eps)``: ``norm(x1 - x2 + eps, p)`` over the last dim. PyTorch calls
  the C++ ``at::norm`` here (node ``NormBackward1``, not ``LinalgVectorNormBackward0``), so the op
  ``aten.norm.ScalarOpt_dim`` is declared below with that node name and the vector norm's formula.
"""

from __future__ import annotations

from minitorch_nn._ops import aten
from minitorch_nn._ops import define as _define

__all__ = ["cosine_similarity", "pairwise_distance"]

_define("norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor")


@aten.norm.ScalarOpt_dim.impl("any")
def _norm_kernel(self, p, dim, keepdim=False):
    return aten.linalg_vector_norm.default.redispatch_to_backend(self, 2 if p is None else p, list(dim), keepdim)


def _register_norm_derivative():
    from minitorch_nn.autograd.derivatives import _norm_backward, derivative

    derivative(
        "norm.ScalarOpt_dim", "NormBackward1",
        self=lambda grad, self, p, dim, keepdim, result: _norm_backward(
            grad, self, 2 if p is None else p, list(dim), keepdim, result),
    )


_register_norm_derivative()


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (they broadcast)."""
    import minitorch_nn as torch
    from minitorch_nn.backends.common import result_type, type_name

    common = result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {type_name(common)}")
    x1, x2 = torch.broadcast_tensors(x1, x2)
    # normalise each input first (as PyTorch: more stable, and the result stays in [-1, 1]); the
    # clones are clamped in place without autograd seeing it
    n1 = torch.linalg.vector_norm(x1, 2, dim, keepdim=True).clone()
    n2 = torch.linalg.vector_norm(x2, 2, dim, keepdim=True).clone()
    with torch.no_grad():
        n1.clamp_(min=eps)
        n2.clamp_(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The ``p``-norm distance between the rows of ``x1`` and ``x2`` (over the last dim)."""
    last = max(x1.dim(), x2.dim()) - 1
    return aten.norm.ScalarOpt_dim(x1 - x2 + eps, p, [last], keepdim)
