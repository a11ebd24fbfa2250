"""``RemovableHandle``: the object every ``register_*_hook`` returns (mirrors ``torch/utils/hooks.py``).

A module keeps each kind of hook in an ordered dict keyed by an integer id. Registering a hook
makes a handle with a fresh id (from one global counter, so ids are unique across all dicts),
stores the hook under that id, and returns the handle. ``handle.remove()`` deletes the id from
the dict and from any "extra" dicts that hold per-hook flags (``with_kwargs``,
``always_call``). The handle refers to the dicts through weak references, so a forgotten handle
does not keep a module's hook dicts alive.

Differences from PyTorch: none in behaviour. PyTorch's file also holds ``BackwardHook`` (the
machinery behind full backward hooks); ours lives in ``nn/modules/_backward_hooks.py`` next to
the module code that uses it.
"""

from __future__ import annotations

import weakref
from typing import Any


class _WeakDictRef:
    """A weak reference to a dict; plain ``dict`` objects cannot be weakly referenced, so a
    hook dict that is a plain dict is held strongly (OrderedDicts, which modules use, are weak)."""

    def __init__(self, d):
        try:
            self._ref = weakref.ref(d)
        except TypeError:
            self._ref = lambda: d

    def __call__(self):
        return self._ref()


class RemovableHandle:
    """A handle that removes one registered hook (``torch.utils.hooks.RemovableHandle``).

    ``hooks_dict`` is the dict the hook is (about to be) stored in; ``extra_dict`` is one dict
    or a list of dicts that also hold an entry for this id and must be cleaned up with it.
    Use ``handle.remove()``, or the handle as a context manager (the hook is removed on exit).
    """

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = _WeakDictRef(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if extra_dict is None:
            extra_dict = []
        elif not isinstance(extra_dict, list):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(_WeakDictRef(d) for d in extra_dict)

    def remove(self) -> None:
        """Remove the hook; calling it again (or after the module is gone) does nothing."""
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    # Pickling keeps the id and the dicts themselves (weak references cannot be pickled).
    def __getstate__(self):
        extra = tuple(ref() for ref in self.extra_dict_ref)
        return (self.hooks_dict_ref(), self.id, extra)

    def __setstate__(self, state) -> None:
        hooks_dict = state[0]
        self.hooks_dict_ref = _WeakDictRef({} if hooks_dict is None else hooks_dict)
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        extra = state[2] if len(state) > 2 else ()
        self.extra_dict_ref = tuple(_WeakDictRef({} if d is None else d) for d in extra)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, type: Any, value: Any, tb: Any) -> None:
        self.remove()


__all__ = ["RemovableHandle"]
