"""Compile the cuda kernels for a real GPU (to PTX) on a machine without one.

The simulator runs kernels as Python, so it cannot tell whether numba can *type* them for the GPU
(an atomic add on a bool array, a device function calling a plain Python helper...). This script
asks numba to compile each kernel for compute capability 8.0 with the argument types the
launchers pass, and reports the ones that fail. It needs NVVM and NVRTC, for instance::

    pip install --target /tmp/nvlibs nvidia-cuda-nvcc-cu12 nvidia-cuda-nvrtc-cu12
    LD_LIBRARY_PATH=/tmp/nvlibs/nvidia/cuda_nvrtc/lib:/tmp/nvlibs/nvidia/cuda_nvcc/nvvm/lib64 \\
        python tests/cuda/ptx_compile_check.py

It is not a pytest file (it needs those libraries, and takes minutes). No GPU or driver is used:
the backend is loaded as for a GPU, and numba is told the device's compute capability.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def _load_backend():
    import numba.cuda.dispatcher as dispatcher
    from numba import cuda

    from minitorch_nn.backends.cuda import _numba

    class _Device:  # nested device functions ask the current device for its compute capability
        compute_capability = (8, 0)

    dispatcher.get_current_device = lambda: _Device()
    _numba._state = (cuda, False, "")  # as if a GPU were there; nothing is launched
    import minitorch_nn.backends.cuda  # noqa: F401  (registers every kernel)

    return cuda


def main() -> int:
    cuda = _load_backend()
    from numba import boolean as b1
    from numba import float32 as f4
    from numba import float64 as f8
    from numba import int8 as i1
    from numba import int32 as i4
    from numba import int64 as i8
    from numba import uint8 as u1
    from numba import uint16 as u2
    from numba import uint64 as u8
    from numba.core.types import float16 as f2

    from minitorch_nn.backends.cuda import (
        activations,
        arg_reduction,
        conv,
        indexing,
        masked,
        multinomial,
        norms,
        pooling,
        random,
        scan,
        scatter,
        shape_ops,
        softmax,
        sort,
        statistics,
        storage_ops,
    )
    from minitorch_nn.backends.cuda import binary_math as bm
    from minitorch_nn.backends.cuda import elementwise as ew
    from minitorch_nn.backends.cuda import math_ops as mo

    def A(t):  # a flat device array
        return t[::1]

    I = A(i8)  # noqa: E741 (shape/stride arrays)
    failures = []
    count = [0]

    def check(name, kernel, sig):
        count[0] += 1
        try:
            cuda.compile_ptx(getattr(kernel, "py_func", kernel), sig, cc=(8, 0))
        except Exception as e:  # report every failure, not only the first
            failures.append(f"{name} {sig}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")

    for T, npd in ((f4, np.float32), (f8, np.float64)):
        check("im2col", conv._im2col, (A(T), A(T), i8, I, I, I, I, I, I, i8, i8, i8, i8))
        check("col2im", conv._col2im, (A(T), A(T), I, I, I, I, I, I, i8, i8, i8, i8, T))
        check("max_pool", pooling._max_pool, (A(T), I, A(T)) + (i8,) * 13 + (T,))
        check("max_pool_backward", pooling._max_pool_backward, (A(T), A(T), I, i8, i8, i8))
        check("avg_pool", pooling._avg_pool, (A(T), A(T)) + (i8,) * 10 + (b1, i8, i8, T))
        check("avg_pool_backward", pooling._avg_pool_backward, (A(T), A(T)) + (i8,) * 10 + (b1, i8, i8, T))
        moments, grad_sums = norms.make_group_kernels(npd)
        check("moments", moments, (A(T), A(T), A(T), A(T), i8, i8, i8, f8, T))
        check("grad_sums", grad_sums, (A(T),) * 6 + (i8, i8, i8, T))
        check("normalize", norms._normalize, (A(T),) * 4 + (i8, i8, i8))
        check("grad_input", norms._grad_input, (A(T),) * 8 + (i8, i8, i8, i8))
        check("embedding_backward", scatter._embedding_backward, (A(T), A(T), I, i8, A(T), i8, i8, i8, i8, b1, A(i4)))
        check("sort_rows", sort._sort_rows, (A(T), I, A(T), I, i8, b1))
        check("arg_reduce", arg_reduction.make_arg_reduce(npd), (A(T), I, A(T), i8, b1))
        check("scan_rows", scan._scan_rows, (A(T), A(T), i8, i8, b1))
        check("search", multinomial._search, (I, A(T), i8, i8, i8, u8, u8))
        check("fill", random._fill, (A(T), i8, u8, u8, i8, f8, f8))
        check("nll_pick", softmax._nll_pick, (A(T), A(T), A(T), i8, i8, i8, I, i8, i8, i8, i8, A(T), i8, i8, b1))
    for T in (f4, f8, i4, i8):  # the dtypes with atomic adds
        check("scatter_add", scatter._scatter_add, (A(T), I, A(T), I, i8, I, I, I, i8, i8, i8, i8, A(i4)))
        check("index_add", scatter._index_add_kernel, (A(T), I, A(T), I, I, i8, I, i8, i8, i8, i8, T, i8, A(i4)))
        check("advanced_add", indexing._advanced_add, (I, i8, A(T), I, I, i8, I, i8, i8, i8, i8, A(T), I, i8, A(i4)))
    for T in (f4, f8, i8, b1, u1, f2, u2):  # every storage dtype (bfloat16 is stored as uint16)
        check("scatter", scatter._scatter, (A(T), I, A(T), I, i8, I, I, I, i8, i8, i8, i8, A(i4)))
        check("advanced_get", indexing._advanced_get, (A(T), I, i8, A(T), I, I, i8, I, i8, i8, i8, i8, A(i4)))
        check("advanced_put", indexing._advanced_put, (I, i8, A(T), I, I, i8, I, i8, i8, i8, i8, A(T), I, i8, A(i4)))
        check("remap", shape_ops._remap, (A(T), I, i8, A(T), I, I, i8, I, I))
        check("pad", shape_ops._pad, (A(T), I, i8, A(T), I, I, i8, I, A(T)))
        check("triangle", shape_ops._triangle, (A(T), I, i8, A(T), I, i8, i8, b1, T))
        check("diag_embed", shape_ops._diag_embed, (A(T), I, i8, A(T), I, i8, i8, T))
        check("write_values", masked._write_values, (A(T), A(T), A(b1), I, i8, i8))
        check("grow", storage_ops._grow, (A(T), A(T), i8, i8, T))
    check("count", masked._count, (I, A(b1), i8, i8))
    check("write_indices", masked._write_indices, (I, I, A(b1), I, i8, i8))
    # device functions, through the elementwise kernels that run them
    unary = [mo.f_frac, mo.f_round, mo.f_erfinv, mo._baked(mo.make_round_decimals, 100.0),
             activations._baked(activations.make_elu, 1.0, 1.0, 1.0), activations._baked(activations.make_gelu, True),
             activations._baked(activations.make_softplus, 1.0, 20.0), statistics.f_finite_or_zero]
    binary = [mo.f_true_div, mo.f_fmod, mo.f_remainder, mo.f_trunc_div, mo.f_floor_div, statistics.f_shifted_exp]
    integer = [mo.f_int_fmod, mo.f_int_remainder, mo.f_int_trunc_div, mo.f_int_floor_div, mo.f_bitwise_xor]
    for T in (f4, f8):
        for f in unary:
            check(f.__name__, ew.make_map(f)[1], (A(T), i8, A(T), i8))
        for f in binary:
            check(f.__name__, ew.make_zip(f)[1], (A(T), i8, A(T), i8, A(T), i8))
    for f in integer:
        check(f.__name__, ew.make_zip(f)[1], (A(i8), i8, A(i8), i8, A(i8), i8))
    # binary_math.py: float ops, fmax/fmin on every kind, the shifts per width (int64, int8, uint8)
    for T in (f4, f8):
        for f in (bm.f_xlogy, bm.f_hypot, bm.f_copysign, bm.f_fmax, bm.f_fmin, bm.f_logaddexp, bm.f_logaddexp2,
                  bm.f_ldexp, bm.f_heaviside):
            check(f.__name__, ew.make_zip(f)[1], (A(T), i8, A(T), i8, A(T), i8))
    for T in (i8, b1):
        check("fmax", ew.make_zip(bm.f_fmax)[1], (A(T), i8, A(T), i8, A(T), i8))
        check("heaviside", ew.make_zip(bm.f_heaviside)[1], (A(T), i8, A(T), i8, A(T), i8))
    for T in (i8, i1, u1):
        for f in (bm.f_gcd, bm.f_lcm):
            check(f.__name__, ew.make_zip(f)[1], (A(T), i8, A(T), i8, A(T), i8))
    for T, bits, signed in ((i8, 64, True), (i1, 8, True), (u1, 8, False)):
        for f in (bm._baked(bm.make_left_shift, bits), bm._baked(bm.make_right_shift, bits, signed)):
            check(f"shift{bits}", ew.make_zip(f)[1], (A(T), i8, A(T), i8, A(T), i8))
    # the strided kernels, which write through the output's strides (``backends/layout.py``'s order)
    for T in (f4, f8):
        check("strided_map", ew.make_map(ew.f_exp)[0], (A(T), I, I, i8, A(T), I, I, i8))
        check("strided_zip", ew.make_zip(ew.f_add)[0], (A(T), I, I, i8) + (A(T), I, I, i8) * 2)
        check("strided_zip3", ew.make_zip3(ew.f_lerp), (A(T), I, I, i8) + (A(T), I, I, i8) * 3)
    check("strided_compare", ew.make_zip(ew.f_gt)[0], (A(b1), I, I, i8) + (A(f4), I, I, i8) * 2)
    for line in failures:
        print("FAILED", line)
    print(f"{count[0] - len(failures)} of {count[0]} kernel signatures compile for compute capability 8.0")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
