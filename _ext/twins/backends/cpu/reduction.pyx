# cython: language_level=3, binding=True, embedsignature=True
"""The compiled twin of ``minitorch_nn/backends/cpu/reduction.py``: the reduction kernels.

Mirrors, kernel by kernel (each runs only while that kernel's guard holds, see ``_ext/twins/_gate.pyx``):

* ``sum`` (``np.add.reduce`` over all elements in the tensor's dtype): ``x.sum()``, by numpy's
  pairwise summation as a C loop for row-major float32/float64 tensors (below);
* ``sum_dim`` (``np.add.reduce`` over the wrapped axes): ``x.sum(dim[, keepdim])``;
* ``cumsum`` (``_scan(np.cumsum, ...)``): ``x.cumsum(dim)``, ``minitorch_nn.cumsum``;
* ``_softmax`` / ``_log_softmax`` (the kernel's own compiled loop, ``_compiled_softmax``):
  ``minitorch_nn.softmax(x, dim)``, ``x.softmax(dim)``, ``nn.functional.softmax`` (so ``nn.Softmax``),
  and the ``log_softmax`` forms;
* ``var`` / ``std`` with the default correction (the kernel's own ``_var_steps``):
  ``x.var([dim][, keepdim=])``, ``x.std(...)``, ``minitorch_nn.var``/``std``.

Why compiled: per-op overhead on small tensors (see the gate's docstring); for ``sum`` over a
row-major float32/float64 tensor also the arithmetic: numpy's pairwise summation keeps one chain
of eight accumulators, so each vector addition waits on the previous one (about 4x torch's time
at 256x256). The loop here (``_pairwise_sum``) makes exactly numpy's additions in numpy's order --
the blocks of at most 128 elements that ``pairwise_sum`` (``numpy/_core/src/umath/
loops_utils.h.src``) cuts the array into, each with its eight accumulators over its blocks of 8,
the fixed combination ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))`` and its remainder, then
the blocks' sums added as numpy's recursion adds them, all after numpy's +0.0 seed -- but runs
a group of blocks' accumulators side by side (8 blocks of float32, 4 of float64; each block's eight
accumulators one or two vectors), so the additions of different blocks overlap, and combines the
group's blocks lane-wise. Every lane of every vector addition is one of numpy's scalar additions
on the same two values, so the roundings are numpy's; GCC on x86-64 also builds an AVX2 copy of
that loop, picked at load time. Checked bit for bit against
``np.add.reduce`` on every size 0..70000 and sizes to 10 million (numpy 2.4: a contiguous array is
one pass of the reduce loop, not cut at the iterator's 8192-element buffer). A sum that comes out
infinite or NaN is computed again by numpy, so its warnings (overflow, invalid) and its NaN are
numpy's own. The twin asks once, on random arrays across those edges, whether the installed numpy
still sums so (``_sum_loop_ok``), and keeps calling numpy if not.

How it stays bit-equal otherwise: the same numpy calls (or the kernel's own helper) on the same
arrays, in the same order and with the same floating-point error state (``sum`` leaves numpy's
warnings on, as the kernel does); with grad the result goes to the compiled recorder with the full
path's arguments. Any other form (``dtype=``, ``out=``, other dtypes, bad dims, subclasses, modes)
takes the full path. ``tests/twins/test_fast_path.py``, ``test_fast_path_softmax.py``,
``test_fast_path_more.py`` and ``test_relu_sum_loops.py`` compare both paths.
"""

cimport cython
cimport numpy as cnp
from cpython.contextvars cimport PyContextVar_Reset, PyContextVar_Set
from cpython.tuple cimport PyTuple_GET_SIZE

import numpy as np

from minitorch_nn._C cimport (TensorBase, TensorImpl, _fresh_impl, _is_contiguous, _mark_view_of,
                              _mtnn_mul_overflow, _wrap_payload)
from minitorch_nn._twins._gate cimport (_Tensor, _cpu, _cpu_payload, _dim_index, _elementwise_input,
                                        _f32, _f64, _fp_ignore, _fp_var, _fresh_tensor, _full,
                                        _grad_enabled, _i64, _nothing_intercepts, _plain, _plain_cpu,
                                        _record_mode, _record_mode3, _recorded, _recorded_with, _records,
                                        _row_major, _scalar_operand, _size_arg, _twin_ok, _typenum,
                                        _unary_like)
