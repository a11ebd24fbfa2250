# cython: boundscheck=False, wraparound=False, cdivision=True
"""The compiled twin of ``minitorch_nn/_random/distributions.py`` (read that file first).

Mirrors, function by function:

* :func:`uniform` -- ``uniform`` (``rand``, ``uniform_``, and so ``nn.init.uniform_`` and
  ``kaiming_uniform_``, which every ``nn.Linear`` and conv layer calls twice), with the helpers it
  calls: ``_unit_uniform``, ``_check_bound``, ``_scalar_as``, ``fpmath.fma_f32``/``fma_f64``;
* :func:`normal` -- ``normal`` on its contiguous path of 16 or more values (``_normal_fill``,
  ``_box_muller_blocks_f32`` with ``avx2_math.log_ps``/``sincos_ps``, ``_box_muller_blocks_f64``
  with ``_libm``): ``randn``, ``normal_``, ``nn.init.normal_``, ``nn.Embedding``'s weights;
* :func:`randperm` -- ``randperm``'s forward Fisher-Yates shuffle (``DataLoader(shuffle=True)``
  draws one per epoch);
* :func:`bernoulli` -- ``bernoulli`` with a Python-float ``p`` (``bernoulli_(p)``: the keep-mask
  of ``F.dropout``);

and, for all of them, the engine's ``random``/``random64`` (``_random/engine.py``). They compute
float32/float64 (int64 for ``randperm``) from the default engine; anything else -- float16 and
bfloat16, fewer than 16 normal values or a non-contiguous target (the cached Box-Muller value),
a bound or size the readable code refuses, an engine holding hand-made queued words -- is handed
to the readable function, which raises PyTorch's errors.

Why compiled: the readable recipes make a dozen or more numpy calls whatever the size (about
9 us of the ~80 us an ``nn.Linear(8, 8)`` took to build), the float64 normal path calls libm one
element at a time from Python (numpy's own ``log`` differs from libm's in the last bit on a few
inputs), and ``randperm`` swaps in a Python loop.

How it stays bit-equal:

* the words are the ones the readable code draws: numpy's ``MT19937`` bit generator's own C
  function (``next_uint32``, which ``random_raw`` also calls), read through the capsule numpy
  provides for Cython code, under the bit generator's lock as ``random_raw`` takes it, in the
  readable code's order (all of a draw's words, then the 16 for a partial last normal block);
* ``(w & (2**24 - 1)) * 2**-24`` and ``((w1 << 32 | w2) & (2**53 - 1)) * 2**-53`` are exact in
  both; ``fpmath.fma_f32``/``fma_f64`` are exactly rounded ``a * b + c``, which is what C's
  ``fmaf``/``fma`` compute; every other operation is one float32 (float64) operation, rounded
  once, in the same order (no contraction: see the pragmas below); float64 ``log``/``sin``/``cos``
  are libm's, which is what ``_libm`` calls (and what PyTorch calls);
* the engine's counters move as they do in ``MT19937Engine.random`` (``_fresh_next`` cleared).

Guard: ``distributions.uniform`` (``normal``, ``randperm``, ``bernoulli``) is the function here only while the
switch (``minitorch_nn.backends.compiled``) is on and the fingerprints of the originals match
the manifest (``compiled.bind``); at call time each steps aside, to the readable function, when
one of the helpers named in :func:`setup` or the engine's ``random``/``random64`` is no longer the
object it was built against. ``tests/twins/test_random_twin.py`` compares them bit for bit.
"""

cimport numpy as cnp
import numpy as np
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.float cimport FLT_MIN
from libc.math cimport cos, fabsf, fma, fmaf, isfinite, log, signbit, sin, sqrt, sqrtf
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcpy
from numpy.random cimport bitgen_t

# Each float operation below is rounded on its own, as numpy rounds it; a compiler allowed to fuse
# ``a * b + c`` into one multiply-add (GCC does by default where the target has FMA, for example
# under -march=native) would change last bits. The multiply-adds the recipes need are explicit
# ``fmaf``/``fma`` calls.
cdef extern from *:
    """
    #if defined(__clang__)
    #pragma clang fp contract(off)
    #elif defined(__GNUC__)
    #pragma GCC optimize ("fp-contract=off")
    #endif
    """

