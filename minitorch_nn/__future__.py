"""Process-wide switches for how ``nn.Module`` conversions treat parameters (mirrors ``torch/__future__.py``).

Both flags default to False and are plain global state, as in PyTorch (there is no context
manager: tests should reset them in a ``finally``). They are read by ``Module._apply`` (every
``to``/``float``/``to_empty``...) and by ``Module._load_from_state_dict``:

* **overwrite** (``set_overwrite_module_params_on_conversion``): instead of changing a
  parameter in place with ``param.data = converted``, store a brand-new ``nn.Parameter`` in the
  module. Old references (an optimizer's) keep the old, unconverted tensor.
* **swap** (``set_swap_module_params_on_conversion``): convert into a new Parameter and then
  ``utils.swap_tensors`` it with the old one, so the *same* Python object now holds the new
  data. Identity is kept for parameters and their grads, which is what optimizers need, and it
  works for tensor subclasses whose payload ``.data =`` cannot reach. It takes precedence over
  the overwrite flag. Loading a state dict under it goes through ``Tensor.module_load``.

See ``nn/modules/_conversion.py`` for how the flags pick a path.
"""

from __future__ import annotations

_overwrite_module_params_on_conversion: bool = False
_swap_module_params_on_conversion: bool = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Make conversions replace each parameter object instead of changing it in place."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """Whether conversions replace parameter objects (default False)."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Make conversions and ``load_state_dict`` swap new data into the existing parameter objects."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    """Whether conversions and loads use ``swap_tensors`` (default False)."""
    return _swap_module_params_on_conversion


__all__ = [
    "set_overwrite_module_params_on_conversion",
    "get_overwrite_module_params_on_conversion",
    "set_swap_module_params_on_conversion",
    "get_swap_module_params_on_conversion",
]