from minitorch_nn._twins._gate cimport (_NONDIFFERENTIABLE, _Recipe, _record, _record_general,
                                        _recipe_for, _recipe_of, recorder_ready)  # the recorder slot

cnp.import_array()

cdef bint _loaded = False
cdef object _op_sum = None           # aten.sum.default
cdef object _op_sum_dim = None       # aten.sum.dim_IntList
cdef object _op_cumsum = None
cdef object _np_add_reduce = np.add.reduce


cdef bint _load() except -1:
    """Look up, once, the ops (False while the cpu backend is not loaded yet: the full path runs)."""
    global _loaded, _op_sum, _op_sum_dim, _op_cumsum
    import sys
    if sys.modules.get("minitorch_nn.backends.cpu.reduction") is None:
        return False
    from minitorch_nn._ops import aten
    _op_sum, _op_sum_dim, _op_cumsum = aten.sum.default, aten.sum.dim_IntList, aten.cumsum.default
    _loaded = True
    return True


cdef inline bint _may_run() except -1:
    """Nothing could observe the op (``_nothing_intercepts``) and the ops are looked up."""
    if not _nothing_intercepts():
        return False
    return _loaded or _load()


# -- the pairwise summation of np.add.reduce, as a loop --------------------------------------------

ctypedef fused real:
    float
    double


cdef inline real _pairwise_leaf(const real* a, Py_ssize_t n, Py_ssize_t start, const real* acc) noexcept nogil:
    """numpy's ``pairwise_sum`` for 8 <= ``n`` <= 128 once its eight accumulators (``acc``) have
    absorbed the full blocks of 8 below ``start``: the rest of the blocks, the fixed combination
    ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the remainder one by one."""
    cdef Py_ssize_t i = start, j, end = n - n % 8
    cdef real res
    cdef real r[8]     # (a local copy: its address never escapes, so it can live in registers)
    for j in range(8):
        r[j] = acc[j]
    while i < end:
        for j in range(8):
            r[j] += a[i + j]
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        res += a[i]
        i += 1
    return res


cdef int _leaves(Py_ssize_t offset, Py_ssize_t n, Py_ssize_t* offsets, Py_ssize_t* lengths,
                 int count) noexcept nogil:
    """Append to ``offsets``/``lengths`` the blocks (of at most 128 elements) numpy's recursion
    cuts ``n`` > 8 elements into, in order; the new count. Below 1024 elements at most 16 blocks
    (every block of a split is over 64 elements long)."""
    cdef Py_ssize_t n2
    if n <= 128:
        offsets[count] = offset
        lengths[count] = n
        return count + 1
    n2 = n // 2
    n2 -= n2 % 8
    count = _leaves(offset, n2, offsets, lengths, count)
    return _leaves(offset + n2, n - n2, offsets, lengths, count)


cdef real _combine(Py_ssize_t n, const real* sums, int* at) noexcept nogil:
    """The sums of the blocks ``_leaves`` listed, added up as numpy's recursion adds them."""
    cdef Py_ssize_t n2
    cdef real left
    if n <= 128:
        at[0] += 1
        return sums[at[0] - 1]
    n2 = n // 2
    n2 -= n2 % 8
    left = _combine(n2, sums, at)
    return left + _combine(n - n2, sums, at)


