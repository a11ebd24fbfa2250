"""Oracle: ``utils.checkpoint.checkpoint`` (both variants) and ``checkpoint_sequential`` against
PyTorch 2.13: same outputs and gradients (dropout inside included: the random state is replayed),
the function really runs again in backward, activations are not kept, and the errors/warnings."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402
from minitorch_nn.utils.checkpoint import CheckpointError  # noqa: E402

LIBS = (mt, torch)


def _np(x):
    return x.detach().numpy().copy()


def _scenario(lib, use_reentrant, input_requires_grad=True):
    lib.manual_seed(0)
    lin = lib.nn.Linear(4, 4)
    x = lib.randn(3, 4, requires_grad=input_requires_grad)
    calls = []

    def block(x):
        calls.append(1)
        return lib.nn.functional.dropout(lin(x).tanh() * x.exp(), 0.3)

    y = lib.utils.checkpoint.checkpoint(block, x, use_reentrant=use_reentrant)
    calls_after_forward = len(calls)
    (y.sum() + lib.rand(1)).backward()
    return [_np(y), None if x.grad is None else _np(x.grad), _np(lin.weight.grad), _np(lin.bias.grad),
            calls_after_forward, len(calls)]


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_values_gradients_and_recompute(use_reentrant):
    a, b = (_scenario(lib, use_reentrant) for lib in LIBS)
    for x, y in zip(a[:4], b[:4]):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6)
    assert a[4:] == b[4:] == [1, 2]  # one run forward, one more in backward


def test_non_reentrant_with_input_not_requiring_grad_still_reaches_parameters():
    a, b = (_scenario(lib, False, input_requires_grad=False) for lib in LIBS)
    assert a[1] is None and b[1] is None
    np.testing.assert_allclose(a[2], b[2], rtol=1e-6, atol=1e-6)


def test_forward_keeps_no_activations():
    """An intermediate that autograd would save (exp's output, needed by sin's backward) is freed
    after a checkpointed forward, and kept without the checkpoint; gradients are right either way."""
    import gc
    import weakref

    def run(checkpointed):
        storages = []
        x = mt.randn(1000, requires_grad=True)

        def f(x):
            y = x.exp()
            storages.append(weakref.ref(y._impl.storage))  # the numpy buffer behind y
            return y.sin()

        out = mt.utils.checkpoint.checkpoint(f, x, use_reentrant=False) if checkpointed else f(x)
        gc.collect()
        kept = storages[0]() is not None
        out.sum().backward()
        np.testing.assert_allclose(_np(x.grad), _np(x.exp() * x.exp().cos()), rtol=1e-5)
        return kept

    assert run(checkpointed=False) is True
    assert run(checkpointed=True) is False


def test_kwargs_and_warnings_and_errors():
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.utils.checkpoint.checkpoint(lambda x: x * 2, lib.ones(2, requires_grad=True))
        assert any("use_reentrant parameter should be passed explicitly" in str(w.message) for w in caught)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.utils.checkpoint.checkpoint(lambda x: x * 2, lib.ones(2), use_reentrant=True)
        assert any("None of the inputs have requires_grad=True" in str(w.message) for w in caught)
        out = lib.utils.checkpoint.checkpoint(lambda x, scale: x * scale, lib.ones(2, requires_grad=True),
                                              scale=3.0, use_reentrant=False)
        assert out.tolist() == [3.0, 3.0]
    msgs = []
    for lib in LIBS:
        with pytest.raises(ValueError) as info:
            lib.utils.checkpoint.checkpoint(lambda x, s: x, lib.ones(2), s=1, use_reentrant=True)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_nondeterministic_recompute_raises():
    state = {"n": 3}

    def f(x):
        state["n"] += 1
        return (x[: state["n"]] ** 2).sum()

    outs = []
    for lib, error in ((mt, CheckpointError), (torch, torch.utils.checkpoint.CheckpointError)):
        state["n"] = 3
        y = lib.utils.checkpoint.checkpoint(f, lib.arange(8.0, requires_grad=True), use_reentrant=False)
        with pytest.raises(error) as info:
            y.backward()
        outs.append(str(info.value).split("\n")[0])
    assert outs[0] == outs[1]


def test_checkpoint_sequential():
    results = []
    for lib in LIBS:
        lib.manual_seed(0)
        model = lib.nn.Sequential(*[lib.nn.Linear(4, 4) for _ in range(4)])
        x = lib.randn(2, 4, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=False)
        out.sum().backward()
        results.append([_np(out), _np(x.grad), _np(model[0].weight.grad)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
