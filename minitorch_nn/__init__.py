"""minitorch_nn: a readable re-implementation of PyTorch's tensor and ``torch.nn`` internals.

``import minitorch_nn as torch`` gives the familiar names: dtypes (``torch.float32``), devices,
factories (``torch.tensor``, ``torch.randn``), functions (``torch.add``, ``torch.matmul``), the
op registry (``torch.ops.aten``), ``torch.nn`` and ``torch.utils.swap_tensors``.

Where to read next: ``_ext/_C.pyx`` (the tensor object), ``_tensor.py`` (its methods),
``_ops.py`` and ``_aten.py`` (the op registry), ``_dispatch/`` (the path of one op) and
``backends/`` (the kernels).
"""

from minitorch_nn import _C  # noqa: I001  (the compiled tensor object comes first)
from minitorch_nn._C import Size
from minitorch_nn._dtype import (
    bfloat16, bool, cdouble, cfloat, complex64, complex128, double, dtype, finfo, float, float16, float32, float64,
    get_default_dtype, half, iinfo,
    int, int8, int16, int32, int64, long, promote_types, set_default_dtype, short, uint8,
    contiguous_format, preserve_format, channels_last, channels_last_3d, strided, layout, memory_format,
)
from minitorch_nn._device import device, get_default_device, set_default_device
from minitorch_nn import _aten  # noqa: F401  (declares every op)
from minitorch_nn._ops import ops
from minitorch_nn import _dispatch  # noqa: F401  (installs the dispatch chain)
from minitorch_nn._tensor import Tensor
from minitorch_nn import _tensor_methods  # noqa: F401  (attaches x.sum(), x + y...: the method table)
from minitorch_nn._functions import complex as _complex  # noqa: F401  (x.real, x.conj(), x.mH...: before _tensor_subclass)
from minitorch_nn._legacy import (  # noqa: F401  (PyTorch's legacy typed constructors)
    BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor,
    LongTensor, ShortTensor,
)
from minitorch_nn import overrides
from minitorch_nn import _tensor_subclass  # noqa: F401  (subclass protocols: __torch_function__/__torch_dispatch__)
from minitorch_nn import _tensor_module_load  # noqa: F401  (Tensor.module_load, as torch has it on import)
from minitorch_nn import backends  # noqa: F401  (registers the kernels)
from minitorch_nn._functions.factories import (
    arange, as_tensor, empty, empty_like, empty_strided, eye, from_dlpack, from_numpy, full, full_like, linspace, logspace,
    ones,
    ones_like, rand, rand_like, randint, randn, randn_like, randperm, scalar_tensor, tensor, zeros, zeros_like,
)
from minitorch_nn._functions.pointwise import *  # noqa: F403
from minitorch_nn._functions.pointwise import abs, pow, round  # noqa: A004
from minitorch_nn._functions.reductions import *  # noqa: F403
from minitorch_nn._functions.reductions import all, any, max, min, sum, return_types  # noqa: A004
from minitorch_nn._functions.shape import *  # noqa: F403
from minitorch_nn._functions.linalg import *  # noqa: F403
from minitorch_nn._functions.complex import *  # noqa: F403
from minitorch_nn._functions.complex import complex, real  # noqa: A004
from minitorch_nn._shape import broadcast_shapes_public as broadcast_shapes  # noqa: E402  (not the ops' helper)
from minitorch_nn._functions.sampling import bernoulli, normal  # noqa: E402
from minitorch_nn._functions.indexing import gather, index_select, masked_fill, masked_select, scatter, scatter_add, index_add
from minitorch_nn import autograd  # noqa: F401  (installs the autograd layer; Tensor.backward)
from minitorch_nn.autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from minitorch_nn.autograd import is_anomaly_check_nan_enabled, is_anomaly_enabled, is_inference_mode_enabled  # noqa: F401
from minitorch_nn.linalg import _weight_norm, dist, geqrf, matrix_exp, norm_except_dim, vdot  # noqa: F401,E402  (top-level helpers, see linalg.py)
from minitorch_nn import cuda  # noqa: F401,E402  (torch.cuda; its kernels load on first CUDA use)


def is_tensor(obj):
    """True for minitorch_nn tensors (and subclasses)."""
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.dtype.is_floating_point


def result_type(tensor1, tensor2):
    from minitorch_nn.backends.common import result_type as _rt

    return _rt(tensor1, tensor2)


def can_cast(from_, to):
    from minitorch_nn.backends.common import can_cast as _cc

    return _cc(from_, to)


__version__ = "0.1.0"


# -- loaded on first use ----------------------------------------------------------------------------
# ``import minitorch_nn`` imports only the tensor, its ops, dispatch and autograd. The parts that
# many programs never touch, or touch later, are imported the first time they are used, through
# the module ``__getattr__`` below: ``torch.nn``, ``torch.optim``, ``torch.export``, ``torch.utils``,
# checkpoints (``torch.save``/``load``, safetensors), the random-number API (``torch.manual_seed``)
# and the print options (``torch.set_printoptions``; printing a tensor loads them too). They
# behave exactly as if imported eagerly (``from minitorch_nn import nn``, ``import
# minitorch_nn.optim`` and ``dir(minitorch_nn)`` all work); only the import cost moves.
_LAZY_SUBMODULES = frozenset(
    {"nn", "optim", "export", "serialization", "safetensors_io", "random", "utils", "func", "__future__", "viz",
     "distributions"}
)
_LAZY_NAMES = {  # name -> the submodule that defines it
    "set_printoptions": "_tensor_str", "get_printoptions": "_tensor_str", "printoptions": "_tensor_str",
    "load": "serialization", "save": "serialization",
    "safetensors_load": "safetensors_io", "safetensors_save": "safetensors_io",
    "Generator": "random", "default_generator": "random", "get_rng_state": "random", "initial_seed": "random",
    "manual_seed": "random", "seed": "random", "set_rng_state": "random",
    "cosine_similarity": "nn._functional.distance", "pairwise_distance": "nn._functional.distance",
    "set_num_threads": "_threads", "get_num_threads": "_threads",
}


def __getattr__(name):
    import importlib

    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"minitorch_nn.{name}")  # (the import also sets it here)
    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module(f"minitorch_nn.{_LAZY_NAMES[name]}"), name)
        globals()[name] = value  # later lookups find it directly
        return value
    raise AttributeError(f"module 'minitorch_nn' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | _LAZY_SUBMODULES | set(_LAZY_NAMES))


# The compiled twins' guards remember what they mirror while it is still the package's own.
backends.compiled._remember_originals()