cdef extern from *:
    """
    /* A group of blocks (8 of float32, 4 of float64) taken through their first `common` elements
       (a multiple of 8) as numpy's pairwise_sum takes one block: eight accumulators r[j] = p[j],
       then r[j] += p[i + j] for each further block of 8. Each block's eight accumulators are one or
       two 32-byte vectors (GCC/Clang vector extensions: lane-wise IEEE additions, the same
       roundings as the scalar code; two SSE instructions each where AVX is not there), and the
       group's chains are
       independent, so their additions overlap instead of each waiting on its own previous one.
       Then, where asked, the blocks' combinations ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
       all at once: the accumulators turned so that lane k holds block k's, the same seven
       additions lane-wise. Any other compiler gets the plain loops. */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
    /* (GCC on x86-64 Linux also builds an AVX2 copy, chosen at load time where the processor has
       it: the same lane-wise additions, twice as many lanes per instruction) */
    #define MTNN_CLONES __attribute__((target_clones("avx2", "default")))
    #else
    #define MTNN_CLONES
    #endif
    #if defined(__GNUC__)
    #define MTNN_BLOCK_GROUP(NAME, T, G)                                                            \
    MTNN_CLONES static void NAME(const T* a, const Py_ssize_t* offsets, Py_ssize_t common,        \
                                 T* acc, T* sums) {                                              \
        typedef T vec __attribute__((vector_size(32)));                                         \
        typedef T lanes __attribute__((vector_size(G * sizeof(T))));                            \
        enum { L = 32 / sizeof(T), V = 8 / L };   /* lanes per vector, vectors per block */      \
        vec r[G][V], t;                                                                          \
        _Pragma("GCC unroll 8")                                                                  \
        for (int k = 0; k < G; k++)                                                              \
            _Pragma("GCC unroll 2")                                                              \
            for (int v = 0; v < V; v++)                                                          \
                __builtin_memcpy(&r[k][v], a + offsets[k] + v * L, sizeof(vec));                 \
        for (Py_ssize_t i = 8; i < common; i += 8) {                                             \
            _Pragma("GCC unroll 8")                                                              \
            for (int k = 0; k < G; k++)                                                          \
                _Pragma("GCC unroll 2")                                                          \
                for (int v = 0; v < V; v++) {                                                    \
                    __builtin_memcpy(&t, a + offsets[k] + i + v * L, sizeof(vec));               \
                    r[k][v] += t;                                                                \
                }                                                                                \
        }                                                                                        \
        if (acc) { __builtin_memcpy(acc, r, sizeof(r)); return; }                                \
        lanes c[8];                                                                              \
        for (int j = 0; j < 8; j++)                                                              \
            for (int k = 0; k < G; k++) c[j][k] = r[k][j / L][j % L];                            \
        lanes res = ((c[0] + c[1]) + (c[2] + c[3])) + ((c[4] + c[5]) + (c[6] + c[7]));          \
        __builtin_memcpy(sums, &res, sizeof(res));                                               \
    }
    #else
    #define MTNN_BLOCK_GROUP(NAME, T, G)                                                            \
    static void NAME(const T* a, const Py_ssize_t* offsets, Py_ssize_t common, T* acc, T* sums) { \
        T r[8];                                                                                  \
        for (int k = 0; k < G; k++) {                                                            \
            const T* p = a + offsets[k];                                                         \
            for (int j = 0; j < 8; j++) r[j] = p[j];                                             \
            for (Py_ssize_t i = 8; i < common; i += 8)                                           \
                for (int j = 0; j < 8; j++) r[j] += p[i + j];                                    \
            if (acc) { for (int j = 0; j < 8; j++) acc[8 * k + j] = r[j]; continue; }            \
            sums[k] = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));         \
        }                                                                                        \
    }
    #endif
    MTNN_BLOCK_GROUP(mtnn_block_group_f32, float, 8)
    MTNN_BLOCK_GROUP(mtnn_block_group_f64, double, 4)
    """
    void mtnn_block_group_f32(const float* a, const Py_ssize_t* offsets, Py_ssize_t common,
                              float* acc, float* sums) noexcept nogil
    void mtnn_block_group_f64(const double* a, const Py_ssize_t* offsets, Py_ssize_t common,
                              double* acc, double* sums) noexcept nogil


cdef inline int _group_size(const real* a) noexcept nogil:
    """How many blocks ``_leaf_group`` takes at once: one 32-byte vector of accumulators each, as
    many as keep 8 independent AVX vectors (or 16 SSE ones) busy."""
    if real is float:
        return 8
    return 4


cdef void _leaf_group(const real* a, const Py_ssize_t* offsets, const Py_ssize_t* lengths,
                      real* sums) noexcept nogil:
    """``_group_size`` blocks' ``pairwise_sum``s side by side (``mtnn_block_group`` above takes them
    through the blocks of 8 they all have); each block still makes exactly its own additions in
    its own order. Where no block has a further block of 8, the combinations too are done
    together, then each block's remainder added one by one; else ``_pairwise_leaf`` finishes each."""
    cdef int g = _group_size(a), k
    cdef real acc[64]
    cdef Py_ssize_t common = lengths[0], i
    cdef bint together = True
    for k in range(1, g):
        if lengths[k] < common:
            common = lengths[k]
    common -= common % 8        # the blocks of 8 all of them have
    for k in range(g):
        if lengths[k] - common >= 8:
            together = False
    if together:
        if real is float:
            mtnn_block_group_f32(a, offsets, common, NULL, sums)
        else:
            mtnn_block_group_f64(a, offsets, common, NULL, sums)
        for k in range(g):
            for i in range(offsets[k] + common, offsets[k] + lengths[k]):
                sums[k] += a[i]
        return
    if real is float:
        mtnn_block_group_f32(a, offsets, common, acc, NULL)
    else:
        mtnn_block_group_f64(a, offsets, common, acc, NULL)
    for k in range(g):
        sums[k] = _pairwise_leaf(a + offsets[k], lengths[k], common, acc + 8 * k)


