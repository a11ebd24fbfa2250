# cython: boundscheck=False, wraparound=False, cdivision=True
"""The compiled twin of ``minitorch_nn/_random/distributions.py`` (read that file first).

Mirrors, function by function:

* :func:`uniform` -- ``uniform`` (``rand``, ``uniform_``, and so ``nn.init.uniform_`` and
  ``kaiming_uniform_``, which every ``nn.Linear`` and conv layer calls twice), with the helpers it
  calls: ``_unit_uniform``, ``_check_bound``, ``_scalar_as``, ``fpmath.fma_f32``/``fma_f64``
  and the engine's ``random``/``random64`` (``_random/engine.py``). It computes float32 and
  float64 draws from the default engine; anything else (float16/bfloat16, a bound that the
  readable code refuses, an empty draw, an engine with a hand-made queue of words) is handed to
  the readable ``uniform``, which raises PyTorch's errors.

Why compiled: the readable ``uniform`` makes about a dozen numpy calls (draw, mask, convert,
scale, the exact fused multiply-add in float64, the tie check, the half-open fix, reshape)
whatever the size; for the 64-element weight of a ``Linear(8, 8)`` that is about 9 us of the
~80 us the module took to build. Here it is one loop over the words.

How it stays bit-equal:

* the words are the ones the readable code draws: numpy's ``MT19937`` bit generator's own C
  function (``next_uint32``, which ``random_raw`` also calls), read through the capsule numpy
  provides for Cython code, under the bit generator's lock as ``random_raw`` takes it;
* ``(w & (2**24 - 1)) * 2**-24`` and ``((w1 << 32 | w2) & (2**53 - 1)) * 2**-53`` are exact in
  both, and ``fpmath.fma_f32``/``fma_f64`` are exactly rounded ``a * b + c``, which is what C's
  ``fmaf``/``fma`` compute; the span ``to - from`` is rounded in the dtype as the readable code
  rounds it; a value that reaches ``to`` becomes ``from``;
* the engine's counters move as they do in ``MT19937Engine.random`` (``_fresh_next`` cleared).

Guard: ``distributions.uniform`` is this function only while the switch
(``minitorch_nn.backends.compiled``) is on and the fingerprints of the functions above match the
manifest (``compiled.bind``); at call time it steps aside, to the readable function, when one of
the helpers named in :func:`setup` or the engine's ``random``/``random64`` is no longer the object
it was built against. ``tests/twins/test_random_twin.py`` compares the two bit for bit.
"""

cimport numpy as cnp
import numpy as np
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.math cimport fma, fmaf, isfinite
from libc.stdint cimport uint32_t, uint64_t
from numpy.random cimport bitgen_t

cnp.import_array()

cdef object _readable_uniform = None     # the readable ``distributions.uniform``
cdef dict _module_globals = None         # ``distributions``' namespace, for the identity guard
cdef tuple _helpers = ()                 # ((name, object the twin was built against), ...)
cdef object _engine_type = None          # MT19937Engine, and its two drawing methods
cdef object _engine_random = None
cdef object _engine_random64 = None
cdef object _bitgen_type = np.random.MT19937
cdef object _F32 = np.dtype(np.float32)
cdef object _F64 = np.dtype(np.float64)
cdef double _F32_MAX = 3.4028234663852886e38
cdef double _F64_MAX = 1.7976931348623157e308
cdef uint64_t _LOW_53_BITS = (<uint64_t>1 << 53) - 1
cdef uint32_t _LOW_24_BITS = (1 << 24) - 1


def setup(readable_uniform, dict module_globals, helper_names, engine_type):
    """Remember the readable ``uniform``, its module's namespace and the helpers it calls (by
    name, with the objects they are now), and the engine class whose ``random``/``random64`` the
    loop below stands in for."""
    global _readable_uniform, _module_globals, _helpers, _engine_type, _engine_random, _engine_random64
    _readable_uniform = readable_uniform
    _module_globals = module_globals
    _helpers = tuple((name, module_globals[name]) for name in helper_names)
    _engine_type = engine_type
    _engine_random = engine_type.__dict__["random"]
    _engine_random64 = engine_type.__dict__["random64"]


