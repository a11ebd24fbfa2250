"""The cuda backend: numba CUDA kernels, on a real GPU or numba's CUDA simulator.

Importing this package imports numba, so nothing imports it until the first CUDA use:
``minitorch_nn.cuda._lazy_backend()`` does, and registers the kernels then. One file per kernel
family, each readable on its own:

* ``_numba.py``: GPU or simulator (``MINITORCH_NN_CUDA=sim``), and the error when neither;
* ``storage.py``: device arrays as tensor storage; host <-> device copies;
* ``elementwise.py`` (+ ``pointwise_ops.py``, the registrations): strided map/zip with broadcasting;
* ``activations.py`` / ``math_ops.py``: activations and clamp; division modes, remainders, powers,
  bit ops, rounding, ``erfinv``, ``nan_to_num`` (more elementwise device functions);
* ``binary_math.py``: ``xlogy``, ``hypot``, ``copysign``, ``fmax``/``fmin`` and the bit shifts;
* ``reduction.py``: shared-memory tree reductions over any dims;
* ``arg_reduction.py`` / ``statistics.py``: argmax/max.dim (value-index trees); prod, var/std,
  logsumexp, vector norms, all/any on top of ``reduction.py``;
* ``einsum.py``: einsum as sums, permutes and ``bmm`` pair by pair;
* ``matmul.py``: tiled shared-memory ``mm``/``bmm``/``addmm`` (and ``dot``/``mv``/``outer``/``baddbmm``);
* ``conv.py``: convolutions (1-3 spatial dims, transposed, backward) as im2col/col2im + matmul;
* ``pooling.py``: max/avg 2-d pooling and their backwards (atomics / gathers);
* ``norms.py``: batch/layer/group norm, forward and backward (one block per normalized group);
* ``losses.py``: l1 and binary cross-entropy losses (elementwise + reduction);
* ``smooth_losses.py``: the smooth L1 and Huber losses and their backward ops;
* ``upsample.py``: nearest-neighbour upsampling of 4-d inputs and its backward;
* ``indexing.py`` / ``scatter.py`` / ``masked.py``: gathers and advanced indexing, scatters and
  index_add (atomic adds), masked_fill and the count-then-write nonzero/masked_select;
* ``scan.py`` / ``sort.py``: cumsum/cumprod (a thread per row), stable merge sort and topk (a block per row);
* ``softmax.py``: ``softmax``/``log_softmax``, one block per row;
* ``copy.py``: strided copies, dtype casts (bfloat16 words), ``_to_copy``/``copy_``/``clone``;
* ``factories.py``: arange/linspace/eye/full computed where they are stored;
* ``shape_ops.py``: flip/roll/repeat, padding, tril/triu, diag_embed as one-thread-per-output gathers;
* ``storage_ops.py``: ``resize_`` (grows the device storage) and ``set_``;
* ``multinomial.py``: exponential race (``topk``) and inverse-CDF sampling;
* ``random.py``: Philox counter-based random fills;
* ``fallback.py``: the host path: an op runs its cpu kernel on host copies. Only linear algebra and
  calls with an explicit cpu ``generator=`` always take it (``host_ops()`` lists them); kernels use
  it for rare argument combinations, so that errors are the cpu backend's.

View ops need no kernel: ``backends/views.py`` only changes sizes/strides/offset.
"""

from minitorch_nn.backends.cuda import _numba

if _numba.available():  # without a GPU or the simulator there is nothing to register
    from minitorch_nn.backends.cuda import (  # noqa: F401
        activations,
        arg_reduction,
        binary_math,
        conv,
        copy,
        einsum,
        factories,
        indexing,
        losses,
        masked,
        math_ops,
        matmul,
        multinomial,
        norms,
        pointwise_ops,
        pooling,
        random,
        reduction,
        smooth_losses,
        scan,
        scatter,
        shape_ops,
        softmax,
        sort,
        statistics,
        storage_ops,
        upsample,
    )
    from minitorch_nn.backends.cuda import fallback as _fallback
    from minitorch_nn.backends.cuda.copy import to_device  # noqa: F401
    from minitorch_nn.backends.cuda.fallback import host_ops  # noqa: F401
    from minitorch_nn.backends.cuda.storage import memory_allocated  # noqa: F401

    _fallback.install()  # after the real kernels: only ops still without a cuda kernel get the host path

    from minitorch_nn import _dispatch as _d

    _d.cuda_loaded = True  # from now on, ops check that their tensors share a device