cnp.import_array()

cdef object _readable_uniform = None     # the readable functions, for everything the loops
cdef object _readable_normal = None      # below leave to them
cdef object _readable_randperm = None
cdef object _readable_bernoulli = None
cdef dict _module_globals = None         # ``distributions``' namespace, for the identity guard
cdef tuple _uniform_helpers = ()         # ((name, object the twin was built against), ...)
cdef tuple _normal_helpers = ()
cdef tuple _randperm_helpers = ()
cdef tuple _bernoulli_helpers = ()
cdef object _engine_type = None          # MT19937Engine, and its two drawing methods
cdef object _engine_random = None
cdef object _engine_random64 = None
cdef object _bitgen_type = np.random.MT19937
cdef object _F32 = np.dtype(np.float32)
cdef object _F64 = np.dtype(np.float64)
cdef object _I64 = np.dtype(np.int64)
cdef double _F32_MAX = 3.4028234663852886e38
cdef double _F64_MAX = 1.7976931348623157e308
cdef uint64_t _LOW_53_BITS = (<uint64_t>1 << 53) - 1
cdef uint32_t _LOW_24_BITS = (1 << 24) - 1
cdef Py_ssize_t _RANDPERM_SMALL_LIMIT = 0xFFFFFFFF // 20


def setup(dict readables, dict module_globals, dict helper_names, engine_type):
    """Remember the readable ``uniform``, ``normal``, ``randperm`` and ``bernoulli`` (``readables``, by name),
    their module's namespace, the helpers each one calls (``helper_names[name]``: names in that
    namespace, remembered with the objects they are now), and the engine class whose
    ``random``/``random64`` the loops below stand in for."""
    global _readable_uniform, _readable_normal, _readable_randperm, _readable_bernoulli, _module_globals
    global _uniform_helpers, _normal_helpers, _randperm_helpers, _bernoulli_helpers
    global _engine_type, _engine_random, _engine_random64
    _readable_uniform = readables["uniform"]
    _readable_normal = readables["normal"]
    _readable_randperm = readables["randperm"]
    _readable_bernoulli = readables["bernoulli"]
    _module_globals = module_globals
    _uniform_helpers = tuple((name, module_globals[name]) for name in helper_names["uniform"])
    _normal_helpers = tuple((name, module_globals[name]) for name in helper_names["normal"])
    _randperm_helpers = tuple((name, module_globals[name]) for name in helper_names["randperm"])
    _bernoulli_helpers = tuple((name, module_globals[name]) for name in helper_names["bernoulli"])
    _engine_type = engine_type
    _engine_random = engine_type.__dict__["random"]
    _engine_random64 = engine_type.__dict__["random64"]


cdef bint _unchanged(object eng, tuple helpers):
    """The identity guard: ``eng`` is the engine the twin reads words from, without a queue of
    hand-made words, and the helpers are the objects the twin mirrors."""
    cdef tuple pair
    if type(eng) is not _engine_type or type(eng._bitgen) is not _bitgen_type or eng._queue is not None:
        return False
    d = (<type>_engine_type).__dict__
    if d.get("random") is not _engine_random or d.get("random64") is not _engine_random64:
        return False
    for pair in helpers:
        if _module_globals.get(pair[0]) is not pair[1]:
            return False
    return True


cdef inline bitgen_t *_bit_generator(object eng):
    eng._fresh_next = None      # (as MT19937Engine.random: the engine has drawn)
    return <bitgen_t *>PyCapsule_GetPointer(eng._bitgen.capsule, "BitGenerator")


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
            or type(high) is not float or not _unchanged(eng, _uniform_helpers)):
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
    out = np.empty(shape, dtype=dt)
    cdef float *o32
    cdef double *o64
    cdef float x32
    cdef double x64, span64 = hi - lo
    cdef uint64_t w
    cdef bint plain32 = frm32 == 0.0 and to32 == 1.0
    cdef bint plain64 = lo == 0.0 and hi == 1.0
    cdef bitgen_t *rng = _bit_generator(eng)
    with eng._bitgen.lock:
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