cdef real _pairwise_blocks(const real* a, Py_ssize_t n) noexcept nogil:
    """``pairwise_sum`` for 128 < ``n`` <= 1024: its blocks (``_leaves``) a group at a time, then
    combined as the recursion combines them (``_combine``)."""
    cdef Py_ssize_t offsets[16]
    cdef Py_ssize_t lengths[16]
    cdef real sums[16]
    cdef real r[8]
    cdef int count, k = 0, j, g = _group_size(a)
    if n == 1024:
        # (any n of 128 times a power of two has these nodes: halves all the way down to blocks of
        # 128, so the list and the combination are known without the recursion)
        for k in range(8):
            offsets[k] = 128 * k
            lengths[k] = 128
        count = 8
    else:
        count = _leaves(0, n, offsets, lengths, 0)
    k = 0
    while k + g <= count:
        _leaf_group(a, offsets + k, lengths + k, sums + k)
        k += g
    while k < count:
        for j in range(8):
            r[j] = a[offsets[k] + j]
        sums[k] = _pairwise_leaf(a + offsets[k], lengths[k], 8, r)
        k += 1
    if n == 1024:
        return ((sums[0] + sums[1]) + (sums[2] + sums[3])) + ((sums[4] + sums[5]) + (sums[6] + sums[7]))
    k = 0
    return _combine(n, sums, &k)


cdef real _pairwise_sum(const real* a, Py_ssize_t n) noexcept nogil:
    """numpy's ``pairwise_sum`` (``numpy/_core/src/umath/loops_utils.h.src``), the same additions
    in the same order: below 8 elements a running sum; up to 128, eight accumulators over the
    blocks of 8, combined pairwise, then the remainder; above, split at half of ``n`` rounded
    down to a multiple of 8, each part summed so, and the two sums added."""
    cdef real res
    cdef real r[8]
    cdef Py_ssize_t i, n2
    if n < 8:
        res = 0   # (numpy starts from -0.0 or 0.0 by version; the caller's +0.0 seed hides which)
        for i in range(n):
            res += a[i]
        return res
    if n <= 128:
        for i in range(8):
            r[i] = a[i]
        return _pairwise_leaf(a, n, 8, r)
    if n <= 1024:
        return _pairwise_blocks(a, n)
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise_sum(a, n2) + _pairwise_sum(a + n2, n - n2)


cdef bint _sum_contiguous(cnp.ndarray x, cnp.ndarray out) except -1:
    """``np.add.reduce(x, None, None, out)`` for a row-major float32/float64 ``x`` whose sum is
    finite: numpy's add reduction over a contiguous array seeds the result with add's identity
    +0.0 and adds ``pairwise_sum`` of all the elements (its iterator needs no buffering here, so
    does not cut the array into chunks): ``0.0 + _pairwise_sum(x)``, the same bits. False (``out``
    untouched) for anything else, or a sum that is infinite or NaN: numpy then computes it again,
    with its own overflow/invalid warnings and its own NaN."""
    cdef int typenum = cnp.PyArray_TYPE(x)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(x)
    cdef float s32
    cdef double s64
    if not cnp.PyArray_IS_C_CONTIGUOUS(x) or not cnp.PyArray_ISNOTSWAPPED(x):
        return False
    if typenum == cnp.NPY_FLOAT32:
        with nogil:
            s32 = 0
            s32 = s32 + _pairwise_sum(<const float*>cnp.PyArray_DATA(x), n)
        if s32 - s32 != 0:   # (inf - inf and NaN - NaN are NaN: not finite)
            return False
        (<float*>cnp.PyArray_DATA(out))[0] = s32
        return True
    if typenum == cnp.NPY_FLOAT64:
        with nogil:
            s64 = 0
            s64 = s64 + _pairwise_sum(<const double*>cnp.PyArray_DATA(x), n)
        if s64 - s64 != 0:
            return False
        (<double*>cnp.PyArray_DATA(out))[0] = s64
        return True
    return False


