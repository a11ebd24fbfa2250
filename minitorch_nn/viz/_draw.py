"""Drawing helpers shared by the pictures: boxes, arrows, colours, and the figure itself.

Every picture is drawn in data coordinates on one axes with its frame hidden. A box is a
``Text`` artist with a rounded background (so its label is what tests read), an arrow a
``FancyArrowPatch``; both carry a ``gid`` that names the thing they stand for.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

# One colour per kind of thing, the same in every picture.
COLORS = {
    "node": "#dbe9f6",  # an autograd node
    "leaf": "#d9f0d3",  # AccumulateGrad, a parameter, the original of a parametrization
    "saved": "#fff2cc",  # a saved tensor
    "stale": "#f4cccc",  # a saved tensor modified since it was saved; an uninitialized parameter
    "hook": "#b45f06",  # the outline of something with hooks
    "module": "#e8e3f3",  # a module
    "buffer": "#fce5cd",  # a buffer
    "step": "#dbe9f6",  # one parametrization in a chain
    "storage": "#eeeeee",  # a storage cell
}

# The layers of the dispatch chain, outermost first, with their colours.
LAYER_COLORS = {
    "Python function": "#cfe2f3",
    "__torch_function__": "#d9d2e9",
    "aten op": "#fff2cc",
    "autograd": "#d9ead3",
    "__torch_dispatch__": "#f4cccc",
    "kernel": "#fce5cd",
}

FONT = "DejaVu Sans Mono"


class VizFigure(Figure):
    """A matplotlib Figure that Jupyter shows once.

    The pictures are pyplot figures, so sphinx-gallery collects them and Jupyter's inline backend
    shows them when the cell ends. When a call is also the cell's last line, Jupyter shows the
    returned figure as the cell's result as well, so the picture appeared twice. Here showing
    the figure in Jupyter hands it over from pyplot: it is drawn once, then closed, so the end
    of the cell does not draw it again.
    """

    def _ipython_display_(self):
        import io

        from IPython.display import Image, display

        buf = io.BytesIO()
        self.savefig(buf, format="png", bbox_inches="tight")
        display(Image(buf.getvalue()))
        if plt.fignum_exists(getattr(self, "number", -1)):
            plt.close(self)


def new_figure(width: float, height: float, title: str | None = None):
    """A pyplot figure (so Jupyter shows it and sphinx-gallery collects it) with one bare axes."""
    width = min(max(width, 4.0), 18.0)
    height = min(max(height, 2.0), 24.0)
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained", FigureClass=VizFigure)
    ax.set_axis_off()
    if title:
        ax.set_title(title, fontsize=11, loc="left")
    return fig, ax


def box(ax, x, y, text, gid, facecolor, *, edgecolor="#555555", linewidth=1.0, fontsize=9,
        ha="center", va="center", linestyle="-", family=FONT):
    """A label in a rounded box centred (by default) on (x, y); returns the Text artist."""
    t = ax.text(
        x, y, text, ha=ha, va=va, fontsize=fontsize, family=family, zorder=3,
        bbox=dict(boxstyle="round,pad=0.35", facecolor=facecolor, edgecolor=edgecolor,
                  linewidth=linewidth, linestyle=linestyle),
    )
    t.set_gid(gid)
    return t


def label(ax, x, y, text, gid=None, *, fontsize=8, color="#333333", ha="left", va="center",
          family=FONT, **kwargs):
    """Plain text at (x, y)."""
    t = ax.text(x, y, text, ha=ha, va=va, fontsize=fontsize, color=color, family=family,
                zorder=4, **kwargs)
    if gid:
        t.set_gid(gid)
    return t


def arrow(ax, start, end, gid, *, color="#555555", patchA=None, patchB=None, rad=0.0,
          linestyle="-", linewidth=1.2):
    """An arrow from ``start`` to ``end`` (data coordinates), clipped at the two boxes if given."""
    a = FancyArrowPatch(
        start, end, arrowstyle="-|>", mutation_scale=12, color=color, linewidth=linewidth,
        linestyle=linestyle, connectionstyle=f"arc3,rad={rad}", patchA=patchA, patchB=patchB,
        shrinkA=4, shrinkB=4, zorder=2,
    )
    a.set_gid(gid)
    ax.add_patch(a)
    return a


def cell(ax, x, y, w, h, gid, facecolor, *, edgecolor="#666666", linewidth=0.8):
    """A rectangle with its lower-left corner at (x, y)."""
    r = Rectangle((x, y), w, h, facecolor=facecolor, edgecolor=edgecolor, linewidth=linewidth,
                  zorder=1)
    r.set_gid(gid)
    ax.add_patch(r)
    return r


def shape_text(t) -> str:
    """``[2, 3]``: the sizes of a tensor or payload, read without dispatching an op."""
    impl = getattr(t, "_impl", t)
    return "[" + ", ".join(str(s) for s in impl.sizes) + "]"


def short_dtype(t) -> str:
    impl = getattr(t, "_impl", t)
    name = getattr(impl.dtype, "name", str(impl.dtype))
    return {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
            "int64": "i64", "int32": "i32", "bool": "b8"}.get(name, name)


# Sizes of text in inches, for laying boxes out before anything is drawn (monospace, 8 points).
CHAR_W = 8 * 0.6 / 72
LINE_H = 8 * 1.25 / 72


def text_size(text: str, fontsize: float = 8) -> tuple[float, float]:
    """(width, height) in inches of a box holding ``text`` in the monospace font."""
    lines = text.split("\n")
    scale = fontsize / 8
    return (max(len(line) for line in lines) * CHAR_W * scale + 0.2,
            len(lines) * LINE_H * scale + 0.2)


def connect(fig, ax, pairs, *, direction: str = "down", **arrow_kwargs):
    """Arrows between boxes drawn with :func:`box`, edge to edge.

    ``pairs`` holds (text_a, text_b, gid). The figure is drawn once first, so the arrows start and
    end on the boxes' real outlines whatever the fonts measured.
    """
    fig.canvas.draw()
    inverse = ax.transData.inverted()

    def extent(t):
        bb = t.get_bbox_patch().get_window_extent()
        (x0, y0), (x1, y1) = inverse.transform([(bb.x0, bb.y0), (bb.x1, bb.y1)])
        return x0, y0, x1, y1

    drawn = []
    for a, b, gid in pairs:
        ax0, ay0, ax1, ay1 = extent(a)
        bx0, by0, bx1, by1 = extent(b)
        if direction == "down":
            start, end = ((ax0 + ax1) / 2, ay0), ((bx0 + bx1) / 2, by1)
        else:
            start, end = (ax1, (ay0 + ay1) / 2), (bx0, (by0 + by1) / 2)
        drawn.append(arrow(ax, start, end, gid, **arrow_kwargs))
    return drawn
