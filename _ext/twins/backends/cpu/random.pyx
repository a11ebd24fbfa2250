# cython: language_level=3, binding=True, embedsignature=True
"""The compiled twin of ``minitorch_nn/backends/cpu/random.py``: the random fills, ``rand`` and ``randn``.

Mirrors, kernel by kernel (each runs only while that kernel's guard holds, see ``_ext/twins/_gate.pyx``):

* ``uniform_`` (``_check_float``, ``_fill``, ``_draw``, ``_gen`` and the generator's
  ``Generator._uniform``): ``x.uniform_(a, b)``, and so ``nn.init.uniform_`` and
  ``kaiming_uniform_``, which every ``nn.Linear`` and conv layer calls twice while it is built;
* ``normal_`` (the same helpers and ``Generator._normal``): ``x.normal_(mean, std)``,
  ``nn.init.normal_``, ``nn.Embedding``'s weights;
* ``rand`` and ``randn`` (``_draw``, ``_gen`` and the generator's methods, then ``_from_array``):
  ``minitorch_nn.rand(*size)``, ``minitorch_nn.randn(*size)``, with what the public functions
  (``_functions/factories.py``) resolve first: the default dtype and device. They take sizes given
  as exact Python ints, non-negative, and the keywords ``generator``, ``dtype`` (float32/float64),
  ``device`` (None or the cpu) and ``requires_grad=False``, while no default device is set.

Why compiled: the draw itself is already compiled (``_ext/twins/_random/distributions.pyx``,
about 0.4 us for 64 values), but the way to it -- the Tensor method, the OpOverload, the dispatch
chain, the kernel's checks, ``_memory_order``, a transposed numpy view, ``np.copyto``, two Python
calls into the generator -- cost about 4 us more, per call, which is most of what an
``nn.Linear(8, 8)`` waits for while it initialises its two tensors.

How it stays equal: for a plain cpu ``Tensor``/``Parameter`` of float32/float64 that is row-major,
non-empty and not a view (so that memory order is index order: ``_memory_order`` is the identity
and ``_fill`` writes the draws in the order they come), not an inference tensor, and that
autograd would not record (it does not require grad, or grad mode is off: ``nn.init`` draws under
``no_grad``), the twin asks the generator's random module for the same draw the readable
generator method asks for -- ``_dist.uniform(gen._engine, sizes, numpy dtype, float(a),
float(b))`` and ``_dist.normal(gen, sizes, numpy dtype, float(mean), float(std), True)``, with
``_dist`` read from ``minitorch_nn.random`` at each call, so the compiled draw runs only where
that module binds it -- copies the values into the tensor's memory and bumps its version
counter by one, as ``_fill`` does. The generator must be exactly a ``Generator`` whose
``_uniform``/``_normal`` are still the functions the twin was written against (identity, and
their fingerprints in the manifest, checked when the twin is first used), and the helpers the
kernels and those methods call by name (``_fill``, ``_draw``, ``_gen``, ``_check_float``,
``_memory_order``, ``_from_array``, ``_shape``, ``_np_dtype``) must still be the objects they were
(identity, at each call); ``a``/``b`` (``mean``/
``std``) exact Python floats or ints that a double holds exactly. Anything else -- other dtypes,
strided or empty tensors, views, subclasses, modes, a student's kernel -- takes the full path,
which raises PyTorch's errors (the draw's own refusals, a bound out of range, a negative std,
come from the same draw function in both paths).
``tests/twins/test_random_fill_twin.py`` compares both paths: values, generator state, version,
errors and warnings.
"""

cimport numpy as cnp
from cpython.dict cimport PyDict_GetItem
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.object cimport PyObject
from cpython.tuple cimport PyTuple_GET_SIZE
from libc.string cimport memcpy

import numpy as np

from minitorch_nn._C cimport TensorBase, TensorImpl, _mtnn_mul_overflow
from minitorch_nn._twins._gate cimport (_Tensor, _cpu, _f32, _f64, _fresh_tensor, _full, _grad_enabled,
                                        _nothing_intercepts, _plain_class, _row_major, _size_arg, _twin_ok)

cnp.import_array()

cdef extern from "Python.h":
    PyObject** _PyObject_GetDictPtr(PyObject* obj)

