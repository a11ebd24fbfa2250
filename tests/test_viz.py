"""The pictures of ``minitorch_nn.viz`` draw what the live objects hold.

Each test builds a small object, draws it, and reads back what was drawn: the strings of the
figure's ``Text`` artists and the ``gid`` each box, bar and arrow carries (``node:...``,
``edge:a->b``...). No pixels are compared. The last test renders every picture to a PNG with
the Agg backend and opens it with Pillow.
"""

from __future__ import annotations

import io

import pytest

matplotlib = pytest.importorskip("matplotlib", reason="minitorch_nn.viz draws with matplotlib (viz extra)")
pytest.importorskip("networkx", reason="minitorch_nn.viz lays graphs out with networkx (viz extra)")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import minitorch_nn as torch  # noqa: E402
from minitorch_nn import nn, viz  # noqa: E402
from minitorch_nn.nn.utils import parametrize  # noqa: E402
from minitorch_nn.utils._python_dispatch import TorchDispatchMode  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def joined(fig) -> str:
    return "\n".join(texts(fig))


def gids(fig) -> list[str]:
    return [a.get_gid() for a in fig.findobj(lambda a: a.get_gid() is not None)]


def gid_text(fig, gid) -> str:
    (found,) = [a for a in fig.findobj(Text) if a.get_gid() == gid]
    return found.get_text()


# -- autograd_graph ------------------------------------------------------------------------------


def test_autograd_graph_draws_nodes_edges_and_named_leaves():
    torch.manual_seed(0)
    layer = nn.Linear(3, 2)
    loss = layer(torch.randn(4, 3)).tanh().sum()
    fig = viz.autograd_graph(loss, layer)
    g = gids(fig)
    for node in ("SumBackward0", "TanhBackward0", "AddmmBackward0", "TBackward0", "AccumulateGrad"):
        assert f"node:{node}" in g
    for edge in ("SumBackward0->TanhBackward0", "TanhBackward0->AddmmBackward0",
                 "AddmmBackward0->TBackward0", "AddmmBackward0->AccumulateGrad",
                 "TBackward0->AccumulateGrad"):
        assert f"edge:{edge}" in g
    assert g.count("node:AccumulateGrad") == 2
    text = joined(fig)
    assert "weight f32[2, 3]" in text and "bias f32[2]" in text
    # saved tensors: name, dtype, shape, version when saved
    assert "result: f32[4, 2] v0" in text
    assert "mat1: f32[4, 3] v0" in text


def test_autograd_graph_marks_stale_saved_tensors_and_freed_ones():
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3)
    out = (a * b).sum()
    fig = viz.autograd_graph(out)
    assert "other: f32[3] v0" in joined(fig) and "STALE" not in joined(fig)
    plt.close(fig)
    b.add_(1)  # b was saved by MulBackward0 for a's gradient
    fig = viz.autograd_graph(out)
    assert "other: f32[3] v0, now v1: STALE" in joined(fig)
    plt.close(fig)

    c = torch.ones(3, requires_grad=True)
    loss = (c * c).sum()
    loss.backward()
    fig = viz.autograd_graph(loss)
    assert "self: freed by backward" in joined(fig)


def test_autograd_graph_marks_hooks_and_keeps_both_edges_of_y_times_y():
    x = torch.ones(2, requires_grad=True)
    x.register_hook(lambda g: g)
    y = x.exp()
    y.register_hook(lambda g: g * 2)
    loss = (y * y).sum()
    loss.grad_fn.register_prehook(lambda g: None)
    fig = viz.autograd_graph(loss)
    assert "hooks: prehook x1" in gid_text(fig, "node:SumBackward0")
    assert "hooks: tensor hook x1" in gid_text(fig, "node:ExpBackward0")
    assert "hooks: tensor hook x1" in gid_text(fig, "node:AccumulateGrad")
    assert "hooks:" not in gid_text(fig, "node:MulBackward0")
    assert gids(fig).count("edge:MulBackward0->ExpBackward0") == 2


def test_autograd_graph_names_leaves_given_by_name():
    x, w = torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    fig = viz.autograd_graph((x * w).sum(), names={"x": x, "w": w})
    leaves = sorted(t.get_text() for t in fig.findobj(Text) if t.get_gid() == "node:AccumulateGrad")
    assert leaves == ["AccumulateGrad\nw f32[3]", "AccumulateGrad\nx f32[3]"]


def test_autograd_graph_shows_what_a_custom_function_saved():
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * grad

    x = torch.ones(2, 2, requires_grad=True)
    fig = viz.autograd_graph(Cube.apply(x).sum(), names={"x": x})
    assert "node:CubeBackward" in gids(fig)
    assert gid_text(fig, "node:CubeBackward") == "CubeBackward\nsaved_tensors[0]: f32[2, 2] v0"
    assert "edge:CubeBackward->AccumulateGrad" in gids(fig)


def test_autograd_graph_refuses_a_tensor_without_history():
    with pytest.raises(RuntimeError, match="needs a tensor that requires grad"):
        viz.autograd_graph(torch.ones(2))


