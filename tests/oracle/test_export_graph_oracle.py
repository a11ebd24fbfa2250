"""The exported graph itself against ``torch.export.export``: node names, targets, arguments and
order, placeholder targets, ``ep.graph_module``, and the printed forms of ``ep.graph`` and ``ep``.

Each model is built twice (same code, ``lib`` = torch or minitorch_nn); the graphs are compared
node by node after turning every argument into plain data (a node reference becomes its name).
"""

import re

import numpy as np
import pytest

import minitorch_nn as mt

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")


def _plain(a):
    """A node argument as plain data, from either library's graph."""
    name = getattr(a, "name", None)
    if isinstance(name, str) and not isinstance(a, (str, bytes)) and type(a).__name__ in ("Node", "Ref"):
        index = getattr(a, "index", None)
        return name if index is None else (name, index)
    if isinstance(a, (list, tuple)):
        return [_plain(x) for x in a]
    if isinstance(a, float):
        return round(a, 12)
    if type(a).__name__ == "dtype":
        return str(a).replace("torch.", "")
    return a


def _nodes(ep):
    out = []
    for n in ep.graph.nodes:
        if n.op == "placeholder":
            out.append(("placeholder", n.name, str(n.target)))
        elif n.op == "call_function":
            out.append(("call_function", n.name, str(n.target), _plain(tuple(n.args)),
                        {k: _plain(v) for k, v in n.kwargs.items()}))
    return out


def _outputs(ep):
    if isinstance(ep, mt.export.ExportedProgram):
        return [_plain(r) for r in ep.graph.outputs]
    return [_plain(r) for r in next(n for n in ep.graph.nodes if n.op == "output").args[0]]


class MLP:
    @staticmethod
    def build(lib):
        class MLP(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1, self.act, self.fc2 = lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2)

            def forward(self, x):
                return self.fc2(self.act(self.fc1(x)))

        return MLP(), (lib.randn(2, 4),)


class Functional:
    @staticmethod
    def build(lib):
        F = lib.nn.functional

        class M(lib.nn.Module):
            def forward(self, x, y, t):
                a = lib.matmul(x, y).reshape(2, 3, 1).flatten(1)
                b = F.log_softmax(a, 1) + F.cross_entropy(a, t) + F.cross_entropy(a, t, reduction="sum")
                c = F.max_pool2d(x.reshape(1, 1, 2, 4), 2) + F.adaptive_avg_pool2d(x.reshape(1, 1, 2, 4), 1)
                d = F.group_norm(x.reshape(1, 2, 4), 2)
                e = F.conv1d(x.reshape(1, 2, 4), x.reshape(1, 2, 4)[:, :, :2], stride=2)
                return b, c, d, e, x @ y, F.softmax(x, 0), F.linear(x, y.t())

        return M(), (lib.randn(2, 4), lib.randn(4, 3), lib.tensor([0, 2]))


class MoreComposites:
    @staticmethod
    def build(lib):
        F = lib.nn.functional

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.up = lib.nn.ConvTranspose2d(1, 1, 2)
                self.up1 = lib.nn.ConvTranspose1d(2, 1, 2, stride=2)

            def forward(self, x):
                a = F.pad(x, (1, 1)).sum() + x.expand_as(x).sum() + x.type_as(x).view_as(x).sum()
                b = self.up(x.reshape(1, 1, 2, 4)).sum() + self.up1(x.reshape(1, 2, 4)).sum()
                c = F.relu6(x).sum() + F.instance_norm(x.reshape(1, 2, 4)).sum()
                return a + b + c, x.softmax(-1), x.log_softmax(0, dtype=lib.float64)

        return M(), (lib.randn(2, 4),)