cdef bint _loaded = False
cdef bint _generator_ok = False       # Generator._uniform/_normal have their recorded fingerprints
cdef object _op_uniform = None
cdef object _op_normal = None
cdef object _op_rand = None           # aten.rand.default, and the overload with a generator
cdef object _op_rand_generator = None
cdef object _op_randn = None
cdef object _op_randn_generator = None
cdef dict _dtype_globals = None       # minitorch_nn._dtype's namespace: _default_dtype
cdef dict _device_globals = None      # minitorch_nn._device's namespace: the default device
cdef dict _random_globals = None      # minitorch_nn.random's namespace: default_generator, _dist
cdef object _Generator = None         # minitorch_nn.random.Generator
cdef object _generator_uniform = None  # Generator._uniform, Generator._normal as the twin knows them
cdef object _generator_normal = None
cdef tuple _helpers = ()              # ((namespace, name, object), ...): what the kernels call by name
cdef object _from_array = None        # _tensor._from_array, how the kernels wrap a draw
cdef object _NP_F32 = np.dtype(np.float32)
cdef object _NP_F64 = np.dtype(np.float64)


def remember_originals(aten=None):
    """Check, once, the generator methods the twin stands in for against the build's fingerprints
    and remember them (``backends.compiled`` calls this with the other guard makers; the twin also
    calls it on its first use, since ``minitorch_nn.random`` loads on the first draw)."""
    global _loaded, _generator_ok, _op_uniform, _op_normal, _random_globals, _Generator
    global _generator_uniform, _generator_normal, _helpers, _dtype_globals, _device_globals
    global _op_rand, _op_rand_generator, _op_randn, _op_randn_generator, _from_array
    import sys
    if _loaded:
        return True
    random = sys.modules.get("minitorch_nn.random")
    kernels = sys.modules.get("minitorch_nn.backends.cpu.random")
    if kernels is None or random is None:
        return False
    from minitorch_nn._ops import aten as _aten
    from minitorch_nn.backends import compiled
    from minitorch_nn import _device, _dtype
    _from_array = kernels._from_array
    _op_uniform, _op_normal = _aten.uniform_.default, _aten.normal_.default
    _op_rand, _op_rand_generator = _aten.rand.default, _aten.rand.generator
    _op_randn, _op_randn_generator = _aten.randn.default, _aten.randn.generator
    _dtype_globals, _device_globals = vars(_dtype), vars(_device)
    _Generator = random.Generator
    _generator_uniform = _Generator.__dict__.get("_uniform")
    _generator_normal = _Generator.__dict__.get("_normal")
    _random_globals = vars(random)
    # the helpers the kernels and the generator's methods reach by global name: a helper rebound
    # at run time (``backends.cpu.random._fill = mine``) sends the fills the readable way
    _helpers = tuple((vars(module), name, getattr(module, name)) for module, names in (
        (kernels, ("_fill", "_draw", "_gen", "_check_float", "_memory_order", "_from_array")),
        (random, ("_shape", "_np_dtype"))) for name in names)
    _generator_ok = (_generator_uniform is not None and _generator_normal is not None and
                     compiled.check_original("Generator._uniform/_normal (random fills)",
                                             _generator_uniform, _generator_normal))
    _loaded = True
    return True


cdef bint _may_run() except -1:
    """Nothing could observe the op, and the generator's methods and the kernels' helpers are the
    ones the twin knows."""
    cdef tuple entry
    if not _nothing_intercepts():
        return False
    if not _loaded:
        import sys
        if sys.modules.get("minitorch_nn.random") is None:
            import minitorch_nn.random   # (the readable kernel imports it on its first draw, too)
        if not remember_originals():
            return False
    if not _generator_ok:
        return False
    for entry in _helpers:
        if PyDict_GetItem(<dict>entry[0], entry[1]) != <PyObject*>entry[2]:
            return False
    return True


cdef TensorImpl _fill_target(object self):
    """``self``'s payload when the twin may fill it (see the module docstring), else None."""
    if not _plain_class(type(self)):
        return None
    cdef TensorImpl impl = (<TensorBase>self)._impl
    if impl is None or impl.storage is None or impl.base is not None or impl.version.inference:
        return None
    if impl.dtype is not _f32 and impl.dtype is not _f64:
        return None
    if impl.device is not _cpu and impl.device.type != "cpu":
        return None
    if impl.requires_grad and _grad_enabled():
        return None     # (the autograd layer refuses a leaf, or checks a non-leaf: the full path)
    if not _row_major(impl.sizes, impl.strides):
        return None
    return impl