# ------------------------------------------------------------------------------------- normal
# float32 Box-Muller as PyTorch's AVX2 kernel computes it: ``_random/avx2_math.py``'s Cephes log
# and sincos, step for step, with ``fmaf`` exactly where that file calls ``fma_f32``. Everything
# else is a single float32 (or float64) operation, rounded once as numpy rounds it; the compiler
# must not fuse those into multiply-adds of its own (the pragmas at the top of this file).
cdef float _SQRTHF = 0.707106781186547524
cdef float _LOG_P0 = 7.0376836292e-2
cdef float _LOG_P1 = -1.1514610310e-1
cdef float _LOG_P2 = 1.1676998740e-1
cdef float _LOG_P3 = -1.2420140846e-1
cdef float _LOG_P4 = 1.4249322787e-1
cdef float _LOG_P5 = -1.6668057665e-1
cdef float _LOG_P6 = 2.0000714765e-1
cdef float _LOG_P7 = -2.4999993993e-1
cdef float _LOG_P8 = 3.3333331174e-1
cdef float _LOG_Q1 = -2.12194440e-4
cdef float _LOG_Q2 = 0.693359375
cdef float _FOPI = 1.27323954473516
cdef float _DP1 = -0.78515625
cdef float _DP2 = -2.4187564849853515625e-4
cdef float _DP3 = -3.77489497744594108e-8
cdef float _SIN_P0 = -1.9515295891e-4
cdef float _SIN_P1 = 8.3321608736e-3
cdef float _SIN_P2 = -1.6666654611e-1
cdef float _COS_P0 = 2.443315711809948e-005
cdef float _COS_P1 = -1.388731625493765e-003
cdef float _COS_P2 = 4.166664568298827e-002
cdef float _TWO_PI_F32 = 2.0 * 3.141592653589793
cdef double _TWO_PI = 2.0 * 3.141592653589793


cdef inline float _log_ps(float x) noexcept nogil:
    """``avx2_math.log_ps`` for one positive float32."""
    cdef uint32_t bits
    cdef float e, m, xr, z, y
    if x < FLT_MIN:
        x = FLT_MIN                     # denormals flushed, as the C does
    memcpy(&bits, &x, 4)
    e = <float>(<int32_t>(bits >> 23) - 127) + <float>1.0
    bits = (bits & <uint32_t>0x807FFFFF) | <uint32_t>0x3F000000
    memcpy(&m, &bits, 4)
    if m < _SQRTHF:                     # 2m - 1 and e - 1 (both steps exact)
        xr = (m - <float>1.0) + m
        e = e - <float>1.0
    else:
        xr = (m - <float>1.0) + <float>0.0
        e = e - <float>0.0
    z = xr * xr
    y = fmaf(_LOG_P0, xr, _LOG_P1)
    y = fmaf(y, xr, _LOG_P2)
    y = fmaf(y, xr, _LOG_P3)
    y = fmaf(y, xr, _LOG_P4)
    y = fmaf(y, xr, _LOG_P5)
    y = fmaf(y, xr, _LOG_P6)
    y = fmaf(y, xr, _LOG_P7)
    y = fmaf(y, xr, _LOG_P8)
    y = y * xr
    y = fmaf(y, z, e * _LOG_Q1)
    y = y - z * <float>0.5
    return (xr + y) + e * _LOG_Q2


