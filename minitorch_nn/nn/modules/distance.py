"""``CosineSimilarity`` and ``PairwiseDistance`` (mirrors ``torch/nn/modules/distance.py``): the
functions in ``nn/_functional/distance.py`` as modules with their arguments stored."""

from __future__ import annotations

from minitorch_nn.nn.modules.module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class PairwiseDistance(Module):
    """``F.pairwise_distance(x1, x2, p, eps, keepdim)``."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        from minitorch_nn.nn._functional.distance import pairwise_distance

        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """``F.cosine_similarity(x1, x2, dim, eps)``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        from minitorch_nn.nn._functional.distance import cosine_similarity

        return cosine_similarity(x1, x2, self.dim, self.eps)