class MultiOutput:
    @staticmethod
    def build(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                v, i = x.max(0)
                a, _ = x.chunk(2, 1)
                parts = x.split([1, 3], 1)
                s, _ = x.sort(1)
                return v, i, a, parts[1], x.min(1)[0], s, x.unbind(0)[1]

        return M(), (lib.randn(2, 4),)


class WhereScalars:
    @staticmethod
    def build(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                c = x > 0
                return (lib.where(c, x, 0.0), lib.where(c, 1.0, x), lib.where(c, 1.0, 2.0), x.where(c, -1),
                        lib.where(c, x, x * 2))

        return M(), (lib.randn(3),)


def _seq(*layers, train=True, shape=(2, 4)):
    def build(lib):
        m = lib.nn.Sequential(*[layer(lib.nn) for layer in layers])
        m.train(train)
        return m, (lib.randn(*shape),)

    return build


BUILDS = {
    "linear": lambda lib: (lib.nn.Linear(4, 3), (lib.randn(2, 4),)),
    "linear_no_bias_3d": lambda lib: (lib.nn.Linear(4, 3, bias=False), (lib.randn(2, 5, 4),)),
    "mlp": MLP.build,
    "cnn_train": _seq(lambda nn: nn.Conv2d(1, 2, 3, stride=2, padding=1), lambda nn: nn.BatchNorm2d(2),
                      lambda nn: nn.ReLU(), lambda nn: nn.MaxPool2d(2), lambda nn: nn.Flatten(),
                      lambda nn: nn.Linear(2, 3), lambda nn: nn.LogSoftmax(-1), shape=(1, 1, 5, 5)),
    "cnn_eval": _seq(lambda nn: nn.Conv2d(1, 2, 3), lambda nn: nn.BatchNorm2d(2), lambda nn: nn.Softmax(1),
                     train=False, shape=(1, 1, 5, 5)),
    "norms_train": _seq(lambda nn: nn.LayerNorm(4), lambda nn: nn.GELU(), lambda nn: nn.Dropout(0.1),
                        lambda nn: nn.Tanh(), lambda nn: nn.Sigmoid()),
    "norms_eval": _seq(lambda nn: nn.LayerNorm(4, elementwise_affine=False), lambda nn: nn.Dropout(0.1),
                       lambda nn: nn.SiLU(), train=False),
    "conv_options": _seq(lambda nn: nn.Conv2d(2, 4, 3, stride=2, padding=1, dilation=2, groups=2, bias=False),
                         lambda nn: nn.MaxPool2d(3, stride=1, padding=1, ceil_mode=True),
                         lambda nn: nn.ConvTranspose2d(4, 2, 2, stride=2, output_padding=1), shape=(1, 2, 7, 7)),
    "conv3d": _seq(lambda nn: nn.Conv3d(1, 1, 2, dilation=1, groups=1), shape=(1, 1, 3, 3, 3)),
    "functional": Functional.build,
    "more_composites": MoreComposites.build,
    "multi_output": MultiOutput.build,
    "where_scalars": WhereScalars.build,
}


def _export_both(name):
    torch.manual_seed(0)
    tm, targs = BUILDS[name](torch)
    mt.manual_seed(0)
    mm, margs = BUILDS[name](mt)
    return torch.export.export(tm, targs), mt.export.export(mm, margs), margs, mm


@pytest.mark.parametrize("name", list(BUILDS))
def test_nodes_match_torch(name):
    tep, mep, _, _ = _export_both(name)
    assert _nodes(mep) == _nodes(tep)
    assert _outputs(mep) == _outputs(tep)
    for attr in ("input_specs", "output_specs"):
        ours, theirs = getattr(mep.graph_signature, attr), getattr(tep.graph_signature, attr)
        assert [repr(x) for x in ours] == [repr(x) for x in theirs]


@pytest.mark.parametrize("name", list(BUILDS))
def test_graph_still_computes_the_model(name):
    _, mep, margs, mm = _export_both(name)
    if name in ("cnn_train", "norms_train"):
        return  # running stats / dropout masks: covered by test_export_oracle's batch-norm test
    want = mm(*margs)
    got = mep.module()(*margs)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(np.asarray(g.detach()), np.asarray(w.detach()), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["linear", "mlp", "multi_output"])
def test_printed_graph_is_torchs(name):
    tep, mep, _, _ = _export_both(name)
    assert str(mep.graph) == str(tep.graph)


def _without_source_lines(text):
    # the source comments (and so the blank lines between their groups) and FX's dead-value
    # clean-ups differ by design (see export/graph_module.py)
    text = re.sub(r";  [\w =]+= None", "", text)
    return [line for line in text.split("\n") if line.strip() and not line.strip().startswith("# File")]


@pytest.mark.parametrize("name", ["linear", "mlp", "cnn_eval", "multi_output"])
def test_printed_program_is_torchs_layout(name):
    tep, mep, _, _ = _export_both(name)
    assert _without_source_lines(str(mep)) == _without_source_lines(str(tep))
    assert str(mep.graph_signature) == str(tep.graph_signature)
    assert _without_source_lines(mep.graph_module.code) == _without_source_lines(tep.graph_module.code)
    assert _without_source_lines(str(mep.graph_module)) == _without_source_lines(str(tep.graph_module))
    assert repr(mep.graph_module) == repr(tep.graph_module) == "GraphModule()"


def test_graph_module_takes_every_input_like_torch():
    tep, mep, _, _ = _export_both("mlp")
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    tstate = [p.detach() for p in tep.parameters()]
    mstate = [mt.tensor(np.asarray(t)) for t in tstate]
    tout = tep.graph_module(*tstate, torch.tensor(x))
    mout = mep.graph_module(*mstate, mt.tensor(x))
    assert isinstance(mout, tuple) and len(mout) == len(tout)
    np.testing.assert_allclose(np.asarray(mout[0]), tout[0].numpy(), rtol=1e-5, atol=1e-6)
    assert [n.name for n in mep.graph_module.graph.nodes] == [n.name for n in tep.graph_module.graph.nodes]