cdef inline void _sincos_ps(float x, float *sin_out, float *cos_out) noexcept nogil:
    """``avx2_math.sincos_ps`` for one float32."""
    cdef bint sign_sin = signbit(x)
    cdef int32_t j
    cdef float y, z, yc, ys
    x = fabsf(x)
    j = (<int32_t>(x * _FOPI) + 1) & ~1
    y = <float>j
    sign_sin = sign_sin ^ ((j & 4) != 0)
    cdef bint sign_cos = ((~(j - 2)) & 4) != 0
    cdef bint use_sin_poly = (j & 2) == 0
    x = x + y * _DP1
    x = x + y * _DP2
    x = fmaf(y, _DP3, x)
    z = x * x
    yc = fmaf(fmaf(_COS_P0, z, _COS_P1), z, _COS_P2)
    yc = yc * z
    yc = fmaf(yc, z, -(z * <float>0.5))
    yc = yc + <float>1.0
    ys = fmaf(fmaf(_SIN_P0, z, _SIN_P1), z, _SIN_P2)
    ys = ys * z
    ys = fmaf(ys, x, x)
    if use_sin_poly:
        sin_out[0], cos_out[0] = ys, yc
    else:
        sin_out[0], cos_out[0] = yc, ys
    if sign_sin:
        sin_out[0] = -sin_out[0]
    if sign_cos:
        cos_out[0] = -cos_out[0]


cdef inline void _box_muller_block_f32(const float *u, float *out, float mean, float std,
                                       bint plain) noexcept nogil:
    """``_box_muller_blocks_f32`` for one block of 16 uniforms."""
    cdef int i
    cdef float radius, s, c, first, second
    for i in range(8):
        radius = sqrtf(<float>-2.0 * _log_ps(<float>1.0 - u[i]))
        _sincos_ps(_TWO_PI_F32 * u[8 + i], &s, &c)
        first = radius * c
        second = radius * s
        if plain:
            out[i] = first + mean
            out[8 + i] = second + mean
        else:
            out[i] = fmaf(first, std, mean)
            out[8 + i] = fmaf(second, std, mean)


cdef inline void _box_muller_block_f64(const double *u, double *out, double mean, double std,
                                       bint plain) noexcept nogil:
    """``_box_muller_blocks_f64`` for one block of 16 uniforms (libm, as ``_libm`` calls it)."""
    cdef int i
    cdef double radius, theta, first, second
    for i in range(8):
        radius = sqrt(-2.0 * log(1.0 - u[i]))
        theta = _TWO_PI * u[8 + i]
        first = radius * cos(theta)
        second = radius * sin(theta)
        if plain:
            out[i] = first + mean
            out[8 + i] = second + mean
        else:
            out[i] = fma(first, std, mean)
            out[8 + i] = fma(second, std, mean)


