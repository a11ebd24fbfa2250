"""The cpu backend: numpy kernels, one file per op family. Importing it registers them."""

from minitorch_nn.backends.cpu import factories, indexing, linalg, pointwise, random, reduction  # noqa: F401
from minitorch_nn.backends.cpu import activations  # noqa: F401  (after pointwise, whose helpers it uses)
from minitorch_nn.backends.cpu import activations_more  # noqa: F401  (hardswish, mish, log_sigmoid, celu...)
from minitorch_nn.backends.cpu import storage_ops  # noqa: F401  (Tensor.set_)
from minitorch_nn.backends.cpu import binary_math, bit_shifts  # noqa: F401  (xlogy, hypot, ...; << >>)
from minitorch_nn.backends.cpu import augmented_ops  # noqa: F401  (%= //= &= |= ^=; 2 & x)
from minitorch_nn.backends.cpu import complex  # noqa: F401,A004  (conj, angle, polar, complex; the complex refusals)
