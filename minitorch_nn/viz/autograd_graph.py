"""``autograd_graph(tensor)``: the graph ``backward()`` would walk, drawn in layers.

What it reads (see ``minitorch_nn/autograd/graph.py`` for the objects):

* the tensor's gradient edge (``graph.gradient_edge``): its ``grad_fn``, brought up to date first
  if it is a stale view, or its leaf's ``AccumulateGrad``;
* each node's ``next_functions``, the edges drawn as arrows, in the direction gradients flow;
* each node's saved values (``OpNode._saved``, or a custom ``Function``'s ``ctx`` list): a saved
  tensor shows its name, shape and the version counter it had when saved; when the counter has
  moved on since (an in-place op wrote to it) it is drawn red and marked *stale*: backward would
  raise. A freed one (after ``backward()``) is marked *freed*;
* hooks: a node with pre-hooks, post-hooks, tensor hooks or ``retain_grad`` gets an orange
  outline and a line naming them; so does a leaf with hooks on its tensor;
* leaves: ``AccumulateGrad`` boxes are named after the parameter when a module is given, or
  after the tensors given as ``names``.

Layers: the tensor's node is layer 0 and every node sits one layer below the deepest node that
points at it (the longest path, from networkx's topological order), so each arrow points down.
Within a layer nodes are ordered by the mean position of their parents, which keeps crossings
few on the graphs of small models. PyTorch has ``torchviz`` (which needs graphviz) for this; the
saved-tensor versions and hooks are ours.
"""

from __future__ import annotations

import networkx as nx

from minitorch_nn.autograd.graph import SavedScalar, SavedTensor, gradient_edge
from minitorch_nn.viz._draw import (
    COLORS,
    box,
    connect,
    new_figure,
    shape_text,
    short_dtype,
    text_size,
)


def _short_name(node) -> str:
    return node.name().rsplit("::", 1)[-1]


def _saved_lines(node) -> list[tuple[str, bool]]:
    """(text, is_stale) for each tensor or wrapped number a node keeps for backward."""
    saved = getattr(node, "_saved", None)
    if not saved:
        return []
    items = saved.items() if isinstance(saved, dict) else (
        (f"saved_tensors[{i}]", v) for i, v in enumerate(saved))
    lines = []
    for name, value in items:
        values = value if isinstance(value, list) else [value]
        for k, v in enumerate(values):
            shown = name if len(values) == 1 else f"{name}[{k}]"
            if isinstance(v, SavedScalar):
                text = f"{shown} = {v.value!r}" + (" (freed)" if v.released else "")
                lines.append((text, False))
            elif isinstance(v, SavedTensor):
                lines.append(_saved_tensor_line(shown, v))
    return lines


def _saved_tensor_line(name: str, saved: SavedTensor) -> tuple[str, bool]:
    if saved.released:
        return f"{name}: freed by backward", False
    if saved.impl is None:  # kept by saved-tensor hooks: no version check is made
        return f"{name}: packed by hooks", False
    impl = saved.impl
    now = impl.version.value
    text = f"{name}: {short_dtype(impl)}{shape_text(impl)} v{saved.version}"
    if now != saved.version:
        return f"{text}, now v{now}: STALE", True
    return text, False


def _hook_names(node, impl=None) -> list[str]:
    found = []
    if getattr(node, "_pre_hooks", None):
        found.append(f"prehook x{len(node._pre_hooks)}")
    if getattr(node, "_post_hooks", None):
        found.append(f"hook x{len(node._post_hooks)}")
    if getattr(node, "_tensor_pre_hooks", None):
        n = sum(len(h) for h in node._tensor_pre_hooks.values())
        if n:
            found.append(f"tensor hook x{n}")
    if getattr(node, "_retains_grad", None):
        found.append("retain_grad")
    meta = getattr(impl, "autograd_meta", None) or {}
    if meta.get("hooks"):
        found.append(f"tensor hook x{len(meta['hooks'])}")
    if meta.get("post_accumulate_grad_hooks"):
        found.append(f"post-accumulate hook x{len(meta['post_accumulate_grad_hooks'])}")
    return found


def _collect(root) -> nx.MultiDiGraph:
    """Every node reachable from ``root`` through ``next_functions``; edges carry ``input_nr``."""
    graph = nx.MultiDiGraph()  # y * y reaches the same node twice: two edges
    graph.add_node(id(root), node=root)
    todo, seen = [root], {id(root)}
    while todo:
        node = todo.pop()
        for i, (nxt, input_nr) in enumerate(getattr(node, "next_functions", ())):
            if nxt is None:
                continue
            if id(nxt) not in seen:
                seen.add(id(nxt))
                graph.add_node(id(nxt), node=nxt)
                todo.append(nxt)
            graph.add_edge(id(node), id(nxt), slot=i, input_nr=input_nr)
    return graph


