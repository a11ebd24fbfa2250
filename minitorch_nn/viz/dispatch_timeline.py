"""``dispatch_timeline(trace)``: a ``dispatch_trace()`` record drawn as nested bars.

``minitorch_nn.utils.dispatch_trace()`` (``utils/_dispatch_trace.py``) records each call as a tree:
the Python function or method the user called, then each ``__torch_function__`` handler, the
aten op, the autograd node the op recorded, each ``__torch_dispatch__`` handler, and the kernel.
Here time runs left to right in call order and depth runs down: a bar spans the bars of the
calls made inside it, like a flame graph turned upside down, and its colour says which layer of
the dispatch chain it is (legend). Nothing is timed: widths count calls, not seconds.
"""

from __future__ import annotations

from matplotlib.patches import Patch

from minitorch_nn.viz._draw import FONT, LAYER_COLORS, cell, label, new_figure


def layer_of(text: str) -> str:
    """Which layer of the dispatch chain a trace line belongs to."""
    if text.startswith("__torch_function__"):
        return "__torch_function__"
    if text.startswith("__torch_dispatch__"):
        return "__torch_dispatch__"
    if text.startswith("aten."):
        return "aten op"
    if text.startswith("autograd:"):
        return "autograd"
    if text.startswith("kernel:"):
        return "kernel"
    return "Python function"


def bar_label(text: str, chars: int = 40) -> str:
    """The words a bar shows, at most ``chars`` to a line: the kernel without its package, and
    a long call's arguments on a second line, cut short with "..." when they do not fit."""
    if text.startswith("kernel:"):
        text = "kernel: " + text.split(":", 1)[1].strip().removeprefix("minitorch_nn.backends.")
        lines = [text]
    else:
        head, paren, args = text.partition("(")
        lines = [head, f"({args}"] if paren and len(text) > chars else [text]
    return "\n".join(line if len(line) <= chars else line[: chars - 3] + "..." for line in lines)


def _width(node) -> int:
    return max(1, sum(_width(c) for c in node.children))


def _depth(node) -> int:
    return 1 + max((_depth(c) for c in node.children), default=0)


def dispatch_timeline(trace, *, title: str | None = None, max_calls: int = 12):
    """Draw a ``dispatch_trace()`` record as a nested timeline; returns a matplotlib Figure.

    Parameters
    ----------
    trace : DispatchTrace
        the record ``minitorch_nn.utils.dispatch_trace()`` made, read after its block ends.
    max_calls : int
        draw at most this many top-level calls (the rest are counted in the title).

    Examples
    --------
    ::

        with torch.utils.dispatch_trace() as trace:
            z = x + y
        viz.dispatch_timeline(trace)
    """
    roots = list(getattr(trace, "roots", ()))
    if not roots:
        raise ValueError(
            "dispatch_timeline() got an empty trace: run some ops inside "
            "`with minitorch_nn.utils.dispatch_trace() as trace:` first."
        )
    shown, left_out = roots[:max_calls], len(roots) - len(roots[:max_calls])
    total = sum(_width(r) for r in shown)
    # inches per leaf call (wider when there are few, so the legend fits under the bars) and per level
    unit_w, bar_h = max(2.3, 8.0 / total), 0.62
    depth = max(_depth(r) for r in shown)
    heading = title or "dispatch trace: each call and the layers it passed through"
    if left_out:
        heading += f" (first {len(shown)} calls; {left_out} more not drawn)"
    fig, ax = new_figure(total * unit_w + 0.5, depth * bar_h + 1.3, heading)

    def draw(node, x, level, path):
        w = _width(node) * unit_w
        y = -level * bar_h
        layer = layer_of(node.text)
        cell(ax, x + 0.03, y - bar_h + 0.05, w - 0.06, bar_h - 0.1, f"bar:{path}:{layer}",
             LAYER_COLORS[layer], edgecolor="#666666")
        text = label(ax, x + w / 2, y - bar_h / 2, bar_label(node.text, max(8, int(w / 0.062))), f"call:{path}",
                     ha="center", fontsize=7, family=FONT)
        text.set_clip_on(True)
        cx = x
        for i, child in enumerate(node.children):
            draw(child, cx, level + 1, f"{path}.{i}")
            cx += _width(child) * unit_w

    x = 0.0
    for i, root in enumerate(shown):
        draw(root, x, 0, str(i))
        x += _width(root) * unit_w
    ax.set_xlim(0, total * unit_w)
    ax.set_ylim(-depth * bar_h - 0.05, 0.05)
    ax.legend(
        handles=[Patch(facecolor=c, edgecolor="#666666", label=n) for n, c in LAYER_COLORS.items()],
        loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=6 if total * unit_w >= 9 else 3,
        fontsize=7, frameon=False,
    )
    return fig
