"""Attach the method forms of the public functions to ``Tensor`` (``x.sum()``, ``x + y``, ...).

PyTorch generates these methods from the same declarations as the functions. Here each method
is one line that calls its function, listed in one table so a reader can find where ``x.foo``
goes. In-place methods (``add_``) call their ``aten.*_`` op directly.
"""

from __future__ import annotations

import numbers as _numbers

import numpy as _np

from minitorch_nn import _C_torch_function as _tfc
from minitorch_nn import _dispatch, _ops
from minitorch_nn import _dtype as _dt
from minitorch_nn import _functions as _pkg  # noqa: F401
from minitorch_nn._C import Size, TensorBase
from minitorch_nn._device import CPU
from minitorch_nn._dispatch import python_dispatch as _python_dispatch
from minitorch_nn._functions import factories as _fac
from minitorch_nn._functions import indexing as _idx
from minitorch_nn._functions import linalg as _la
from minitorch_nn._functions import pointwise as _pw
from minitorch_nn._functions import reductions as _red
from minitorch_nn._functions import shape as _sh
from minitorch_nn._ops import aten
from minitorch_nn._shape import _type_name, normalize_size
from minitorch_nn._tensor import Tensor
from minitorch_nn._twins import _gate as _twin_gate
from minitorch_nn._twins._functions import indexing as _indexing_twin
from minitorch_nn._twins.backends import views as _views_twin
from minitorch_nn._twins.backends.cpu import activations as _activations_twin
from minitorch_nn._twins.backends.cpu import factories as _factories_twin
from minitorch_nn._twins.backends.cpu import linalg as _linalg_twin
from minitorch_nn._twins.backends.cpu import pointwise as _pointwise_twin
from minitorch_nn._twins.backends.cpu import random as _random_twin
from minitorch_nn._twins.backends.cpu import reduction as _reduction_twin
from minitorch_nn.autograd import grad_mode as _grad_mode
from minitorch_nn.backends import compiled as _compiled
from minitorch_nn.overrides import public

# name on Tensor -> function whose first argument is the tensor
_FORWARD = {}
for _mod in (_pw, _red, _sh, _la, _idx):
    for _name in dir(_mod):
        _fn = getattr(_mod, _name)
        if callable(_fn) and hasattr(_fn, "__wrapped_impl__") and not _name.startswith("_"):
            _FORWARD[_name] = _fn

for _name in ("getitem", "setitem", "tensor_split", "broadcast_tensors", "cat", "stack", "hstack", "vstack",
              "einsum", "concat", "concatenate", "where", "equal", "isclose", "allclose"):
    _FORWARD.pop(_name, None)


# Compiled twins of Tensor methods: ``x.relu()``, ``x.sum()``, ``x.exp()``, ``x.t()``, ``x.detach()``,
# ``x.to(dtype)`` (which state_dict and Module.to call once per tensor)... and the operators below
# are compiled functions from the twins of the kernels they mirror (``_ext/twins/<path of the
# kernel's file>.pyx``; each twin module lists its methods in ``METHODS`` and its public functions
# in ``FUNCTIONS``). When nothing could observe the op (exact ``Tensor``s on the cpu, no mode or
# dispatch subclass...) and the op's guard holds, they call numpy themselves, exactly as the cpu
# kernel would (also with grad: they record through the compiled recorder); otherwise they call
# the full-path function given to the twins' gate (``_twin_gate.install_fast_functions``) at the
# bottom of this file. Each is bound through ``backends.compiled.bind``: with the switch off,
# ``Tensor.relu`` is the readable method itself.
_TWIN_MODULES = (_pointwise_twin, _activations_twin, _reduction_twin, _linalg_twin, _factories_twin,
                 _random_twin, _views_twin, _indexing_twin)
_FAST_METHODS = {}
_FAST_FUNCTIONS = {}
for _twin_module in _TWIN_MODULES:
    _FAST_METHODS.update(_twin_module.METHODS)
    _FAST_FUNCTIONS.update(_twin_module.FUNCTIONS)
_FULL_PATH = {}  # name -> the public wrapper that a compiled method falls back to
_READABLE = {}   # name -> the readable method, Tensor.<name> while the switch is off


def _method(name, fn):
    # The method is itself a public wrapper, so __torch_function__ handlers see func=Tensor.<name>
    # (as in PyTorch) while the work is the function's undecorated body.
    # (a function whose method form parses its arguments otherwise, ``sum``, has a body of its own for it)
    impl = getattr(fn, "__method_impl__", None) or fn.__wrapped_impl__
    fast = _FAST_METHODS.get(name)
    if fast is not None:
        # A compiled method is Tensor.<name> itself while the switch is on (no Python frame on the
        # fast path); its slow path is a public wrapper that hands *it* to handlers as func. While
        # the switch is off Tensor.<name> is the readable method (made below), which hands itself.
        fast.__name__, fast.__qualname__, fast.__doc__ = name, "Tensor." + name, fn.__doc__
        fast.__wrapped_impl__ = impl
        _FULL_PATH[name] = public(impl, func=fast)
        _READABLE[name] = _readable_method(name, fn, impl)
        return _compiled.bind(Tensor, name, fast, _READABLE[name], mirrors=(impl,))
    return _readable_method(name, fn, impl)


