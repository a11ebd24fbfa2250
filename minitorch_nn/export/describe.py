"""``describe_state(module)``: every tensor of a module under its two names (no PyTorch equivalent).

A module's tensors have a *runtime* name (``named_parameters()`` / ``named_buffers()``, what
``export`` and ``ExportedProgram.state_dict`` use) and a *serialization* name (the key in
``module.state_dict()``, which state-dict hooks may rename or drop). Non-persistent buffers and
plain tensor attributes are never saved; export treats them as constants. This table shows all
of that at once, which is the quickest way to see why a checkpoint does not load into an
exported program (PyTorch issue #137540).
"""

from __future__ import annotations

from dataclasses import dataclass

from minitorch_nn._tensor import Tensor


@dataclass
class TensorState:
    runtime_name: str
    serialization_name: str | None   # None: not in state_dict() (non-persistent, constant, or dropped by a hook)
    kind: str                        # "parameter", "buffer" or "constant" (a plain tensor attribute)
    saved: bool
    shape: tuple
    dtype: object


class StateDescription(list):
    """A list of :class:`TensorState` that prints as a table."""

    def __str__(self):
        rows = [("runtime name", "serialization name", "kind", "saved", "shape")]
        for s in self:
            rows.append((s.runtime_name, s.serialization_name or "-", s.kind, "yes" if s.saved else "no",
                         f"{str(s.dtype).replace('torch.', '')}{list(s.shape)}"))
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        renamed = [s for s in self if s.saved and s.serialization_name != s.runtime_name]
        if renamed:
            lines.append(f"note: {len(renamed)} tensor(s) are saved under another name (state-dict hooks); "
                         "ExportedProgram.state_dict uses the runtime names.")
        return "\n".join(lines)

    def __repr__(self):
        return str(self)


def describe_state(module) -> StateDescription:
    """One :class:`TensorState` per runtime name: parameters, buffers, then plain tensor attributes."""
    saved = module.state_dict(keep_vars=True)
    by_id: dict[int, str] = {}
    for key, value in saved.items():
        if isinstance(value, Tensor):
            by_id.setdefault(id(value), key)
    non_persistent = set()
    constants = []
    for prefix, m in module.named_modules(remove_duplicate=False):
        for name in m._non_persistent_buffers_set:
            non_persistent.add(f"{prefix}.{name}" if prefix else name)
        for attr, value in vars(m).items():
            if isinstance(value, Tensor) and not attr.startswith("_"):
                constants.append((f"{prefix}.{attr}" if prefix else attr, value))
    out = StateDescription()

    def add(name, t, kind):
        key = by_id.get(id(t))
        # a tied tensor is saved under each name: prefer the identical key
        if name in saved and saved[name] is t:
            key = name
        out.append(TensorState(name, key, kind, key is not None, tuple(t.shape), t.dtype))

    for name, p in module.named_parameters(remove_duplicate=False):
        add(name, p, "parameter")
    for name, b in module.named_buffers(remove_duplicate=False):
        add(name, b, "buffer")  # a non-persistent buffer is not saved (export: a constant)
    for name, t in constants:
        add(name, t, "constant")
    return out
