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


# -- module-setattr --------------------------------------------------------------------------------

@pytest.mark.task("module-setattr")
def test_assigning_a_module_registers_it(mt):
    m = mt.nn.Module()
    child = mt.nn.Linear(2, 2)
    m.layer = child
    assert m._modules["layer"] is child and "layer" not in m.__dict__
    assert [name for name, _ in m.named_children()] == ["layer"]
    assert list(m.state_dict()) == ["layer.weight", "layer.bias"]


@pytest.mark.task("module-setattr")
def test_a_module_replaces_other_kinds_of_the_same_name(mt):
    m = mt.nn.Module()
    m.thing = 3
    m.register_buffer("buf", mt.ones(1), persistent=False)
    m.thing = mt.nn.ReLU()
    m.buf = mt.nn.Tanh()
    assert "thing" not in m.__dict__ and isinstance(m._modules["thing"], mt.nn.ReLU)
    assert "buf" not in m._buffers and "buf" not in m._non_persistent_buffers_set
    assert isinstance(m.buf, mt.nn.Tanh)


@pytest.mark.task("module-setattr")
def test_child_names_take_modules_or_none(mt):
    m = mt.nn.Sequential(mt.nn.ReLU())
    with pytest.raises(TypeError, match=r"cannot assign 'int' as child module '0' \(torch.nn.Module or None expected\)"):
        setattr(m, "0", 5)
    setattr(m, "0", None)
    assert "0" in m._modules and m._modules["0"] is None

    class Early(mt.nn.Module):
        def __init__(self):
            self.layer = mt.nn.ReLU()   # before super().__init__()

    with pytest.raises(AttributeError, match="cannot assign module before Module.__init__\\(\\) call"):
        Early()


@pytest.mark.task("module-setattr")
def test_registration_hooks_can_replace_the_module(mt):
    from minitorch_nn.nn.modules.module import register_module_module_registration_hook

    seen = []

    def hook(module, name, value):
        seen.append(name)
        return mt.nn.Identity() if name == "swap_me" else None

    handle = register_module_module_registration_hook(hook)
    try:
        m = mt.nn.Module()
        m.keep = mt.nn.ReLU()
        m.swap_me = mt.nn.ReLU()
    finally:
        handle.remove()
    assert seen == ["keep", "swap_me"]
    assert isinstance(m.keep, mt.nn.ReLU) and isinstance(m.swap_me, mt.nn.Identity)


# -- serialization-allowlist -----------------------------------------------------------------------

@pytest.mark.task("serialization-allowlist")
def test_allowed_names_load(mt, tmp_path):
    from collections import OrderedDict

    sd = OrderedDict(w=mt.nn.Parameter(mt.ones(2)), b=mt.zeros(3, dtype=mt.int64))
    mt.save(sd, tmp_path / "ok.pt")
    back = mt.load(tmp_path / "ok.pt")
    assert type(back) is OrderedDict and type(back["w"]) is mt.nn.Parameter
    assert back["b"].tolist() == [0, 0, 0]


@pytest.mark.task("serialization-allowlist")
def test_other_globals_are_refused_and_never_imported(mt, tmp_path):
    import io
    import pickle

    from minitorch_nn._serialization.unpickler import CheckpointUnpickler

    def unpickle(data):
        return CheckpointUnpickler(io.BytesIO(data), storage_loader=None).load()

    with pytest.raises(pickle.UnpicklingError, match="os.system"):
        unpickle(b"cos\nsystem\n(S'echo pwned'\ntR.")
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL names must be text"):
        CheckpointUnpickler(io.BytesIO(b""), storage_loader=None).find_class(1, "x")
    import sys

    sys.modules.pop("this", None)
    with pytest.raises(pickle.UnpicklingError):
        unpickle(b"cthis\nd\n.")
    assert "this" not in sys.modules, "a refused name must not be imported"


@pytest.mark.task("serialization-allowlist")
def test_user_allowed_globals(mt):
    import io
    import pickle

    from minitorch_nn._serialization.unpickler import CheckpointUnpickler

    class Point:
        pass

    Point.__module__, Point.__qualname__ = "course_tests", "Point"
    mt.serialization.add_safe_globals([Point])
    try:
        assert CheckpointUnpickler(io.BytesIO(b""), None).find_class("course_tests", "Point") is Point
    finally:
        mt.serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        CheckpointUnpickler(io.BytesIO(b""), None).find_class("course_tests", "Point")


# -- parametrize-cached ----------------------------------------------------------------------------

def _counting_parametrization(mt, calls):
    class Twice(mt.nn.Module):
        def forward(self, x):
            calls.append(1)
            return 2 * x

    return Twice()


@pytest.mark.task("parametrize-cached")
def test_reads_recompute_outside_cached(mt):
    from minitorch_nn.nn.utils import parametrize

    calls = []
    m = mt.nn.Linear(2, 2)
    parametrize.register_parametrization(m, "weight", _counting_parametrization(mt, calls))
    calls.clear()
    a, b = m.weight, m.weight
    assert len(calls) == 2 and a is not b
    assert mt.equal(a, 2 * m.parametrizations.weight.original)


@pytest.mark.task("parametrize-cached")
def test_cached_computes_once_per_block(mt):
    from minitorch_nn.nn.utils import parametrize

    calls = []
    m = mt.nn.Linear(2, 2)
    parametrize.register_parametrization(m, "weight", _counting_parametrization(mt, calls))
    calls.clear()
    with parametrize.cached() as stats:
        a = m.weight
        with parametrize.cached():
            b = m.weight
        c = m.weight
    assert a is b is c and len(calls) == 1
    assert (stats.computed, stats.saved) == (1, 2)
    d = m.weight
    assert d is not a and len(calls) == 2, "the cache is emptied when the outermost block ends"
