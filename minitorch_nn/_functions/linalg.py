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
        return aten.mv.default(input, other)
    if da == 1 and db == 2:
        return aten.squeeze.dim(aten.mm.default(aten.unsqueeze.default(input, 0), other), 0)
    if da == 2 and db == 2:
        return aten.mm.default(input, other)
    if da == 3 and db == 3 and (input.shape[0] == 1) != (other.shape[0] == 1):
        # a batch of one that needs a gradient is squeezed so the product can fold into one mm (as torch)
        if input.shape[0] == 1 and input.requires_grad:
            return matmul(aten.squeeze.dim(input, 0), other)
        if other.shape[0] == 1 and other.requires_grad:
            return matmul(input, aten.squeeze.dim(other, 0))
    if _should_fold(input, other):
        # Fold the batch of the larger operand into matrix rows and call one mm/mv, as ATen's
        # _matmul_impl does; a 1-D/2-D @ N-D product is computed transposed, (B^T A^T)^T.
        transpose = db > da
        t1 = aten.transpose.int(other, -2, -1) if transpose else input
        t2 = (aten.t.default(input) if da == 2 else input) if transpose else other
        shape = list(t1.shape[:-1])
        rows = 1
        for s in shape:
            rows *= s
        folded = t1.reshape(rows, t1.shape[-1])
        if t2.dim() == 1:
            return aten._unsafe_view.default(aten.mv.default(folded, t2), shape)
        out = aten._unsafe_view.default(aten.mm.default(folded, t2), shape + [t2.shape[1]])
        return aten.transpose.int(out, -2, -1).contiguous() if transpose else out
    # general batched case: broadcast batch dims, then bmm (a 1-D ``input`` is expanded as a row)
    b = aten.unsqueeze.default(other, -1) if db == 1 else other
    n = input.shape[-2] if da > 1 else 1
    k = input.shape[-1]
    k2, m = b.shape[-2], b.shape[-1]
    batch = list(broadcast_shapes(tuple(input.shape[:-2]), tuple(b.shape[:-2])))
    nb = 1
    for s in batch:
        nb *= s
    a3 = aten.expand.default(input, batch + [n, k]).reshape(nb, n, k)
    b3 = aten.expand.default(b, batch + [k2, m]).reshape(nb, k2, m)
    # one _unsafe_view straight to the result's shape (no squeeze for a 1-D operand), as torch
    out_shape = batch + ([n] if da > 1 else []) + ([m] if db > 1 else [])
    out = aten._unsafe_view.default(aten.bmm.default(a3, b3), out_shape)
    return out


def _should_fold(tensor1, tensor2):
    """ATen's ``should_fold``: can the N-D operand (N >= 3) against a 1-D/2-D one be folded into one
    mm/mv without copying it (or is the copy worth it because the small operand needs a gradient)?"""
    larger = tensor1.dim() >= tensor2.dim()
    big, small = (tensor1, tensor2) if larger else (tensor2, tensor1)
    if not (big.dim() >= 3 and small.dim() <= 2):
        return False
    if small.requires_grad:
        return True  # folding keeps the small operand's gradient a plain mm instead of a batched sum
    if tensor1.dim() == 2:
        return False  # the transposed result would need one more copy
    if big.numel() == 0:
        return True
    shape, strides = list(big.shape), list(big.stride())
    if not larger:  # the folded operand is big.mT
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(big.dim() - 2))


@public
def einsum(equation, *operands):
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b`` (``aten.einsum``)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
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
