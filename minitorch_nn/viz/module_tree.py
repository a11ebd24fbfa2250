"""``module_tree(model)``: a module's submodules and tensors, under both of their names.

One row per submodule (indented under its parent, with its class and any hooks) and one row per
parameter or buffer it owns directly, with:

* its kind and shape (``Parameter f32[2, 3]``, ``buffer``, ``buffer (not persistent)``); a lazy
  module's ``UninitializedParameter`` reads *uninitialized* in red, since it has no shape yet
  (``nn/parameter_lazy.py``);
* its *runtime* name (``named_parameters()``/``named_buffers()``) and its key in
  ``state_dict()`` (the *serialization* name), which a state-dict hook may rename or drop
  (``nn/modules/_state_dict.py``, ``export/describe.py``); a renamed key is shown in orange;
* for a parametrized tensor, the property the module reads (``weight = original -> Symmetric``)
  beside the ``parametrizations.weight.original`` it is computed from (``nn/utils/parametrize.py``);
* with ``program=`` an ``ExportedProgram``, the name ``program.state_dict`` keeps it under: the
  runtime name, not the serialization name, or *a constant* for a non-persistent buffer, which
  the program keeps in ``constants`` (``export/exported_program.py``).

Hooks counted: forward pre-hooks, forward hooks, backward (pre-)hooks and the four state-dict
hooks, as registered on each module (global hooks are not drawn).
"""

from __future__ import annotations

from minitorch_nn.nn.parameter import Parameter
from minitorch_nn.nn.parameter_lazy import UninitializedBuffer, UninitializedParameter
from minitorch_nn.nn.utils import parametrize
from minitorch_nn.viz._draw import COLORS, FONT, cell, label, new_figure, short_dtype

_HOOK_FIELDS = {
    "_forward_pre_hooks": "forward pre-hook",
    "_forward_hooks": "forward hook",
    "_backward_pre_hooks": "backward pre-hook",
    "_backward_hooks": "backward hook",
    "_state_dict_pre_hooks": "state_dict pre-hook",
    "_state_dict_hooks": "state_dict hook",
    "_load_state_dict_pre_hooks": "load_state_dict pre-hook",
    "_load_state_dict_post_hooks": "load_state_dict post-hook",
}


def _hooks(module) -> list[str]:
    out = []
    for field, name in _HOOK_FIELDS.items():
        n = len(getattr(module, field, None) or ())
        if n:
            out.append(name if n == 1 else f"{n} x {name}")
    return out


def _describe(t, persistent=True) -> tuple[str, bool]:
    """(what the tensor is, is it uninitialized)."""
    if isinstance(t, (UninitializedParameter, UninitializedBuffer)):
        kind = "Parameter" if isinstance(t, Parameter) else "buffer"
        return f"{kind} uninitialized (lazy)", True
    kind = "Parameter" if isinstance(t, Parameter) else "buffer"
    if not persistent:
        kind += " (not persistent)"
    shape = "[" + ", ".join(str(s) for s in t._impl.sizes) + "]"
    return f"{kind} {short_dtype(t)}{shape}", False


def _rows(module, program):
    """The table: (depth, kind, name, what, runtime name, state_dict key, program key, flags)."""
    try:
        saved = module.state_dict(keep_vars=True)
    except RuntimeError:
        saved = {}
    key_of: dict[int, str] = {}
    for key, value in saved.items():
        key_of.setdefault(id(value), key)
    program_keys = set(program.state_dict) if program is not None else None
    constants = set(getattr(program, "constants", None) or ())

    rows = []
    for prefix, sub in module.named_modules():
        depth = prefix.count(".") + 1 if prefix else 0
        title = prefix.rsplit(".", 1)[-1] if prefix else "(model)"
        cls = parametrize.type_before_parametrizations(sub).__name__
        hooks = _hooks(sub)
        what = cls + ("   hooks: " + ", ".join(hooks) if hooks else "")
        rows.append((depth, "module", title, what, prefix or "(model)", "", "",
                     {"hooks": bool(hooks)}))
        if parametrize.is_parametrized(sub):
            for tensor_name, plist in sub.parametrizations.items():
                chain = " -> ".join(type(p).__name__ for p in plist)
                runtime = f"{prefix}.{tensor_name}" if prefix else tensor_name
                rows.append((depth + 1, "parametrized", tensor_name,
                             f"property = original -> {chain}", runtime, "(computed, not saved)",
                             "", {}))
        non_persistent = getattr(sub, "_non_persistent_buffers_set", set())
        tensors = [(n, t, True) for n, t in sub._parameters.items() if t is not None]
        tensors += [(n, t, n not in non_persistent) for n, t in sub._buffers.items() if t is not None]
        for name, t, persistent in tensors:
            runtime = f"{prefix}.{name}" if prefix else name
            what, lazy = _describe(t, persistent)
            key = runtime if saved.get(runtime) is t else key_of.get(id(t), "")
            flags = {"lazy": lazy, "renamed": bool(key) and key != runtime}
            in_program = ""
            if program_keys is not None:
                in_program = runtime if runtime in program_keys else (
                    "(a constant)" if runtime in constants else "-")
            rows.append((depth + 1, "tensor", name, what, runtime, key or "- (not saved)", in_program,
                         flags))
    return rows


