"""The cpu backend: numpy kernels, one file per op family. Importing it registers them."""

from minitorch_nn.backends.cpu import (  # noqa: F401  # noqa: F401  (xlogy, hypot, ...; << >>)
    activations,  # noqa: F401  (after pointwise, whose helpers it uses)
    activations_more,  # noqa: F401  (hardswish, mish, log_sigmoid, celu...)
    augmented_ops,  # noqa: F401  (%= //= &= |= ^=; 2 & x)
    binary_math,
    bit_shifts,
    complex,  # noqa: F401,A004  (conj, angle, polar, complex; the complex refusals)
    factories,
    indexing,
    linalg,
    pointwise,
    pooling,  # noqa: F401  (max and average pooling)
    random,
    reduction,
    storage_ops,  # noqa: F401  (Tensor.set_)
)
