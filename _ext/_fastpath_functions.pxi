# The public-function forms of the fast paths in _fastpath_ops.pxi (per-op overhead):
# ``minitorch_nn.exp(x)`` (and the other unary math functions), ``minitorch_nn.div(a, b)``,
# ``minitorch_nn.pow(x, n)``, ``minitorch_nn.square(x)``,
# ``minitorch_nn.matmul(a, b)``, ``minitorch_nn.mm(a, b)``, ``minitorch_nn.t(x)``,
# ``minitorch_nn.transpose(x, d0, d1)``, ``minitorch_nn.unsqueeze(x, d)``, ``minitorch_nn.squeeze(x[, d])``
# and ``minitorch_nn.reshape(x, *shape)``; also ``nn.functional.relu`` (``functional_relu``, installed
# by ``nn/functional.py``). Included into _C.pyx after _fastpath_ops.pxi.
#
# The same conditions and the same computation as the method forms; each function takes the place
# of the public one in its module (``_tensor_methods._install_fast_functions``), and the public
# wrapper it replaces -- made to hand *it* to ``__torch_function__`` handlers as ``func``, so that
# ``func is minitorch_nn.exp`` still holds -- is its full path, taken for any other argument form
# (``out=``, keywords, subclasses, modes...).

cdef dict _fn_slow = {}   # name -> the function's full path (its public wrapper)


def install_fast_functions(slow):
    """Give the compiled functions their full paths: ``slow`` maps a name to its public wrapper."""
    _fn_slow.update(slow)


cdef inline object _full(str name, tuple head, tuple args, dict kwargs):
    return _fn_slow[name](*head, *args, **kwargs)


cdef inline object _unary_function(_Unary u, object input, tuple args, dict kwargs):
    r = None if args or kwargs else _unary_fast(u, input)
    return _full(u.name, (input,), args, kwargs) if r is None else r


def function_exp(input, *args, **kwargs):
    return _unary_function(_u_exp, input, args, kwargs)


def function_expm1(input, *args, **kwargs):
    return _unary_function(_u_expm1, input, args, kwargs)


def function_log(input, *args, **kwargs):
    return _unary_function(_u_log, input, args, kwargs)


def function_log2(input, *args, **kwargs):
    return _unary_function(_u_log2, input, args, kwargs)


def function_log10(input, *args, **kwargs):
    return _unary_function(_u_log10, input, args, kwargs)


def function_log1p(input, *args, **kwargs):
    return _unary_function(_u_log1p, input, args, kwargs)


def function_sqrt(input, *args, **kwargs):
    return _unary_function(_u_sqrt, input, args, kwargs)


def function_rsqrt(input, *args, **kwargs):
    return _unary_function(_u_rsqrt, input, args, kwargs)


def function_sin(input, *args, **kwargs):
    return _unary_function(_u_sin, input, args, kwargs)


def function_cos(input, *args, **kwargs):
    return _unary_function(_u_cos, input, args, kwargs)


def function_tan(input, *args, **kwargs):
    return _unary_function(_u_tan, input, args, kwargs)


def function_sinh(input, *args, **kwargs):
    return _unary_function(_u_sinh, input, args, kwargs)


def function_cosh(input, *args, **kwargs):
    return _unary_function(_u_cosh, input, args, kwargs)


def function_tanh(input, *args, **kwargs):
    return _unary_function(_u_tanh, input, args, kwargs)


def function_sigmoid(input, *args, **kwargs):
    return _unary_function(_u_sigmoid, input, args, kwargs)


def function_reciprocal(input, *args, **kwargs):
    return _unary_function(_u_reciprocal, input, args, kwargs)


def function_neg(input, *args, **kwargs):
    return _unary_function(_u_neg, input, args, kwargs)


def function_abs(input, *args, **kwargs):
    return _unary_function(_u_abs, input, args, kwargs)


def function_div(input, other, *args, **kwargs):
    r = None if args or kwargs else _div(input, other)
    return _full("div", (input, other), args, kwargs) if r is None else r


def function_pow(input, exponent, *args, **kwargs):
    r = None if args or kwargs else _pow_scalar(input, exponent)
    return _full("pow", (input, exponent), args, kwargs) if r is None else r


def function_square(input, *args, **kwargs):
    r = None if args or kwargs else _pow_scalar(input, 2)
    return _full("square", (input,), args, kwargs) if r is None else r


def function_matmul(input, other, *args, **kwargs):
    r = None if args or kwargs else _mm(input, other)
    return _full("matmul", (input, other), args, kwargs) if r is None else r


def function_mm(input, mat2, *args, **kwargs):
    r = None if args or kwargs else _mm(input, mat2, True)
    return _full("mm", (input, mat2), args, kwargs) if r is None else r


def function_t(input, *args, **kwargs):
    r = None if kwargs else _t_fast(input, args)
    return _full("t", (input,), args, kwargs) if r is None else r


def function_transpose(input, *args, **kwargs):
    r = None if kwargs else _transpose_fast(input, args)
    return _full("transpose", (input,), args, kwargs) if r is None else r


def function_unsqueeze(input, *args, **kwargs):
    r = None if kwargs else _unsqueeze_fast(input, args)
    return _full("unsqueeze", (input,), args, kwargs) if r is None else r


