"""Matrix products: ``matmul``, ``mm``, ``bmm``, ``addmm``, ``einsum``, ``linear``'s core.

``matmul`` decomposes the way PyTorch's does, by the inputs' dims: 1-D @ 1-D is ``dot``; 2-D @
2-D is ``mm``; a vector is unsqueezed and squeezed back; batched inputs broadcast their batch
dims and run ``bmm`` on a 3-D view.
"""

from __future__ import annotations

from minitorch_nn._ops import aten
from minitorch_nn._shape import broadcast_shapes
from minitorch_nn.overrides import public


@public
def mm(input, mat2, *, out=None):
    return aten.mm.default(input, mat2)


@public
def bmm(input, mat2, *, out=None):
    return aten.bmm.default(input, mat2)


@public
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    kw = {}
    if beta != 1:
        kw["beta"] = beta
    if alpha != 1:
        kw["alpha"] = alpha
    return aten.addmm.default(input, mat1, mat2, **kw)


@public
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    return aten.baddbmm.default(input, batch1, batch2, beta=beta, alpha=alpha)


@public
def dot(input, tensor, *, out=None):
    return aten.dot.default(input, tensor)


inner = dot


@public
def mv(input, vec, *, out=None):
    return aten.mv.default(input, vec)


@public
def outer(input, vec2, *, out=None):
    return aten.outer.default(input, vec2)


ger = outer


@public
def matmul(input, other, *, out=None):
    """Matrix product with PyTorch's rules for 1-D, 2-D and batched operands."""
    da, db = input.dim(), other.dim()
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    if da == 1 and db == 1:
        return aten.dot.default(input, other)
    if da == 2 and db == 1:
        return aten.mv.default(input, other)
    if da == 1 and db == 2:
        return aten.squeeze.dim(aten.mm.default(aten.unsqueeze.default(input, 0), other), 0)
    if da == 2 and db == 2:
        return aten.mm.default(input, other)
    if da >= 3 and db <= 2:
        # fold the batch into the rows: (b..., n, k) @ (k, m) -> (b... * n, k) @ (k, m)
        if db == 1:
            out = matmul(input, aten.unsqueeze.default(other, 1))
            return aten.squeeze.dim(out, -1)
        batch = list(input.shape[:-1])
        folded = input.reshape(-1, input.shape[-1])
        return aten._unsafe_view.default(aten.mm.default(folded, other), batch + [other.shape[-1]])
    # general batched case: broadcast batch dims, then bmm
    a = aten.unsqueeze.default(input, 0) if da == 1 else input
    b = aten.unsqueeze.default(other, -1) if db == 1 else other
    n, k = a.shape[-2], a.shape[-1]
    k2, m = b.shape[-2], b.shape[-1]
    batch = list(broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    nb = 1
    for s in batch:
        nb *= s
    a3 = aten.expand.default(a, batch + [n, k]).reshape(nb, n, k)
    b3 = aten.expand.default(b, batch + [k2, m]).reshape(nb, k2, m)
    out = aten.view.default(aten.bmm.default(a3, b3), batch + [n, m])
    if da == 1:
        out = aten.squeeze.dim(out, -2)
    if db == 1:
        out = aten.squeeze.dim(out, -1)
    return out


@public
def einsum(equation, *operands):
    """Einstein summation (computed with numpy's einsum on cpu)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return aten.einsum.default(equation, list(operands)) if "einsum" in aten._packets else _einsum_fallback(equation, operands)


def _einsum_fallback(equation, operands):
    import numpy as np

    from minitorch_nn.backends.common import result_type
    from minitorch_nn.backends.cpu._numpy import as_array, wrap

    d = result_type(*operands)
    return wrap(np.einsum(equation, *[as_array(o, d) for o in operands]), d)