def _readable_method(name, fn, impl):
    # The wrapper calls the function's body itself (``x.exp()`` is ``exp(x)`` without the
    # function's own wrapper in between), under the method's names.
    method = public(impl)
    method.__name__, method.__qualname__, method.__doc__ = name, "Tensor." + name, fn.__doc__
    method.__module__ = __name__
    return method


for _name, _fn in _FORWARD.items():
    if not hasattr(Tensor, _name) or _name in ("to",):
        setattr(Tensor, _name, _method(_name, _fn))

Tensor.where = lambda self, condition, other: _pw.where(condition, self, other)
Tensor.equal = lambda self, other: _pw.equal(self, other)
Tensor.isclose = lambda self, other, rtol=1e-05, atol=1e-08, equal_nan=False: _pw.isclose(self, other, rtol, atol, equal_nan)
Tensor.allclose = lambda self, other, rtol=1e-05, atol=1e-08, equal_nan=False: _pw.allclose(self, other, rtol, atol, equal_nan)
Tensor.tensor_split = lambda self, indices_or_sections, dim=0: _sh.tensor_split(self, indices_or_sections, dim)


# -- methods whose argument forms differ from the function ------------------------------------------

def _size_list(shape, name=None, arg="size", overloads=None):
    """``f(2, 8)``, ``f((2, 8))``, ``f([2, 8])``, ``f(Size)`` as a list of ints; anything but plain
    ints goes through ``normalize_size`` (and its errors, naming method ``name``'s ``arg``)."""
    sizes = shape[0] if len(shape) == 1 and type(shape[0]) in (tuple, list, Size) else shape
    for s in sizes:
        if type(s) is not int:
            return list(normalize_size(shape, name, arg, overloads))
    return list(sizes)


# (the signatures PyTorch lists when ``x.view(...)`` fits neither)
_VIEW_OVERLOADS = ("torch.dtype dtype", "tuple of ints size")


def view(self, *shape, **kwargs):
    """Same storage, another shape (must be stride-compatible; else use reshape)."""
    if shape and not kwargs:
        # (a dtype has an itemsize, and so has a numpy integer, which is a size)
        if len(shape) == 1 and not hasattr(shape[0], "__index__") and not isinstance(shape[0], (tuple, list)) \
                and hasattr(shape[0], "itemsize"):
            return aten.view.dtype(self, shape[0])
        return aten.view.default(self, _size_list(shape, "view", "size", _VIEW_OVERLOADS))
    sizes, dtype = _sh.view_method_args(shape, kwargs)   # keywords, or nothing: PyTorch's parser
    return aten.view.dtype(self, dtype) if sizes is None else aten.view.default(self, sizes)


def view_as(self, other):
    return aten.view.default(self, list(other.shape))


def reshape_as(self, other):
    return _sh._reshape(self, other.shape)


# (``x.f(2, 8)``, ``x.f((2, 8))``, ``x.f(name=(2, 8))``; any other form gets PyTorch's TypeError)
def reshape(self, *shape, **kwargs):
    return _sh._reshape(self, _sh.size_method_args("reshape", shape, kwargs))


def permute(self, *dims, **kwargs):
    return aten.permute.default(self, _sh.size_method_args("permute", dims, kwargs))


def expand(self, *sizes, **kwargs):
    sizes, implicit = _sh.size_method_args("expand", sizes, kwargs)
    return aten.expand.default(self, sizes, implicit=True) if implicit else aten.expand.default(self, sizes)


def repeat(self, *sizes, **kwargs):
    return aten.repeat.default(self, _sh.size_method_args("repeat", sizes, kwargs))