def _layers(graph: nx.MultiDiGraph, root_key) -> list[list]:
    """Nodes grouped by longest distance from the root, each layer ordered to limit crossings."""
    depth = {root_key: 0}
    for key in nx.topological_sort(graph):
        for succ in graph.successors(key):
            depth[succ] = max(depth.get(succ, 0), depth[key] + 1)
    layers: list[list] = [[] for _ in range(max(depth.values()) + 1)]
    for key in nx.topological_sort(graph):  # a stable order to start from
        layers[depth[key]].append(key)
    position = {key: float(i) for i, key in enumerate(layers[0])}
    for layer in layers[1:]:
        def barycenter(key):
            parents = [position[p] for p in graph.predecessors(key) if p in position]
            return sum(parents) / len(parents) if parents else 0.0

        layer.sort(key=barycenter)
        for i, key in enumerate(layer):
            position[key] = float(i)
    return layers


def autograd_graph(tensor, module=None, *, names: dict | None = None, title: str | None = None):
    """Draw the autograd graph behind ``tensor`` and return the matplotlib Figure.

    Parameters
    ----------
    tensor : Tensor
        a tensor that requires grad (usually a loss). A leaf draws as its ``AccumulateGrad`` alone.
    module : nn.Module, optional
        optional ``nn.Module``; its parameters name the ``AccumulateGrad`` leaves (``fc.weight``).
    names : dict, optional
        more names for leaves: ``{"x": x, "w": w}``.
    title : str, optional
        the figure's title (default: the tensor's dtype and shape).

    Examples
    --------
    ::

        loss = model(x).sum()
        fig = viz.autograd_graph(loss, model)
    """
    edge = gradient_edge(tensor)
    if edge is None:
        raise RuntimeError(
            "autograd_graph() needs a tensor that requires grad: this one has no grad_fn and is "
            "not a leaf that requires grad. Compute it from a tensor with requires_grad=True."
        )
    root = edge[0]
    leaf_names = {}
    if module is not None:
        for pname, p in module.named_parameters(remove_duplicate=False):
            leaf_names.setdefault(id(p._impl), pname)
    for lname, t in (names or {}).items():
        leaf_names.setdefault(id(t._impl), lname)

    graph = _collect(root)
    layers = _layers(graph, id(root))

    # The text and colour of every box first, so the layout can size rows and columns to fit.
    content = {}
    for key in graph.nodes:
        node = graph.nodes[key]["node"]
        impl = getattr(node, "_impl", None)
        is_leaf = _short_name(node) == "AccumulateGrad"
        lines, stale = [_short_name(node)], False
        if is_leaf and impl is not None:
            lines.append(f"{leaf_names.get(id(impl), 'leaf')} {short_dtype(impl)}{shape_text(impl)}")
        for text, is_stale in _saved_lines(node):
            lines.append(text)
            stale |= is_stale
        hooks = _hook_names(node, impl if is_leaf else None)
        if hooks:
            lines.append("hooks: " + ", ".join(hooks))
        color = COLORS["stale"] if stale else COLORS["leaf" if is_leaf else "node"]
        content[key] = ("\n".join(lines), color, bool(hooks))

    # Rows top to bottom, boxes side by side in a row; all sizes in inches.
    gap_x, gap_y = 0.35, 0.55
    row_widths = [sum(text_size(content[k][0])[0] for k in layer) + gap_x * (len(layer) - 1)
                  for layer in layers]
    row_heights = [max(text_size(content[k][0])[1] for k in layer) for layer in layers]
    width = max(row_widths) + 0.4
    height = sum(row_heights) + gap_y * (len(layers) - 1) + 0.4
    fig, ax = new_figure(
        width, height + 0.4,
        title or f"autograd graph of {short_dtype(tensor)}{shape_text(tensor)}\n"
                 "(gradients flow down the arrows)",
    )
    artists = {}
    y = height - 0.2
    for layer, row_w, row_h in zip(layers, row_widths, row_heights):
        x = (width - row_w) / 2
        for key in layer:
            text, color, hooked = content[key]
            w, _ = text_size(text)
            artists[key] = box(
                ax, x + w / 2, y - row_h / 2, text, f"node:{text.split(chr(10))[0]}", color,
                edgecolor=COLORS["hook"] if hooked else "#555555",
                linewidth=2.2 if hooked else 1.0, fontsize=8,
            )
            x += w + gap_x
        y -= row_h + gap_y
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    straight, curved = [], []
    for a, b, k in graph.edges(keys=True):
        na, nb = graph.nodes[a]["node"], graph.nodes[b]["node"]
        pair = (artists[a], artists[b], f"edge:{_short_name(na)}->{_short_name(nb)}")
        (curved if k else straight).append(pair)
    connect(fig, ax, straight)
    if curved:  # a second edge between the same two nodes bends so both show
        connect(fig, ax, curved, rad=0.35)
    return fig
