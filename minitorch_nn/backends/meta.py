"""The meta backend: every op's output shapes and dtypes, with no data anywhere.

Mirrors PyTorch's meta functions (``torch/_meta_registrations.py`` and the structured kernels'
``meta`` halves). A model built under ``with minitorch_nn.device("meta"):`` runs its forward
here: each kernel returns meta tensors of the right size and dtype, and raises the same shape
errors the cpu kernel would. Reading data (``item()``, copying out) raises PyTorch's errors.

Ops are grouped by how their output shape follows from their inputs: pointwise (broadcast),
reductions (drop or keep dims), factories (a size argument), and a handful of special shapes.
"""

from __future__ import annotations

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn._shape import broadcast_shapes, check_size_nonnegative, wrap_dim, wrap_dims
from minitorch_nn._tensor import _new_meta
from minitorch_nn.backends.common import (
    can_cast,
    check_inplace_cast,
    mean_dtype,
    result_type,
    type_name,
)
from minitorch_nn.backends.layout import check_inplace_overlap, elementwise_strides, format_strides, like_strides


def _shape(x):
    return tuple(x._impl.sizes) if isinstance(x, TensorBase) else ()


def _float(d):
    return d if (d.is_floating_point or d.is_complex) else dt.get_default_dtype()


# -- pointwise ------------------------------------------------------------------------------------

def _pointwise(kind, scalar_operands=True):
    # scalar_operands: whether a number argument is an operand of PyTorch's TensorIterator (the
    # ``2`` of ``x + 2``) or a parameter of the op (``clamp``'s bounds), which matters for layout
    def kernel(*args, **kwargs):
        operands = [a for a in args if isinstance(a, (TensorBase, int, float, bool, complex))]
        tensors = [a for a in operands if isinstance(a, TensorBase)]
        shape = broadcast_shapes(*[_shape(t) for t in tensors])
        d = result_type(*operands)
        if kind == "float":
            d = _float(d)
        strides = elementwise_strides(shape, operands if scalar_operands else tensors, d)  # as on cpu
        if kind == "bool":
            d = dt.bool
        return _new_meta(shape, d, strides=strides)

    return kernel


def _pointwise_inplace(kind):
    def kernel(self, *args, **kwargs):
        operands = [self] + [a for a in args if isinstance(a, (TensorBase, int, float, bool))]
        check_inplace_overlap(self, *operands[1:])
        shape = broadcast_shapes(*[_shape(a) for a in operands if isinstance(a, TensorBase)])
        if shape != _shape(self):
            raise RuntimeError(f"output with shape {list(_shape(self))} doesn't match the broadcast shape {list(shape)}")
        d = result_type(*operands)
        if kind == "float":
            d = _float(d)
        check_inplace_cast(d, self.dtype)
        self._impl.version.value += 1
        return self

    return kernel


