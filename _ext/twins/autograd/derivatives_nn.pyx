# cython: boundscheck=False, wraparound=False
"""The compiled twin of ``nll_loss``'s backward formula in ``minitorch_nn/autograd/derivatives_nn.py``.

Read ``_nll_loss_grad`` there, and the cpu kernel it calls (``nll_loss_backward`` in
``backends/cpu/nn_ops.py``, whose common case is ``_nll_loss_backward_common``): cross-entropy's
training case -- a 2-d float input, no class weights, ``"mean"`` or ``"sum"``, every target a
class and none ignored -- is the gradient ``-grad_output`` (divided by the total weight for
``"mean"``) scattered into zeros at each row's target. :func:`nll_loss_backward` computes that
case with the same numpy scalar arithmetic and the same compiled scatter
(``_twins.backends.cpu.nn_ops.nll_scatter``), without the dispatcher and the Python kernel around it; anything
else returns ``NotImplemented`` and the readable formula runs on.

When it may run: as every formula twin (``derivatives.pyx``'s ``may_run``): the switch is on, the
formula's guard holds (the registered ``nll_loss_backward`` kernel and its fingerprint, the formula's
fingerprint), grad mode is off and nothing observes the op. ``tests/twins/test_derivatives_twin.py``
compares it with the readable formula.
"""

from cpython.contextvars cimport PyContextVar_Reset, PyContextVar_Set

cdef object _Tensor = None
cdef object _f32 = None
cdef object _f64 = None
cdef object _cpu = None
cdef object _may_run = None       # derivatives twin's may_run(guard)
cdef object _fresh = None         # derivatives twin's fresh(arr, dtype)
cdef object _nll_scatter = None   # _twins.backends.cpu.nn_ops.nll_scatter
cdef object _fp_var = None
cdef object _fp_ignore = None


def setup(*, tensor_cls, float32, float64, cpu, derivatives_twin, nll_scatter):
    """Take the objects the formula needs (derivatives_nn.py calls this once, at import)."""
    global _Tensor, _f32, _f64, _cpu, _may_run, _fresh, _nll_scatter, _fp_var, _fp_ignore
    _Tensor, _f32, _f64, _cpu = tensor_cls, float32, float64, cpu
    _may_run, _fresh, _nll_scatter = derivatives_twin.may_run, derivatives_twin.fresh, nll_scatter
    try:
        from numpy._core.umath import _extobj_contextvar, _make_extobj
        _fp_var, _fp_ignore = _extobj_contextvar, _make_extobj(all="ignore")
    except ImportError:  # another numpy: the readable formula runs
        _fp_var = _fp_ignore = None


cdef object _impl_on_cpu(object t):
    if type(t) is not _Tensor:
        return None
    impl = t._impl
    return impl if impl.device is _cpu else None


def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight, guard):
    """``_nll_loss_grad``'s kernel call, for cross-entropy's training case; else NotImplemented."""
    if _nll_scatter is None or _fp_var is None or weight is not None or not _may_run(guard):
        return NotImplemented
    if type(reduction) is not int or (reduction != 1 and reduction != 2):   # MEAN, SUM
        return NotImplemented
    si = _impl_on_cpu(self)
    ti = _impl_on_cpu(target)
    gi = _impl_on_cpu(grad_output)
    wi = _impl_on_cpu(total_weight)
    if si is None or ti is None or gi is None or wi is None:
        return NotImplemented
    d = si.dtype
    if (d is not _f32 and d is not _f64) or len(si.sizes) != 2 or len(ti.sizes) != 1 or gi.sizes \
            or gi.dtype is not d or wi.sizes or wi.dtype is not d:
        return NotImplemented
    n, n_classes = si.sizes
    t = ti.numpy_view()
    if not n or len(t) != n:
        return NotImplemented
    scale = -gi.numpy_view()
    if reduction == 1:
        token = PyContextVar_Set(_fp_var, _fp_ignore)
        try:
            scale = scale / wi.numpy_view()
        finally:
            PyContextVar_Reset(_fp_var, token)
    g = _nll_scatter(t, n_classes, ignore_index, scale)
    if g is None or g.dtype != d.numpy_dtype:
        return NotImplemented
    return _fresh(g, d)