cdef int _loop_agrees = -1     # whether this numpy's np.add.reduce gives the loop's bits (-1: not yet asked)


cdef bint _sum_loop_ok() except -1:
    """Whether numpy, as installed, sums as ``_sum_contiguous`` does: asked once, on random arrays
    of both dtypes across the block edges and past numpy's 8192-element buffer (another numpy
    release could order its additions otherwise; the twin then keeps calling numpy)."""
    global _loop_agrees
    if _loop_agrees < 0:
        # (varied values of both signs and scales e^-8..e^8, without np.random, which costs a
        # first import)
        k = np.arange(16392, dtype=np.float64)
        base = np.sin(k * 12.9898) * np.exp(np.mod(k * 7919.0, 1601.0) / 100.0 - 8.0)
        agrees = True
        for dtype in (np.float32, np.float64):
            for n in (1, 7, 8, 9, 127, 129, 1000, 1024, 8191, 8193, 16385):
                x = base[16392 - n:].astype(dtype)
                out = np.empty((), dtype)
                if not _sum_contiguous(x, out) or out.tobytes() != _np_add_reduce(x).tobytes():
                    agrees = False
        _loop_agrees = agrees
    return _loop_agrees


def sum_loop_in_use():
    """Whether ``x.sum()`` takes the loop (this numpy sums as it does: ``_sum_loop_ok``)."""
    return bool(_sum_loop_ok())


def pairwise_sum_values(object x):
    """The loop above on its own, for the tests: ``np.add.reduce(x)`` as a 0-d array for a
    row-major float32/float64 array with a finite sum, else None."""
    if type(x) is not np.ndarray:
        return None
    out = cnp.PyArray_EMPTY(0, NULL, cnp.PyArray_TYPE(<cnp.ndarray>x), 0)
    return out if _sum_contiguous(<cnp.ndarray>x, <cnp.ndarray>out) else None


# -- sum ----------------------------------------------------------------------------------------------

def tensor_sum(self, *args, **kwargs):
    """``self.sum()``: ``np.add.reduce`` over all elements in the tensor's dtype, as the cpu kernel.

    The kernel leaves numpy's warnings on for sums, so this does too. The 0-d result array is
    passed as ``out``, which saves turning numpy's scalar result into an array afterwards.
    """
    cdef TensorImpl a
    cdef int record
    cdef _Recipe recipe = None
    if not args and not kwargs:
        a = _plain(self)
        if a is not None and _may_run() and _twin_ok(_op_sum):
            record = _records(a, None)
            if record > 0:
                recipe = _recipe_for(_op_sum)
                if recipe is None:
                    record = -1
            out = cnp.PyArray_EMPTY(0, NULL, _typenum(a.dtype), 0) if record >= 0 else None
            try:
                if out is not None:
                    x = a.numpy_view()
                    if not (_sum_loop_ok() and _sum_contiguous(x, out)):
                        _np_add_reduce(x, None, None, out)
            except Exception:
                out = None  # (a warning turned into an error): the full path raises it again
            if out is not None:
                r = _wrap_payload(_Tensor, _fresh_impl(out, a.dtype, _cpu))
                return _recorded_with(_op_sum, recipe, (self,), r) if record else r
    return _full("Tensor.sum", (self,), args, kwargs)


cdef object _sum_dims_fast(object self, object dim, bint keepdim):
    """``reduction.sum_dim(self, dims, keepdim)`` for ``dim`` an int or a list/tuple of ints
    (wrapped as ``_axes`` wraps them; a repeated dim declines): ``np.add.reduce`` over those axes
    in the tensor's dtype, warnings as numpy gives them (the kernel leaves them on)."""
    cdef TensorImpl a = _elementwise_input(self, True)
    if a is None:
        return None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(a.sizes), d, i
    if n == 0:
        return None
    cdef list dims
    cdef list axes = []
    if type(dim) is int:
        dims = [dim]
    elif type(dim) is list or type(dim) is tuple:
        dims = list(dim)
        if not dims:
            return None
    else:
        return None
    for v in dims:
        d = _dim_index(v, n)
        if d < 0 or d in axes:
            return None
        axes.append(d)
    if not _may_run():
        return None
    cdef int record = _record_mode(_op_sum_dim, a, None)
    if record < 0:
        return None
    try:
        r = _np_add_reduce(a.numpy_view(), tuple(axes), None, None, keepdim)
    except Exception:
        return None   # (a warning turned into an error: the full path raises it again)
    out = _fresh_tensor(r, a.dtype)
    if out is None or not record:
        return out
    return _recorded(_op_sum_dim, (self, dims, True) if keepdim else (self, dims), out)


