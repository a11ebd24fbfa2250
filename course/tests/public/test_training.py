"""Graded tests: training (tutorials 06, 11, 12). Tasks optim-sgd-momentum, train-clip-grad-norm,
compiled-flags. numpy re-computations of the documented rules are the oracle."""

import numpy as np
import pytest


# -- optim-sgd-momentum ----------------------------------------------------------------------------

def _sgd_numpy(p, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    """The documented SGD rules, in float64 numpy."""
    p, buf = p.copy(), None
    for g in grads:
        g = -g if maximize else g.copy()
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p, buf


def _run_sgd(mt, p0, grads, **hyper):
    p = mt.nn.Parameter(mt.tensor(p0))
    opt = mt.optim.SGD([p], **hyper)
    for g in grads:
        p.grad = mt.tensor(g)
        opt.step()
    return p, opt


@pytest.mark.task("optim-sgd-momentum")
@pytest.mark.parametrize("hyper", [
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.05, momentum=0.5, dampening=0.3, weight_decay=0.01),
    dict(lr=0.1, momentum=0.9, nesterov=True),
    dict(lr=0.1, momentum=0.8, maximize=True, weight_decay=0.1),
])
def test_sgd_steps_follow_the_rules(mt, hyper):
    rng = np.random.default_rng(4)
    p0 = rng.standard_normal(5)
    grads = [rng.standard_normal(5) for _ in range(3)]
    p, opt = _run_sgd(mt, p0, grads, **hyper)
    expected, buf = _sgd_numpy(p0, grads, **hyper)
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(), buf, rtol=1e-12, atol=1e-12)


@pytest.mark.task("optim-sgd-momentum")
def test_sgd_leaves_the_gradient_alone(mt):
    p = mt.nn.Parameter(mt.tensor([1.0, 2.0], dtype=mt.float64))
    opt = mt.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.5)
    p.grad = mt.tensor([0.1, 0.2], dtype=mt.float64)
    opt.step()
    assert p.grad.tolist() == [0.1, 0.2], "weight decay must not write into p.grad"
    buf = opt.state[p]["momentum_buffer"]
    assert buf is not p.grad and buf.data_ptr() != p.grad.data_ptr(), "the first buffer is a copy"


# -- train-clip-grad-norm --------------------------------------------------------------------------

@pytest.mark.task("train-clip-grad-norm")
@pytest.mark.parametrize("norm_type", [1.0, 2.0, 3.0, float("inf")])
def test_total_norm(mt, norm_type):
    from minitorch_nn.nn.utils import get_total_norm

    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in [(3,), (2, 2), (1,)]]
    everything = np.concatenate([a.ravel() for a in arrays])
    expected = np.max(np.abs(everything)) if norm_type == float("inf") else (
        np.sum(np.abs(everything) ** norm_type) ** (1 / norm_type))
    total = get_total_norm([mt.tensor(a) for a in arrays], norm_type)
    assert total.dim() == 0
    np.testing.assert_allclose(total.item(), expected, rtol=1e-12)
    assert get_total_norm([]).item() == 0.0


@pytest.mark.task("train-clip-grad-norm")
def test_clip_scales_down_never_up(mt):
    a = mt.nn.Parameter(mt.zeros(2, dtype=mt.float64))
    b = mt.nn.Parameter(mt.zeros(1, dtype=mt.float64))
    a.grad, b.grad = mt.tensor([3.0, 0.0], dtype=mt.float64), mt.tensor([4.0], dtype=mt.float64)
    total = mt.nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    assert total.item() == pytest.approx(5.0)
    scale = 1.0 / (5.0 + 1e-6)
    np.testing.assert_allclose(a.grad.numpy(), [3.0 * scale, 0.0])
    np.testing.assert_allclose(b.grad.numpy(), [4.0 * scale])
    a.grad, b.grad = mt.tensor([0.3, 0.0], dtype=mt.float64), mt.tensor([0.4], dtype=mt.float64)
    mt.nn.utils.clip_grad_norm_([a, b], max_norm=10.0)
    assert a.grad.tolist() == [0.3, 0.0] and b.grad.tolist() == [0.4], "small gradients are not scaled up"


@pytest.mark.task("train-clip-grad-norm")
def test_nonfinite_norm(mt):
    p = mt.nn.Parameter(mt.zeros(2))
    p.grad = mt.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        mt.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert p.grad.tolist() == [float("inf"), 1.0]


# -- compiled-flags --------------------------------------------------------------------------------

@pytest.mark.task("compiled-flags")
def test_flags_switch_and_restore(mt):
    compiled = mt.backends.compiled
    before = compiled.enabled
    with compiled.flags(enabled=False):
        assert compiled.enabled is False
        with compiled.flags(enabled=True):
            assert compiled.enabled is True
        assert compiled.enabled is False
        y = mt.ones(2) + 1
    assert compiled.enabled is before
    assert y.tolist() == [2.0, 2.0]


@pytest.mark.task("compiled-flags")
def test_flags_restore_after_an_error(mt):
    compiled = mt.backends.compiled
    before = compiled.enabled
    seen = []
    compiled.on_change(seen.append)
    seen.clear()
    try:
        with pytest.raises(ValueError):
            with compiled.flags(enabled=not before):
                raise ValueError("inside the block")
    finally:
        compiled._listeners.remove(seen.append)
    assert compiled.enabled is before
    assert seen == [not before, before], "the compiled code is told both times"
