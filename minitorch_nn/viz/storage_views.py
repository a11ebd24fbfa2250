"""``storage_views(x, x.t(), ...)``: one flat storage, and where each view reads it.

The top row is the storage itself: the flat numpy array in the payload (``t._impl.storage``),
one cell per element with its position and value. Under it, one row per tensor: a cell is
coloured at every storage position the tensor reads, labelled with the index of the element
that reads it (``[1, 0]``), and the row is captioned with the tensor's sizes, strides, storage
offset and whether it is contiguous. A position read by several elements (a stride of 0, as
``expand`` makes) says how many.

The positions come from the rule every strided tensor follows (``_ext/_C.pyx``,
``backends/views.py``): element ``[i, j, ...]`` lives at ``offset + i*stride[0] + j*stride[1] + ...``.
"""

from __future__ import annotations

import itertools

import numpy as np

from minitorch_nn.viz._draw import COLORS, cell, label, new_figure

_MAX_CELLS = 48
_PALETTE = ["#9fc5e8", "#b6d7a8", "#f9cb9c", "#d5a6bd", "#a2c4c9", "#ffe599", "#b4a7d6"]


def _positions(t) -> dict[int, list[tuple]]:
    """Storage position -> the indices of the elements of ``t`` that read it."""
    impl = t._impl
    out: dict[int, list[tuple]] = {}
    for index in itertools.product(*(range(s) for s in impl.sizes)):
        pos = impl.offset + sum(i * s for i, s in zip(index, impl.strides))
        out.setdefault(pos, []).append(index)
    return out


def _fmt_value(v) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.3g}"
    return str(v)


def storage_views(*tensors, names=None, title: str | None = None):
    """Draw the storage the given tensors share and the elements each one reads; returns a Figure.

    Parameters
    ----------
    *tensors : Tensor
        tensors that share one storage (a base and views of it), or a single dict
        ``{name: tensor}``.
    names : list of str, optional
        the label of each row (default ``t0, t1, ...``, or the dict's keys).

    Raises ``ValueError`` when the tensors do not share a storage, have none (meta) or the
    storage has more than 48 elements (too many cells to read).
    """
    if len(tensors) == 1 and isinstance(tensors[0], dict):
        names, tensors = list(tensors[0]), list(tensors[0].values())
    if not tensors:
        raise ValueError("storage_views() needs at least one tensor")
    names = list(names) if names is not None else [f"t{i}" for i in range(len(tensors))]
    storage = tensors[0]._impl.storage
    if storage is None:
        raise ValueError(
            "storage_views() needs tensors with data: a meta tensor has no storage to draw. "
            "Draw a cpu tensor of the same shape instead."
        )
    for name, t in zip(names, tensors):
        if t._impl.storage is not storage:
            raise ValueError(
                f"storage_views(): {name} does not share the storage of {names[0]}. Pass a tensor "
                "and views of it (x, x.t(), x[1:]...); a copy such as contiguous() has its own storage."
            )
    flat = np.asarray(storage).reshape(-1)
    n = flat.shape[0]
    if n > _MAX_CELLS:
        raise ValueError(
            f"storage_views() draws at most {_MAX_CELLS} storage elements, and this storage has {n}. "
            "Draw a smaller example with the same strides."
        )

    cw, ch = 0.62, 0.5  # a cell, in inches
    caption_w = 3.2
    rows = len(tensors) + 1
    fig, ax = new_figure(
        caption_w + n * cw + 0.4, rows * (ch + 0.35) + 0.9,
        title or f"one storage of {n} elements and the tensors that read it",
    )
    top = rows * (ch + 0.35)
    # The storage row.
    y = top - ch
    label(ax, 0, y + ch / 2, f"storage\n{flat.dtype}, {n} elements", "row:storage", fontsize=8)
    for p in range(n):
        x = caption_w + p * cw
        cell(ax, x, y, cw, ch, f"storage:{p}", COLORS["storage"])
        label(ax, x + cw / 2, y + ch * 0.68, _fmt_value(flat[p]), f"value:{p}", ha="center",
              fontsize=7)
        label(ax, x + cw / 2, y + ch + 0.08, str(p), f"position:{p}", ha="center", fontsize=7,
              color="#777777")
    # One row per tensor.
    for k, (name, t) in enumerate(zip(names, tensors)):
        impl = t._impl
        y = top - (k + 2) * (ch + 0.35)
        contiguous = "yes" if t.is_contiguous() else "no"
        caption = (f"{name}\nsizes {tuple(impl.sizes)}\nstrides {tuple(impl.strides)}\n"
                   f"offset {impl.offset}, contiguous: {contiguous}")
        label(ax, 0, y + ch / 2, caption, f"row:{name}", fontsize=7)
        color = _PALETTE[k % len(_PALETTE)]
        for p in range(n):
            cell(ax, caption_w + p * cw, y, cw, ch, f"empty:{name}:{p}", "white",
                 edgecolor="#cccccc", linewidth=0.5)
        for p, indices in sorted(_positions(t).items()):
            x = caption_w + p * cw
            cell(ax, x, y, cw, ch, f"read:{name}:{p}", color)
            first = "[" + ", ".join(str(i) for i in indices[0]) + "]"
            text = first if len(indices) == 1 else f"{first}\nx{len(indices)}"
            label(ax, x + cw / 2, y + ch / 2, text, f"element:{name}:{p}", ha="center", fontsize=6)
    ax.set_xlim(0, caption_w + n * cw + 0.2)
    ax.set_ylim(top - rows * (ch + 0.35) - 0.1, top + 0.3)
    return fig
