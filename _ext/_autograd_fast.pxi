# The compiled recorder (issue 3: per-op overhead with requires_grad=True). Included into _C.pyx.
#
# ``record_computed(op, args, out)`` records ``op(*args)`` whose result ``out`` a compiled fast
# path has already computed below autograd: steps 1, 2 and 4 of the readable recorder
# ``autograd/recording.py:_record_simple`` (edges, node, saved tensors; wiring the output). The
# graph it builds must be exactly the full path's; ``tests/test_fast_record.py`` compares them.
#
# Callers (the fast paths in _fastpath.pxi and _fastpath_ops.pxi) call it only when grad mode is
# on, an input requires grad and nothing intercepts (``_nothing_intercepts()``), and only for ops
# whose ``op.derivative.simple`` is true.

cdef object _py_record_computed = None   # recording._record_computed, looked up on first use


cdef object record_computed(object op, tuple args, object out):
    """Record ``op(*args)`` -> ``out`` (see above); returns ``out``, or NotImplemented when no
    differentiable input requires grad (the caller then returns ``out`` as it is)."""
    global _py_record_computed
    if _py_record_computed is None:
        from minitorch_nn.autograd.recording import _record_computed
        _py_record_computed = _record_computed
    return _py_record_computed(op, args, out)


def _record_computed(op, args, out):
    """``record_computed`` callable from Python (tests compare its graphs with the full path's)."""
    return record_computed(op, tuple(args), out)
