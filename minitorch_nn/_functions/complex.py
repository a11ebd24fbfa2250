"""Complex numbers: ``torch.real``/``imag``, ``view_as_real``/``view_as_complex``, ``conj``,
``polar``, ``complex``, ``angle``, ``is_complex`` and their Tensor methods.

Mirrors PyTorch's complex API (``aten/src/ATen/native/Complex.cpp``, ``TensorShape.cpp``).
``real`` and ``imag`` are views, as in PyTorch: both are ``view_as_real(x)`` with the last
dimension selected, so writing through them changes ``x``. ``.real`` of a real tensor is the
tensor itself; ``.imag`` of one raises PyTorch's error.

Difference: PyTorch's ``conj()`` is lazy, a view with a "conjugate bit" that later ops resolve.
Here ``conj()`` of a complex tensor makes a conjugated copy at once (``aten._conj`` still names
the op) and marks it, so ``is_conj()`` is True on it as in PyTorch, ``resolve_conj()`` returns an
unmarked copy and ``view_as_real`` refuses it with PyTorch's message; but writes through
``x.conj()`` do not reach ``x``. Values, dtypes and gradients are PyTorch's.
"""

from __future__ import annotations

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._functions._out import writes_out
from minitorch_nn._ops import aten
from minitorch_nn._tensor import Tensor
from minitorch_nn.overrides import public


def _check_tensor(x, name, arg="input"):
    if not isinstance(x, TensorBase):
        raise TypeError(f"{name}(): argument '{arg}' (position 1) must be Tensor, not {type(x).__name__}")


@public
def is_complex(input):
    """True when ``input`` has a complex dtype."""
    _check_tensor(input, "is_complex")
    return input.dtype.is_complex


@public
def view_as_real(input):
    """A real view of a complex tensor with a trailing dimension of 2 (real, imaginary)."""
    if isinstance(input, TensorBase) and is_conj(input):
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so you "
            "can view it as real, use self.resolve_conj(); however, be warned that the resulting tensor will NOT "
            "alias the original."
        )
    return aten.view_as_real.default(input)


@public
def view_as_complex(input):
    """A complex view of a real tensor whose last dimension has size 2 and stride 1."""
    return aten.view_as_complex.default(input)


@public
def real(input):
    """The real parts: a view for a complex tensor, ``input`` itself for a real one."""
    _check_tensor(input, "real")
    if not input.dtype.is_complex:
        return input
    return aten.select.int(aten.view_as_real.default(input), -1, 0)


@public
def imag(input):
    """The imaginary parts of a complex tensor, as a view."""
    _check_tensor(input, "imag")
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return aten.select.int(aten.view_as_real.default(input), -1, 1)


@public
def conj(input):
    """The complex conjugate (``input`` itself for a real tensor)."""
    _check_tensor(input, "conj")
    if not input.dtype.is_complex:
        return input
    if is_conj(input):
        # conj of a conjugate: PyTorch clears the bit, giving back the original values
        return aten._conj.default(input)
    out = aten._conj.default(input)
    out.__dict__[_CONJ_MARK] = True
    return out


# the attribute marking a tensor made by conj() (see the module docstring)
_CONJ_MARK = "_minitorch_conj_bit"


@public
def conj_physical(input):
    """The complex conjugate, always materialized (``input``'s values for a real tensor)."""
    _check_tensor(input, "conj_physical")
    if not input.dtype.is_complex:
        return input
    return aten._conj_physical.default(input)


@public
def resolve_conj(input):
    """``input`` itself, or for a ``conj()`` result an unmarked copy (PyTorch materializes it)."""
    if not is_conj(input):
        return input
    return aten.clone.default(input)


@public
def is_conj(input):
    """Whether ``input`` is a ``conj()`` result (PyTorch's conjugate bit; see the module docstring)."""
    _check_tensor(input, "is_conj")
    d = getattr(input, "__dict__", None)
    return bool(d) and d.get(_CONJ_MARK, False)


@public
@writes_out()
def angle(input, *, out=None):
    """The argument of each element, in radians (0 or pi for real tensors)."""
    return aten.angle.default(input)


@public
@writes_out()
def polar(abs, angle, *, out=None):  # noqa: A002 - PyTorch's argument name
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``."""
    return aten.polar.default(abs, angle)


@public
@writes_out()
def complex(real, imag, *, out=None):
    """The complex tensor ``real + i imag`` from two floating tensors of the same dtype."""
    return aten.complex.default(real, imag)


@public
@writes_out()
def sgn(input, *, out=None):
    """``input / abs(input)`` for complex tensors (0 where abs is 0); ``sign`` for real ones."""
    return aten.sgn.default(input)


# -- Tensor methods -------------------------------------------------------------------------------


def _set_real(self, value):
    real(self).copy_(value)


def _set_imag(self, value):
    imag(self).copy_(value)


def _conj_physical_(self):
    if self.dtype.is_complex:
        self.copy_(aten._conj_physical.default(self))
    return self


def _mH(self):
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor.")
    return conj(self.mT)


def _H(self):
    n = self.dim()
    if n == 0:
        from minitorch_nn._warnings import warn_user

        warn_user("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning)
        return conj(self)
    if n != 2:
        more = " For batches of matrices, consider using tensor.mH" if n > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{more}")
    return conj(self.T)


def adjoint(input):
    """The conjugate transpose of the last two dims (``Tensor.mH``)."""
    return _mH(input)


def attach_tensor_methods(tensor_cls):
    """Give ``Tensor`` its complex methods and the ``real``/``imag`` properties (done on import,
    before ``_tensor_subclass`` takes note of Tensor's members)."""
    tensor_cls.mH = property(public(_mH))
    tensor_cls.H = property(public(_H))
    tensor_cls.adjoint = adjoint
    tensor_cls.real = property(real, _set_real)
    tensor_cls.imag = property(imag, _set_imag)
    for name, fn in (("is_complex", is_complex), ("conj", conj), ("conj_physical", conj_physical),
                     ("resolve_conj", resolve_conj), ("is_conj", is_conj), ("angle", angle), ("sgn", sgn),
                     ("conj_physical_", _conj_physical_)):
        setattr(tensor_cls, name, fn)
    tensor_cls.cfloat = _cfloat
    tensor_cls.cdouble = _cdouble


def _cfloat(self, *, memory_format=None):
    """``self.to(torch.complex64)`` (``Tensor.cfloat``; like PyTorch, no positional argument)."""
    return self.to(dt.complex64)


def _cdouble(self, *, memory_format=None):
    """``self.to(torch.complex128)`` (``Tensor.cdouble``; like PyTorch, no positional argument)."""
    return self.to(dt.complex128)


adjoint = public(adjoint)

__all__ = ["adjoint", "angle", "complex", "conj", "conj_physical", "imag", "is_complex", "is_conj", "polar", "real",
           "resolve_conj", "sgn", "view_as_complex", "view_as_real"]

attach_tensor_methods(Tensor)