cdef inline void _unit_f32(bitgen_t *rng, float *u, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        u[i] = <float>(rng.next_uint32(rng.state) & _LOW_24_BITS) * <float>5.9604644775390625e-08


cdef inline void _unit_f64(bitgen_t *rng, double *u, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef uint64_t w
    for i in range(n):
        w = (<uint64_t>rng.next_uint32(rng.state)) << 32
        w |= rng.next_uint32(rng.state)
        u[i] = <double>(w & _LOW_53_BITS) * 1.1102230246251565e-16


def normal(gen, shape, dt, mean=0.0, std=1.0, contiguous=True):
    """``distributions.normal(gen, shape, dt, mean, std, contiguous)`` for float32/float64 on the
    contiguous path of 16 or more values (``_normal_fill``); the same words and the same bits."""
    cdef Py_ssize_t n = _count(shape), k, b
    if (n < 16 or contiguous is not True or (dt is not _F32 and dt is not _F64) or type(mean) is not float
            or type(std) is not float):
        return _readable_normal(gen, shape, dt, mean, std, contiguous)
    eng = gen._engine
    cdef double m = mean, sd = std
    # the readable code's refusal (std < 0), and values that may overflow or be nan, stay there
    if not (0.0 <= sd <= 1e30 and -1e30 <= m <= 1e30) or not _unchanged(eng, _normal_helpers):
        return _readable_normal(gen, shape, dt, mean, std, contiguous)
    k = n - n % 16
    out = np.empty(shape, dtype=dt)
    cdef cnp.ndarray buffer
    cdef float *u32
    cdef float *o32
    cdef float tail32[16]
    cdef double *u64
    cdef double *o64
    cdef double tail64[16]
    cdef float m32 = <float>m, sd32 = <float>sd
    cdef bitgen_t *rng = _bit_generator(eng)
    if dt is _F32:
        buffer = np.empty(n, dtype=np.float32)
        u32 = <float *>cnp.PyArray_DATA(buffer)
        o32 = <float *>cnp.PyArray_DATA(out)
        with eng._bitgen.lock, nogil:
            _unit_f32(rng, u32, n)              # n words, then 16 more for a partial last block
            if n % 16:
                _unit_f32(rng, tail32, 16)
            for b in range(0, k, 16):
                _box_muller_block_f32(u32 + b, o32 + b, m32, sd32, sd32 == 1)
            if n % 16:
                _box_muller_block_f32(tail32, o32 + n - 16, m32, sd32, sd32 == 1)
    else:
        buffer = np.empty(n, dtype=np.float64)
        u64 = <double *>cnp.PyArray_DATA(buffer)
        o64 = <double *>cnp.PyArray_DATA(out)
        with eng._bitgen.lock, nogil:
            _unit_f64(rng, u64, n)
            if n % 16:
                _unit_f64(rng, tail64, 16)
            for b in range(0, k, 16):
                _box_muller_block_f64(u64 + b, o64 + b, m, sd, sd == 1.0)
            if n % 16:
                _box_muller_block_f64(tail64, o64 + n - 16, m, sd, sd == 1.0)
    return out


# ----------------------------------------------------------------------------------- randperm
def randperm(eng, n, dt):
    """``distributions.randperm(eng, n, dt)`` for int64 and 2 <= n < 2**32 / 20: the forward
    Fisher-Yates shuffle, slot i swapping with slot ``i + word % (n - i)``."""
    if (type(n) is not int or dt is not _I64 or not 2 <= n < _RANDPERM_SMALL_LIMIT
            or not _unchanged(eng, _randperm_helpers)):
        return _readable_randperm(eng, n, dt)
    cdef Py_ssize_t size = n, i, j
    cdef int64_t swap
    out = np.arange(size, dtype=np.int64)
    cdef int64_t *perm = <int64_t *>cnp.PyArray_DATA(out)
    cdef bitgen_t *rng = _bit_generator(eng)
    with eng._bitgen.lock, nogil:
        for i in range(size - 1):
            j = i + <Py_ssize_t>(<int64_t>rng.next_uint32(rng.state) % (size - i))
            swap = perm[i]
            perm[i] = perm[j]
            perm[j] = swap
    return out


# ---------------------------------------------------------------------------------- bernoulli
def bernoulli(eng, shape, dt, p):
    """``distributions.bernoulli(eng, shape, dt, p)`` for a Python-float ``p`` and a float32 or
    float64 result (``bernoulli_(p)``, and so ``F.dropout``): a double uniform from each pair of
    words, 1 where it is below ``p``."""
    cdef Py_ssize_t n = _count(shape), i
    if n <= 0 or type(p) is not float or (dt is not _F32 and dt is not _F64) or not _unchanged(eng, _bernoulli_helpers):
        return _readable_bernoulli(eng, shape, dt, p)
    cdef double prob = p, u
    cdef uint64_t w
    if not 0.0 <= prob <= 1.0:    # (the readable function's refusal, nan included)
        return _readable_bernoulli(eng, shape, dt, p)
    out = np.empty(shape, dtype=dt)
    cdef float *o32 = NULL
    cdef double *o64 = NULL
    if dt is _F32:
        o32 = <float *>cnp.PyArray_DATA(out)
    else:
        o64 = <double *>cnp.PyArray_DATA(out)
    cdef bitgen_t *rng = _bit_generator(eng)
    with eng._bitgen.lock, nogil:
        for i in range(n):
            w = (<uint64_t>rng.next_uint32(rng.state)) << 32
            w |= rng.next_uint32(rng.state)
            u = <double>(w & _LOW_53_BITS) * 1.1102230246251565e-16
            if o32 != NULL:
                o32[i] = 1.0 if u < prob else 0.0
            else:
                o64[i] = 1.0 if u < prob else 0.0
    return out
