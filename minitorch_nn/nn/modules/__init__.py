"""``minitorch_nn.nn.modules``: ``Module`` and the layers built on it (mirrors ``torch/nn/modules/__init__.py``).

Start with ``module.py`` (registration, iteration, printing), then its concept files
``_hooks.py``, ``_state_dict.py`` and ``_conversion.py``; ``container.py`` has ``Sequential`` and
friends. Each layer file adds one import line below.
"""

from minitorch_nn.nn.modules.module import Module  # noqa: I001  (the base class first)
from minitorch_nn.nn.modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