# -- storage_views -------------------------------------------------------------------------------


def test_storage_views_lays_each_view_over_the_storage():
    x = torch.arange(6.0).view(2, 3)
    fig = viz.storage_views({"x": x, "x.t()": x.t(), "x[:, 1:]": x[:, 1:], "row": x[0].expand(2, 3)})
    g = gids(fig)
    assert [gid_text(fig, f"value:{p}") for p in range(6)] == ["0", "1", "2", "3", "4", "5"]
    # x.t() element [0, 1] reads storage position 3; x[:, 1:] skips positions 0 and 3
    assert gid_text(fig, "element:x.t():3") == "[0, 1]"
    assert "read:x[:, 1:]:0" not in g and "read:x[:, 1:]:3" not in g
    assert gid_text(fig, "element:x[:, 1:]:4") == "[1, 0]"
    # expand reads each of three positions twice
    assert gid_text(fig, "element:row:2") == "[0, 2]\nx2"
    assert "contiguous: yes" in gid_text(fig, "row:x")
    caption = gid_text(fig, "row:x.t()")
    assert "strides (1, 3)" in caption and "sizes (3, 2)" in caption and "contiguous: no" in caption
    assert "offset 1" in gid_text(fig, "row:x[:, 1:]")


def test_storage_views_refuses_tensors_that_share_nothing():
    x = torch.arange(6.0).view(2, 3)
    with pytest.raises(ValueError, match="does not share the storage"):
        viz.storage_views(x, x.t().contiguous())
    with pytest.raises(ValueError, match="meta tensor"):
        viz.storage_views(torch.empty(2, device="meta"))
    with pytest.raises(ValueError, match="at most 48"):
        viz.storage_views(torch.zeros(100))


# -- dispatch_timeline ---------------------------------------------------------------------------


class _Passthrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_dispatch_timeline_nests_every_layer_of_a_call():
    x, y = torch.ones(2, requires_grad=True), torch.ones(2)
    with _Passthrough():
        with torch.utils.dispatch_trace() as trace:
            x + y
    fig = viz.dispatch_timeline(trace)
    text = joined(fig)
    assert "Tensor.add(f32[2], f32[2])" in text
    assert "aten.add.Tensor" in text
    assert "autograd: AddBackward0" in text
    assert "kernel: cpu.pointwise.add" in text
    bars = [g for g in gids(fig) if g.startswith("bar:")]
    layers = {g.rsplit(":", 1)[1] for g in bars}
    assert {"Python function", "aten op", "autograd", "__torch_dispatch__", "kernel"} <= layers
    # nesting: the aten op sits under the Python call, the kernel under the dispatch handler
    assert "bar:0:Python function" in bars and "bar:0.0:aten op" in bars
    assert any(g.startswith("bar:0.0.") and g.endswith(":kernel") for g in bars)
    assert any(g.startswith("bar:0.0.") and g.endswith(":__torch_dispatch__") for g in bars)


def test_dispatch_timeline_shows_torch_function_handlers():
    class Logged(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs)

    t = torch.ones(2).as_subclass(Logged)
    with torch.utils.dispatch_trace() as trace:
        t.neg()
    fig = viz.dispatch_timeline(trace)
    assert "__torch_function__" in {g.rsplit(":", 1)[1] for g in gids(fig) if g.startswith("bar:")}
    assert "__torch_function__: Logged" in joined(fig)


def test_dispatch_timeline_refuses_an_empty_trace():
    with torch.utils.dispatch_trace() as trace:
        pass
    with pytest.raises(ValueError, match="empty trace"):
        viz.dispatch_timeline(trace)


# -- module_tree ---------------------------------------------------------------------------------


def _rename_fc_to_linear(module, state_dict, prefix, local_metadata):
    for key in list(state_dict):
        if key.startswith(prefix + "fc."):
            state_dict[key.replace("fc.", "linear.", 1)] = state_dict.pop(key)


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("mean", torch.zeros(3))
        self.register_buffer("calls", torch.zeros(()), persistent=False)
        self.register_state_dict_post_hook(_rename_fc_to_linear)

    def forward(self, x):
        return self.fc(x - self.mean)


def test_module_tree_shows_both_names_hooks_and_buffers():
    model = _Net()
    model.fc.register_forward_hook(lambda *a: None)
    fig = viz.module_tree(model)
    assert gid_text(fig, "key:fc.weight") == "linear.weight"
    assert gid_text(fig, "key:fc.bias") == "linear.bias"
    assert gid_text(fig, "what:fc.weight") == "Parameter f32[2, 3]"
    assert gid_text(fig, "what:calls") == "buffer (not persistent) f32[]"
    assert gid_text(fig, "key:calls") == "- (not saved)"
    assert gid_text(fig, "key:mean") == "mean"
    assert "hooks: forward hook" in gid_text(fig, "what:fc")
    assert "hooks: state_dict hook" in gid_text(fig, "what:(model)")


