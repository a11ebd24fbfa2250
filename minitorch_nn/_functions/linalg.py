"""Matrix products: ``matmul``, ``mm``, ``bmm``, ``addmm``, ``einsum``, ``linear``'s core.

``matmul`` decomposes the way PyTorch's does, by the inputs' dims: 1-D @ 1-D is ``dot``; 2-D @
2-D is ``mm``; a vector is unsqueezed and squeezed back; batched inputs broadcast their batch
dims and run ``bmm`` on a 3-D view.
"""

from __future__ import annotations

from minitorch_nn._functions._out import CAST, write_out, writes_out
from minitorch_nn._ops import aten
from minitorch_nn._shape import broadcast_shapes
from minitorch_nn.overrides import public


@public
@writes_out("exact", check_overlap=False)
def mm(input, mat2, *, out=None):
    return aten.mm.default(input, mat2)


@public
@writes_out("exact", check_overlap=False)
def bmm(input, mat2, *, out=None):
    return aten.bmm.default(input, mat2)


@public
@writes_out("exact", check_overlap=False)
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    kw = {}
    if beta != 1:
        kw["beta"] = beta
    if alpha != 1:
        kw["alpha"] = alpha
    return aten.addmm.default(input, mat1, mat2, **kw)


@public
@writes_out("exact", check_overlap=False)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    return aten.baddbmm.default(input, batch1, batch2, beta=beta, alpha=alpha)


@public
@writes_out("dot")
def dot(input, tensor, *, out=None):
    return aten.dot.default(input, tensor)


inner = dot


@public
@writes_out("exact", check_overlap=False)
def mv(input, vec, *, out=None):
    return aten.mv.default(input, vec)


@public
@writes_out("safe")
def outer(input, vec2, *, out=None):
    return aten.outer.default(input, vec2)


ger = outer


@public
def matmul(input, other, *, out=None):
    """Matrix product with PyTorch's rules for 1-D, 2-D and batched operands."""
    if out is not None:
        # the 1-D @ 1-D case is ``dot`` and has its dtype rule and words
        rule = CAST["dot"] if input.dim() == 1 and other.dim() == 1 else CAST["exact"]
        return write_out("matmul", out, [input, other], lambda: matmul(input, other), rule, check_overlap=False)
    da, db = input.dim(), other.dim()
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    if da == 1 and db == 1:
        return aten.dot.default(input, other)
    if da == 2 and db == 1:
        if input.dtype is not other.dtype and input.shape[1] == other.shape[0]:
            # PyTorch's matmul words a dtype mismatch as mm does (torch.mv itself says "addmv ...")
            from minitorch_nn._tensor import _C_TYPE_NAMES as names

            raise RuntimeError(
                "expected m1 and m2 to have the same dtype, but got: "
                f"{names[input.dtype.name]} != {names[other.dtype.name]}"
            )
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
    out = aten._unsafe_view.default(aten.bmm.default(a3, b3), batch + [n, m])  # as torch: UnsafeViewBackward0
    if da == 1:
        out = aten.squeeze.dim(out, -2)
    if db == 1:
        out = aten.squeeze.dim(out, -1)
    return out


@public
def einsum(equation, *operands):
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b`` (``aten.einsum``)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    if _needs_grad(operands) and _simple_equation(equation, operands):
        # PyTorch's einsum is a composite of differentiable ops; ours is one numpy kernel with no
        # derivative, so when a gradient is wanted we spell it out with broadcasting mul and sum.
        return _einsum_by_mul_and_sum(equation, operands)
    return aten.einsum.default(equation, list(operands))


def _needs_grad(operands):
    import minitorch_nn

    return minitorch_nn.is_grad_enabled() and any(getattr(t, "requires_grad", False) for t in operands)


def _simple_equation(equation, operands):
    if "..." in equation or "->" not in equation:
        return False
    inputs = equation.replace(" ", "").split("->")[0].split(",")
    return len(inputs) == len(operands) and all(len(set(s)) == len(s) for s in inputs)


def _einsum_by_mul_and_sum(equation, operands):
    """``einsum`` as: line every operand up on all labels, multiply (broadcasting), sum the rest."""
    lhs, out = equation.replace(" ", "").split("->")
    inputs = lhs.split(",")
    labels = list(out) + sorted({c for s in inputs for c in s} - set(out))
    product = None
    for spec, t in zip(inputs, operands):
        # permute to the global label order, then insert size-1 dims for the labels it lacks
        order = sorted(range(len(spec)), key=lambda i: labels.index(spec[i]))
        t = aten.permute.default(t, order)
        present = sorted(labels.index(c) for c in spec)
        for pos in range(len(labels)):
            if pos not in present:
                t = aten.unsqueeze.default(t, pos)
        product = t if product is None else aten.mul.Tensor(product, t)
    summed = list(range(len(out), len(labels)))
    return aten.sum.dim_IntList(product, summed) if summed else product