_POINTWISE = {
    "promote": "add.Tensor sub.Tensor rsub.Scalar rsub.Tensor mul.Tensor remainder.Tensor remainder.Scalar "
    "floor_divide.default pow.Tensor_Tensor pow.Tensor_Scalar pow.Scalar neg.default abs.default "
    "sign.default maximum.default minimum.default lerp.Scalar lerp.Tensor addcmul.default clamp.default "
    "clamp.Tensor clamp_min.default clamp_max.default floor.default ceil.default round.default "
    "round.decimals trunc.default frac.default fmod.Scalar bitwise_and.Tensor bitwise_or.Tensor "
    "bitwise_xor.Tensor bitwise_not.default relu.default leaky_relu.default hardtanh.default "
    "threshold_backward.default tanh_backward.default sigmoid_backward.default gelu_backward.default where.self div.Tensor_mode "
    "remainder.Scalar_Tensor hypot.default fmax.default fmin.default __lshift__.Tensor __lshift__.Scalar "
    "__rshift__.Tensor __rshift__.Scalar bitwise_left_shift.Tensor bitwise_left_shift.Tensor_Scalar "
    "bitwise_left_shift.Scalar_Tensor bitwise_right_shift.Tensor bitwise_right_shift.Tensor_Scalar "
    "bitwise_right_shift.Scalar_Tensor bitwise_and.Scalar bitwise_or.Scalar bitwise_xor.Scalar "
    "bitwise_and.Scalar_Tensor bitwise_or.Scalar_Tensor bitwise_xor.Scalar_Tensor fmod.Tensor heaviside.default "
    "gcd.default lcm.default",
    "float": "div.Tensor exp.default exp2.default expm1.default log.default log2.default log10.default "
    "log1p.default sqrt.default rsqrt.default sin.default cos.default tan.default asin.default "
    "acos.default atan.default atan2.default sinh.default cosh.default tanh.default sigmoid.default "
    "erf.default erfc.default erfinv.default reciprocal.default gelu.default silu.default "
    "softplus.default elu.default addcdiv.default xlogy.Tensor xlogy.Scalar_Other xlogy.Scalar_Self "
    "copysign.Tensor copysign.Scalar logaddexp.default logaddexp2.default ldexp.Tensor "
    "hardswish.default hardswish_backward.default hardsigmoid.default hardsigmoid_backward.default mish.default "
    "mish_backward.default log_sigmoid_backward.default celu.default elu_backward.default",
    "bool": "eq.Tensor eq.Scalar ne.Tensor ne.Scalar lt.Tensor lt.Scalar le.Tensor le.Scalar gt.Tensor "
    "gt.Scalar ge.Tensor ge.Scalar logical_and.default logical_or.default logical_xor.default "
    "logical_not.default isnan.default isinf.default isfinite.default",
}
_POINTWISE_INPLACE = {
    "promote": "add_.Tensor sub_.Tensor mul_.Tensor div_.Tensor_mode pow_.Scalar neg_.default "
    "abs_.default clamp_.default relu_.default addcmul_.default lerp_.Scalar pow_.Tensor hypot_.default "
    "__ilshift__.Tensor __ilshift__.Scalar __irshift__.Tensor __irshift__.Scalar bitwise_left_shift_.Tensor "
    "bitwise_left_shift_.Tensor_Scalar bitwise_right_shift_.Tensor bitwise_right_shift_.Tensor_Scalar "
    "remainder_.Tensor remainder_.Scalar floor_divide_.Tensor bitwise_and_.Tensor bitwise_and_.Scalar "
    "bitwise_or_.Tensor bitwise_or_.Scalar bitwise_xor_.Tensor bitwise_xor_.Scalar fmod_.Tensor fmod_.Scalar "
    "heaviside_.default gcd_.default lcm_.default",
    "float": "div_.Tensor exp_.default log_.default sqrt_.default tanh_.default sigmoid_.default "
    "erfinv_.default addcdiv_.default xlogy_.Tensor xlogy_.Scalar_Other copysign_.Tensor copysign_.Scalar "
    "ldexp_.default atan2_.default",
}


def _op(name):
    packet, _, overload = name.partition(".")
    return getattr(getattr(aten, packet), overload)


_SCALAR_PARAMETERS = set(
    "pow.Tensor_Scalar clamp.default clamp.Tensor clamp_min.default clamp_max.default lerp.Scalar "
    "round.decimals leaky_relu.default hardtanh.default threshold_backward.default softplus.default "
    "elu.default gelu.default addcmul.default addcdiv.default celu.default elu_backward.default".split()
)
for _kind, _names in _POINTWISE.items():
    for _name in _names.split():
        _op(_name).impl("meta")(_pointwise(_kind, _name not in _SCALAR_PARAMETERS))


@aten.log_sigmoid_forward.default.impl("meta")
def _log_sigmoid_forward(self):
    out = _pointwise("float")(self)   # (output, buffer): two results of the input's shape
    return out, _pointwise("float")(self)


@aten._prelu_kernel.default.impl("meta")
def _prelu_kernel(self, weight):
    return _pointwise("promote", False)(self, weight)


@aten._prelu_kernel_backward.default.impl("meta")
def _prelu_kernel_backward(grad_output, self, weight):
    out = _pointwise("promote", False)
    return out(grad_output, self, weight), out(grad_output, self, weight)


@aten.glu.default.impl("meta")
def _glu(self, dim=-1):
    from minitorch_nn.backends.cpu.activations_more import check_glu

    d = check_glu(self, dim)   # (PyTorch's errors)
    shape = list(self.shape)
    shape[d] //= 2
    return _new_meta(tuple(shape), _float(self.dtype))


@aten.glu_backward.default.impl("meta")
def _glu_backward(grad_output, self, dim):
    return _new_meta(tuple(self.shape), self.dtype)


for _kind, _names in _POINTWISE_INPLACE.items():
    for _name in _names.split():
        _op(_name).impl("meta")(_pointwise_inplace(_kind))