def test_module_tree_puts_the_program_names_beside_the_state_dict_names():
    model = _Net()
    ep = torch.export.export(model, (torch.ones(1, 3),))
    fig = viz.module_tree(model, program=ep)
    assert "header:program.state_dict key" in gids(fig)
    assert gid_text(fig, "program:fc.weight") == "fc.weight"
    assert gid_text(fig, "key:fc.weight") == "linear.weight"
    assert gid_text(fig, "program:calls") == "(a constant)"


def test_module_tree_shows_lazy_and_parametrized_tensors():
    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).t()

    model = nn.Sequential(nn.Linear(3, 3), nn.LazyLinear(2))
    parametrize.register_parametrization(model[0], "weight", Symmetric())
    fig = viz.module_tree(model)
    assert gid_text(fig, "what:1.weight") == "Parameter uninitialized (lazy)"
    assert gid_text(fig, "what:0.weight") == "property = original -> Symmetric"
    assert gid_text(fig, "key:0.parametrizations.weight.original") == "0.parametrizations.weight.original"
    assert gid_text(fig, "what:0") == "Linear"  # the class before parametrization
    with pytest.raises(TypeError, match="expects an nn.Module"):
        viz.module_tree(torch.ones(2))


# -- parametrization_chain -----------------------------------------------------------------------


class _Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).t()


class _Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("factor", torch.full((1,), 2.0))

    def forward(self, X):
        return X * self.factor


def test_parametrization_chain_draws_original_steps_and_result():
    layer = nn.Linear(3, 3)
    parametrize.register_parametrization(layer, "weight", _Symmetric())
    parametrize.register_parametrization(layer, "weight", _Scale())
    fig = viz.parametrization_chain(layer)
    g = gids(fig)
    assert gid_text(fig, "original:weight:original") == "original\nParameter f32[3, 3]"
    assert gid_text(fig, "step:weight:0") == "[0] _Symmetric"
    assert gid_text(fig, "step:weight:1").startswith("[1] _Scale\nbuffers: factor [1]")
    assert gid_text(fig, "computed:weight") == "weight (computed)\ntensor f32[3, 3]"
    for edge in ("original->0", "0->1", "1->computed"):
        assert f"edge:weight:{edge}" in g
    assert gid_text(fig, "cache:weight") == "cached(): off; each read of weight runs the chain"
    # the heat maps of original and computed weight are drawn as images
    assert len(fig.findobj(matplotlib.image.AxesImage)) == 2


def test_parametrization_chain_shows_the_cache():
    layer = nn.Linear(2, 2)
    parametrize.register_parametrization(layer, "weight", _Symmetric())
    with parametrize.cached():
        fig = viz.parametrization_chain(layer)
        assert gid_text(fig, "cache:weight") == "cached(): on; value not cached yet; computed=0, saved=0"
        first, second = layer.weight, layer.weight
        assert first is second
        fig = viz.parametrization_chain(layer)
        assert gid_text(fig, "cache:weight") == "cached(): on; value cached; computed=1, saved=1"
    with pytest.raises(ValueError, match="has no parametrized tensors"):
        viz.parametrization_chain(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="'bias' is not parametrized"):
        viz.parametrization_chain(layer, "bias")


# -- every picture renders ---------------------------------------------------------------------


def test_every_picture_renders_to_png():
    from PIL import Image

    layer = nn.Linear(2, 2)
    loss = layer(torch.ones(1, 2)).sum()
    x = torch.arange(4.0).view(2, 2)
    with torch.utils.dispatch_trace() as trace:
        x.t() + 1
    parametrize.register_parametrization(layer, "weight", _Symmetric())
    figures = [
        viz.autograd_graph(loss, layer),
        viz.storage_views(x, x.t()),
        viz.dispatch_timeline(trace),
        viz.module_tree(layer),
        viz.parametrization_chain(layer),
    ]
    for fig in figures:
        assert fig.canvas.get_default_filetype() == "png"
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=60)
        buf.seek(0)
        with Image.open(buf) as img:
            assert img.format == "PNG"
            w, h = img.size
            assert w >= 200 and h >= 100
            # not a blank canvas: more than one colour was drawn
            assert len(img.convert("RGB").getcolors(maxcolors=1 << 16) or range(2)) > 1


@pytest.mark.slow  # starts a Jupyter kernel: ~10 s
def test_a_picture_shows_once_in_jupyter(tmp_path, monkeypatch):
    """As a cell's last line, assigned, or shown again later: one image each time, not two."""
    import os
    from pathlib import Path

    nbformat = pytest.importorskip("nbformat", reason="needs nbformat (test extra)")
    nbclient = pytest.importorskip("nbclient", reason="needs nbclient (test extra)")
    pytest.importorskip("ipykernel", reason="needs ipykernel (test extra)")
    root = str(Path(__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in (
        "%matplotlib inline\nimport minitorch_nn as torch\nfrom minitorch_nn import viz\n"
        "x = torch.arange(6.0).view(2, 3)",
        "viz.storage_views(x, x.t())",
        "fig = viz.storage_views(x, x.t())",
        "fig",
    )]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    for cell in nb.cells[1:]:
        images = [o for o in cell.outputs if "image/png" in o.get("data", {})]
        assert len(images) == 1, (cell.source, [o.output_type for o in cell.outputs])
