"""``minitorch_nn.nn.modules``: ``Module`` and the layers built on it (mirrors ``torch/nn/modules/__init__.py``).

Start with ``module.py`` (registration, iteration, printing), then its concept files
``_hooks.py``, ``_state_dict.py`` and ``_conversion.py``; ``container.py`` has ``Sequential`` and
friends. Each layer file adds one import line below.
"""

from minitorch_nn.nn.modules.module import Module  # noqa: I001  (the base class first)
from minitorch_nn.nn.modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]

# layers (one file per family, PyTorch's file names)
from minitorch_nn.nn.modules import activation, batchnorm, conv, dropout, flatten, instancenorm, linear, loss, normalization, pooling, sparse  # noqa: E402,I001
from minitorch_nn.nn.modules.activation import *  # noqa: E402,F403
from minitorch_nn.nn.modules.batchnorm import *  # noqa: E402,F403
from minitorch_nn.nn.modules.conv import *  # noqa: E402,F403
from minitorch_nn.nn.modules.dropout import *  # noqa: E402,F403
from minitorch_nn.nn.modules.flatten import *  # noqa: E402,F403
from minitorch_nn.nn.modules.instancenorm import *  # noqa: E402,F403
from minitorch_nn.nn.modules.linear import *  # noqa: E402,F403
from minitorch_nn.nn.modules.loss import *  # noqa: E402,F403
from minitorch_nn.nn.modules.normalization import *  # noqa: E402,F403
from minitorch_nn.nn.modules.pooling import *  # noqa: E402,F403
from minitorch_nn.nn.modules.sparse import *  # noqa: E402,F403

for _m in (activation, batchnorm, conv, dropout, flatten, instancenorm, linear, loss, normalization, pooling, sparse):
    __all__ += _m.__all__
del _m
from minitorch_nn.nn.modules.distance import CosineSimilarity, PairwiseDistance  # noqa: E402

__all__ += ["CosineSimilarity", "PairwiseDistance"]
from minitorch_nn.nn.modules import transformer  # noqa: E402
from minitorch_nn.nn.modules.transformer import *  # noqa: E402,F403

__all__ += transformer.__all__

# lazy modules (lazy.py: the mixin; lazy_layers.py: the 13 Lazy* layers; conv_extra/norm_extra: the
# regular ConvTranspose3d and InstanceNorm3d they become)
from minitorch_nn.nn.modules import conv_extra, lazy, lazy_layers, norm_extra  # noqa: E402,I001
from minitorch_nn.nn.modules.conv_extra import *  # noqa: E402,F403
from minitorch_nn.nn.modules.norm_extra import *  # noqa: E402,F403
from minitorch_nn.nn.modules.lazy_layers import *  # noqa: E402,F403

__all__ += [*conv_extra.__all__, *norm_extra.__all__, *lazy_layers.__all__]  # (LazyModuleMixin: nn.modules.lazy)

# recurrent layers (rnn.py)
from minitorch_nn.nn.modules import rnn  # noqa: E402
from minitorch_nn.nn.modules.rnn import *  # noqa: E402,F403

__all__ += rnn.__all__