def _bump(self, *args, **kwargs):
    self._impl.version.value += 1
    return self


for _name in ("zero_.default fill_.Scalar fill_.Tensor uniform_.default normal_.default bernoulli_.float "
              "bernoulli_.Tensor random_.from random_.to random_.default exponential_.default").split():
    _op(_name).impl("meta")(_bump)


@aten.copy_.default.impl("meta")
def copy_(self, src, non_blocking=False):
    broadcast_shapes(_shape(self), _shape(src))
    self._impl.version.value += 1
    return self


# -- factories ------------------------------------------------------------------------------------

def _factory(size, dtype):
    dtype = dtype if dtype is not None else dt.get_default_dtype()
    check_size_nonnegative(size, itemsize=dtype.itemsize)
    return _new_meta(tuple(size), dtype)


@aten.empty.memory_format.impl("meta")
@aten.zeros.default.impl("meta")
@aten.ones.default.impl("meta")
@aten.rand.default.impl("meta")
@aten.randn.default.impl("meta")
def sized_factory(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None, generator=None):
    if memory_format is not None:
        check_size_nonnegative(size, itemsize=(dtype or dt.get_default_dtype()).itemsize)
        strides = format_strides(size, memory_format)
        if strides is not None:
            return _new_meta(tuple(size), dtype if dtype is not None else dt.get_default_dtype(), strides=strides)
    return _factory(size, dtype)


@aten.empty_strided.default.impl("meta")
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _new_meta(tuple(size), dtype if dtype is not None else dt.get_default_dtype(), strides=tuple(stride))