def tensor_sum_dims(self, *args, **kwargs):
    """``self.sum(dim[, keepdim])`` (also ``dim=``, ``keepdim=``): the fast path; ``self.sum()``
    and every other form: ``tensor_sum`` above (its own fast path, else the full path)."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    dim = None
    keepdim = False
    r = None
    if nargs == 1 and not kwargs:
        dim = args[0]
    elif nargs == 2 and not kwargs:
        dim, keepdim = args[0], args[1]
    elif nargs <= 1 and kwargs and len(kwargs) <= 2:
        dim = args[0] if nargs else kwargs.get("dim")
        keepdim = kwargs.get("keepdim", False)
        if len(kwargs) != (0 if nargs else 1) + ("keepdim" in kwargs):
            dim = None   # (another keyword, or dim given twice)
    if dim is not None and type(keepdim) is bool:
        r = _sum_dims_fast(self, dim, keepdim)
    return tensor_sum(self, *args, **kwargs) if r is None else r


# -- cumsum -------------------------------------------------------------------------------------------

def _cumsum_fn(x, axis):
    # reduction._scan(np.cumsum, ...): np.cumsum(x, axis=d) is x.cumsum(axis=d) (its result
    # already has x's shape for a tensor with dims)
    return x.cumsum(axis)


cdef object _cumsum_fast(object self, object dim):
    cdef TensorImpl a = _elementwise_input(self, True)
    if a is None:
        return None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(a.sizes)
    cdef Py_ssize_t d = _dim_index(dim, n) if n else -1
    if d < 0 or not _may_run():
        return None
    return _unary_like(_op_cumsum, self, (self, dim), a, _cumsum_fn, d, False)


cdef object _cumsum_args(object self, tuple args, dict kwargs):
    if PyTuple_GET_SIZE(args) == 1 and not kwargs:
        return _cumsum_fast(self, args[0])
    if not args and kwargs and len(kwargs) == 1 and "dim" in kwargs:
        return _cumsum_fast(self, kwargs["dim"])
    return None


def tensor_cumsum(self, *args, **kwargs):
    """``self.cumsum(dim)``: the fast path, else the full path (``dtype=``...)."""
    r = _cumsum_args(self, args, kwargs)
    return _full("Tensor.cumsum", (self,), args, kwargs) if r is None else r


def function_cumsum(input, *args, **kwargs):
    """``minitorch_nn.cumsum(input, dim)``: the fast path, else the full path."""
    r = _cumsum_args(input, args, kwargs)
    return _full("cumsum", (input,), args, kwargs) if r is None else r


# -- softmax and log_softmax -----------------------------------------------------------------------------

cdef object _op_softmax = None        # aten._softmax.default
cdef object _op_log_softmax = None    # aten._log_softmax.default
cdef object _softmax_loop = None      # _activation_kernels.softmax, as the cpu kernel calls it


cdef bint _load_softmax() except -1:
    """Look up, once, the two ops and the cpu kernel's compiled loop (False while the cpu backend
    is not loaded, or was built without the loop: the full path then runs)."""
    global _op_softmax, _op_log_softmax, _softmax_loop
    import sys
    reduction = sys.modules.get("minitorch_nn.backends.cpu.reduction")
    if reduction is None or reduction._compiled_softmax is None:
        return False
    from minitorch_nn._ops import aten
    _op_softmax, _op_log_softmax = aten._softmax.default, aten._log_softmax.default
    _softmax_loop = reduction._compiled_softmax
    return True


cdef object _softmax_fast(object input, object dim, bint take_log):
    """``aten._softmax.default(input, dim, False)`` (``_log_softmax`` when ``take_log``) computed
    and recorded as the full path would, or None when the full path must run."""
    if type(dim) is not int:
        return None
    cdef TensorImpl a = _cpu_payload(input)
    if a is None:
        return None
    dtype = a.dtype
    if dtype is not _f32 and dtype is not _f64:
        return None
    cdef tuple sizes = a.sizes
    cdef Py_ssize_t ndim = len(sizes)
    cdef Py_ssize_t d = dim
    cdef Py_ssize_t rank = ndim if ndim else 1   # a 0-d tensor takes dim 0 or -1
    if not -rank <= d < rank or 0 in sizes:
        return None
    if d < 0:
        d += rank
    if not _may_run():
        return None
    if _softmax_loop is None and not _load_softmax():
        return None
    op = _op_log_softmax if take_log else _op_softmax
    cdef int record = _record_mode(op, a, None)
    if record < 0:
        return None
    r = _softmax_loop(a.numpy_view(), d, take_log)
    if r is None:
        return None
    out = _fresh_tensor(r, dtype)
    if out is None:
        return None
    return _recorded(op, (input, dim, False), out) if record else out


cdef inline object _dim_only(tuple args, dict kwargs, object allowed):
    """The ``dim`` of a call written ``(dim)`` or ``(dim=...)`` (also allowing the keywords in
    ``allowed``, which do not change the result, and ``dtype=None``); None for any other form."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    if nargs > 1:
        return None
    if kwargs:
        for key, value in kwargs.items():
            if key == "dtype":
                if value is not None:
                    return None
            elif key != "dim" and key not in allowed:
                return None
        if "dim" in kwargs:
            return None if nargs else kwargs["dim"]
    return args[0] if nargs else None


