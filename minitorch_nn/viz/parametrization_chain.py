"""``parametrization_chain(layer)``: ``original`` -> each parametrization -> the tensor the layer reads.

After ``register_parametrization(layer, "weight", P)`` the layer's ``weight`` is a property:
every read runs ``layer.parametrizations.weight.original`` through the chain of parametrization
modules (``nn/utils/parametrize.py``: ``ParametrizationList.forward``). This picture draws one row
per parametrized tensor: the original(s) on the left (what the optimizer trains), one box per
parametrization with its buffers and mode, and the computed tensor on the right, each tensor
with a small heat map of its values when it is a matrix. A caption says what
``parametrize.cached()`` is doing: off (every read recomputes), or on, with whether the value is
already cached and the block's counts of evaluations computed and saved.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn.autograd import no_grad
from minitorch_nn.nn.parameter import Parameter
from minitorch_nn.nn.utils import parametrize
from minitorch_nn.viz._draw import COLORS, box, connect, label, new_figure, short_dtype, text_size


def _tensor_text(title: str, t) -> str:
    kind = "Parameter" if isinstance(t, Parameter) else "tensor"
    return f"{title}\n{kind} {short_dtype(t)}{list(t._impl.sizes)}"


def _cache_state(module, tensor_name) -> str:
    if not parametrize._cache_enabled:
        return f"cached(): off; each read of {tensor_name} runs the chain"
    held = (id(module), tensor_name) in parametrize._cache
    text = "cached(): on; value " + ("cached" if held else "not cached yet")
    if parametrize._cache_stats:
        stats = parametrize._cache_stats[-1]
        text += f"; computed={stats.computed}, saved={stats.saved}"
    return text


def _values(module, tensor_name, plist):
    """The computed tensor, without counting a read in the cache's statistics."""
    cached = parametrize._cache.get((id(module), tensor_name)) if parametrize._cache_enabled else None
    if cached is not None:
        return cached
    with no_grad():
        return plist()


def parametrization_chain(module, tensor_name: str | None = None, *, title: str | None = None):
    """Draw each parametrized tensor of ``module`` as a chain; returns a matplotlib Figure.

    Parameters
    ----------
    module : nn.Module
        a module with at least one parametrization (``register_parametrization``).
    tensor_name : str, optional
        draw only this tensor's chain (default: all of the module's).
    """
    if not parametrize.is_parametrized(module):
        raise ValueError(
            f"parametrization_chain(): {type(module).__name__} has no parametrized tensors. Add one "
            "with minitorch_nn.nn.utils.parametrize.register_parametrization(module, 'weight', P)."
        )
    names = list(module.parametrizations) if tensor_name is None else [tensor_name]
    if tensor_name is not None and not parametrize.is_parametrized(module, tensor_name):
        raise ValueError(
            f"parametrization_chain(): '{tensor_name}' is not parametrized; the parametrized "
            f"tensors are {list(module.parametrizations)}"
        )

    chains = []
    for name in names:
        plist = module.parametrizations[name]
        if plist.is_tensor:
            originals = [("original", plist.original)]
        else:
            originals = [(f"original{i}", getattr(plist, f"original{i}")) for i in range(plist.ntensors)]
        steps = []
        for i, p in enumerate(plist):
            lines = [f"[{i}] {type(p).__name__}"]
            bufs = [f"{b} {list(t.shape)}" for b, t in p.named_buffers(recurse=False) if t is not None]
            if bufs:
                lines.append("buffers: " + ", ".join(bufs))
                lines.append("training" if p.training else "eval")
            steps.append("\n".join(lines))
        value = _values(module, name, plist)
        chains.append((name, originals, steps, value, _cache_state(module, name)))

    heat = 1.1  # inches for the heat map under a tensor box
    row_h = 2.6
    widths = []
    for name, originals, steps, value, _ in chains:
        w = max(text_size(_tensor_text(n, t))[0] for n, t in originals)
        w += sum(text_size(s)[0] for s in steps) + text_size(_tensor_text(name, value))[0]
        widths.append(w + 0.7 * (len(steps) + 1))
    width = max(widths) + 0.4
    height = row_h * len(chains)
    owner = parametrize.type_before_parametrizations(module).__name__
    fig, ax = new_figure(width, height + 0.5, title or f"parametrizations of {owner}")
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    pairs, heatmaps = [], []
    for r, (name, originals, steps, value, cache_text) in enumerate(chains):
        y = height - r * row_h - 0.55
        x = 0.2
        originals_boxes = []
        for k, (oname, t) in enumerate(originals):
            text = _tensor_text(oname, t)
            w, _ = text_size(text)
            oy = y - k * 0.6
            originals_boxes.append(box(ax, x + w / 2, oy, text, f"original:{name}:{oname}",
                                       COLORS["leaf"], fontsize=8))
            if k == 0:
                heatmaps.append((t, x + w / 2, oy))
        x += max(text_size(_tensor_text(n, t))[0] for n, t in originals) + 0.7
        previous = originals_boxes
        for i, step in enumerate(steps):
            w, _ = text_size(step)
            b = box(ax, x + w / 2, y, step, f"step:{name}:{i}", COLORS["step"], fontsize=8)
            pairs += [(p, b, f"edge:{name}:{'original' if i == 0 else i - 1}->{i}") for p in previous]
            previous = [b]
            x += w + 0.7
        text = _tensor_text(f"{name} (computed)", value)
        w, _ = text_size(text)
        out = box(ax, x + w / 2, y, text, f"computed:{name}", "#ffffff", fontsize=8,
                  edgecolor="#333333", linewidth=1.6)
        pairs += [(p, out, f"edge:{name}:{len(steps) - 1}->computed") for p in previous]
        heatmaps.append((value, x + w / 2, y))
        label(ax, 0.2, y - row_h + 0.75, cache_text, f"cache:{name}", fontsize=8, color="#555555")
    connect(fig, ax, pairs, direction="right")

    # Heat maps of matrix values under their boxes (placed after the first draw, in figure units).
    for t, cx, cy in heatmaps:
        if len(t._impl.sizes) != 2 or max(t._impl.sizes) > 32 or t._impl.storage is None:
            continue
        data = np.asarray(t.detach().tolist(), dtype=float)
        (fx, fy) = fig.transFigure.inverted().transform(ax.transData.transform((cx, cy - 0.45)))
        fw = heat / fig.get_figwidth()
        fh = heat * 0.8 / fig.get_figheight()
        inset = fig.add_axes((fx - fw / 2, fy - fh, fw, fh))
        inset.imshow(data, cmap="coolwarm", vmin=-np.abs(data).max(), vmax=np.abs(data).max())
        inset.set_xticks([])
        inset.set_yticks([])
    return fig
