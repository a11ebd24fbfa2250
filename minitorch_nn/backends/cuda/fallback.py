"""Ops without a CUDA kernel yet run on the host: copy in, run the cpu kernel, copy back.

PyTorch has no such path (every op it lists for CUDA has a CUDA kernel). We use it so that every op
of the registry works on a cuda tensor, with the same results and errors as on cpu, while the ops
themselves are real CUDA kernels in the files next to this one. ``host_ops()`` lists the ops that
have no cuda kernel at all and always take this path (``tests/cuda/test_cuda_host_ops.py`` pins
the list, so that it only changes on purpose):

* **linear algebra** -- ``linalg_det``, ``linalg_inv``, ``linalg_solve``, ``linalg_qr``,
  ``linalg_svd``, ``linalg_svdvals``, ``linalg_eigh``, ``linalg_matrix_exp``: pivoting, Householder
  reflections and eigen-iterations are numerically delicate, and the matrices of this project are
  small, so numpy's LAPACK on the host is both more accurate and not slower than a naive kernel;
* **an explicit** ``generator=`` -- ``rand``, ``randn``, ``randint``, ``randperm`` with a
  ``Generator`` object: it is a cpu generator, and its stream is kept (``random.py`` serves the
  calls without one from the cuda Philox generator);
* **complex-number ops** -- ``_conj``, ``_conj_physical``, ``angle``, ``sgn``, ``complex``,
  ``polar``: complex tensors themselves have no cuda storage here (making one raises a clear
  error), so on cuda these ops only ever see real tensors, for which the cpu kernel's answer or
  error is the one to give.

Kernels also call this path themselves for rare argument combinations whose rules and errors
are intricate (an integer convolution, an out-of-range index, a bad probability...), so that the
cpu backend raises its error or gives its answer; ``HOST_CALLS`` counts every use, and the tests
check with it that the common cases really run on the GPU.

How it works, for ``op(*args)``:

1. every cuda tensor among the arguments is copied to a cpu tensor (``storage.to_host``);
2. the op's cpu kernel runs on them (so type promotion, checks and messages are the cpu ones);
3. tensors it returns are copied to the GPU; an argument the op writes to (``Tensor(a!)`` in its
   schema) is written back into the original cuda tensor's memory.

Random ops that take this path draw from the cpu generator; ``random.py`` has the cuda ones.
"""

from __future__ import annotations

import collections

from minitorch_nn._C import TensorBase
from minitorch_nn._ops import all_ops
from minitorch_nn._tensor import _from_array
from minitorch_nn.backends.cuda import storage

_HOST_OPS: list = []
# how many times each op took the host path (kernels also call it for rare cases): tests read it
# to check that a case really ran on the GPU
HOST_CALLS: collections.Counter = collections.Counter()
# ops that change a tensor's metadata or storage pointer: a host copy cannot stand in for them
_NEVER = {"resize_.default", "set_.source_Tensor", "as_strided_.default"}


def _to_cpu(x, originals):
    if isinstance(x, TensorBase):
        if x._impl.device.type != "cuda":
            return x
        c = _from_array(storage.to_host(x), x._impl.dtype)
        originals[id(c)] = x
        return c
    if isinstance(x, (list, tuple)):
        return type(x)(_to_cpu(y, originals) for y in x)
    return x


def _to_cuda(x, originals):
    if isinstance(x, TensorBase):
        if id(x) in originals:
            return originals[id(x)]  # an in-place op returned its (written back) argument
        if x._impl.device.type == "cpu":
            return storage.from_host(x._impl.numpy_view(), x._impl.dtype)
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(_to_cuda(y, originals) for y in x)
    return x


def host_kernel(op):
    """A cuda kernel for ``op`` that runs its cpu kernel on host copies of the arguments."""
    cpu_kernel = op.kernel_for("cpu")
    write_names = set(op.mutated_args)
    arg_names = [a.name for a in op._schema.arguments]

    def kernel(*args, **kwargs):
        from minitorch_nn.backends.cuda.copy import copy_into

        HOST_CALLS[op.__name__] += 1
        originals: dict = {}
        cargs = [_to_cpu(a, originals) for a in args]
        ckwargs = {k: _to_cpu(v, originals) for k, v in kwargs.items()}
        if ckwargs.get("device") is not None:
            ckwargs["device"] = None  # a factory: make it on cpu, then move it
        out = cpu_kernel(*cargs, **ckwargs)
        if write_names:
            for name, orig, host in zip(arg_names, args, cargs):
                if name in write_names and isinstance(orig, TensorBase) and orig is not host:
                    copy_into(orig, storage.from_host(host._impl.numpy_view(), host._impl.dtype))
                    orig._impl.version.value += 1
            for name in write_names & kwargs.keys():
                orig, host = kwargs[name], ckwargs[name]
                if isinstance(orig, TensorBase) and orig is not host:
                    copy_into(orig, storage.from_host(host._impl.numpy_view(), host._impl.dtype))
                    orig._impl.version.value += 1
        return _to_cuda(out, originals)

    kernel.__name__ = f"host_{op.__name__}"
    return kernel


def install():
    """Give every op that has a cpu kernel but no cuda (or "any") kernel the host path."""
    for op in all_ops():
        ks = op._kernels
        if "cpu" in ks and "cuda" not in ks and "any" not in ks and op.__name__ not in _NEVER:
            op.impl("cuda")(host_kernel(op))
            _HOST_OPS.append(op)


def host_ops():
    """The ops that run through the host on cuda (no CUDA kernel yet)."""
    return list(_HOST_OPS)
