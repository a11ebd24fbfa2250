"""Oracle: ``minitorch_nn.distributions`` against ``torch.distributions`` (PyTorch 2.13).

Each scenario builds the same distribution in both libraries under the same seed and compares
samples (which must be identical: the same generator calls), ``rsample`` and its gradients,
``log_prob``, ``entropy``, ``cdf``/``icdf``, moments, shapes, ``expand``, ``enumerate_support``,
reprs, and the validation errors (type and message).
"""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402

LIBS = (mt, torch)
TOL = {"rtol": 1e-6, "atol": 1e-6}


def _v(x):
    if isinstance(x, (mt.Tensor, torch.Tensor)):
        return ("T", str(x.dtype).split(".")[-1], tuple(x.shape), np.asarray(x.detach().numpy()).tolist())
    if isinstance(x, (tuple, list)):
        return [_v(i) for i in x]
    return x


def _same(a, b):
    """Equal structure; floats equal to rounding (nan equal to nan)."""
    if isinstance(a, tuple) and a and a[0] == "T":
        assert a[:3] == b[:3]
        np.testing.assert_allclose(np.asarray(a[3], dtype=float), np.asarray(b[3], dtype=float), equal_nan=True, **TOL)
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b


def _both(scenario):
    results = []
    for lib in LIBS:
        lib.manual_seed(0)
        results.append(_v(scenario(lib, lib.distributions)))
    _same(results[0], results[1])
    return results[0]


BUILDERS = {
    "normal": lambda lib, D: D.Normal(lib.tensor([0.0, 1.0, -2.0]), lib.tensor([1.0, 0.5, 3.0])),
    "normal_scalar": lambda lib, D: D.Normal(0.5, 2.0),
    "uniform": lambda lib, D: D.Uniform(lib.tensor([0.0, -1.0]), lib.tensor([1.0, 3.0])),
    "bernoulli_probs": lambda lib, D: D.Bernoulli(lib.tensor([0.1, 0.5, 0.9])),
    "bernoulli_logits": lambda lib, D: D.Bernoulli(logits=lib.tensor([-2.0, 0.0, 3.0])),
    "categorical_probs": lambda lib, D: D.Categorical(lib.tensor([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])),
    "categorical_logits": lambda lib, D: D.Categorical(logits=lib.tensor([1.0, -1.0, 0.5, 2.0])),
    "onehot": lambda lib, D: D.OneHotCategorical(lib.tensor([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])),
}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_samples_shapes_moments(name):
    def run(lib, D):
        d = BUILDERS[name](lib, D)
        s1 = d.sample()
        s2 = d.sample((4, 2))
        out = [repr(d), tuple(d.batch_shape), tuple(d.event_shape), s1, s2, d.log_prob(s2), d.entropy(),
               d.mean, d.variance, d.has_rsample, d.has_enumerate_support]
        if d.has_enumerate_support:
            out.append(d.enumerate_support())
            out.append(d.enumerate_support(expand=False))
        if name not in ("uniform",):
            out.append(d.mode)
        expanded = d.expand((2,) + tuple(d.batch_shape))
        out += [tuple(expanded.batch_shape), expanded.sample()]
        return out
    _both(run)


@pytest.mark.parametrize("name", ["normal", "uniform"])
def test_rsample_gradients_cdf_icdf(name):
    def run(lib, D):
        if name == "normal":
            loc = lib.tensor([0.0, 1.0], requires_grad=True)
            scale = lib.tensor([1.0, 2.0], requires_grad=True)
            d = D.Normal(loc, scale)
        else:
            loc = lib.tensor([0.0, 1.0], requires_grad=True)
            scale = lib.tensor([1.0, 4.0], requires_grad=True)
            d = D.Uniform(loc, scale)
        x = d.rsample((3,))
        (x.sum() + d.log_prob(x.detach()).sum() + d.entropy().sum()).backward()
        value = lib.tensor([0.25, 1.5])
        return [x, loc.grad, scale.grad, d.cdf(value), d.icdf(lib.tensor([0.3, 0.9])), d.stddev]
    _both(run)


def test_logits_probs_lazy_and_log_prob_gradients():
    def run(lib, D):
        logits = lib.tensor([[0.3, -1.0, 2.0]], requires_grad=True)
        d = D.Categorical(logits=logits)
        p = d.probs
        lp = d.log_prob(lib.tensor([2]))
        (lp.sum() + d.entropy().sum()).backward()
        b = D.Bernoulli(probs=lib.tensor([0.0, 0.3, 1.0]))
        return [p, d.logits, logits.grad, b.logits, b.log_prob(lib.tensor([0.0, 1.0, 1.0])), b.entropy()]
    _both(run)


def test_onehot_log_prob_and_sample_n():
    def run(lib, D):
        d = D.OneHotCategorical(logits=lib.tensor([0.0, 1.0, 2.0]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = d.sample_n(3)
        return [s, d.log_prob(s), d.perplexity()]
    _both(run)


def _errors(fn):
    out = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            fn(lib, lib.distributions)
        out.append((info.type.__name__, str(info.value)))
    assert out[0] == out[1]


@pytest.mark.parametrize("fn", [
    lambda lib, D: D.Normal(0.0, -1.0),
    lambda lib, D: D.Normal(lib.tensor([0.0, float("nan")]), 1.0),
    lambda lib, D: D.Uniform(2.0, 1.0),
    lambda lib, D: D.Bernoulli(lib.tensor([0.5, 1.5])),
    lambda lib, D: D.Bernoulli(),
    lambda lib, D: D.Bernoulli(0.5, 0.0),
    lambda lib, D: D.Categorical(lib.tensor([0.5, -0.5, 1.0])),
    lambda lib, D: D.Categorical(lib.tensor(0.5)),
    lambda lib, D: D.Categorical(logits=lib.tensor(0.5)),
    lambda lib, D: D.Normal(lib.zeros(2), lib.ones(2)).log_prob(lib.zeros(3)),
    lambda lib, D: D.Normal(0.0, 1.0).log_prob(0.5),
    lambda lib, D: D.Bernoulli(0.3).log_prob(lib.tensor([0.5])),
    lambda lib, D: D.Categorical(lib.ones(3)).log_prob(lib.tensor([3])),
    lambda lib, D: D.Uniform(0.0, 1.0).log_prob(lib.tensor([2.0])),
    lambda lib, D: D.OneHotCategorical(lib.ones(3)).log_prob(lib.tensor([1.0, 1.0, 0.0])),
    lambda lib, D: D.OneHotCategorical(lib.ones(3)).log_prob(lib.tensor([1.0, 0.0])),
    lambda lib, D: D.Distribution.set_default_validate_args(3),
])
def test_validation_errors(fn):
    _errors(fn)


def test_validate_args_false_skips_checks():
    for lib in LIBS:
        d = lib.distributions.Normal(0.0, -1.0, validate_args=False)
        assert np.isnan(d.log_prob(lib.tensor(0.0)).item())
