"""The one switch for the compiled twins: ``minitorch_nn.backends.compiled``.

minitorch_nn is meant to be read and changed. The code a learner reads -- ``_dispatch/``, the cpu
kernels in ``backends/cpu/``, ``autograd/recording.py``, ``autograd/engine.py``'s ``run_backward``
-- is the reference. For speed, some of it has a compiled *twin* (Cython, under ``_ext/``) that
gives the same results, errors, warnings, graphs and version counters faster. This module is the
single switch for all of them, in the place PyTorch keeps its backend flags
(``torch.backends.cudnn.enabled``, ``torch.backends.cudnn.flags(enabled=...)``):

>>> import minitorch_nn as torch
>>> torch.backends.compiled.enabled          # on by default
True
>>> with torch.backends.compiled.flags(enabled=False):
...     y = torch.ones(2) + 1                # runs only the readable Python path
>>> torch.backends.compiled.enabled
True

``MINITORCH_NN_COMPILED=0`` in the environment turns the twins off from import on.

With the switch off, nothing compiled stands in for a readable function: every op goes through the
dispatcher, the Python kernels, ``autograd/recording.py`` and ``run_backward``. With it on, a twin
still runs only while the original it mirrors is the one it was built for (its *guard*); a twin
whose original was edited in the source turns itself off at import, warns once, and is listed by
:func:`disabled`.

PyTorch has no such switch (its C++ is not meant to be edited by its users); this one exists so
that reading mode and fast mode can be compared, timed and taught.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
import warnings

__all__ = ["enabled", "flags", "disabled", "is_enabled"]

# The state lives in one place; the compiled code keeps a C-level copy that set_enabled updates.
_enabled: bool = os.environ.get("MINITORCH_NN_COMPILED", "1").strip().lower() not in ("0", "false", "off", "no")
_disabled_twins: dict[str, str] = {}   # twin name -> why it turned itself off
_listeners: list = []                  # called with the new value whenever the switch moves


def is_enabled() -> bool:
    """Whether the compiled twins may run (the value of :data:`enabled`)."""
    return _enabled


def _set_enabled(value: bool) -> None:
    global _enabled
    _enabled = bool(value)
    for listener in _listeners:
        listener(_enabled)


def on_change(listener) -> None:
    """Register ``listener(enabled)``, called now and whenever the switch moves.

    Compiled modules register a setter for their C-level copy of the flag here, so that reading
    the switch costs them one C variable read instead of a Python attribute lookup."""
    _listeners.append(listener)
    listener(_enabled)


@contextlib.contextmanager
def flags(enabled: bool = True):
    """Run a block with the compiled twins on (``enabled=True``) or off, then restore the old value.

    >>> import minitorch_nn as torch
    >>> with torch.backends.compiled.flags(enabled=False):
    ...     pass   # only the readable code runs here
    """
    # Rules: remember the current value, switch with ``_set_enabled(enabled)`` (which also tells
    # the compiled code), run the block, and restore the remembered value with ``_set_enabled``
    # when the block ends, also when it raises.
    # BEGIN SOLUTION compiled-flags
    previous = _enabled
    _set_enabled(enabled)
    try:
        yield
    finally:
        _set_enabled(previous)
    # END SOLUTION


def disabled() -> dict[str, str]:
    """The twins that turned themselves off because the original they mirror has changed.

    Maps each twin's name to the reason (which original no longer matches). Empty in an unchanged
    checkout."""
    return dict(_disabled_twins)


def _disable_twin(name: str, reason: str) -> None:
    """Turn one twin off for the rest of the process, and say so once."""
    if name in _disabled_twins:
        return
    _disabled_twins[name] = reason
    warnings.warn(
        f"minitorch_nn: the compiled twin {name!r} is off because {reason}; the readable code runs "
        "instead. Rebuild the extension (`make build`) to bring the twin back in line.",
        RuntimeWarning,
        stacklevel=2,
    )


class _CompiledModule(types.ModuleType):
    """Makes ``compiled.enabled = False`` a real switch (a plain module attribute could not notify
    the compiled code), as ``torch.backends.cudnn`` does for its flags."""

    @property
    def enabled(self) -> bool:
        return _enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        _set_enabled(value)


sys.modules[__name__].__class__ = _CompiledModule


def _register_core_flag() -> None:
    from minitorch_nn import _C   # the tensor core sits below this module: no cycle

    setter = getattr(_C, "_set_compiled_enabled", None)
    if setter is not None:
        on_change(setter)


_register_core_flag()