def function_squeeze(input, *args, **kwargs):
    r = None if kwargs else _squeeze_fast(input, args)
    return _full("squeeze", (input,), args, kwargs) if r is None else r


# ``permute(input, dims)``, ``reshape(input, shape)``: the list of ints is one argument here (no
# ``torch.reshape(x, 2, 8)``); any other form takes the full path, which parses it as PyTorch does.

def function_permute(*args, **kwargs):
    r = None
    if PyTuple_GET_SIZE(args) == 2 and not kwargs and type(args[1]) in (tuple, list, Size):
        d = _size_arg((args[1],))
        r = None if d is None else _permute_fast(args[0], d)
    return _full("permute", (), args, kwargs) if r is None else r


def function_reshape(*args, **kwargs):
    r = None
    if PyTuple_GET_SIZE(args) == 2 and not kwargs and type(args[1]) in (tuple, list, Size):
        r = _contiguous_view(args[0], (args[1],))
    return _full("reshape", (), args, kwargs) if r is None else r


def functional_relu(input, *args, **kwargs):
    """``nn.functional.relu(input)`` (``inplace`` False): both it and ``Tensor.relu`` are
    ``aten.relu.default(input)``, so while nothing could tell the two spellings apart (an exact
    ``Tensor``, nothing intercepting) this is ``Tensor.relu``'s compiled path (_fastpath.pxi, which
    records ``ReluBackward0`` with grad); otherwise F.relu's full path, with the arguments as given."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    cdef bint out_of_place = False
    if nargs == 0:
        out_of_place = not kwargs or (len(kwargs) == 1 and kwargs.get("inplace", True) is False)
    elif nargs == 1 and not kwargs:
        out_of_place = args[0] is False
    if out_of_place and type(input) is _Tensor and _nothing_intercepts():
        return tensor_relu(input)
    return _full("functional.relu", (input,), args, kwargs)


# the public functions from this file, by name (see _tensor_methods._install_fast_functions)
FAST_OP_FUNCTIONS = {
    "exp": function_exp, "expm1": function_expm1, "log": function_log, "log2": function_log2,
    "log10": function_log10, "log1p": function_log1p, "sqrt": function_sqrt, "rsqrt": function_rsqrt,
    "sin": function_sin, "cos": function_cos, "tan": function_tan, "sinh": function_sinh, "cosh": function_cosh,
    "tanh": function_tanh, "sigmoid": function_sigmoid, "reciprocal": function_reciprocal, "neg": function_neg,
    "abs": function_abs, "div": function_div, "pow": function_pow, "square": function_square,
    "matmul": function_matmul, "mm": function_mm, "t": function_t,
    "transpose": function_transpose, "unsqueeze": function_unsqueeze, "squeeze": function_squeeze,
    "permute": function_permute,
    "reshape": function_reshape,
}


# ``minitorch_nn.add(a, b)``, ``sub``, ``mul`` and the methods ``a.add(b)``, ``a.sub(b)``,
# ``a.mul(b)``: the same op as ``a + b``, ``a - b``, ``a * b`` (``aten.add.Tensor``...), so while
# nothing could tell the spellings apart they take the operators' compiled path (_fastpath.pxi).
# Any keyword (``alpha=``, ``out=``) or a number first takes the full path.

def function_add(input, other, *args, **kwargs):
    r = None if args or kwargs else _binary(_np_add, 0, input, other)
    return _full("add", (input, other), args, kwargs) if r is None else r


def function_sub(input, other, *args, **kwargs):
    r = None if args or kwargs else _binary(_np_subtract, 1, input, other)
    return _full("sub", (input, other), args, kwargs) if r is None else r


def function_mul(input, other, *args, **kwargs):
    r = None if args or kwargs else _binary(_np_multiply, 2, input, other)
    return _full("mul", (input, other), args, kwargs) if r is None else r


def tensor_add_method(self, other, *args, **kwargs):
    """``self.add(other)``: the fast path of ``self + other``, else the full path."""
    r = None if args or kwargs else _binary(_np_add, 0, self, other)
    return _full("Tensor.add", (self, other), args, kwargs) if r is None else r


def tensor_sub_method(self, other, *args, **kwargs):
    """``self.sub(other)``: the fast path of ``self - other``, else the full path."""
    r = None if args or kwargs else _binary(_np_subtract, 1, self, other)
    return _full("Tensor.sub", (self, other), args, kwargs) if r is None else r


def tensor_mul_method(self, other, *args, **kwargs):
    """``self.mul(other)``: the fast path of ``self * other``, else the full path."""
    r = None if args or kwargs else _binary(_np_multiply, 2, self, other)
    return _full("Tensor.mul", (self, other), args, kwargs) if r is None else r


FAST_OP_FUNCTIONS.update({"add": function_add, "sub": function_sub, "mul": function_mul})
# the methods (see _tensor_methods.py); their full paths arrive through install_fast_functions
# under "Tensor.add", "Tensor.sub", "Tensor.mul"
FAST_BINARY_METHODS = {"add": tensor_add_method, "sub": tensor_sub_method, "mul": tensor_mul_method}
