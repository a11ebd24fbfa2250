"""``minitorch_nn.nn.utils`` (mirrors ``torch.nn.utils``).

* :mod:`~minitorch_nn.nn.utils.parametrize`: ``register_parametrization``, ``cached``,
  ``remove_parametrizations`` and friends;
* :mod:`~minitorch_nn.nn.utils.parametrizations`: the built-in ``orthogonal``, ``weight_norm``
  and ``spectral_norm``;
* :mod:`~minitorch_nn.nn.utils.clip_grad`: ``clip_grad_norm_``, ``clip_grad_value_``,
  ``get_total_norm``, ``clip_grads_with_norm_``;
* :mod:`~minitorch_nn.nn.utils.convert_parameters`: ``parameters_to_vector`` and
  ``vector_to_parameters``;
* :mod:`~minitorch_nn.nn.utils.stateless`: the deprecated ``functional_call`` (use
  ``minitorch_nn.func.functional_call``).

* :mod:`~minitorch_nn.nn.utils.weight_norm`: the older hook-based ``weight_norm`` and
  ``remove_weight_norm`` (deprecated, as in PyTorch);
* :mod:`~minitorch_nn.nn.utils.spectral_norm`: the older hook-based ``spectral_norm`` and
  ``remove_spectral_norm`` (PyTorch recommends the parametrization).

* :mod:`~minitorch_nn.nn.utils.rnn`: ``PackedSequence``, ``pad_sequence``, ``pack_padded_sequence``,
  ``pad_packed_sequence``, ``pack_sequence`` for the recurrent layers.
"""

from minitorch_nn.nn.utils import (  # noqa: F401
    clip_grad,
    convert_parameters,
    parametrizations,
    parametrize,
    rnn,
    stateless,
)
from minitorch_nn.nn.utils.clip_grad import (  # noqa: F401
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from minitorch_nn.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from minitorch_nn.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from minitorch_nn.nn.utils.weight_norm import remove_weight_norm, weight_norm  # noqa: F401

__all__ = [
    "parametrize", "parametrizations", "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_",
    "clip_grads_with_norm_", "get_total_norm", "parameters_to_vector", "vector_to_parameters", "weight_norm",
    "remove_weight_norm", "spectral_norm", "remove_spectral_norm",
]
