"""cpu kernels of the complex-number ops: ``_conj``, ``_conj_physical``, ``angle``, ``sgn``,
``polar``, ``complex``; and which elementwise ops refuse complex tensors, with PyTorch's words.

Mirrors PyTorch's ``aten/src/ATen/native/UnaryOps.cpp`` (conj, angle, sgn), ``Complex.cpp``
(polar, complex) and the dtype dispatch of its kernels. numpy stores complex64/complex128 natively,
so each kernel is one numpy call plus PyTorch's dtype rule:

* ``angle`` of a complex tensor is real (complex64 -> float32); of a real tensor it is 0 or pi
  (nan stays nan), in the default float dtype for integers;
* ``sgn(z)`` is ``z / |z|`` (0 where ``|z|`` is 0) for complex ``z``, ``sign`` for real tensors;
* ``polar(abs, angle)`` and ``complex(real, imag)`` take two floating tensors of one dtype and
  broadcast them.

:data:`COMPLEX_REFUSALS` lists the ops PyTorch has no complex loop for (``floor``, ``clamp``,
comparisons like ``lt``, ``maximum``...), each with the exception and message PyTorch raises;
their kernels call :func:`refuse_complex` before computing.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn._shape import broadcast_shapes
from minitorch_nn.backends.common import type_name
from minitorch_nn.backends.cpu._numpy import as_array, fp_errors_off, fp_errors_restore, wrap

# op name -> (exception class, message); "{t}" is the C++ type name (ComplexFloat, ComplexDouble)
_NIE, _RE = NotImplementedError, RuntimeError
COMPLEX_REFUSALS = {
    "sign": (_NIE, "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead."),
    "floor": (_NIE, "floor is not supported for complex inputs"),
    "ceil": (_NIE, "ceil is not supported for complex inputs"),
    "trunc": (_NIE, "trunc is not supported for complex inputs"),
    "round": (_NIE, "\"round_vml_cpu\" not implemented for '{t}'"),
    "frac": (_NIE, "\"frac_cpu\" not implemented for '{t}'"),
    "erf": (_NIE, "\"erf_vml_cpu\" not implemented for '{t}'"),
    "erfc": (_NIE, "\"erfc_vml_cpu\" not implemented for '{t}'"),
    "erfinv": (_NIE, "\"erfinv_vml_cpu\" not implemented for '{t}'"),
    "clamp": (_NIE, "clamp is not supported for complex types"),
    "lt": (_NIE, "\"lt_cpu\" not implemented for '{t}'"),
    "le": (_NIE, "\"le_cpu\" not implemented for '{t}'"),
    "gt": (_NIE, "\"gt_cpu\" not implemented for '{t}'"),
    "ge": (_NIE, "\"ge_cpu\" not implemented for '{t}'"),
    "maximum": (_RE, "maximum not implemented for complex tensors."),
    "minimum": (_RE, "minimum not implemented for complex tensors."),
    "remainder": (_NIE, "\"remainder_cpu\" not implemented for '{t}'"),
    "fmod": (_NIE, "\"fmod_cpu\" not implemented for '{t}'"),
    "div_floor": (_NIE, "\"div_floor_cpu\" not implemented for '{t}'"),
    "div_trunc": (_NIE, "\"div_trunc_cpu\" not implemented for '{t}'"),
    "atan2": (_NIE, "\"atan2_cpu\" not implemented for '{t}'"),
    "max_all": (_NIE, "\"max_all\" not implemented for '{t}'"),
    "min_all": (_NIE, "\"min_all\" not implemented for '{t}'"),
    "amax": (_NIE, "\"max_values_cpu\" not implemented for '{t}'"),
    "amin": (_NIE, "\"min_values_cpu\" not implemented for '{t}'"),
    "max_dim": (_RE, "max(): does not support complex input"),
    "min_dim": (_RE, "min(): does not support complex input"),
    "argmax": (_RE, "argmax(): does not support complex input"),
    "argmin": (_RE, "argmin(): does not support complex input"),
    "sort": (_RE, " Sort does not support complex dtypes on CPU"),
    "topk": (_RE, " topk does not support complex dtypes on CPU"),
    "gelu": (_NIE, "\"GeluKernelImpl\" not implemented for '{t}'"),
    "elu": (_NIE, "\"elu_cpu\" not implemented for '{t}'"),
    "leaky_relu": (_NIE, "\"leaky_relu_cpu\" not implemented for '{t}'"),
    "softplus": (_NIE, "\"softplus_cpu\" not implemented for '{t}'"),
    "threshold": (_NIE, "\"threshold_cpu\" not implemented for '{t}'"),
    "softmax": (_NIE, "\"softmax_lastdim_kernel_impl\" not implemented for '{t}'"),
    "log_softmax": (_NIE, "\"log_softmax_lastdim_kernel_impl\" not implemented for '{t}'"),
    "abs_": (_RE, "In-place abs is not supported for complex tensors."),
    "fmax": (_RE, "fmax not implemented for complex tensors."),
    "fmin": (_RE, "fmin not implemented for complex tensors."),
    "heaviside": (_RE, "heaviside is not yet implemented for complex tensors."),
}


def refuse_complex(name, *operands):
    """Raise PyTorch's error for op ``name`` when one of ``operands`` is a complex tensor (or number)."""
    for x in operands:
        if isinstance(x, TensorBase):
            d = x._impl.dtype
            if not d.is_complex:
                continue
        elif isinstance(x, complex):
            d = dt.complex64
        else:
            continue
        exc, message = COMPLEX_REFUSALS[name]
        raise exc(message.format(t=type_name(d)))


