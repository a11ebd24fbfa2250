"""``einsum`` on the GPU: sums out, permutes and batched matmuls (``matmul.bmm3``), pair by pair.

Mirrors what PyTorch's ``Linear.cpp`` ``einsum`` does (it also lowers to ``bmm``), without its
contraction-order search: operands are contracted left to right. For ``"bij,bjk->bik"``:

1. a label that appears in one operand only and not in the output is summed out at once
   (``reduction.py``);
2. for the next pair ``A`` (labels ``la``) and ``B`` (labels ``lb``), each label is one of
   * *batch*: in both, and still needed (by the output or a later operand),
   * *contracted*: in both, and not needed any more,
   * *A-only* / *B-only*;
   ``A`` is permuted to (batch, A-only, contracted) and ``B`` to (batch, contracted, B-only),
   each made contiguous and read as a 3-d matrix, and one ``bmm3`` gives
   (batch, A-only, B-only) -- the running result, with those labels;
3. the result is permuted to the output's label order.

Equations with ``...``, a label repeated inside one operand (a diagonal, ``"ii->i"``) or sizes that
would broadcast take the host path (``fallback.py``), and so do bool operands.
"""

from __future__ import annotations

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn._tensor import _make_view
from minitorch_nn.backends.common import compute_dtype, result_type
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda.copy import cast_contiguous, contiguous
from minitorch_nn.backends.cuda.fallback import host_kernel
from minitorch_nn.backends.cuda.matmul import bmm3
from minitorch_nn.backends.cuda.reduction import reduce


def parse(equation, tensors):
    """(input label strings, output labels, {label: size}), or None when the kernel path cannot do it."""
    eq = equation.replace(" ", "")
    if "." in eq:
        return None
    lhs, arrow, rhs = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(tensors):
        return None
    sizes = {}
    for labels, t in zip(ins, tensors):
        if len(labels) != t.dim() or len(set(labels)) != len(labels) or not all(c.isalpha() for c in labels):
            return None
        for c, s in zip(labels, t.shape):
            if sizes.setdefault(c, s) != s:
                return None  # broadcasting a size-1 label: the host path
    if not arrow:  # implicit output: the labels seen once, in alphabetical order (numpy's rule)
        rhs = "".join(sorted(c for c in sizes if lhs.count(c) == 1))
    if len(set(rhs)) != len(rhs) or any(c not in sizes for c in rhs):
        return None
    return ins, rhs, sizes


def _permute(t, labels, order):
    """``t`` (with ``labels``) permuted to the label order ``order``: a view."""
    i = t._impl
    pos = [labels.index(c) for c in order]
    return _make_view(t, [i.sizes[p] for p in pos], [i.strides[p] for p in pos], i.offset)


def _as_matrices(t, labels, batch, rows, cols, sizes):
    """``t`` permuted to (batch, rows, cols) label groups, contiguous, read as a 3-d tensor."""
    c = contiguous(_permute(t, labels, batch + rows + cols))

    def n(group):
        p = 1
        for ch in group:
            p *= sizes[ch]
        return p

    return storage.wrap(c._impl.storage, (n(batch), n(rows), n(cols)), c.dtype, offset=c._impl.offset)


def _sum_out(t, labels, drop):
    """Sum ``t`` over the labels in ``drop``: (tensor, remaining labels)."""
    dims = [labels.index(c) for c in drop]
    if not dims:
        return t, labels
    return reduce(t, dims, False, "sum", t.dtype), "".join(c for c in labels if c not in drop)


def contract(ins, rhs, sizes, tensors):
    """The einsum of ``tensors`` (all cuda, of one compute dtype) as a contiguous tensor."""
    ops = list(zip(tensors, ins))

    def needed(k):
        """Labels needed by the output or by operands k, k+1, ..."""
        return set(rhs).union(*[set(lab) for _, lab in ops[k:]])

    # 1. labels only one operand has, and the output does not: summed out first
    ops = [_sum_out(t, lab, [c for c in lab if c not in rhs and sum(c in o for o in ins) == 1]) for t, lab in ops]
    cur, cur_lab = ops[0]
    for k in range(1, len(ops)):
        b, b_lab = ops[k]
        keep = needed(k + 1)
        batch = [c for c in cur_lab if c in b_lab and c in keep]
        summed = [c for c in cur_lab if c in b_lab and c not in keep]
        a_only = [c for c in cur_lab if c not in b_lab]
        b_only = [c for c in b_lab if c not in cur_lab]
        am = _as_matrices(cur, cur_lab, batch, a_only, summed, sizes)
        bm = _as_matrices(b, b_lab, batch, summed, b_only, sizes)
        prod = bmm3(am, bm, cur.dtype)
        cur_lab = "".join(batch + a_only + b_only)
        cur = storage.wrap(prod._impl.storage, [sizes[c] for c in cur_lab], prod.dtype)
        cur, cur_lab = _sum_out(cur, cur_lab, [c for c in cur_lab if c not in keep])
    cur, cur_lab = _sum_out(cur, cur_lab, [c for c in cur_lab if c not in rhs])
    return contiguous(_permute(cur, cur_lab, rhs))


_host_einsum = host_kernel(aten.einsum.default)


@aten.einsum.default.impl("cuda")
def einsum(equation, tensors, *, path=None):
    plan = parse(equation, tensors) if tensors and all(t.device.type == "cuda" for t in tensors) else None
    d = result_type(*tensors) if plan is not None else None
    if plan is None or d is dt.bool:
        return _host_einsum(equation, tensors, path=path)  # the cpu answers and errors
    cdt = compute_dtype(d)
    ts = [t if t.dtype is cdt else cast_contiguous(t, cdt) for t in tensors]
    r = contract(*plan[:2], plan[2], ts)
    return r if d is cdt else cast_contiguous(r, d)
