"""``functional_call``: call a module with some parameters/buffers swapped for given tensors
(mirrors ``torch/_functorch/functional_call.py`` and ``torch/nn/utils/stateless.py``).

The swap is done on the owning submodule's ``_parameters`` / ``_buffers`` dict entries (so a plain
tensor may stand in for a Parameter), names that are neither become plain attributes, and
everything is restored in a ``finally`` block, even when the forward raises.

``tie_weights=True`` (the default): when two names share one tensor in the module (tied
weights), replacing one name replaces the other too, as PyTorch does.
"""

from __future__ import annotations

import contextlib

_MISSING = object()


def _owner(module, name):
    """(submodule, attribute) for a dotted ``name`` such as ``"encoder.0.weight"``."""
    *path, attr = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, attr


def _swap(module, name, value):
    """Put ``value`` under ``name``; return a function that puts the old entry back."""
    owner, attr = _owner(module, name)
    for table in (owner._parameters, owner._buffers):
        if attr in table:
            old = table[attr]
            table[attr] = value

            def restore(table=table, old=old):
                table[attr] = old

            return restore
    old = owner.__dict__.get(attr, _MISSING)
    object.__setattr__(owner, attr, value)

    def restore_attribute():
        if old is _MISSING:
            object.__delattr__(owner, attr)
        else:
            object.__setattr__(owner, attr, old)

    return restore_attribute


def _tied_names(module, given):
    """Names that share a tensor with a given name but were not given themselves."""
    by_id = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + list(
        module.named_buffers(remove_duplicate=False)
    ):
        by_id.setdefault(id(t), []).append(name)
    extra = {}
    for group in by_id.values():
        chosen = [n for n in group if n in given]
        for n in group:
            if n not in given and chosen:
                extra[n] = given[chosen[0]]
    return extra


@contextlib.contextmanager
def _reparametrized(module, values, tie_weights=True, strict=False):
    if strict:
        expected = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        expected |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        unexpected = [k for k in values if k not in expected]
        missing = [k for k in expected if k not in values]
        if unexpected or missing:
            lines = []
            if unexpected:
                lines.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
            if missing:
                lines.append("Missing key(s): " + ", ".join(repr(k) for k in sorted(missing)) + ".")
            raise RuntimeError(
                f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(lines)
            )
    if tie_weights:
        values = {**values, **_tied_names(module, values)}
    restores = []
    try:
        for name, value in values.items():
            restores.append(_swap(module, name, value))
        yield
    finally:
        for restore in reversed(restores):
            restore()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Run ``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameter_and_buffer_dicts`` (one dict, or a sequence of dicts with distinct keys) replaced."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = dict(parameter_and_buffer_dicts)
    else:
        values = {}
        for d in parameter_and_buffer_dicts:
            repeated = [k for k in d if k in values]
            if repeated:
                raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
            values.update(d)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrized(module, values, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