def module_tree(module, program=None, *, title: str | None = None):
    """Draw ``module``'s tree of submodules, parameters and buffers; returns a matplotlib Figure.

    Parameters
    ----------
    module : nn.Module
        an ``nn.Module``.
    program : ExportedProgram, optional
        optional ``ExportedProgram`` exported from ``module``: adds a column with the names its
        ``state_dict`` uses.

    Examples
    --------
    ::

        viz.module_tree(model, program=torch.export.export(model, (x,)))
    """
    if not hasattr(module, "named_modules"):
        raise TypeError(
            f"module_tree() expects an nn.Module, got {type(module).__name__}. For an exported "
            "program pass the module it came from and the program: module_tree(model, program=ep)."
        )
    rows = _rows(module, program)
    headers = ["module tree", "what", "runtime name", "state_dict() key"]
    if program is not None:
        headers.append("program.state_dict key")
    indent, char_w = 0.22, 0.075
    widths = [max(len(r[2]) * char_w + r[0] * indent for r in rows) + 0.4]
    for col in range(3, 3 + len(headers) - 1):
        cells = [r[col] for r in rows if col != 4 or r[1] != "module"]
        widths.append(max(max(map(len, cells)), len(headers[col - 2])) * char_w + 0.35)
    lefts = [0.1]
    for w in widths[:-1]:
        lefts.append(lefts[-1] + w)
    width = lefts[-1] + widths[-1] + 0.1
    row_h = 0.27
    height = (len(rows) + 1) * row_h + 0.2
    fig, ax = new_figure(width, height + 0.4, title or f"module tree of {type(module).__name__}")
    y = height - row_h / 2
    for i, head in enumerate(headers):
        label(ax, lefts[i], y, head, f"header:{head}", fontsize=8, weight="bold")
    for n, (depth, kind, name, what, runtime, key, prog, flags) in enumerate(rows):
        y = height - (n + 1.5) * row_h
        x = lefts[0] + depth * indent
        if kind == "module":
            cell(ax, 0.02, y - row_h / 2, width - 0.04, row_h, f"modulerow:{name}",
                 COLORS["module"], edgecolor="none")
        if depth:
            ax.plot([x - indent + 0.06, x - 0.04], [y, y], color="#999999", lw=0.8)
        label(ax, x, y, name, f"name:{kind}:{name}", fontsize=8,
              weight="bold" if kind == "module" else "normal")
        what_color = "#cc0000" if flags.get("lazy") else (
            COLORS["hook"] if flags.get("hooks") else "#333333")
        label(ax, lefts[1], y, what, f"what:{runtime}", fontsize=8, color=what_color)
        if kind != "module":
            label(ax, lefts[2], y, runtime, f"runtime:{runtime}", fontsize=8)
            label(ax, lefts[3], y, key, f"key:{runtime}", fontsize=8,
                  color=COLORS["hook"] if flags.get("renamed") else "#333333")
            if program is not None:
                label(ax, lefts[4], y, prog, f"program:{runtime}", fontsize=8)
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    for t in ax.texts:
        t.set_family(FONT)
    return fig
