"""The compiled twin of ``AccumulateGrad.apply`` (``_ext/twins/autograd/graph.pyx``) against the
readable method in ``autograd/graph.py``.

The same backward passes run with the test's switch and on the readable path; each leaf's
``.grad`` must come out the same (values, dtype, strides, version, view or not), and the same
kernels must run (a stolen gradient copies nothing; one that someone else holds, or whose layout
breaks the leaf's, is copied with ``empty_strided`` + ``copy_``; an existing ``.grad`` takes
``add_``). With the switch on the twin must take the common cases (the readable layout test is not
entered); a replaced helper of graph.py, a post-accumulate-grad hook or create_graph send the call
the readable way.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_nn as mt
from minitorch_nn._ops import aten
from minitorch_nn.autograd import graph
from tests.twins.harness import code_calls, full_path, kernel_calls, switch_on

COPY_OPS = [aten.copy_.default, aten.empty_strided.default, aten.add_.Tensor]


def _leaves(kind):
    mt.manual_seed(0)
    w = mt.randn(5, 4)
    if kind == "column-major":   # a leaf laid out as a transpose
        w = mt.randn(4, 5).t()
    w.requires_grad_(True)
    b = mt.randn(5, requires_grad=True)
    return w, b


def _backward(kind, keep=None, twice=False, create_graph=False):
    """Backward of a small linear model's loss; ``keep`` holds the gradient of ``w`` elsewhere
    (a tensor hook that stores it), ``twice`` accumulates into existing ``.grad``."""
    w, b = _leaves(kind)
    x = mt.randn(3, 4)
    if keep is not None:
        w.register_hook(lambda g: keep.append(g))
    for _ in range(2 if twice else 1):
        loss = (x @ w.t() + b).tanh().sum()
        if create_graph:
            (g,) = mt.autograd.grad(loss, [w], create_graph=True)
            g.sum().backward()
        else:
            loss.backward()
    return w, b


def _describe(tensors):
    out = []
    for t in tensors:
        g = t.grad
        out.append(None if g is None else (g.dtype, tuple(g.shape), g.stride(), g._version, g._is_view(),
                                           g.requires_grad, np.asarray(g.detach()._array).tobytes()))
    return out


@pytest.mark.parametrize("kind", ["row-major", "column-major"])
@pytest.mark.parametrize("case", ["steal", "held elsewhere", "accumulate", "create_graph"])
def test_leaf_gradients_equal_the_readable_ones(kind, case):
    def run():
        with kernel_calls(COPY_OPS) as calls:
            keep = [] if case == "held elsewhere" else None
            leaves = _backward(kind, keep=keep, twice=case == "accumulate", create_graph=case == "create_graph")
        return _describe(leaves), sorted(calls)

    fast = run()
    with full_path():
        full = run()
    assert fast == full


def test_the_twin_takes_the_common_cases_with_the_switch_on():
    for twice in (False, True):
        with code_calls([graph._obeys_layout_contract, graph._dense_in_order]) as calls:
            _backward("row-major", twice=twice)
        assert bool(calls) != switch_on(), twice


def test_a_replaced_helper_or_a_hook_sends_the_call_the_readable_way():
    original = graph._obeys_layout_contract
    calls = []

    def counting(grad, var):
        calls.append(1)
        return original(grad, var)

    graph._obeys_layout_contract = counting
    try:
        _backward("row-major")
    finally:
        graph._obeys_layout_contract = original
    assert calls

    seen = []
    w, b = _leaves("row-major")
    w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
    with code_calls([graph._obeys_layout_contract]) as readable:
        (mt.randn(3, 4) @ w.t() + b).sum().backward()
    assert readable and len(seen) == 1 and seen[0].tolist() == w.grad.tolist()
