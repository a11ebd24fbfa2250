# cython: boundscheck=False, wraparound=False
"""The compiled twin of ``AccumulateGrad.apply`` in ``minitorch_nn/autograd/graph.py``.

Read ``AccumulateGrad.apply`` first (and ``_obeys_layout_contract``,
``_non_overlapping_and_dense``, ``_dense_in_order`` beside it): a leaf's gradient arrives, and
either becomes ``.grad`` (PyTorch "steals" a gradient nobody else holds, when its strides obey the
leaf's layout) or is added into the ``.grad`` already there. This file makes the same decisions
with the same tests, in C, and calls the same methods (``detach``, ``add_``) to act on them; it
computes nothing itself, so every op still goes through the dispatcher (and the compiled twins of
its kernels) as in the readable method.

Why compiled: every parameter of a model has one ``AccumulateGrad`` node, run once per backward
pass; its bookkeeping in Python (the ``with`` block, the reference count, the layout test with a
``sorted`` and a generator) cost about 4 us per parameter, which on a small MLP was 5% of a step.

When it runs: ``AccumulateGrad.apply`` hands over on its first lines while the switch
``minitorch_nn.backends.compiled`` is on. :func:`accumulate_grad_apply` declines
(``NotImplemented``: the readable lines run on) unless

* the readable functions it mirrors passed their fingerprint check at import and the module
  still holds them (``_obeys_layout_contract``, ``_non_overlapping_and_dense``,
  ``_dense_in_order``, ``_below_torch_function``: identity checks at each call);
* the leaf has no post-accumulate-grad hooks (``detach`` and ``add_`` run below
  ``__torch_function__``, through ``_below_torch_function()``, as in the readable method);
* the case is one of the two common ones: no ``.grad`` yet and the gradient may be stolen (grad
  mode off, nobody else holds it, its layout obeys the leaf's), or a ``.grad`` to add into with
  grad mode off. Everything else (a copy that obeys the contract, ``create_graph``) is left to the
  readable method.

How a reference count compares: the readable method steals when ``sys.getrefcount(new_grad)``
is at most 3 (the tuple the engine passes, its local name, getrefcount's argument); here the same
references are the tuple and this function's local name, so the bound is 2.

``tests/twins/test_graph_twin.py`` runs the same backward passes both ways and compares each
``.grad`` (values, strides, whether it shares the gradient's memory).
"""

cdef extern from "Python.h":
    Py_ssize_t Py_REFCNT(object o)

cdef bint _on = False            # the switch (backends.compiled), kept here by set_enabled
cdef bint _ok = False            # the originals passed their fingerprint check (setup)
cdef dict _graph_globals = None  # graph.py's namespace
cdef dict _gm_globals = None     # autograd.grad_mode.__dict__: _enabled
cdef object _tf_state = None     # _C_torch_function.state: .quiet
cdef tuple _helpers = ()         # (name, the function graph.py held at setup)

_HELPER_NAMES = ("_obeys_layout_contract", "_non_overlapping_and_dense", "_dense_in_order",
                 "_below_torch_function")


def setup(*, graph_module, grad_mode_module, tf_state, originals_ok):
    """Take graph.py's namespace and state (graph.py calls this once, at import)."""
    global _ok, _graph_globals, _gm_globals, _tf_state, _helpers
    _graph_globals, _gm_globals, _tf_state = vars(graph_module), vars(grad_mode_module), tf_state
    _helpers = tuple((name, _graph_globals[name]) for name in _HELPER_NAMES)
    _ok = bool(originals_ok)


def set_enabled(bint on):
    """The switch's listener (``backends.compiled.on_change``): a C copy of ``enabled``."""
    global _on
    _on = on


cdef bint _helpers_unchanged():
    cdef tuple pair
    for pair in _helpers:
        if _graph_globals.get(pair[0]) is not pair[1]:
            return False
    return True


cdef bint _dense_in_order(tuple sizes, tuple strides, list dims) except -1:
    """``graph._dense_in_order``: walking ``dims`` from the fastest, each dim of size > 1 steps
    over all the ones before."""
    cdef Py_ssize_t expected = 1, d, size
    if 0 in sizes:
        return True
    for d in dims:
        size = sizes[d]
        if size != 1:
            if strides[d] != expected:
                return False
            expected *= size
    return True


cdef bint _non_overlapping_and_dense(tuple sizes, tuple strides) except -1:
    """``graph._non_overlapping_and_dense``: the dims sorted by stride (a stable sort, as
    ``sorted``), then :func:`_dense_in_order`."""
    return _dense_in_order(sizes, strides, sorted(range(len(sizes)), key=strides.__getitem__))


cdef bint _obeys_layout_contract(object grad, object var) except -1:
    """``graph._obeys_layout_contract`` of two payloads."""
    cdef tuple sizes = var.sizes, strides = var.strides, grad_strides = grad.strides
    cdef Py_ssize_t i
    if grad.sizes != sizes:
        return False
    if _non_overlapping_and_dense(sizes, strides):
        for i in range(len(sizes)):
            if sizes[i] == 1:
                if grad_strides[i] == 0:
                    return False
            elif grad_strides[i] != strides[i]:
                return False
        return True
    return _dense_in_order(grad.sizes, grad_strides, list(range(len(sizes) - 1, -1, -1)))


def accumulate_grad_apply(node, tuple grad_outputs):
    """``AccumulateGrad.apply(node, grad_outputs)`` in the common cases (see the module
    docstring), or NotImplemented."""
    if not _on or not _ok or len(grad_outputs) != 1 or not _helpers_unchanged():
        return NotImplemented
    new_grad = grad_outputs[0]
    impl = node._impl
    if new_grad is None or impl is None:
        return ()
    meta = impl.autograd_meta
    if meta and meta.get("post_accumulate_grad_hooks"):
        return NotImplemented
    if _gm_globals["_enabled"]:
        return NotImplemented   # create_graph: the readable method records the sum
    old = impl.grad
    if old is None:
        # (Py_REFCNT: the tuple and new_grad here; the readable bound of 3 counts getrefcount's argument too)
        if not (Py_REFCNT(new_grad) <= 2 and new_grad._use_count() == 1
                and _obeys_layout_contract(new_grad._impl, impl)):
            return NotImplemented   # a copy that obeys the contract: the readable method makes it
    if _tf_state.quiet:
        _accumulate(impl, old, new_grad)
    else:   # as the readable method: the bookkeeping runs below __torch_function__
        with _graph_globals["_below_torch_function"]():
            _accumulate(impl, old, new_grad)
    return ()


cdef int _accumulate(object impl, object old, object new_grad) except -1:
    """Steal ``new_grad`` (no ``.grad`` yet), or add it into ``old``."""
    if old is None:
        impl.grad = new_grad.detach()
    else:
        old.add_(new_grad)
    return 0