cdef bint _unchanged(object eng):
    """The identity guard: the helpers and the engine are the objects the twin mirrors."""
    cdef tuple pair
    if type(eng) is not _engine_type:
        return False
    d = (<type>_engine_type).__dict__
    if d.get("random") is not _engine_random or d.get("random64") is not _engine_random64:
        return False
    for pair in _helpers:
        if _module_globals.get(pair[0]) is not pair[1]:
            return False
    return True


cdef Py_ssize_t _count(object shape):
    """The number of elements of a tuple of non-negative ints; -1 for anything else."""
    cdef Py_ssize_t n = 1, s
    if type(shape) is not tuple:
        return -1
    for dim in <tuple>shape:
        if type(dim) is not int:
            return -1
        s = dim
        if s < 0:
            return -1
        n *= s
    return n


def uniform(eng, shape, dt, low=0.0, high=1.0):
    """``distributions.uniform(eng, shape, dt, low, high)``, the same words and the same bits."""
    cdef double lo, hi, mx
    cdef Py_ssize_t n = _count(shape), i
    if (n <= 0 or (dt is not _F32 and dt is not _F64) or type(low) is not float
            or type(high) is not float or not _unchanged(eng) or eng._queue is not None):
        return _readable_uniform(eng, shape, dt, low, high)
    bitgen = eng._bitgen
    if type(bitgen) is not _bitgen_type:
        return _readable_uniform(eng, shape, dt, low, high)
    lo, hi = low, high
    mx = _F32_MAX if dt is _F32 else _F64_MAX
    # every refusal of the readable code (bounds outside the dtype, nan, from > to, a span past
    # the dtype's largest value) is left to it, with its messages
    if not (-mx <= lo <= mx and -mx <= hi <= mx and lo <= hi and hi - lo <= mx):
        return _readable_uniform(eng, shape, dt, low, high)
    cdef float frm32 = <float>lo, to32 = <float>hi
    cdef float span32 = to32 - frm32
    if dt is _F32 and not isfinite(span32):   # (numpy warns about that overflow: let it)
        return _readable_uniform(eng, shape, dt, low, high)
    cdef bitgen_t *rng = <bitgen_t *>PyCapsule_GetPointer(bitgen.capsule, "BitGenerator")
    out = np.empty(shape, dtype=dt)
    cdef float *o32
    cdef double *o64
    cdef float x32
    cdef double x64, span64 = hi - lo
    cdef uint64_t w
    cdef bint plain32 = frm32 == 0.0 and to32 == 1.0
    cdef bint plain64 = lo == 0.0 and hi == 1.0
    eng._fresh_next = None      # (as MT19937Engine.random: the engine has drawn)
    with bitgen.lock:
        if dt is _F32:
            o32 = <float *>cnp.PyArray_DATA(out)
            with nogil:
                for i in range(n):
                    x32 = <float>(rng.next_uint32(rng.state) & _LOW_24_BITS) * <float>5.9604644775390625e-08
                    if not plain32:
                        x32 = fmaf(x32, span32, frm32)
                    if x32 >= to32:
                        x32 = frm32
                    o32[i] = x32
        else:
            o64 = <double *>cnp.PyArray_DATA(out)
            with nogil:
                for i in range(n):
                    w = (<uint64_t>rng.next_uint32(rng.state)) << 32
                    w |= rng.next_uint32(rng.state)
                    x64 = <double>(w & _LOW_53_BITS) * 1.1102230246251565e-16
                    if not plain64:
                        x64 = fma(x64, span64, lo)
                    if x64 >= hi:
                        x64 = lo
                    o64[i] = x64
    return out
