"""Oracle tests: minitorch_nn.export against torch.export.export on the same modules.

Each model is built by one function that takes the library (``torch`` or ``mt``), so both
libraries get identical code; the weights are then copied from the torch model. The central
scenario is PyTorch PR #137609: a module whose ``_register_state_dict_hook`` renames keys.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402
from minitorch_nn._export.utils import (  # noqa: E402
    _disable_load_state_dict_hooks,
    _disabled_load_state_dict_hooks,
)


def rename_linear_hook(mod, state_dict, prefix, local_metadata):
    # the PR's test: keys whose local part starts with "linear" are renamed
    out = {}
    for k, v in state_dict.items():
        local = k[len(prefix):] if k.startswith(prefix) else k
        out[prefix + "fc" + local[len("linear"):] if local.startswith("linear") else k] = v
    return out


def hooked_model(lib):
    class Hooked(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = lib.nn.Linear(4, 4)
            self.register_buffer("buf", lib.ones(4))
            self._register_state_dict_hook(rename_linear_hook)

        def forward(self, x):
            return self.linear(x) + self.buf

    return Hooked()


def full_model(lib):
    """Tied parameters, non-persistent buffer, attribute constant, BatchNorm, a hooked submodule."""

    class Full(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = lib.nn.Linear(3, 3)
            self.tied = lib.nn.Linear(3, 3)
            self.tied.weight = self.linear.weight
            self.register_buffer("buf", lib.ones(3))
            self.register_buffer("scale", lib.ones(3) * 2, persistent=False)
            self.const = lib.tensor([1.0, 2.0, 3.0])
            self.sub = hooked_model(lib)
            self.bn = lib.nn.BatchNorm1d(4)

        def forward(self, x):
            z = self.linear(x) + self.tied(x) + self.buf + self.scale + self.const
            z = lib.cat([z, z[:, :1]], dim=1)
            return self.bn(self.sub(z))

    return Full()


def mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))


def cnn(lib):
    return lib.nn.Sequential(
        lib.nn.Conv2d(3, 4, 3, padding=1), lib.nn.BatchNorm2d(4), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
        lib.nn.Flatten(), lib.nn.Linear(4 * 4 * 4, 5),
    )


def copy_weights(tm, mm):
    tsd = dict(tm.named_parameters(remove_duplicate=False)) | dict(tm.named_buffers(remove_duplicate=False))
    msd = dict(mm.named_parameters(remove_duplicate=False)) | dict(mm.named_buffers(remove_duplicate=False))
    assert list(tsd) == list(msd)
    with mt.no_grad():
        for k, v in msd.items():
            v.copy_(mt.tensor(tsd[k].detach().numpy().copy()))


def pair(build, seed=0):
    torch.manual_seed(seed)
    tm = build(torch)
    mm = build(mt)
    copy_weights(tm, mm)
    return tm, mm


def to_np(t):
    return np.asarray(t.detach())


SIG_ATTRS = [
    "parameters", "buffers", "non_persistent_buffers", "user_inputs", "inputs_to_parameters",
    "inputs_to_buffers", "inputs_to_lifted_tensor_constants", "lifted_tensor_constants", "buffers_to_mutate",
]


@pytest.mark.parametrize("build", [hooked_model, full_model, mlp, cnn])
def test_signature_state_dict_constants_match(build):
    tm, mm = pair(build)
    shape = (2, 3, 8, 8) if build is cnn else (2, 3 if build is full_model else 4)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    tep = torch.export.export(tm, (torch.tensor(x),))
    mep = mt.export.export(mm, (mt.tensor(x),))
    assert list(mep.state_dict) == list(tep.state_dict)
    assert list(mep.constants) == list(tep.constants)
    for attr in SIG_ATTRS:
        assert getattr(mep.graph_signature, attr) == getattr(tep.graph_signature, attr), attr
    assert [s.arg.name for s in mep.graph_signature.input_specs] == [s.arg.name for s in tep.graph_signature.input_specs]
    assert [s.kind.name for s in mep.graph_signature.input_specs] == [s.kind.name for s in tep.graph_signature.input_specs]
    assert [s.persistent for s in mep.graph_signature.input_specs] == [s.persistent for s in tep.graph_signature.input_specs]
    # the module's own objects, in both
    for k, v in mep.state_dict.items():
        assert v is (mm.get_parameter(k) if k in mep.graph_signature.parameters else mm.get_buffer(k))
    assert list(mep.module().state_dict()) == list(tep.module().state_dict())
    assert list(mm.state_dict()) == list(tm.state_dict())


@pytest.mark.parametrize("build", [hooked_model, full_model, mlp, cnn])
def test_module_outputs_match_eager_and_torch(build):
    tm, mm = pair(build)
    tm.eval()
    mm.eval()
    shape = (2, 3, 8, 8) if build is cnn else (2, 3 if build is full_model else 4)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    tep = torch.export.export(tm, (torch.tensor(x),))
    mep = mt.export.export(mm, (mt.tensor(x),))
    x2 = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    t_out = to_np(tep.module()(torch.tensor(x2)))
    np.testing.assert_allclose(t_out, to_np(tm(torch.tensor(x2))), rtol=1e-5, atol=1e-6)
    m_out = to_np(mep.module()(mt.tensor(x2)))
    np.testing.assert_allclose(m_out, to_np(mm(mt.tensor(x2))), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m_out, t_out, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(to_np(mep(mt.tensor(x2))), t_out, rtol=1e-4, atol=1e-5)


def test_pr_137609_scenario_keys():
    tm, mm = pair(hooked_model)
    assert list(mm.state_dict()) == list(tm.state_dict())
    assert set(tm.state_dict()) == {"fc.weight", "fc.bias", "buf"}
    tep = torch.export.export(tm, (torch.randn(2, 4),))
    mep = mt.export.export(mm, (mt.randn(2, 4),))
    assert list(mep.state_dict) == list(tep.state_dict) == ["linear.weight", "linear.bias", "buf"]
    # ep.module() uses the runtime names, so the hooked checkpoint does not load (both libraries)
    with pytest.raises(RuntimeError) as t_err:
        tep.module().load_state_dict(tm.state_dict())
    with pytest.raises(RuntimeError) as m_err:
        mep.module().load_state_dict(mm.state_dict())
    for err in (t_err, m_err):
        assert 'Missing key(s) in state_dict: "linear.weight", "linear.bias"' in str(err.value)
        assert 'Unexpected key(s) in state_dict: "fc.weight", "fc.bias"' in str(err.value)


def test_disable_state_dict_hooks_context():
    from torch._export.utils import _disable_load_state_dict_hooks as t_disable

    tm, mm = pair(hooked_model)
    with t_disable(tm):
        t_keys = list(tm.state_dict())
    with _disable_load_state_dict_hooks(mm):
        m_keys = list(mm.state_dict())
    assert m_keys == t_keys
    assert set(t_keys) == {"linear.weight", "linear.bias", "buf"}
    assert list(mm.state_dict()) == list(tm.state_dict())
    assert "fc.weight" in tm.state_dict()
    # restored even when the block raises
    with pytest.raises(ValueError):
        with _disabled_load_state_dict_hooks(mm):
            raise ValueError("boom")
    assert list(mm.state_dict()) == list(tm.state_dict())
    # like PyTorch: only the module passed in loses its hooks
    tf, mf = pair(full_model)
    with t_disable(tf):
        t_keys = list(tf.state_dict())
    with _disable_load_state_dict_hooks(mf):
        m_keys = list(mf.state_dict())
    assert m_keys == t_keys


def test_state_dict_property_cannot_be_set():
    tm, mm = pair(mlp)
    tep = torch.export.export(tm, (torch.randn(2, 4),))
    mep = mt.export.export(mm, (mt.randn(2, 4),))
    with pytest.raises(RuntimeError) as t_err:
        tep.state_dict = {}
    with pytest.raises(RuntimeError) as m_err:
        mep.state_dict = {}
    assert str(m_err.value) == str(t_err.value)


def test_tied_parameters_listed_under_every_name():
    tm, mm = pair(full_model)
    tep = torch.export.export(tm, (torch.randn(2, 3),))
    mep = mt.export.export(mm, (mt.randn(2, 3),))
    assert mep.state_dict["linear.weight"] is mep.state_dict["tied.weight"]
    assert (tep.state_dict["linear.weight"] is tep.state_dict["tied.weight"])
    mod_t, mod_m = tep.module(), mep.module()
    assert (mod_m.linear.weight is mod_m.tied.weight) == (mod_t.linear.weight is mod_t.tied.weight)
    assert [n for n, _ in mod_m.named_buffers()] == [n for n, _ in mod_t.named_buffers()]


def test_shape_guard_like_torch():
    tm, mm = pair(mlp)
    tep = torch.export.export(tm, (torch.randn(2, 4),))
    mep = mt.export.export(mm, (mt.randn(2, 4),))
    with pytest.raises(AssertionError) as t_err:
        tep.module()(torch.randn(3, 4))
    with pytest.raises(AssertionError) as m_err:
        mep.module()(mt.randn(3, 4))
    assert str(t_err.value).splitlines()[0] == str(m_err.value).splitlines()[0]


def test_weight_swap_matches_torch_eager_with_new_weights():
    tm, mm = pair(cnn)
    tm.eval()
    mm.eval()
    x = np.random.default_rng(3).standard_normal((2, 3, 8, 8)).astype(np.float32)
    mep = mt.export.export(mm, (mt.tensor(x),))
    torch.manual_seed(7)
    t_new = cnn(torch).eval()
    new_sd = {k: mt.tensor(v.detach().numpy().copy()) for k, v in t_new.state_dict().items()}
    mep.swap_weights(new_sd)
    np.testing.assert_allclose(to_np(mep.module()(mt.tensor(x))), to_np(t_new(torch.tensor(x))), rtol=1e-4, atol=1e-5)


def test_module_train_eval_refused_like_torch():
    tm, mm = pair(mlp)
    tmod = torch.export.export(tm, (torch.randn(2, 4),)).module()
    mmod = mt.export.export(mm, (mt.randn(2, 4),)).module()
    for call in (lambda m: m.eval(), lambda m: m.train()):
        with pytest.raises(NotImplementedError) as t_err:
            call(tmod)
        with pytest.raises(NotImplementedError) as m_err:
            call(mmod)
        assert str(m_err.value).splitlines()[0] == str(t_err.value)


def test_training_mode_batchnorm_updates_running_stats_like_torch():
    tm, mm = pair(cnn)
    x = np.random.default_rng(5).standard_normal((4, 3, 8, 8)).astype(np.float32)
    tep = torch.export.export(tm, (torch.tensor(x),))
    mep = mt.export.export(mm, (mt.tensor(x),))
    # export leaves the model as it was (PyTorch traces fake tensors; we copy the state back)
    np.testing.assert_array_equal(to_np(mm[1].running_mean), to_np(tm[1].running_mean))
    assert int(mm[1].num_batches_tracked) == int(tm[1].num_batches_tracked) == 0
    x2 = np.random.default_rng(6).standard_normal((4, 3, 8, 8)).astype(np.float32)
    t_out = to_np(tep.module()(torch.tensor(x2)))
    m_out = to_np(mep.module()(mt.tensor(x2)))
    np.testing.assert_allclose(m_out, t_out, rtol=1e-4, atol=1e-5)
    # the program's buffers are the module's: both updated them in place
    np.testing.assert_allclose(to_np(mm[1].running_var), to_np(tm[1].running_var), rtol=1e-5, atol=1e-6)
    assert int(mm[1].num_batches_tracked) == int(tm[1].num_batches_tracked)


def test_data_dependent_branch_raises_runtime_error_subclass_like_torch():
    def build(lib):
        class Branchy(lib.nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    return x + 1
                return x - 1

        return Branchy()

    with pytest.raises(RuntimeError) as t_err:
        torch.export.export(build(torch), (torch.ones(3),))
    with pytest.raises(RuntimeError) as m_err:
        mt.export.export(build(mt), (mt.ones(3),))
    assert type(m_err.value).__name__ == type(t_err.value).__name__
    assert "Could not guard on data-dependent expression" in str(t_err.value)
    assert "Could not guard on data-dependent expression" in str(m_err.value)
    assert "if x.sum() > 0:" in str(t_err.value) and "if x.sum() > 0:" in str(m_err.value)


def test_constants_values_and_identity():
    tm, mm = pair(full_model)
    tep = torch.export.export(tm, (torch.randn(2, 3),))
    mep = mt.export.export(mm, (mt.randn(2, 3),))
    for k in tep.constants:
        np.testing.assert_array_equal(to_np(mep.constants[k]), to_np(tep.constants[k]))
    assert mep.constants["scale"] is mm.scale
    assert (tep.constants["scale"] is tm.scale) == (mep.constants["scale"] is mm.scale)