cdef object _exact_double(object x):
    """``float(x)`` for an exact Python float, or an exact int a double holds exactly; else None."""
    cdef long long i
    cdef int overflow = 0
    if type(x) is float:
        return x
    if type(x) is int:
        i = PyLong_AsLongLongAndOverflow(x, &overflow)
        if overflow or not -(1 << 53) <= i <= (1 << 53):
            return None
        return <double>i
    return None


cdef object _generator(object generator):
    """The generator the kernel's ``_gen(generator)`` gives, when it is exactly a ``Generator``
    whose ``_uniform`` and ``_normal`` are the ones the twin knows; else None."""
    cdef PyObject* found
    if generator is None:
        found = PyDict_GetItem(_random_globals, "default_generator")
        if found == NULL:
            return None
        generator = <object>found
    if type(generator) is not _Generator or getattr(_Generator, "_uniform") is not _generator_uniform:
        return None
    if getattr(_Generator, "_normal") is not _generator_normal:
        return None
    cdef PyObject** dict_ptr = _PyObject_GetDictPtr(<PyObject*>generator)
    if dict_ptr != NULL and dict_ptr[0] != NULL and (
            PyDict_GetItem(<object>dict_ptr[0], "_uniform") != NULL or
            PyDict_GetItem(<object>dict_ptr[0], "_normal") != NULL):
        return None     # (a method replaced on this one generator)
    return generator


cdef object _write(object self, TensorImpl impl, object values):
    """``_fill``'s write for a row-major target: the draws in index order, then one version bump."""
    target = impl.numpy_view()
    cdef cnp.ndarray source, destination
    if type(values) is np.ndarray and type(target) is np.ndarray:
        source, destination = <cnp.ndarray>values, <cnp.ndarray>target
        if (cnp.PyArray_TYPE(source) == cnp.PyArray_TYPE(destination) and
                cnp.PyArray_NBYTES(source) == cnp.PyArray_NBYTES(destination) and
                cnp.PyArray_NDIM(source) == cnp.PyArray_NDIM(destination) and
                cnp.PyArray_IS_C_CONTIGUOUS(source) and cnp.PyArray_IS_C_CONTIGUOUS(destination)):
            memcpy(cnp.PyArray_DATA(destination), cnp.PyArray_DATA(source), cnp.PyArray_NBYTES(source))
            impl.version.value += 1
            return self
    np.copyto(target, values, casting="unsafe")   # (a draw of another kind: _fill's own copy)
    impl.version.value += 1
    return self


cdef object _dist_function(str name):
    """``minitorch_nn.random._dist.<name>``: the draw the generator's method calls (its compiled
    twin while that is bound)."""
    cdef PyObject* dist = PyDict_GetItem(_random_globals, "_dist")
    if dist == NULL:
        return None
    return getattr(<object>dist, name, None)


cdef object _uniform_fast(object self, object a, object b, object generator):
    cdef TensorImpl impl = _fill_target(self)
    if impl is None or not _may_run() or not _twin_ok(_op_uniform):
        return None
    low, high = _exact_double(a), _exact_double(b)
    if low is None or high is None:
        return None
    gen = _generator(generator)
    draw = _dist_function("uniform")
    if gen is None or draw is None:
        return None
    values = draw(gen._engine, impl.sizes, _NP_F32 if impl.dtype is _f32 else _NP_F64, low, high)
    return _write(self, impl, values)


cdef object _normal_fast(object self, object mean, object std, object generator):
    cdef TensorImpl impl = _fill_target(self)
    if impl is None or not _may_run() or not _twin_ok(_op_normal):
        return None
    m, s = _exact_double(mean), _exact_double(std)
    if m is None or s is None:
        return None
    gen = _generator(generator)
    draw = _dist_function("normal")
    if gen is None or draw is None:
        return None
    values = draw(gen, impl.sizes, _NP_F32 if impl.dtype is _f32 else _NP_F64, m, s, True)
    return _write(self, impl, values)


cdef inline bint _two_numbers_and_generator(tuple args, dict kwargs) except -1:
    """The call forms the twins take: up to two positional numbers, and ``generator=`` only."""
    if PyTuple_GET_SIZE(args) > 2:
        return False
    if kwargs and (len(kwargs) != 1 or "generator" not in kwargs):
        return False
    return True