def function_softmax(input, *args, **kwargs):
    """``minitorch_nn.softmax(input, dim)``: the fast path, else the full path."""
    dim = _dim_only(args, kwargs, ("_stacklevel",))
    r = None if dim is None else _softmax_fast(input, dim, False)
    return _full("softmax", (input,), args, kwargs) if r is None else r


def function_log_softmax(input, *args, **kwargs):
    """``minitorch_nn.log_softmax(input, dim)``: the fast path, else the full path."""
    dim = _dim_only(args, kwargs, ("_stacklevel",))
    r = None if dim is None else _softmax_fast(input, dim, True)
    return _full("log_softmax", (input,), args, kwargs) if r is None else r


def tensor_softmax(self, *args, **kwargs):
    """``self.softmax(dim)``: the fast path, else the full path."""
    dim = _dim_only(args, kwargs, ())
    r = None if dim is None else _softmax_fast(self, dim, False)
    return _full("Tensor.softmax", (self,), args, kwargs) if r is None else r


def tensor_log_softmax(self, *args, **kwargs):
    """``self.log_softmax(dim)``: the fast path, else the full path."""
    dim = _dim_only(args, kwargs, ())
    r = None if dim is None else _softmax_fast(self, dim, True)
    return _full("Tensor.log_softmax", (self,), args, kwargs) if r is None else r


def functional_softmax(input, *args, **kwargs):
    """``nn.functional.softmax(input, dim)`` (``_stacklevel`` as given, ``dtype`` None): the fast
    path, else F.softmax's full path (which also warns when ``dim`` is left out)."""
    dim = _dim_only(args, kwargs, ("_stacklevel",)) if PyTuple_GET_SIZE(args) <= 1 else None
    r = None if dim is None else _softmax_fast(input, dim, False)
    return _full("functional.softmax", (input,), args, kwargs) if r is None else r


def functional_log_softmax(input, *args, **kwargs):
    """``nn.functional.log_softmax(input, dim)``: as ``functional_softmax``."""
    dim = _dim_only(args, kwargs, ("_stacklevel",)) if PyTuple_GET_SIZE(args) <= 1 else None
    r = None if dim is None else _softmax_fast(input, dim, True)
    return _full("functional.log_softmax", (input,), args, kwargs) if r is None else r


# -- var and std ---------------------------------------------------------------------------------------

cdef object _op_var = None         # aten.var.correction
cdef object _op_std = None         # aten.std.correction
cdef object _var_steps = None      # reduction._var_steps, the kernel's own arithmetic
cdef dict _CORRECTION_1 = {"correction": 1}