def _unary(fn, self, dtype):
    token = fp_errors_off()
    try:
        return wrap(fn(as_array(self)), dtype)
    finally:
        fp_errors_restore(token)


@aten._conj.default.impl("cpu")
@aten._conj_physical.default.impl("cpu")
def conj(self):
    return _unary(np.conj, self, self.dtype)


@aten.angle.default.impl("cpu")
def angle(self):
    d = self.dtype
    if d.is_complex:
        return _unary(np.angle, self, d.to_real())
    out = d if d.is_floating_point else dt.get_default_dtype()
    # 0 for x >= 0, pi for x < 0, and nan stays nan (numpy's angle gives 0 for nan)
    return _unary(lambda x: np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0.0)), self, out)


@aten.sgn.default.impl("cpu")
def sgn(self):
    if not self.dtype.is_complex:
        return aten.sign.default(self)

    def unit(z):
        size = np.abs(z)
        return np.where(size == 0, 0, z / np.where(size == 0, 1, size))

    return _unary(unit, self, self.dtype)


def _check_pair(a, b):
    """PyTorch's checks of ``polar``/``complex``: two floating tensors of one dtype."""
    da, db = a.dtype, b.dtype
    if not (da.is_floating_point and db.is_floating_point and da not in (dt.bfloat16,) and db not in (dt.bfloat16,)):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {type_name(da)} and "
                           f"{type_name(db)}")
    if da is not db:
        raise RuntimeError(f"Expected object of scalar type {type_name(da)} but got scalar type {type_name(db)} for "
                           "second argument")
    if da is dt.float16:
        da.to_complex()  # (raises: complex32 does not exist here)
    broadcast_shapes(tuple(a.shape), tuple(b.shape))  # (PyTorch's error for shapes that do not broadcast)
    return da.to_complex()


@aten.polar.default.impl("cpu")
def polar(abs, angle):  # noqa: A002 - PyTorch's argument name
    d = _check_pair(abs, angle)
    r, theta = as_array(abs), as_array(angle)
    token = fp_errors_off()
    try:
        out = r * np.cos(theta) + 1j * (r * np.sin(theta))
    finally:
        fp_errors_restore(token)
    return wrap(out, d)


@aten.complex.default.impl("cpu")
def complex_(real, imag):
    d = _check_pair(real, imag)
    re, im = np.broadcast_arrays(as_array(real), as_array(imag))
    out = np.empty(re.shape, dtype=d.numpy_dtype)
    out.real, out.imag = re, im
    return wrap(out, d)
