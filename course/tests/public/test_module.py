"""Graded tests: nn.Module state dicts, conversions, lazy modules, parametrizations."""

import pytest


@pytest.mark.task("module-state-dict")
def test_state_dict_keys_and_storage(mt):
    model = mt.nn.Sequential(mt.nn.Linear(3, 2), mt.nn.BatchNorm1d(2))
    sd = model.state_dict()
    assert list(sd) == ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
                        "1.num_batches_tracked"]
    assert sd["0.weight"].data_ptr() == model[0].weight.data_ptr(), "values share storage"
    assert not sd["0.weight"].requires_grad, "values are detached"
    assert model.state_dict(keep_vars=True)["0.weight"] is model[0].weight


@pytest.mark.task("module-state-dict")
def test_state_dict_skips_non_persistent(mt):
    m = mt.nn.Module()
    m.register_buffer("kept", mt.ones(1))
    m.register_buffer("dropped", mt.ones(1), persistent=False)
    assert list(m.state_dict()) == ["kept"]


@pytest.mark.task("module-to")
def test_to_dtype_casts_floating_only(mt):
    m = mt.nn.BatchNorm1d(2)
    out = m.to(mt.float64)
    assert out is m
    assert m.weight.dtype == mt.float64 and m.running_mean.dtype == mt.float64
    assert m.num_batches_tracked.dtype == mt.int64, "integer buffers keep their dtype"
    assert isinstance(m.weight, mt.nn.Parameter)


@pytest.mark.task("module-to")
def test_to_rejects_integer_dtype(mt):
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes"):
        mt.nn.Linear(2, 2).to(mt.int32)


@pytest.mark.task("lazy-infer")
def test_lazy_linear_becomes_linear(mt):
    m = mt.nn.LazyLinear(4)
    y = m(mt.ones(2, 3))
    assert type(m) is mt.nn.Linear
    assert m.in_features == 3 and tuple(m.weight.shape) == (4, 3)
    assert tuple(y.shape) == (2, 4)
    assert len(m._forward_pre_hooks) == 0, "the inference hook is removed after the first call"


@pytest.mark.task("parametrize-forward")
def test_parametrized_weight(mt, assert_close):
    from minitorch_nn.nn.utils import parametrize

    class Symmetric(mt.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(0, 1)

    class Double(mt.nn.Module):
        def forward(self, x):
            return 2 * x

    m = mt.nn.Linear(3, 3)
    parametrize.register_parametrization(m, "weight", Symmetric())
    parametrize.register_parametrization(m, "weight", Double())
    w = m.weight
    orig = m.parametrizations.weight.original.detach()
    assert_close(w, 2 * (orig.triu() + orig.triu(1).transpose(0, 1)))
