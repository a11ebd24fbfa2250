"""Hidden graded tests (kept out of student copies): differential checks against the reference."""

import probes
import pytest


@pytest.mark.task("module-state-dict")
@pytest.mark.parametrize("seed", [0, 1])
def test_state_dict_matches_reference(mt, ref, assert_close, seed):
    assert_close(probes.state_dict_probe(mt, seed), ref(probes.state_dict_probe, seed))


@pytest.mark.task("module-to")
def test_to_forms(mt):
    m = mt.nn.Linear(2, 2)
    m.register_buffer("steps", mt.zeros(1, dtype=mt.int64))
    assert m.to("cpu", mt.float64) is m and m.weight.dtype == mt.float64 and m.steps.dtype == mt.int64
    m.to(dtype=mt.float16)
    assert m.bias.dtype == mt.float16
    m.to(mt.zeros(1, dtype=mt.float32))
    assert m.weight.dtype == mt.float32
    with pytest.raises(TypeError):
        m.to("cpu", mt.int64)


@pytest.mark.task("module-to")
def test_to_keeps_parameter_identity_and_grad(mt):
    m = mt.nn.Linear(2, 2)
    w = m.weight
    m(mt.ones(1, 2)).sum().backward()
    m.to(mt.float64)
    assert m.weight is w and w.dtype == mt.float64 and w.grad.dtype == mt.float64


@pytest.mark.task("lazy-infer")
@pytest.mark.parametrize("kind", ["linear", "conv"])
def test_lazy_modules_infer(mt, kind):
    mt.manual_seed(0)
    if kind == "linear":
        m, x = mt.nn.LazyLinear(3), mt.ones(2, 5)
        assert type(m) is mt.nn.LazyLinear and isinstance(m.weight, mt.nn.parameter.UninitializedParameter)
        m(x)
        assert type(m) is mt.nn.Linear and m.in_features == 5 and tuple(m.weight.shape) == (3, 5)
    else:
        m, x = mt.nn.LazyConv2d(4, 3), mt.ones(1, 2, 5, 5)
        m(x)
        assert type(m) is mt.nn.Conv2d and m.in_channels == 2 and tuple(m.weight.shape) == (4, 2, 3, 3)
    assert not m._forward_pre_hooks


@pytest.mark.task("parametrize-forward")
def test_parametrization_chain_order_and_unsafe(mt, assert_close):
    from minitorch_nn.nn.utils import parametrize

    class AddOne(mt.nn.Module):
        def forward(self, x):
            return x + 1

    class Square(mt.nn.Module):
        def forward(self, x):
            return x * x

    m = mt.nn.Linear(2, 2)
    parametrize.register_parametrization(m, "bias", AddOne())
    parametrize.register_parametrization(m, "bias", Square())
    orig = m.parametrizations.bias.original.detach()
    assert_close(m.bias, (orig + 1) ** 2)
    m(mt.ones(1, 2)).sum().backward()
    assert m.parametrizations.bias.original.grad is not None


@pytest.mark.task("module-setattr")
def test_setattr_module_over_buffer_and_plain(mt):
    m = mt.nn.Linear(2, 2)
    m.register_buffer("stat", mt.ones(1))
    m.stat = mt.nn.Identity()
    assert "stat" not in m._buffers and isinstance(m._modules["stat"], mt.nn.Identity)
    assert list(m.state_dict()) == ["weight", "bias"]
    m.stat = None
    assert m._modules["stat"] is None and m.stat is None
    with pytest.raises(TypeError, match="as parameter 'bias'"):
        m.bias = mt.nn.Identity()   # a parameter name takes only a Parameter or None


@pytest.mark.task("module-setattr")
def test_setattr_hook_sees_none(mt):
    from minitorch_nn.nn.modules.module import register_module_module_registration_hook

    calls = []
    m = mt.nn.Sequential(mt.nn.ReLU())
    handle = register_module_module_registration_hook(lambda mod, name, value: calls.append((name, value)))
    try:
        setattr(m, "0", None)
    finally:
        handle.remove()
    assert calls == [("0", None)]


@pytest.mark.task("serialization-allowlist")
def test_python2_names_and_refusal_message(mt):
    import io
    import pickle

    from minitorch_nn._serialization.unpickler import CheckpointUnpickler

    # protocol 2 with a Python 2 module name: __builtin__.set maps to builtins.set (if allowed)
    data = b"\x80\x02c__builtin__\nset\nq\x00]q\x01K\x01a\x85q\x02Rq\x03."
    try:
        out = CheckpointUnpickler(io.BytesIO(data), None).load()
    except pickle.UnpicklingError as err:
        assert "builtins.set" in str(err), "the mapped name is the one refused"
    else:
        assert out == {1}
    with pytest.raises(pickle.UnpicklingError, match="subprocess.Popen"):
        CheckpointUnpickler(io.BytesIO(b"csubprocess\nPopen\n."), None).load()


@pytest.mark.task("serialization-allowlist")
def test_parameter_and_ordered_dict_round_trip(mt, tmp_path):
    model = mt.nn.Sequential(mt.nn.Linear(2, 3), mt.nn.BatchNorm1d(3))
    mt.save(model.state_dict(), tmp_path / "m.pt")
    loaded = mt.load(tmp_path / "m.pt")
    fresh = mt.nn.Sequential(mt.nn.Linear(2, 3), mt.nn.BatchNorm1d(3))
    fresh.load_state_dict(loaded)
    for (k, a), (_, b) in zip(model.state_dict().items(), fresh.state_dict().items()):
        assert mt.equal(a, b), k


@pytest.mark.task("parametrize-cached")
def test_cache_is_per_module_and_name(mt):
    from minitorch_nn.nn.utils import parametrize

    class Neg(mt.nn.Module):
        def forward(self, x):
            return -x

    a, b = mt.nn.Linear(2, 2), mt.nn.Linear(2, 2)
    for m in (a, b):
        parametrize.register_parametrization(m, "weight", Neg())
        parametrize.register_parametrization(m, "bias", Neg())
    with parametrize.cached() as stats:
        tensors = [a.weight, b.weight, a.bias, b.bias, a.weight, b.bias]
    assert tensors[0] is tensors[4] and tensors[3] is tensors[5]
    assert len({id(t) for t in tensors[:4]}) == 4
    assert (stats.computed, stats.saved) == (4, 2)


@pytest.mark.task("parametrize-cached")
def test_cache_emptied_after_an_error(mt):
    from minitorch_nn.nn.utils import parametrize

    class Neg(mt.nn.Module):
        def forward(self, x):
            return -x

    m = mt.nn.Linear(2, 2)
    parametrize.register_parametrization(m, "weight", Neg())
    with pytest.raises(KeyError):
        with parametrize.cached():
            first = m.weight
            raise KeyError("stop")
    assert m.weight is not first