def tensor_uniform_(self, *args, **kwargs):
    """``self.uniform_(a=0.0, b=1.0, *, generator=None)``: the fast path (see the module
    docstring), else the full path, called as it was."""
    r = None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(args)
    if _two_numbers_and_generator(args, kwargs):
        r = _uniform_fast(self, args[0] if n > 0 else 0.0, args[1] if n > 1 else 1.0,
                          kwargs.get("generator") if kwargs else None)
    return _full("Tensor.uniform_", (self,), args, kwargs) if r is None else r


def tensor_normal_(self, *args, **kwargs):
    """``self.normal_(mean=0.0, std=1.0, *, generator=None)``: the fast path (see the module
    docstring), else the full path, called as it was."""
    r = None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(args)
    if _two_numbers_and_generator(args, kwargs):
        r = _normal_fast(self, args[0] if n > 0 else 0.0, args[1] if n > 1 else 1.0,
                         kwargs.get("generator") if kwargs else None)
    return _full("Tensor.normal_", (self,), args, kwargs) if r is None else r


# -- rand, randn ---------------------------------------------------------------------------------------

cdef bint _cpu_by_default() except -1:
    """``get_default_device()`` is the cpu: no ``with device(...)`` block, no ``set_default_device``
    (the same test as the factories' twin makes)."""
    cdef PyObject* stack = PyDict_GetItem(_device_globals, "_DEFAULT_DEVICE_STACK")
    if stack == NULL or type(<object>stack) is not list or len(<list>stack) != 0:
        return False
    cdef PyObject* chosen = PyDict_GetItem(_device_globals, "_default_device")
    return chosen == NULL or <object>chosen is None or <object>chosen is _cpu


cdef object _sampled_fast(bint normal, tuple size, dict kwargs):
    """``rand``/``randn(*size, **kwargs)`` as the public function and the cpu kernel make it; or None."""
    cdef PyObject* found
    dtype = generator = None
    if kwargs:
        for key, value in kwargs.items():
            if key == "dtype":
                dtype = value
            elif key == "generator":
                generator = value
            elif key == "device":
                if value is not None and value is not _cpu:
                    return None
            elif key != "requires_grad" or value is not False:
                return None
    if PyTuple_GET_SIZE(size) == 0 or not _may_run() or not _cpu_by_default():
        return None
    if normal:
        op = _op_randn if generator is None else _op_randn_generator
    else:
        op = _op_rand if generator is None else _op_rand_generator
    if not _twin_ok(op):
        return None
    if dtype is None:
        found = PyDict_GetItem(_dtype_globals, "_default_dtype")
        if found == NULL:
            return None
        dtype = <object>found
    if dtype is not _f32 and dtype is not _f64:
        return None
    cdef list sizes = _size_arg(size)
    if sizes is None:
        return None
    cdef Py_ssize_t nbytes = 8, dim
    for s in sizes:
        if s < 0 or s > 1 << 62:
            return None     # (the full path raises PyTorch's error)
        dim = s
        if _mtnn_mul_overflow(nbytes, dim, &nbytes):
            return None
    if nbytes > (<Py_ssize_t>1) << 32:
        return None
    gen = _generator(generator)
    draw = _dist_function("normal" if normal else "uniform")
    if gen is None or draw is None:
        return None
    shape = tuple(sizes)
    np_dtype = _NP_F32 if dtype is _f32 else _NP_F64
    values = draw(gen, shape, np_dtype, 0.0, 1.0, True) if normal else draw(gen._engine, shape, np_dtype, 0.0, 1.0)
    out = _fresh_tensor(values, dtype)
    return out if out is not None else _from_array(values, dtype)   # (a draw of another kind: as the kernel wraps it)


def function_rand(*size, **kwargs):
    """``minitorch_nn.rand(*size, generator=None, dtype=None, device=None, requires_grad=False)``:
    the fast path, else the full path (called as it was)."""
    r = _sampled_fast(False, size, kwargs)
    return _full("rand", (), size, kwargs) if r is None else r


def function_randn(*size, **kwargs):
    """``minitorch_nn.randn(*size, generator=None, dtype=None, device=None, requires_grad=False)``:
    the fast path, else the full path (called as it was)."""
    r = _sampled_fast(True, size, kwargs)
    return _full("randn", (), size, kwargs) if r is None else r


# Tensor's methods and the public functions from this file (``_tensor_methods.py`` installs them)
METHODS = {"uniform_": tensor_uniform_, "normal_": tensor_normal_}
FUNCTIONS = {"rand": function_rand, "randn": function_randn}