@aten.full.default.impl("meta")
def full(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _new_meta(tuple(size), dtype if dtype is not None else result_type(fill_value))


@aten.scalar_tensor.default.impl("meta")
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _factory((), dtype)


@aten.empty_like.default.impl("meta")
@aten.zeros_like.default.impl("meta")
@aten.ones_like.default.impl("meta")
@aten.rand_like.default.impl("meta")
@aten.randn_like.default.impl("meta")
def like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _new_meta(_shape(self), dtype if dtype is not None else self.dtype, strides=like_strides(self, memory_format))


@aten.full_like.default.impl("meta")
def full_like(self, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return like(self, dtype=dtype, memory_format=memory_format)


@aten.randint.low.impl("meta")
def randint_low(low, high, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _new_meta(tuple(size), dtype or dt.int64)


@aten.randint.default.impl("meta")
def randint(high, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _new_meta(tuple(size), dtype or dt.int64)


@aten.randperm.default.impl("meta")
def randperm(n, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _new_meta((n,), dtype or dt.int64)


@aten.arange.start_step.impl("meta")
def arange_start_step(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    import math

    from minitorch_nn.backends.cpu.factories import _arange_dtype

    d = _arange_dtype(start, end, step, dtype)
    return _new_meta((max(int(math.ceil((end - start) / step)), 0),), d)


@aten.arange.default.impl("meta")
def arange(end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(0, end, 1, dtype=dtype)


@aten.arange.start.impl("meta")
def arange_start(start, end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(start, end, 1, dtype=dtype)


@aten.linspace.default.impl("meta")
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _factory((steps,), dtype)


@aten.logspace.default.impl("meta")
def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _factory((steps,), dtype)


@aten.eye.default.impl("meta")
def eye(n, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _factory((n, n), dtype)


@aten.eye.m.impl("meta")
def eye_m(n, m, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _factory((n, m), dtype)


# -- copies and conversions -----------------------------------------------------------------------

@aten.clone.default.impl("meta")
def clone(self, *, memory_format=None):
    return _new_meta(_shape(self), self.dtype, strides=like_strides(self, memory_format))


@aten._to_copy.default.impl("meta")
def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    from minitorch_nn._device import canonical

    d = self.dtype if dtype is None else dtype
    if device is not None and canonical(device).type != "meta":
        # PyTorch's plain text; Module.to (nn/modules/_conversion.py) adds the to_empty() hint.
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    return _new_meta(_shape(self), d, strides=like_strides(self, memory_format))


@aten._local_scalar_dense.default.impl("meta")
def _local_scalar_dense(self):
    raise RuntimeError("Tensor.item() cannot be called on meta tensors")


@aten.cat.default.impl("meta")
def cat(tensors, dim=0):
    from minitorch_nn.backends.cpu.factories import _check_cat

    d = _check_cat(tensors, dim)
    parts = [t for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)]
    if not parts:
        return _new_meta((0,), result_type(*tensors))
    shape = list(_shape(parts[0]))
    shape[d] = sum(t.shape[d] for t in parts)
    return _new_meta(shape, result_type(*tensors))


@aten.stack.default.impl("meta")
def stack(tensors, dim=0):
    shape = list(_shape(tensors[0]))
    for i, t in enumerate(tensors):
        if list(_shape(t)) != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {shape} at entry 0 and {list(_shape(t))} at entry {i}"
            )
    d = wrap_dim(dim, len(shape) + 1)
    shape.insert(d, len(tensors))
    return _new_meta(shape, result_type(*tensors))


# -- reductions -----------------------------------------------------------------------------------

def _reduced(self, dim, keepdim):
    shape = list(_shape(self))
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        axes = set(range(len(shape)))
    else:
        axes = set(wrap_dims([dim] if isinstance(dim, int) else dim, len(shape)))
    if keepdim:
        return [1 if i in axes else s for i, s in enumerate(shape)]
    return [s for i, s in enumerate(shape) if i not in axes]


def _sum_dtype(self, dtype):
    if dtype is not None:
        return dtype
    return self.dtype if (self.dtype.is_floating_point or self.dtype.is_complex) else dt.int64


@aten.sum.default.impl("meta")
def sum_all(self, *, dtype=None):
    return _new_meta((), _sum_dtype(self, dtype))


@aten.sum.dim_IntList.impl("meta")
def sum_dim(self, dim, keepdim=False, *, dtype=None):
    return _new_meta(_reduced(self, dim, keepdim), _sum_dtype(self, dtype))


@aten.prod.default.impl("meta")
def prod_all(self, *, dtype=None):
    return _new_meta((), _sum_dtype(self, dtype))


@aten.prod.dim_int.impl("meta")
def prod_dim(self, dim, keepdim=False, *, dtype=None):
    return _new_meta(_reduced(self, dim, keepdim), _sum_dtype(self, dtype))


@aten.mean.default.impl("meta")
def mean_all(self, *, dtype=None):
    return _new_meta((), mean_dtype(self, dtype))


@aten.mean.dim.impl("meta")
def mean_dim(self, dim, keepdim=False, *, dtype=None):
    return _new_meta(_reduced(self, dim, keepdim), mean_dtype(self, dtype))


@aten.var.correction.impl("meta")
@aten.std.correction.impl("meta")
def var(self, dim=None, *, correction=None, keepdim=False):
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return _new_meta(_reduced(self, dim, keepdim), self.dtype.to_real())  # (real for complex input)


@aten.max.default.impl("meta")
@aten.min.default.impl("meta")
def max_all(self):
    return _new_meta((), self.dtype)


@aten.max.dim.impl("meta")
@aten.min.dim.impl("meta")
def max_dim(self, dim, keepdim=False):
    shape = _reduced(self, dim, keepdim)
    return _new_meta(shape, self.dtype), _new_meta(shape, dt.int64)


@aten.amax.default.impl("meta")
@aten.amin.default.impl("meta")
def amax(self, dim=(), keepdim=False):
    return _new_meta(_reduced(self, dim, keepdim), self.dtype)


@aten.argmax.default.impl("meta")
@aten.argmin.default.impl("meta")
def argmax(self, dim=None, keepdim=False):
    if dim is None:
        return _new_meta((1,) * self.dim() if keepdim else (), dt.int64)
    return _new_meta(_reduced(self, dim, keepdim), dt.int64)


@aten.logsumexp.default.impl("meta")
def logsumexp(self, dim, keepdim=False):
    return _new_meta(_reduced(self, dim, keepdim), _float(self.dtype))


@aten.all.default.impl("meta")
@aten.any.default.impl("meta")
def all_(self):
    return _new_meta((), dt.bool)


@aten.all.dim.impl("meta")
@aten.any.dim.impl("meta")
def all_dim(self, dim, keepdim=False):
    return _new_meta(_reduced(self, dim, keepdim), dt.bool)


@aten.linalg_vector_norm.default.impl("meta")
def linalg_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None):
    return _new_meta(_reduced(self, dim, keepdim), (dtype or self.dtype).to_real())


@aten.cumsum.default.impl("meta")
@aten.cumprod.default.impl("meta")
def cumsum(self, dim, *, dtype=None):
    return _new_meta(_shape(self), _sum_dtype(self, dtype))


@aten._softmax.default.impl("meta")
@aten._log_softmax.default.impl("meta")
def _softmax(self, dim, half_to_float):
    wrap_dim(dim, self.dim())
    return _new_meta(_shape(self), self.dtype)


@aten._softmax_backward_data.default.impl("meta")
@aten._log_softmax_backward_data.default.impl("meta")
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    wrap_dim(dim, grad_output.dim())
    return _new_meta(_shape(grad_output), grad_output.dtype)


# -- matrix products ------------------------------------------------------------------------------

@aten.mm.default.impl("meta")
def mm(self, mat2):
    if self.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})"
        )
    if self.dtype is not mat2.dtype:
        from minitorch_nn.backends.cpu.pointwise import _c_name

        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_c_name(self.dtype)} != {_c_name(mat2.dtype)}")
    return _new_meta((self.shape[0], mat2.shape[1]), self.dtype)


@aten.addmm.default.impl("meta")
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    out = mm(mat1, mat2)
    broadcast_shapes(_shape(self), _shape(out))
    return out


@aten.bmm.default.impl("meta")
def bmm(self, mat2):
    if self.dim() != 3 or mat2.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if self.dim() != 3 else "batch2 must be a 3D tensor")
    if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{self.shape[0]}, {self.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    return _new_meta((self.shape[0], self.shape[1], mat2.shape[2]), self.dtype)


@aten.dot.default.impl("meta")
def dot(self, tensor):
    return _new_meta((), self.dtype)


@aten.mv.default.impl("meta")
def mv(self, vec):
    return _new_meta((self.shape[0],), self.dtype)


__all__ = ["can_cast"]


# -- ops whose output shape is an input's shape (or a simple function of it) --------------------------

@aten.var_mean.correction.impl("meta")
@aten.std_mean.correction.impl("meta")
def var_mean(self, dim=None, *, correction=None, keepdim=False):
    out = var(self, dim, correction=correction, keepdim=keepdim)
    return out, _new_meta(_shape(out), out.dtype)


@aten.sort.default.impl("meta")
def sort(self, dim=-1, descending=False):
    wrap_dim(dim, self.dim())
    return _new_meta(_shape(self), self.dtype), _new_meta(_shape(self), dt.int64)


@aten.topk.default.impl("meta")
def topk(self, k, dim=-1, largest=True, sorted=True):
    d = wrap_dim(dim, self.dim())
    shape = list(_shape(self))
    if k < 0 or k > (shape[d] if shape else 1):
        raise RuntimeError("selected index k out of range")
    if shape:
        shape[d] = k
    return _new_meta(shape, self.dtype), _new_meta(shape, dt.int64)


def _triangle(name):
    def kernel(self, diagonal=0):
        if self.dim() < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return _new_meta(_shape(self), self.dtype)

    return kernel


aten.tril.default.impl("meta")(_triangle("tril"))
aten.triu.default.impl("meta")(_triangle("triu"))


@aten.masked_fill_.Scalar.impl("meta")
@aten.masked_fill_.Tensor.impl("meta")
def masked_fill_(self, mask, value):
    if broadcast_shapes(_shape(self), _shape(mask)) != _shape(self):
        raise RuntimeError(f"output with shape {list(_shape(self))} doesn't match the broadcast shape "
                           f"{list(broadcast_shapes(_shape(self), _shape(mask)))}")
    self._impl.version.value += 1
    return self


@aten.masked_fill.Scalar.impl("meta")
@aten.masked_fill.Tensor.impl("meta")
def masked_fill(self, mask, value):
    # the result keeps self's dtype whatever the value's type; the mask broadcasts
    return _new_meta(broadcast_shapes(_shape(self), _shape(mask)), self.dtype)


@aten.nan_to_num.default.impl("meta")
@aten.flip.default.impl("meta")
@aten.roll.default.impl("meta")
def same_shape(self, *args, **kwargs):
    return _new_meta(_shape(self), self.dtype)


@aten.repeat.default.impl("meta")
def repeat(self, repeats):
    if len(repeats) < self.dim():
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    shape = (1,) * (len(repeats) - self.dim()) + _shape(self)
    return _new_meta([s * r for s, r in zip(shape, repeats)], self.dtype)


@aten.constant_pad_nd.default.impl("meta")
def constant_pad_nd(self, pad, value=0):
    shape = list(_shape(self))
    for i in range(len(pad) // 2):
        shape[-1 - i] += pad[2 * i] + pad[2 * i + 1]
    return _new_meta(shape, self.dtype)


@aten.diag_embed.default.impl("meta")
def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    n = (self.shape[-1] if self.dim() else 1) + abs(offset)
    return _new_meta(_shape(self)[:-1] + (n, n), self.dtype)


@aten.outer.default.impl("meta")
def outer(self, vec2):
    return _new_meta((self.numel(), vec2.numel()), result_type(self, vec2))


@aten.baddbmm.default.impl("meta")
def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    out = bmm(batch1, batch2)
    broadcast_shapes(_shape(self), _shape(out))
    return out


@aten.addmm_.default.impl("meta")
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    out = mm(mat1, mat2)
    if _shape(out) != _shape(self):
        raise RuntimeError(f"output with shape {list(_shape(self))} doesn't match the broadcast shape {list(_shape(out))}")
    self._impl.version.value += 1
    return self


# -- linear algebra: shapes of the factors ------------------------------------------------------------

def _matrix_shapes(A, name):
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {type_name(A.dtype)}")
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    return _shape(A)[:-2], A.shape[-2], A.shape[-1]


@aten.linalg_qr.default.impl("meta")
def linalg_qr(A, mode="reduced"):
    batch, m, n = _matrix_shapes(A, "linalg.qr")
    k = min(m, n)
    q = (0,) if mode == "r" else batch + ((m, m) if mode == "complete" else (m, k))
    r = batch + ((m, n) if mode == "complete" else (k, n))
    return _new_meta(q, A.dtype), _new_meta(r, A.dtype)


@aten.linalg_svd.default.impl("meta")
def linalg_svd(A, full_matrices=True, *, driver=None):
    batch, m, n = _matrix_shapes(A, "linalg.svd")
    k = min(m, n)
    u = batch + ((m, m) if full_matrices else (m, k))
    vh = batch + ((n, n) if full_matrices else (k, n))
    return _new_meta(u, A.dtype), _new_meta(batch + (k,), A.dtype), _new_meta(vh, A.dtype)


@aten.linalg_svdvals.default.impl("meta")
def linalg_svdvals(A, *, driver=None):
    batch, m, n = _matrix_shapes(A, "linalg.svdvals")
    return _new_meta(batch + (min(m, n),), A.dtype)


@aten.linalg_solve.default.impl("meta")
def linalg_solve(A, B, *, left=True):
    _matrix_shapes(A, "linalg.solve")
    return _new_meta(_shape(B) if B.dim() > 1 else _shape(B), A.dtype)


@aten.linalg_matrix_exp.default.impl("meta")
@aten.linalg_inv.default.impl("meta")
def square_matrix(A):
    _matrix_shapes(A, "linalg")
    return _new_meta(_shape(A), A.dtype)


@aten.linalg_eigh.default.impl("meta")
def linalg_eigh(A, UPLO="L"):
    batch, m, _ = _matrix_shapes(A, "linalg.eigh")
    return _new_meta(batch + (m,), A.dtype), _new_meta(_shape(A), A.dtype)


@aten.linalg_det.default.impl("meta")
def linalg_det(A):
    batch, _, _ = _matrix_shapes(A, "linalg.det")
    return _new_meta(batch, A.dtype)


# -- indexing --------------------------------------------------------------------------------------------

@aten.index.Tensor.impl("meta")
def index(self, indices):
    # numpy's placement rules on a stand-in array of the right shape (zero-strided, no memory)
    import numpy as np

    stand_in = np.broadcast_to(np.empty((), dtype=np.int8), _shape(self))
    key = []
    for t in indices:
        if t is None:
            key.append(slice(None))
        elif t.dtype in (dt.bool, dt.uint8):
            raise NotImplementedError(
                "aten::index with a boolean mask has a data-dependent output shape; the meta device "
                "cannot compute it (PyTorch raises here too)"
            )
        else:
            key.append(np.zeros(_shape(t), dtype=np.int64))
    return _new_meta(stand_in[tuple(key)].shape, self.dtype)


@aten.index_put_.default.impl("meta")
@aten.scatter_.src.impl("meta")
@aten.scatter_add_.default.impl("meta")
def index_put_(self, *args, **kwargs):
    self._impl.version.value += 1
    return self


@aten.index_put.default.impl("meta")
@aten.scatter.src.impl("meta")
@aten.scatter.value.impl("meta")
@aten.scatter_add.default.impl("meta")
@aten.index_add.default.impl("meta")
def scatter(self, *args, **kwargs):
    return _new_meta(_shape(self), self.dtype)


@aten.index_add_.default.impl("meta")
def index_add_(self, *args, **kwargs):
    self._impl.version.value += 1
    return self


@aten.index_select.default.impl("meta")
def index_select(self, dim, index):
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, self.dim())
    shape = list(_shape(self))
    if shape:
        shape[d] = index.numel()
    return _new_meta(shape, self.dtype)


@aten.gather.default.impl("meta")
def gather(self, dim, index, *, sparse_grad=False):
    if index.dtype.is_floating_point or index.dtype is dt.bool:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if index.dim() != self.dim() and not (index.dim() <= 1 and self.dim() <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    wrap_dim(dim, self.dim())
    return _new_meta(_shape(index), self.dtype)


@aten.masked_select.default.impl("meta")
@aten.nonzero.default.impl("meta")
def data_dependent(self, *args):
    raise NotImplementedError(
        "this op's output shape depends on the data (how many elements are selected), which a meta "
        "tensor does not have"
    )


# -- random ops: the shape of a sample ---------------------------------------------------------------------

@aten.rand.generator.impl("meta")
@aten.randn.generator.impl("meta")
def rand_generator(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return _factory(size, dtype)


@aten.randint.generator.impl("meta")
def randint_generator(high, size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return _new_meta(tuple(size), dtype or dt.int64)


@aten.randint.low_generator.impl("meta")
def randint_low_generator(low, high, size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return _new_meta(tuple(size), dtype or dt.int64)


@aten.randperm.generator.impl("meta")
def randperm_generator(n, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return _new_meta((n,), dtype or dt.int64)


@aten.bernoulli.default.impl("meta")
@aten.bernoulli.p.impl("meta")
def bernoulli(self, *args, generator=None):
    return _new_meta(_shape(self), self.dtype)


@aten.multinomial.default.impl("meta")
def multinomial(self, num_samples, replacement=False, *, generator=None):
    # PyTorch's meta function checks only the rank (with its own words) and the size
    if self.dim() not in (1, 2):
        raise RuntimeError(f"The probability distributions dimensions must be 1 or 2, but got {self.dim()}")
    if num_samples < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {num_samples}: [{num_samples}]")
    return _new_meta(_shape(self)[:-1] + (num_samples,), dt.int64)


@aten.resize_.default.impl("meta")
def resize_(self, size, *, memory_format=None):
    from minitorch_nn._tensor import contiguous_strides

    self._impl.set_metadata(tuple(size), contiguous_strides(size), self._impl.offset)
    return self


@aten.einsum.default.impl("meta")
def einsum(equation, tensors, *, path=None):
    """The output shape from the equation: the labels after ``->`` (or the sorted once-seen labels)."""
    import numpy as np

    from minitorch_nn.backends.cpu.linalg import _einsum_check

    d = _einsum_check(equation, tensors)
    # numpy works the shape out on zero-strided stand-ins, which hold no memory
    stand_ins = [np.broadcast_to(np.zeros((), np.int8), _shape(t)) for t in tensors]
    return _new_meta(np.einsum(equation, *stand_ins).shape, d)


# -- complex numbers (values: backends/cpu/complex.py) ------------------------------------------------

@aten._conj.default.impl("meta")
@aten._conj_physical.default.impl("meta")
@aten.sgn.default.impl("meta")
def _same_as_input(self):
    return _new_meta(_shape(self), self.dtype)


@aten.angle.default.impl("meta")
def _angle(self):
    d = self.dtype
    return _new_meta(_shape(self), d.to_real() if d.is_complex else _float(d))


@aten.abs.default.impl("meta")
def _abs(self):
    # |z| of a complex tensor is real; otherwise abs keeps the dtype (and the layout rule is pointwise)
    out = _pointwise("promote")(self)
    out._impl.dtype = self.dtype.to_real()
    return out


@aten.polar.default.impl("meta")
@aten.complex.default.impl("meta")
def _complex_pair(a, b):
    from minitorch_nn.backends.cpu.complex import _check_pair

    return _new_meta(broadcast_shapes(_shape(a), _shape(b)), _check_pair(a, b))
