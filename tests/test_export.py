"""Tests for minitorch_nn.export: tracing, the printed graph, weight swapping, save/load, describe_state."""

import io
import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import minitorch_nn as torch
from minitorch_nn import nn
from minitorch_nn._export.utils import _disable_load_state_dict_hooks
from minitorch_nn.export import GuardOnDataDependentSymNode, describe_state, export
from minitorch_nn.export.serialize import SerializationError


def rename_hook(mod, sd, prefix, meta):
    # renames in place, so it also works on a submodule (a returned dict counts only on the root)
    for k in [k for k in sd if k.startswith(prefix + "linear.")]:
        sd[prefix + "fc." + k[len(prefix + "linear."):]] = sd.pop(k)


class Hooked(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.register_buffer("buf", torch.ones(4))
        self._register_state_dict_hook(rename_hook)

    def forward(self, x):
        return self.linear(x) + self.buf


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(64, 4)
        self.sub = Hooked()
        self.register_buffer("shift", torch.full((4,), 0.5), persistent=False)

    def forward(self, x):
        h = self.pool(torch.relu(self.bn(self.conv(x))))
        return self.sub(self.head(h.flatten(1))) + self.shift


def arr(t):
    return np.asarray(t.detach())


def runtime_state(m):
    return dict(m.named_parameters(remove_duplicate=False)) | {
        k: v for k, v in m.named_buffers(remove_duplicate=False)
        if k.rpartition(".")[2] not in (m.get_submodule(k.rpartition(".")[0])._non_persistent_buffers_set)
    }


@pytest.fixture
def net():
    torch.manual_seed(0)
    return Net().eval()


def x_img(seed=0):
    g = np.random.default_rng(seed)
    return torch.tensor(g.standard_normal((2, 3, 8, 8)).astype(np.float32))


def test_module_replays_and_matches_eager(net):
    ep = export(net, (x_img(),))
    x = x_img(1)
    np.testing.assert_allclose(arr(ep.module()(x)), arr(net(x)), rtol=1e-6)
    np.testing.assert_allclose(arr(ep.run(x)), arr(net(x)), rtol=1e-6)


def test_state_dict_ignores_hooks_and_is_the_module_tensors(net):
    ep = export(net, (x_img(),))
    assert "sub.fc.weight" in net.state_dict()
    assert "sub.linear.weight" in ep.state_dict and "sub.fc.weight" not in ep.state_dict
    assert ep.state_dict["conv.weight"] is net.conv.weight
    assert "shift" in ep.constants and "shift" not in ep.state_dict
    assert ep.graph_signature.non_persistent_buffers == ("shift",)
    assert set(ep.module().state_dict()) == set(ep.state_dict)
    assert "sub.linear.weight" in ep.module().state_dict()


def test_graph_prints_one_line_per_op_with_source(net):
    ep = export(net, (x_img(),))
    text = str(ep.graph)
    calls = ep.graph.calls
    assert len(calls) > 5
    for n in calls:
        assert sum(line.lstrip().startswith(f"%{n.name} :") for line in text.splitlines()) == 1
    assert "call_function[target=torch.ops.aten.conv2d.default](args = (%x, %p_conv_weight, %p_conv_bias, [1, 1], [1, 1])" in text
    assert text.splitlines()[1] == "    %p_conv_weight : [num_users=1] = placeholder[target=p_conv_weight]"
    readable = ep.graph_module.print_readable(print_output=False)
    assert "h = self.pool(torch.relu(self.bn(self.conv(x))))" in readable
    assert 'conv2d: "f32[2, 4, 8, 8]" = torch.ops.aten.conv2d.default(' in readable
    assert readable.splitlines()[1].startswith('    def forward(self, p_conv_weight: "f32[4, 3, 3, 3]"')
    assert "Graph signature" in str(ep) and readable.strip() in str(ep).replace("\n    ", "\n")


def test_graph_module_runs_the_graph_on_every_input(net):
    ep = export(net, (x_img(),))
    x = x_img(3)
    state = [ep._state_for(s) for s in ep.graph_signature.input_specs if s.kind.name != "USER_INPUT"]
    out = ep.graph_module(*state, x)
    assert isinstance(out, tuple) and len(out) == 1
    np.testing.assert_allclose(arr(out[0]), arr(ep.run(x)), rtol=1e-6)
    assert ep.graph_module.graph is ep.graph
    assert "def forward(self, p_conv_weight," in ep.graph_module.code


def test_composite_nodes_replay_through_the_public_function():
    m = nn.Sequential(nn.Linear(4, 6), nn.LayerNorm(6), nn.Dropout(0.0), nn.Flatten(), nn.Softmax(-1)).eval()
    ep = export(m, (torch.randn(2, 4),))
    assert [str(n.target) for n in ep.graph.calls] == [
        "aten.linear.default", "aten.layer_norm.default", "aten.dropout.default",
        "aten.flatten.using_ints", "aten.softmax.int"]
    x = torch.randn(2, 4)
    np.testing.assert_allclose(arr(ep.run(x)), arr(m(x)), rtol=1e-6)
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    buf.seek(0)
    ep2 = torch.export.load(buf)
    assert str(ep2.graph) == str(ep.graph)
    np.testing.assert_allclose(arr(ep2.run(x)), arr(m(x)), rtol=1e-6)


def test_where_overloads_save_and_load():
    class M(nn.Module):
        def forward(self, x):
            return torch.where(x > 0, x, 0.0) + torch.where(x > 0, 1.0, x)

    ep = export(M(), (torch.randn(3),))
    assert [str(n.target) for n in ep.graph.calls if "where" in str(n.target)] == [
        "aten.where.ScalarOther", "aten.where.ScalarSelf"]
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    buf.seek(0)
    ep2 = torch.export.load(buf)
    x = torch.randn(3)
    np.testing.assert_array_equal(arr(ep2.run(x)), arr(M()(x)))


def test_composite_calls_the_schema_cannot_hold_are_recorded_decomposed():
    class M(nn.Module):
        def forward(self, x):
            return nn.functional.dropout(x, 0.0, True, inplace=True).softmax(-1) + nn.functional.conv1d(
                x[None], torch.ones(1, 1, 1), padding="same").sum()

    ep = export(M(), (torch.randn(1, 3),))
    targets = [str(n.target) for n in ep.graph.calls]
    assert "aten.dropout.default" not in targets and "aten.conv1d.default" not in targets
    assert "aten.convolution.default" in targets


def test_swap_weights_then_outputs_match_eager_with_new_weights(net):
    ep = export(net, (x_img(),))
    torch.manual_seed(1)
    other = Net().eval()
    with _disable_load_state_dict_hooks(other.sub):
        new_sd = other.state_dict()  # hooks off the renaming submodule: runtime names
    assert set(new_sd) == set(ep.state_dict) and list(new_sd) != list(ep.state_dict)  # same names, module order
    ep.swap_weights(new_sd)
    x = x_img(2)
    np.testing.assert_allclose(arr(ep.run(x)), arr(other(x)), rtol=1e-6)
    np.testing.assert_allclose(arr(ep.module()(x)), arr(other(x)), rtol=1e-6)
    assert isinstance(ep.state_dict["conv.weight"], nn.Parameter)


@pytest.mark.parametrize("break_it", ["missing", "unexpected", "shape", "dtype", "not_tensor"])
def test_bad_swap_changes_nothing(net, break_it):
    ep = export(net, (x_img(),))
    before = dict(ep.state_dict)
    x = x_img(3)
    out_before = arr(ep.run(x))
    torch.manual_seed(5)
    new_sd = {k: v.detach().clone() + 1 for k, v in ep.state_dict.items()}
    if break_it == "missing":
        del new_sd["head.bias"]
    elif break_it == "unexpected":
        new_sd["extra.weight"] = torch.ones(2)
    elif break_it == "shape":
        new_sd["head.weight"] = torch.ones(4, 63)
    elif break_it == "dtype":
        new_sd["head.weight"] = new_sd["head.weight"].double()
    else:
        new_sd["head.weight"] = [1.0]
    with pytest.raises(RuntimeError) as err:
        ep.swap_weights(new_sd)
    msg = str(err.value)
    expect = {"missing": 'Missing key(s) in state_dict: "head.bias"',
              "unexpected": 'Unexpected key(s) in state_dict: "extra.weight"',
              "shape": "size mismatch for head.weight", "dtype": "dtype mismatch for head.weight",
              "not_tensor": 'parameter named "head.weight"'}[break_it]
    assert expect in msg
    assert all(ep.state_dict[k] is v for k, v in before.items()) and list(ep.state_dict) == list(before)
    np.testing.assert_array_equal(arr(ep.run(x)), out_before)


def test_swap_with_hooked_state_dict_explains_the_fix(net):
    ep = export(net, (x_img(),))
    with pytest.raises(RuntimeError) as err:
        ep.swap_weights(net.state_dict())
    msg = str(err.value)
    assert 'Missing key(s) in state_dict: "sub.linear.weight", "sub.linear.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "sub.fc.weight", "sub.fc.bias"' in msg
    assert "hooks rename keys" in msg and "_disable_load_state_dict_hooks" in msg
    assert "_disabled_load_state_dict_hooks" in msg
    # a copy made elsewhere (not the same objects, same values) is recognised too
    copied = {k: v.detach().clone() for k, v in net.state_dict().items()}
    with pytest.raises(RuntimeError, match="hooks rename keys"):
        ep.swap_weights(copied)
    # unrelated wrong names get no such hint
    wrong = {("x" + k): v for k, v in runtime_state(net).items()}
    with pytest.raises(RuntimeError) as err2:
        ep.swap_weights({**wrong, **{k: v for k, v in list(runtime_state(net).items())[1:]}})
    assert "Missing key(s)" in str(err2.value)


def test_data_dependent_control_flow_names_the_line():
    class Branchy(nn.Module):
        def forward(self, x):
            if x.sum() > 0:  # the line the error must name
                return x + 1
            return x - 1

    with pytest.raises(GuardOnDataDependentSymNode) as err:
        export(Branchy(), (torch.randn(3),))
    msg = str(err.value)
    assert "data-dependent" in msg and "if x.sum() > 0:  # the line the error must name" in msg
    assert "test_export.py" in msg and "torch.where" in msg
    # Tensor.item is restored afterwards
    assert torch.tensor([2.5]).item() == 2.5

    class ToList(nn.Module):
        def forward(self, x):
            return torch.tensor(x.tolist())

    with pytest.raises(GuardOnDataDependentSymNode, match="tolist"):
        export(ToList(), (torch.randn(3),))


def test_item_on_a_constant_is_fine():
    class UsesConst(nn.Module):
        def forward(self, x):
            return x * torch.tensor(3.0).item()

    ep = export(UsesConst(), (torch.ones(2),))
    np.testing.assert_array_equal(arr(ep.run(torch.ones(2))), [3.0, 3.0])


def test_meta_export_gives_shapes():
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    m = m.to_empty(device="meta")
    ep = export(m, (torch.empty(5, 4, device="meta"),))
    assert ep.graph.calls[-1].meta["val"][0] == (5, 2)
    assert ep.state_dict["0.weight"].is_meta
    with pytest.raises(RuntimeError, match="meta"):
        torch.export.save(ep, io.BytesIO())


def test_shape_guard():
    ep = export(nn.Linear(4, 2), (torch.randn(3, 4),))
    with pytest.raises(AssertionError, match=r"Guard failed: input.size\(\)\[0\] == 3"):
        ep.run(torch.randn(2, 4))
    with pytest.raises(AssertionError, match=r"dim\(\) == 2"):
        ep.run(torch.randn(4))


def test_kwargs_nested_inputs_and_dict_output():
    class Multi(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, xs, scale=1.0, *, bias=None):
            out = self.fc(xs[0]) * scale + xs[1]
            return {"out": out, "pair": (out, bias)}

    m = Multi()
    xs = [torch.randn(3, 2), torch.randn(3, 2)]
    b = torch.randn(3, 2)
    ep = export(m, (xs, 2.0), {"bias": b})
    assert ep.graph_signature.user_inputs == ("xs_0", "xs_1", "bias")
    got = ep.module()(xs, 2.0, bias=b)
    want = m(xs, 2.0, bias=b)
    np.testing.assert_allclose(arr(got["out"]), arr(want["out"]), rtol=1e-6)
    assert got["pair"][1] is b


def test_gradients_flow_through_module():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    x = torch.randn(5, 3)
    ep = export(m, (x,))
    em = ep.module()
    em(x).sum().backward()
    m(x).sum().backward()
    np.testing.assert_allclose(arr(em.get_parameter("0.weight").grad), arr(m[0].weight.grad), rtol=1e-5)


def test_save_load_round_trip(net, tmp_path):
    ep = export(net, (x_img(),))
    path = tmp_path / "net.mtep"
    torch.export.save(ep, path)
    ep2 = torch.export.load(path)
    x = x_img(4)
    np.testing.assert_allclose(arr(ep2.run(x)), arr(ep.run(x)), rtol=1e-6)
    np.testing.assert_allclose(arr(ep2.module()(x)), arr(net(x)), rtol=1e-6)
    assert list(ep2.state_dict) == list(ep.state_dict)
    assert list(ep2.constants) == list(ep.constants)
    assert str(ep2.graph) == str(ep.graph)
    assert ep2.graph_signature.inputs_to_parameters == ep.graph_signature.inputs_to_parameters


def test_save_load_tied():
    m = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    m[1].weight = m[0].weight
    ep = export(m, (torch.randn(2, 3),))
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    buf.seek(0)
    ep2 = torch.export.load(buf)
    assert ep2.state_dict["0.weight"] is ep2.state_dict["1.weight"]
    x = torch.randn(2, 3)
    np.testing.assert_allclose(arr(ep2.run(x)), arr(m(x)), rtol=1e-6)


def _saved(ep):
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        return {n: z.read(n) for n in z.namelist()}


def _rewrite(entries, program=None):
    if program is not None:
        entries = dict(entries, **{"program.json": json.dumps(program).encode()})
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, d in entries.items():
            z.writestr(n, d)
    buf.seek(0)
    return buf


@pytest.mark.parametrize("damage", ["not_zip", "version", "format", "op", "forward_ref", "weights", "missing_entry",
                                    "out_spec", "in_spec", "not_json"])
def test_load_refuses_bad_files(damage):
    ep = export(nn.Linear(3, 2), (torch.randn(2, 3),))
    entries = _saved(ep)
    program = json.loads(entries["program.json"])
    if damage == "not_zip":
        f = io.BytesIO(b"hello")
    elif damage == "not_json":
        f = _rewrite(dict(entries, **{"program.json": b"{not json"}))
    elif damage == "missing_entry":
        f = _rewrite({k: v for k, v in entries.items() if k != "weights.safetensors"})
    else:
        if damage == "version":
            program["schema_version"] = 999
        elif damage == "format":
            program["format"] = "something else"
        elif damage == "op":
            program["graph"][-2]["target"] = "os.system.default"
        elif damage == "forward_ref":
            program["graph"][-2]["args"][0] = {"ref": "later_node", "index": None}
        elif damage == "out_spec":
            program["graph"][-1]["out_spec"] = {"tuple": ["*", "*"]}
        elif damage == "in_spec":
            program["forward_params"][0]["spec"] = {"list": ["*", "*"]}
        elif damage == "weights":
            from minitorch_nn import safetensors_io

            entries = dict(entries, **{"weights.safetensors": safetensors_io.save(
                {"weight": torch.ones(5, 5), "bias": torch.ones(2)})})
        f = _rewrite(entries, program)
    with pytest.raises(SerializationError, match="export.load"):
        torch.export.load(f)


def test_describe_state_lists_both_views():
    m = nn.Module()
    m.sub = Hooked()
    m.register_buffer("np_buf", torch.ones(1), persistent=False)
    m.const = torch.ones(2)
    rows = {r.runtime_name: r for r in describe_state(m)}
    assert rows["sub.linear.weight"].serialization_name == "sub.fc.weight"
    assert rows["sub.linear.weight"].kind == "parameter" and rows["sub.linear.weight"].saved
    assert rows["sub.buf"].serialization_name == "sub.buf" and rows["sub.buf"].kind == "buffer"
    assert rows["np_buf"].saved is False and rows["np_buf"].kind == "buffer"
    assert rows["const"].kind == "constant" and not rows["const"].saved
    text = str(describe_state(m))
    assert "sub.fc.weight" in text and "saved under another name" in text


def test_disable_hooks_restores_on_error():
    h = Hooked()
    with pytest.raises(KeyError):
        with _disable_load_state_dict_hooks(h):
            assert "linear.weight" in h.state_dict()
            raise KeyError("x")
    assert "fc.weight" in h.state_dict()


def test_export_argument_errors():
    with pytest.raises(ValueError, match="tuple"):
        export(nn.Linear(2, 2), torch.randn(1, 2))
    with pytest.raises(ValueError, match="nn.Module"):
        export(lambda x: x, (torch.randn(1),))


def test_export_is_lazily_imported():
    code = "import sys, minitorch_nn as t; assert 'minitorch_nn.export' not in sys.modules; t.export.export; " \
           "assert 'minitorch_nn.export' in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_swap_tied_names_must_agree():
    m = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    m[1].weight = m[0].weight
    ep = export(m, (torch.randn(2, 3),))
    new = {k: v.detach().clone() for k, v in ep.state_dict.items()}
    new["1.weight"] = new["1.weight"] + 1
    with pytest.raises(RuntimeError, match='"0.weight" and "1.weight" are one tied tensor'):
        ep.swap_weights(new)
    # equal values (a checkpoint that lost the tying) are accepted and tied again
    new["1.weight"] = new["0.weight"].clone()
    ep.swap_weights(new)
    assert ep.state_dict["0.weight"] is ep.state_dict["1.weight"]
    x = torch.randn(2, 3)
    with torch.no_grad():
        m[0].weight.copy_(new["0.weight"])
        m[0].bias.copy_(new["0.bias"])
        m[1].bias.copy_(new["1.bias"])
    np.testing.assert_allclose(arr(ep.run(x)), arr(m(x)), rtol=1e-6)
