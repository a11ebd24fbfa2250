"""``_disable_load_state_dict_hooks`` (mirrors ``torch/_export/utils.py``).

A module's ``state_dict()`` is its *serialization* view: state-dict hooks may rename, drop or
add keys. Export works in the *runtime* view (``named_parameters()`` / ``named_buffers()``).
This context manager takes the state-dict hooks off one module for a while, so that
``module.state_dict()`` inside it gives the runtime names, e.g. to build a dict for
``ExportedProgram.swap_weights``.

PyTorch PR #137609 introduced it as ``_disabled_load_state_dict_hooks`` (in
``torch/export/exported_program.py``); PyTorch 2.13 calls it ``_disable_load_state_dict_hooks``.
Both names are provided. As in PyTorch, only the hooks of the module passed in are removed;
hooks registered on its submodules still run.

Difference from PyTorch: the saved hook dicts are restored as ``OrderedDict`` (PyTorch puts
plain ``dict`` copies back), and hooks registered *inside* the block are kept after it.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict


@contextlib.contextmanager
def _disable_load_state_dict_hooks(mod):
    """Remove ``mod``'s state-dict pre- and post-hooks inside the block; put them back on exit.

    Example::

        >>> with _disable_load_state_dict_hooks(model):
        ...     runtime_sd = model.state_dict()   # keys as in named_parameters()/named_buffers()
    """
    saved_post = OrderedDict(mod._state_dict_hooks)
    saved_pre = OrderedDict(mod._state_dict_pre_hooks)
    mod._state_dict_hooks.clear()
    mod._state_dict_pre_hooks.clear()
    try:
        yield mod
    finally:
        # hooks added inside the block (rare) stay, after the restored ones
        added_post = OrderedDict(mod._state_dict_hooks)
        added_pre = OrderedDict(mod._state_dict_pre_hooks)
        saved_post.update(added_post)
        saved_pre.update(added_pre)
        mod._state_dict_hooks = saved_post
        mod._state_dict_pre_hooks = saved_pre


# The name used in PR #137609 (pytorch/pytorch), kept so code written against it works.
_disabled_load_state_dict_hooks = _disable_load_state_dict_hooks