cdef object _var_std_fast(object input, object dim, bint keepdim, bint take_sqrt):
    """``reductions.var``/``std`` without ``unbiased``/``correction``: ``aten.var.correction(input)``
    for ``dim`` None, else ``aten.var.correction(input, dims, correction=1[, keepdim=True])``
    (PyTorch's ``(dim, unbiased=True)`` signature); computed as ``reduction._var`` does it for a
    float tensor whose count exceeds the correction (``_var_steps`` with warnings off, then
    ``np.sqrt`` for std), recorded with those arguments; None to decline."""
    global _op_var, _op_std, _var_steps
    cdef TensorImpl a = _elementwise_input(input, False)
    if a is None or _fp_var is None:
        return None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(a.sizes), i, d, count = 1
    cdef list dims = None, axes = []
    if dim is None:
        if keepdim:
            return None
        for i in range(n):
            count *= <Py_ssize_t>a.sizes[i]
    else:
        if n == 0:
            return None
        if type(dim) is int:
            dims = [dim]
        elif type(dim) is list or type(dim) is tuple:
            dims = list(dim)
            if not dims:
                return None
        else:
            return None
        for v in dims:
            d = _dim_index(v, n)
            if d < 0 or d in axes:
                return None
            axes.append(d)
            count *= <Py_ssize_t>a.sizes[d]
    ddof = 1
    if count - 1 <= 0 or not _may_run():
        return None   # (no degrees of freedom: the kernel's warning)
    if _var_steps is None:
        import sys
        reduction = sys.modules.get("minitorch_nn.backends.cpu.reduction")
        if reduction is None or not hasattr(reduction, "_var_steps"):
            return None
        from minitorch_nn._ops import aten
        _op_var, _op_std, _var_steps = aten.var.correction, aten.std.correction, reduction._var_steps
    op = _op_std if take_sqrt else _op_var
    cdef int record = _record_mode(op, a, None)
    cdef _Recipe recipe = None
    if record > 0:
        recipe = _recipe_for(op)
        if recipe is None:
            return None
    elif record < 0:
        return None
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        r = _var_steps(a.numpy_view(), None if dims is None else tuple(axes), count, ddof, keepdim)
    except Exception:
        return None
    finally:
        PyContextVar_Reset(_fp_var, token)
    if take_sqrt:
        try:
            r = np.sqrt(r)
        except Exception:
            return None
    out = _fresh_tensor(r, a.dtype)
    if out is None or not record:
        return out
    if dims is None:
        args, kwargs = (input,), None
    else:
        args = (input, dims)
        kwargs = {"correction": 1, "keepdim": True} if keepdim else _CORRECTION_1
    r = _record(op, recipe, args, kwargs, out, False)
    return out if r is NotImplemented else r


cdef object _var_std_args(object input, tuple args, dict kwargs, bint take_sqrt):
    """The forms ``()``, ``(dim)``, ``(dim=...)``, each with ``keepdim=`` as a keyword."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    if nargs > 1:
        return None
    dim = args[0] if nargs else None
    keepdim = False
    if kwargs:
        for key, value in kwargs.items():
            if key == "dim" and nargs == 0:
                dim = value
            elif key == "keepdim":
                keepdim = value
            else:
                return None
        if type(keepdim) is not bool:
            return None
    if dim is not None and type(dim) is not int and type(dim) is not list and type(dim) is not tuple:
        return None   # (a bool is unbiased=, among others: the full path parses it)
    return _var_std_fast(input, dim, keepdim, take_sqrt)


def tensor_var(self, *args, **kwargs):
    """``self.var([dim][, keepdim=])``: the fast path, else the full path."""
    r = _var_std_args(self, args, kwargs, False)
    return _full("Tensor.var", (self,), args, kwargs) if r is None else r


def tensor_std(self, *args, **kwargs):
    """``self.std([dim][, keepdim=])``: the fast path, else the full path."""
    r = _var_std_args(self, args, kwargs, True)
    return _full("Tensor.std", (self,), args, kwargs) if r is None else r


def function_var(input, *args, **kwargs):
    """``minitorch_nn.var(input[, dim][, keepdim=])``: the fast path, else the full path."""
    r = _var_std_args(input, args, kwargs, False)
    return _full("var", (input,), args, kwargs) if r is None else r


def function_std(input, *args, **kwargs):
    """``minitorch_nn.std(input[, dim][, keepdim=])``: the fast path, else the full path."""
    r = _var_std_args(input, args, kwargs, True)
    return _full("std", (input,), args, kwargs) if r is None else r


# Tensor's methods, the public functions and the nn.functional functions from this file
# (``_tensor_methods.py`` and ``nn/functional.py`` install them)
METHODS = {"sum": tensor_sum_dims, "cumsum": tensor_cumsum, "softmax": tensor_softmax,
           "log_softmax": tensor_log_softmax, "var": tensor_var, "std": tensor_std}
FUNCTIONS = {"cumsum": function_cumsum, "softmax": function_softmax, "log_softmax": function_log_softmax,
             "var": function_var, "std": function_std}
FUNCTIONAL = {"softmax": functional_softmax, "log_softmax": functional_log_softmax}