def flip(self, *dims, **kwargs):
    return aten.flip.default(self, _sh.size_method_args("flip", dims, kwargs))


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    from minitorch_nn._functions.factories import _factory_kwargs, _finish

    # aten.zeros directly: torch.zeros' own negative-size wording is not new_zeros' (at::empty's)
    kw = _factory_kwargs(dtype or self.dtype, device or self.device)
    return _finish(aten.zeros.default(normalize_size(size, "new_zeros"), **kw), requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    from minitorch_nn._functions.factories import ones

    return ones(*normalize_size(size, "new_ones"), dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    from minitorch_nn._functions.factories import empty

    return empty(*normalize_size(size, "new_empty"), dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    from minitorch_nn._functions.factories import full

    if not isinstance(size, (tuple, list)):   # (unlike new_zeros, one int is no size here)
        raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def size_method_T(self):
    return aten.permute.default(self, list(range(self.dim() - 1, -1, -1)))


def mT(self):
    return aten.transpose.int(self, -2, -1)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of ``data``, with this tensor's dtype and device unless given."""
    from minitorch_nn._functions.factories import tensor

    return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


for _f in (view, view_as, reshape_as, reshape, permute, expand, repeat, flip, new_zeros, new_ones, new_empty, new_full):
    setattr(Tensor, _f.__name__, public(_f))
    Tensor.__dict__[_f.__name__].__qualname__ = "Tensor." + _f.__name__
Tensor.new_tensor = new_tensor
# compiled view(), reshape(), permute(), expand() (``_ext/twins/backends/views.pyx``); their full
# paths: the public methods above
_views_twin.tensor_view.__doc__, _views_twin.tensor_reshape.__doc__ = view.__doc__, reshape.__doc__
for _f in (view, reshape, permute, expand):
    _fast = getattr(_views_twin, "tensor_" + _f.__name__)
    _fast.__name__, _fast.__qualname__, _fast.__doc__ = _f.__name__, "Tensor." + _f.__name__, _f.__doc__
    _FULL_PATH[_f.__name__] = public(_f, func=_fast)
    _READABLE[_f.__name__] = Tensor.__dict__[_f.__name__]   # (the public wrapper set above)
    _compiled.bind(Tensor, _f.__name__, _fast, _READABLE[_f.__name__], mirrors=(_f,))
Tensor.T = property(public(size_method_T))
Tensor.mT = property(public(mT))
Tensor.H = Tensor.T


# -- in-place ops ---------------------------------------------------------------------------------

def add_(self, other, *, alpha=1):
    return aten.add_.Tensor(self, other) if alpha == 1 and alpha is not True else aten.add_.Tensor(self, other, alpha=alpha)


def sub_(self, other, *, alpha=1):
    return aten.sub_.Tensor(self, other) if alpha == 1 and alpha is not True else aten.sub_.Tensor(self, other, alpha=alpha)


def mul_(self, other):
    return aten.mul_.Tensor(self, other)


def div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return aten.div_.Tensor(self, other)
    return aten.div_.Tensor_mode(self, other, rounding_mode=rounding_mode)


def pow_(self, exponent):
    if isinstance(exponent, TensorBase):
        return aten.pow_.Tensor(self, exponent)
    return aten.pow_.Scalar(self, exponent)


def clamp_(self, min=None, max=None):
    return aten.clamp_.default(self, min, max) if max is not None else aten.clamp_.default(self, min)


def copy_(self, src, non_blocking=False):
    """Copy ``src``'s values into this tensor (broadcasting, casting), bumping its version."""
    return aten.copy_.default(self, src)


def zero_(self):
    return aten.zero_.default(self)


def fill_(self, value):
    if isinstance(value, TensorBase):
        return aten.fill_.Tensor(self, value)
    return aten.fill_.Scalar(self, value)


def _check_float_arguments(fn_name, names, values):
    """PyTorch's check of ``float`` arguments: a real number (bool, int, float, a numpy real) or a
    0-d tensor; anything else (a string, a complex, a list, ``None``, a tensor of more elements)
    is refused with its ``TypeError`` wording before anything is drawn."""
    for position, (name, value) in enumerate(zip(names, values), start=1):
        if isinstance(value, TensorBase) and value.dim() == 0:
            continue
        if not isinstance(value, _numbers.Real) or isinstance(value, TensorBase):
            raise TypeError(f"{fn_name}(): argument '{name}' (position {position}) must be float, "
                            f"not {_type_name(value)}")


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    _check_float_arguments("uniform_", ("from", "to"), (a, b))
    args = [self] + ([a, b] if (a, b) != (0.0, 1.0) else [])
    return aten.uniform_.default(*args, generator=generator) if generator is not None else aten.uniform_.default(*args)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    _check_float_arguments("normal_", ("mean", "std"), (mean, std))
    args = [self] + ([mean, std] if (mean, std) != (0.0, 1.0) else [])
    return aten.normal_.default(*args, generator=generator) if generator is not None else aten.normal_.default(*args)


def bernoulli_(self, p=0.5, *, generator=None):
    kw = {"generator": generator} if generator is not None else {}
    if isinstance(p, TensorBase):
        return aten.bernoulli_.Tensor(self, p, **kw)
    return aten.bernoulli_.float(self, p, **kw)


def bernoulli(self, p=None, *, generator=None):
    kw = {"generator": generator} if generator is not None else {}
    if p is None:
        return aten.bernoulli.default(self, **kw)
    return aten.bernoulli.p(self, p, **kw)


_NOT_GIVEN = object()


def random_(self, from_=_NOT_GIVEN, to=_NOT_GIVEN, *, generator=None):
    """``random_()``, ``random_(to)`` = [0, to), ``random_(from, to)``; ``to=None`` means the dtype's max."""
    kw = {"generator": generator} if generator is not None else {}
    if from_ is _NOT_GIVEN:
        return aten.random_.default(self, **kw)
    if to is _NOT_GIVEN:
        return aten.random_.to(self, from_, **kw)
    return getattr(aten.random_, "from")(self, from_, to, **kw)


def exponential_(self, lambd=1.0, *, generator=None):
    kw = {"generator": generator} if generator is not None else {}
    return aten.exponential_.default(self, lambd, **kw)


def masked_fill_(self, mask, value):
    if isinstance(value, TensorBase):
        return aten.masked_fill_.Tensor(self, mask, value)
    return aten.masked_fill_.Scalar(self, mask, value)


def index_put_(self, indices, values, accumulate=False):
    return aten.index_put_.default(self, list(indices), values, accumulate)


def scatter_(self, dim, index, src):
    return aten.scatter_.src(self, dim, index, src)


def scatter_add_(self, dim, index, src):
    return aten.scatter_add_.default(self, dim, index, src)


def index_add_(self, dim, index, source, *, alpha=1):
    return aten.index_add_.default(self, dim, index, source, alpha=alpha)


def addcmul_(self, tensor1, tensor2, *, value=1):
    return aten.addcmul_.default(self, tensor1, tensor2, value=value)


def addcdiv_(self, tensor1, tensor2, *, value=1):
    return aten.addcdiv_.default(self, tensor1, tensor2, value=value)


def lerp_(self, end, weight):
    return aten.lerp_.Scalar(self, end, weight)


def _check_operand(name, other, arg="other"):
    """PyTorch's argument-parser error for a method whose operand is a Tensor or a number
    (``x.xlogy_("a")``): both method signatures, each refusing the operand's type."""
    if isinstance(other, (TensorBase, int, float, bool, complex)) or hasattr(other, "__index__") or hasattr(other, "__float__"):
        return
    t = type(other).__name__
    raise TypeError(
        f"{name}() received an invalid combination of arguments - got ({t}), but expected one of:\n"
        f" * (Tensor {arg})\n      didn't match because some of the arguments have invalid types: (!{t}!)\n"
        f" * (Number {arg})\n      didn't match because some of the arguments have invalid types: (!{t}!)\n"
    )


def _check_tensor(name, other, arg="other"):
    # a method with only a Tensor overload: the operand is the method's first argument
    if not isinstance(other, TensorBase):
        raise TypeError(f"{name}(): argument '{arg}' (position 1) must be Tensor, not {type(other).__name__}")


def _number_or_tensor(packet, tensor_overload, number_overload):
    """An in-place method whose op has a Tensor and a Scalar overload (``x.xlogy_(y)``, ``x.xlogy_(2)``)."""
    by_tensor, by_number = getattr(packet, tensor_overload), getattr(packet, number_overload)

    def method(self, other):
        if isinstance(other, TensorBase):
            return by_tensor(self, other)
        _check_operand(method.__name__, other)
        return by_number(self, other)

    return method


xlogy_ = _number_or_tensor(aten.xlogy_, "Tensor", "Scalar_Other")
copysign_ = _number_or_tensor(aten.copysign_, "Tensor", "Scalar")
bitwise_left_shift_ = _number_or_tensor(aten.bitwise_left_shift_, "Tensor", "Tensor_Scalar")
bitwise_right_shift_ = _number_or_tensor(aten.bitwise_right_shift_, "Tensor", "Tensor_Scalar")
remainder_ = _number_or_tensor(aten.remainder_, "Tensor", "Scalar")
fmod_ = _number_or_tensor(aten.fmod_, "Tensor", "Scalar")
bitwise_and_ = _number_or_tensor(aten.bitwise_and_, "Tensor", "Scalar")
bitwise_or_ = _number_or_tensor(aten.bitwise_or_, "Tensor", "Scalar")
bitwise_xor_ = _number_or_tensor(aten.bitwise_xor_, "Tensor", "Scalar")
for _f, _n in ((xlogy_, "xlogy_"), (copysign_, "copysign_"), (bitwise_left_shift_, "bitwise_left_shift_"),
               (bitwise_right_shift_, "bitwise_right_shift_"), (remainder_, "remainder_"), (fmod_, "fmod_"),
               (bitwise_and_, "bitwise_and_"), (bitwise_or_, "bitwise_or_"), (bitwise_xor_, "bitwise_xor_")):
    _f.__name__ = _f.__qualname__ = _n


def _checked_method(name, check, arg="other"):
    """``x.xlogy(y)`` & co.: the function's body, after the method form's own operand check (its
    errors name the method's signatures: the operand is argument 1 there)."""
    fn = getattr(_pw, name)

    def method(self, other):
        check(name, other) if arg == "other" else check(name, other, arg)
        return fn.__wrapped_impl__(self, other)

    method.__name__, method.__qualname__, method.__doc__ = name, "Tensor." + name, fn.__doc__
    method.__module__ = __name__
    return public(method)


for _name in ("xlogy", "copysign", "bitwise_left_shift", "bitwise_right_shift", "fmod"):
    setattr(Tensor, _name, _checked_method(_name, _check_operand))
Tensor.float_power = _checked_method("float_power", _check_operand, "exponent")
for _name in ("hypot", "fmax", "fmin", "logaddexp", "logaddexp2", "ldexp", "gcd", "lcm", "atan2", "arctan2"):
    setattr(Tensor, _name, _checked_method(_name, _check_tensor))
Tensor.heaviside = _checked_method("heaviside", _check_tensor, "values")


def _tensor_inplace(name, op, arg="other"):
    """An in-place method with only a Tensor overload (``x.gcd_(y)``, ``x.heaviside_(values)``)."""
    def method(self, other):
        _check_tensor(name, other, arg)
        return op(self, other)

    method.__name__ = method.__qualname__ = name
    return method


ldexp_ = _tensor_inplace("ldexp_", aten.ldexp_.default)
heaviside_ = _tensor_inplace("heaviside_", aten.heaviside_.default, "values")
gcd_ = _tensor_inplace("gcd_", aten.gcd_.default)
lcm_ = _tensor_inplace("lcm_", aten.lcm_.default)
atan2_ = _tensor_inplace("atan2_", aten.atan2_.default)
arctan2_ = _tensor_inplace("arctan2_", aten.atan2_.default)


def floor_divide_(self, other):
    _check_operand("floor_divide_", other)
    return aten.floor_divide_.Tensor(self, other)  # (a number too, as PyTorch's method passes it)


def hypot_(self, other):
    _check_tensor("hypot_", other)
    return aten.hypot_.default(self, other)


def float_power_(self, exponent):
    """In place, ``self`` must already be float64 (PyTorch's rule: the result's dtype never changes
    here); the exponent is converted to float64, then ``pow_`` runs."""
    _check_operand("float_power_", exponent, "exponent")
    if self.dtype is not _dt.float64:
        from minitorch_nn.backends.common import type_name

        raise RuntimeError(f"the base given to float_power_ has dtype {type_name(self.dtype)} but the "
                           "operation's result requires dtype Double")
    if isinstance(exponent, TensorBase):
        return aten.pow_.Tensor(self, _pw._as_double(exponent))
    return aten.pow_.Scalar(self, float(exponent))


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Make this tensor use ``source``'s storage and geometry (``Tensor.set_``)."""
    if source is None:
        raise NotImplementedError("set_() with no source is not supported")
    return aten.set_.source_Tensor(self, source)


def as_strided_(self, size, stride, storage_offset=None):
    return aten.as_strided_.default(self, list(size), list(stride), storage_offset)


def resize_(self, *sizes, memory_format=None):
    return aten.resize_.default(self, list(normalize_size(sizes, "resize_")))


_INPLACE_UNARY = ("neg", "abs", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "erfinv")


def _inplace_unary(name):
    op = getattr(aten, name + "_").default

    def method(self):
        return op(self)

    method.__name__ = name + "_"
    return method


for _f in (add_, sub_, mul_, div_, pow_, clamp_, copy_, zero_, fill_, uniform_, normal_, bernoulli_, bernoulli,
           random_, exponential_, masked_fill_, index_put_, scatter_, scatter_add_, index_add_, addcmul_, addcdiv_, lerp_,
           set_, as_strided_, resize_, xlogy_, copysign_, hypot_, float_power_, bitwise_left_shift_,
           bitwise_right_shift_, remainder_, fmod_, floor_divide_, bitwise_and_, bitwise_or_, bitwise_xor_, ldexp_,
           heaviside_, gcd_, lcm_, atan2_, arctan2_):
    setattr(Tensor, _f.__name__, public(_f))
for _name in _INPLACE_UNARY:
    setattr(Tensor, _name + "_", public(_inplace_unary(_name)))
# compiled uniform_() and normal_() (``_ext/twins/backends/cpu/random.pyx``), zero_() and fill_()
# (``_ext/twins/backends/cpu/factories.pyx``): ``nn.init`` fills every new layer's parameters with
# them; their full paths: the public methods above
for _f in (uniform_, normal_, zero_, fill_):
    _fast = _FAST_METHODS[_f.__name__]
    _fast.__name__, _fast.__qualname__, _fast.__doc__ = _f.__name__, "Tensor." + _f.__name__, _f.__doc__
    _FULL_PATH[_f.__name__] = public(_f, func=_fast)
    _READABLE[_f.__name__] = Tensor.__dict__[_f.__name__]   # (the public wrapper set above)
    _READABLE[_f.__name__].__qualname__ = "Tensor." + _f.__name__   # (a method's wording for a bad call)
    _compiled.bind(Tensor, _f.__name__, _fast, _READABLE[_f.__name__], mirrors=(_f,))
Tensor.clip_ = Tensor.clamp_
Tensor.subtract_ = Tensor.sub_
Tensor.multiply_ = Tensor.mul_
Tensor.divide_ = Tensor.div_


# -- operators --------------------------------------------------------------------------------------

def _rsub(self, other):
    return _pw.rsub(self, other)


def _rdiv(self, other):
    return _pw.div(other, self) if isinstance(other, TensorBase) else aten.mul.Tensor(aten.reciprocal.default(self), other)


def _rmatmul(self, other):
    return _la.matmul(other, self)


def _iadd(self, other):
    return add_(self, other)


def _isub(self, other):
    return sub_(self, other)


def _imul(self, other):
    return mul_(self, other)


def _itruediv(self, other):
    return div_(self, other)


def _binary_or_notimpl(fn):
    def op(self, other):
        if not isinstance(other, (TensorBase, int, float, bool, complex)) and not hasattr(other, "__index__") \
                and not hasattr(other, "__float__"):
            return NotImplemented
        return fn(self, other)

    return op


# + and * are commutative and their full path turns ``2 + a`` into ``add(a, 2)``, so the
# reflected operators are the same functions. The readable operators (bound while the switch is
# off) call the readable methods; the compiled ones fall back to the compiled methods' full paths,
# so handlers see the same func as for the method (Tensor.add for ``a + b``) either way.
_OPERATOR_METHODS = (("__add__", "add"), ("__sub__", "sub"), ("__mul__", "mul"), ("__truediv__", "div"),
                     ("__matmul__", "matmul"), ("__pow__", "pow"))
_READABLE_OPERATORS = {name: _binary_or_notimpl(_READABLE.get(method, getattr(Tensor, method)))
                       for name, method in _OPERATOR_METHODS}
_SLOW_OPERATORS = {name: _binary_or_notimpl(_FULL_PATH.get(method, getattr(Tensor, method)))
                   for name, method in _OPERATOR_METHODS}
for _fn, _name in ((_pointwise_twin.tensor_add, "__add__"), (_pointwise_twin.tensor_sub, "__sub__"),
                  (_pointwise_twin.tensor_mul, "__mul__")):
    _fn.__name__, _fn.__qualname__ = _name, "Tensor." + _name
    _READABLE_OPERATORS[_name].__name__, _READABLE_OPERATORS[_name].__qualname__ = _name, "Tensor." + _name


def _impl_of(method):
    """The readable function body that Tensor.<method> runs (what an operator's twin mirrors)."""
    return (getattr(_READABLE.get(method), "__wrapped_impl__", None),) if method in _READABLE else ()


for _name, _fast in (("__add__", _pointwise_twin.tensor_add), ("__radd__", _pointwise_twin.tensor_add),
                     ("__sub__", _pointwise_twin.tensor_sub), ("__mul__", _pointwise_twin.tensor_mul),
                     ("__rmul__", _pointwise_twin.tensor_mul)):
    _method_name = dict(_OPERATOR_METHODS)[_name.replace("__r", "__")]
    _compiled.bind(Tensor, _name, _fast, _READABLE_OPERATORS[_name.replace("__r", "__")],
                   mirrors=_impl_of(_method_name))
Tensor.__iadd__ = _iadd
Tensor.__rsub__ = _binary_or_notimpl(_rsub)
Tensor.__isub__ = _isub
Tensor.__imul__ = _imul
Tensor.__truediv__ = _binary_or_notimpl(Tensor.div)
Tensor.__rtruediv__ = _binary_or_notimpl(_rdiv)
Tensor.__itruediv__ = _itruediv
Tensor.__mod__ = _binary_or_notimpl(_pw.remainder)
Tensor.__pow__ = _binary_or_notimpl(Tensor.pow)
Tensor.__matmul__ = _binary_or_notimpl(Tensor.matmul)
Tensor.__rmatmul__ = _binary_or_notimpl(_rmatmul)
Tensor.__neg__ = lambda self: Tensor.neg(self)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: Tensor.abs(self)
def _invert(self):
    # ``~`` is bitwise_not (logical not on bool); PyTorch refuses it for floats with a TypeError
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return _pw.bitwise_not.__wrapped_impl__(self)


_invert.__name__, _invert.__qualname__ = "__invert__", "Tensor.__invert__"
Tensor.__invert__ = public(_invert)  # (handlers see Tensor.__invert__, as in PyTorch)


def _operator(name, fn):
    """An operator PyTorch writes as its own method (``__rmod__``, ``__lshift__``...): a public
    wrapper named ``Tensor.<name>`` for handlers, returning NotImplemented for foreign operands."""
    fn.__name__, fn.__qualname__ = name, "Tensor." + name
    method = public(fn)
    method.__module__ = __name__
    return _binary_or_notimpl(method)


def _by_operand(packet):
    # ``x << y`` is aten.__lshift__.Tensor, ``x << 2`` aten.__lshift__.Scalar (likewise >>, <<=, >>=)
    return lambda self, other: (packet.Tensor if isinstance(other, TensorBase) else packet.Scalar)(self, other)


# & | ^ are the bitwise ops, which on bool tensors are the logical ones (as in PyTorch)
Tensor.__and__ = _operator("__and__", lambda self, other: _pw.bitwise_and.__wrapped_impl__(self, other))
Tensor.__or__ = _operator("__or__", lambda self, other: _pw.bitwise_or.__wrapped_impl__(self, other))
Tensor.__xor__ = _operator("__xor__", lambda self, other: _pw.bitwise_xor.__wrapped_impl__(self, other))
Tensor.__floordiv__ = _operator("__floordiv__", lambda self, other: _pw.floor_divide.__wrapped_impl__(self, other))
# number <op> tensor: PyTorch's reflected operators call the op with the number first (``7 % x`` is
# aten.remainder.Scalar_Tensor(7, x)); & | ^ are commutative: ``2 & x`` is ``x.bitwise_and(2)``,
# which is also what handlers see.
Tensor.__rmod__ = _operator("__rmod__", lambda self, other: _pw.remainder.__wrapped_impl__(other, self))
Tensor.__rfloordiv__ = _operator("__rfloordiv__", lambda self, other: _pw.floor_divide.__wrapped_impl__(other, self))
Tensor.__rpow__ = _operator("__rpow__", lambda self, other: _pw.pow.__wrapped_impl__(other, self))
Tensor.__rand__ = _binary_or_notimpl(Tensor.bitwise_and)
Tensor.__ror__ = _binary_or_notimpl(Tensor.bitwise_or)
Tensor.__rxor__ = _binary_or_notimpl(Tensor.bitwise_xor)
# << and >>: their own ops for the operators, the bitwise_*_shift ops for the reflected forms
Tensor.__lshift__ = _operator("__lshift__", _by_operand(aten.__lshift__))
Tensor.__rshift__ = _operator("__rshift__", _by_operand(aten.__rshift__))
Tensor.__ilshift__ = _operator("__ilshift__", _by_operand(aten.__ilshift__))
Tensor.__irshift__ = _operator("__irshift__", _by_operand(aten.__irshift__))
Tensor.__rlshift__ = _operator("__rlshift__", lambda self, other: aten.bitwise_left_shift.Scalar_Tensor(other, self))
Tensor.__rrshift__ = _operator("__rrshift__", lambda self, other: aten.bitwise_right_shift.Scalar_Tensor(other, self))


def _declines_arrays(op):
    def reflected(self, other):
        if isinstance(other, _np.ndarray):
            return NotImplemented
        return op(self, other)

    reflected.__name__ = reflected.__qualname__ = getattr(op, "__name__", "reflected")
    return reflected


# A numpy number on the left (``np.float32(2) * x``, ``np.int64(7) % x``) gives a Tensor, as in
# PyTorch: numpy's operators defer to an operand with a higher ``__array_priority__``, and Python
# then calls the Tensor's reflected operator. Those decline numpy arrays, as PyTorch's do
# (``np.ones(2) % x`` is a TypeError there). Not ``+`` and ``*``: their reflected forms are the
# compiled operators themselves (``2 + x`` stays one C call), which ``np.ones(2) + x`` reaches; nor
# ``/``, which PyTorch computes as ``x.reciprocal() * array``.
Tensor.__array_priority__ = 1000
for _name in ("__rsub__", "__rfloordiv__", "__rmod__", "__rpow__", "__rmatmul__", "__rand__", "__ror__",
              "__rxor__", "__rlshift__", "__rrshift__"):
    setattr(Tensor, _name, _declines_arrays(getattr(Tensor, _name)))
# augmented assignments write into the tensor (``y = x; x %= 2`` changes y too); PyTorch's
# handlers see %=, //=, **= as the in-place methods, &=, |=, ^= under their own names
Tensor.__imod__ = _binary_or_notimpl(Tensor.remainder_)
Tensor.__ifloordiv__ = _binary_or_notimpl(Tensor.floor_divide_)
Tensor.__ipow__ = _binary_or_notimpl(Tensor.pow_)
Tensor.__iand__ = _operator("__iand__", lambda self, other: bitwise_and_(self, other))
Tensor.__ior__ = _operator("__ior__", lambda self, other: bitwise_or_(self, other))
Tensor.__ixor__ = _operator("__ixor__", lambda self, other: bitwise_xor_(self, other))
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):   # (compiled methods: their twin and readable forms)
    _dunder = f"__{_name}__"
    if _name in _FULL_PATH:
        _compiled.bind(Tensor, _dunder, _binary_or_notimpl(getattr(Tensor, _name)), _binary_or_notimpl(_READABLE[_name]),
                       mirrors=_impl_of(_name))
    else:
        setattr(Tensor, _dunder, _binary_or_notimpl(getattr(Tensor, _name)))


def _install_fast_functions():
    """The public functions with a compiled form (``minitorch_nn.exp(x)``, ``matmul(a, b)``...: the
    ``FUNCTIONS`` of the twin modules) take the public wrapper's place in its module, under each
    name bound to it (before ``minitorch_nn/__init__.py`` re-exports them); the wrapper, remade to
    hand the compiled function to handlers as ``func``, is its full path."""
    slow = {}
    for name, fast in _FAST_FUNCTIONS.items():
        module = next(m for m in (_pw, _la, _red, _sh, _fac) if hasattr(m, name))
        wrapper = getattr(module, name)
        fast.__name__, fast.__qualname__, fast.__module__ = name, name, wrapper.__module__
        fast.__doc__, fast.__wrapped__ = wrapper.__doc__, wrapper.__wrapped__  # (inspect.signature follows it)
        fast.__wrapped_impl__ = wrapper.__wrapped_impl__
        slow[name] = public(wrapper.__wrapped_impl__, func=fast)
        for alias, value in list(vars(module).items()):
            if value is wrapper:
                _compiled.bind(module, alias, fast, wrapper, mirrors=(wrapper.__wrapped_impl__,),
                               also=("minitorch_nn",))
    _twin_gate.install_fast_functions(slow)


_install_fast_functions()
_compiled.bind(Tensor, "__neg__", _pointwise_twin.tensor_neg, Tensor.__dict__["__neg__"],   # (lambdas calling Tensor.neg)
               mirrors=_impl_of("neg"))
_compiled.bind(Tensor, "__abs__", _pointwise_twin.tensor_abs, Tensor.__dict__["__abs__"], mirrors=_impl_of("abs"))
# the operators' full paths (the method's full path for the others: see the bottom of this file)
_twin_gate.install_fast_functions({
    "Tensor.__add__": _SLOW_OPERATORS["__add__"], "Tensor.__sub__": _SLOW_OPERATORS["__sub__"],
    "Tensor.__mul__": _SLOW_OPERATORS["__mul__"], "Tensor.__truediv__": _SLOW_OPERATORS["__truediv__"],
    "Tensor.__matmul__": _SLOW_OPERATORS["__matmul__"], "Tensor.__pow__": _SLOW_OPERATORS["__pow__"],
    "Tensor.__rtruediv__": Tensor.__rtruediv__,
})
for _name, _fast in (("__truediv__", _pointwise_twin.tensor_truediv), ("__matmul__", _linalg_twin.tensor_matmul_op),
                     ("__pow__", _pointwise_twin.tensor_pow_op)):
    _compiled.bind(Tensor, _name, _fast, _READABLE_OPERATORS[_name], mirrors=_impl_of(dict(_OPERATOR_METHODS)[_name]))
_compiled.bind(Tensor, "__rtruediv__", _pointwise_twin.tensor_rtruediv, Tensor.__rtruediv__, mirrors=(_rdiv,))
Tensor.__getitem__ = _method("__getitem__", _idx.getitem)  # handlers see func=Tensor.__getitem__
Tensor.__setitem__ = _method("__setitem__", _idx.setitem)
Tensor.__hash__ = lambda self: id(self)

# The twins' full paths for the methods (the public wrappers that hand the compiled methods to
# handlers as func), then what the gate checks against: from here on the twins may run.
_twin_gate.install_fast_functions({"Tensor." + name: full for name, full in _FULL_PATH.items()})
_twin_gate.install_fast_path(
    tensor_cls=Tensor, tf_state=_tfc.state, dispatch_module=_dispatch, python_dispatch_module=_python_dispatch,
    ops_module=_ops, grad_mode_module=_grad_mode, dtype_cls=_dt.dtype,
    float32=_dt.float32, float64=_dt.float64, int64=_dt.int64, cpu=CPU,
)
_compiled.register_guard_maker(_twin_gate._make_twin_guards)
_compiled.register_guard_maker(_random_twin.remember_originals)   # (the generator's methods, once loaded)
_compiled.register_guard_maker(_factories_twin.remember_originals)   # (zero_/fill_'s helpers)
