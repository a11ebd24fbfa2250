# cython: boundscheck=False, wraparound=False
"""The backward engine's common-case loop, compiled: ``engine._run_all`` in Cython.

Mirrors ``_run_all`` in ``minitorch_nn/autograd/engine.py`` (itself ``run_backward`` without the
``inputs`` bookkeeping), step for step: the same nodes run in the same order, with the same
hooks, ``__torch_function__`` shield, buffers, ``_validate`` calls, errors and
``retain_graph`` release. Read the Python version first; this file only changes *how* the
steps are done:

* locals are C variables and the dict/tuple operations compile to C-API calls, instead of
  bytecode run by the interpreter;
* the ready queue is a C array of sequence numbers with the nodes beside it, sifted exactly as
  ``heapq`` sifts ``ReadyQueue``'s negated numbers (see :class:`_Heap`), so ties pop in
  ``std::priority_queue``'s order as before, without making an ``_Entry`` object per node;
* a node whose class has ``recording.OpNode``'s own ``apply``, ``_apply`` and
  ``release_variables`` (every recorded op's node) runs compiled copies of those three methods
  (:func:`_op_apply`, :func:`_op_release`), saving three Python calls per node; any other node,
  or a class that overrides one of them, has its methods called as before.

Where it differs: a node's ``_seq_nr`` must fit in an unsigned 64-bit integer (every node's
does: numbers count up from 0 and ``AccumulateGrad``'s is ``2**64 - 1``); another raises
``OverflowError``. The node fields are read by attribute access, as Python reads them.

``engine.py`` calls :func:`run_all` when this module is built and falls back to its own
``_run_all`` otherwise; :func:`setup` hands over the engine's helpers (called once by engine.py).
``tests/test_autograd_engine_fast.py`` runs every scenario through this loop, the Python twin
and the reference loop and compares what each observes.
"""

from libc.stdlib cimport malloc, realloc, free
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF

# The engine's helpers and state objects (see setup()).
cdef object _AccumulateGrad = None
cdef object _validate = None
cdef object _send = None
cdef object _call_tensor_hooks = None
cdef object _runs_no_user_code = None
cdef object _add_to_buffer = None
cdef object _DisableTorchFunction = None
cdef object _tf_state = None
cdef object _gm = None
cdef object _graph = None


# recording.OpNode's methods as defined there, and what they use (see _op_apply)
cdef object _op_apply_py = None
cdef object _op__apply_py = None
cdef object _op_release_py = None
cdef object _OutputGrads = None
cdef object _SavedTensor = None
cdef object _dispatch = None
cdef object _unpack_py = None    # graph.SavedTensor.unpack and .release, as defined there
cdef object _release_py = None
cdef object _TensorImpl = None   # _C.TensorImpl and _C._wrap (what graph._alias / unpack call)
cdef object _wrap = None


def setup(AccumulateGrad, validate, send, call_tensor_hooks, runs_no_user_code, add_to_buffer,
          DisableTorchFunction, tf_state, gm, graph, OpNode, OutputGrads, SavedTensor, dispatch):
    """Hand over what the loop calls (``engine.py`` does this once, at import)."""
    global _AccumulateGrad, _validate, _send, _call_tensor_hooks, _runs_no_user_code, _add_to_buffer
    global _DisableTorchFunction, _tf_state, _gm, _graph
    global _op_apply_py, _op__apply_py, _op_release_py, _OutputGrads, _SavedTensor, _dispatch
    global _unpack_py, _release_py, _TensorImpl, _wrap
    _AccumulateGrad, _validate, _send = AccumulateGrad, validate, send
    _call_tensor_hooks, _runs_no_user_code, _add_to_buffer = call_tensor_hooks, runs_no_user_code, add_to_buffer
    _DisableTorchFunction, _tf_state, _gm, _graph = DisableTorchFunction, tf_state, gm, graph
    _op_apply_py, _op__apply_py, _op_release_py = OpNode.apply, OpNode._apply, OpNode.release_variables
    _OutputGrads, _SavedTensor, _dispatch = OutputGrads, SavedTensor, dispatch
    _unpack_py, _release_py = SavedTensor.unpack, SavedTensor.release
    from minitorch_nn._C import TensorImpl, _wrap as wrap
    _TensorImpl, _wrap = TensorImpl, wrap


cdef inline bint _plain_op_node(object node):
    """True when ``node``'s ``apply``, ``_apply`` and ``release_variables`` are
    ``recording.OpNode``'s own (every recorded op's node, unless a class overrides one or a test
    patches it): then the loop runs the compiled copies below instead of calling them."""
    cls = type(node)
    return (getattr(cls, "apply", None) is _op_apply_py and getattr(cls, "_apply", None) is _op__apply_py
            and getattr(cls, "release_variables", None) is _op_release_py)


cdef object _op_apply(object node, tuple grad_outputs):
    """``OpNode.apply`` (``autograd/recording.py``), compiled: its formulas run with
    ``__torch_function__`` disabled."""
    if _tf_state.quiet:   # nothing could intercept the formulas' ops anyway
        return _op__apply(node, grad_outputs)
    with _DisableTorchFunction():
        return _op__apply(node, grad_outputs)


cdef object _op__apply(object node, tuple grad_outputs):
    """``OpNode._apply``, compiled: each input's formula, given the output's gradient and the
    saved values it names; None for inputs that need no gradient."""
    cdef object d = node._derivative
    cdef object grad, g, wanted, n_edges, edges, fn, params, name, is_list, p, v, result, r, need
    cdef object saved, needs   # (dicts, read as any mapping, as the Python method does)
    cdef list out, values
    cdef bint detached
    cdef Py_ssize_t k, i
    if len(grad_outputs) == 1 and not d.multi_output:
        grad = grad_outputs[0]   # the usual node: one output
        if grad is None:
            return (None,) * len(node.next_functions)
    else:
        for g in grad_outputs:
            if g is not None:
                break
        else:   # no gradient at all: nothing to compute
            return (None,) * len(node.next_functions)
        if d.multi_output:
            grad = _OutputGrads(grad_outputs, node._output_meta)
        else:
            grad = grad_outputs[0]
    out = []
    detached = not _gm._enabled and _dispatch.python_layer is None
    wanted = _graph.should_compute[0]
    saved = node._saved
    needs = node._needs
    cdef dict outputs = None
    if _dispatch.python_layer is not None:
        # as OpNode._apply: every saved output unpacked (aten.detach for a mode) before any formula
        outputs = {p: v.unpack(node, detached) for p, v in saved.items()
                   if type(v) is _SavedTensor and v.is_output}
    k = 0   # index of the first edge of the current input
    for name, fn, params, is_list in d.formulas:
        n_edges = needs[name]
        if wanted is not None:
            edges = node.next_functions
            n_edges = [need and edges[k + i][0] in wanted for i, need in enumerate(n_edges)]
        k += len(n_edges)
        if True not in n_edges:
            out.extend([None] * len(n_edges))
            continue
        values = []
        for p in params:
            if outputs and p in outputs:
                values.append(outputs[p])
                continue
            v = saved[p]
            values.append(_unpack(v, node, detached) if type(v) is _SavedTensor else node._value(p, detached))
        v = None
        result = fn(grad, *values)
        values = None
        if is_list:
            out.extend([r if need else None for r, need in zip(result, n_edges)])
        else:
            out.append(result)
        result = None
    return tuple(out)


cdef object _unpack(object v, object node, bint detached):
    """``v.unpack(node, detached)`` for a ``graph.SavedTensor`` ``v``. The case every formula
    meets without create_graph (detached, not freed, no unpack hook, not modified since saved)
    is done here as ``SavedTensor.unpack`` does it: a new payload aliasing the saved one
    (``graph._alias``) wrapped as a plain Tensor; everything else, errors included, calls the
    method."""
    if (not detached or v.released or v.unpack_hook is not None
            or getattr(_SavedTensor, "unpack", None) is not _unpack_py):
        return v.unpack(node, detached)
    impl = v.impl
    if impl.version.value != v.version:
        return v.unpack(node, detached)   # raises PyTorch's in-place modification error
    Tensor = _graph._Tensor or _graph._load_tensor_class()
    return _wrap(Tensor, _TensorImpl(impl.storage, impl.sizes, impl.strides, impl.offset, impl.dtype,
                                     impl.device, impl.version))


cdef int _release(object v) except -1:
    """``v.release()`` for a ``graph.SavedTensor`` (``SavedTensor.release`` written out while
    the class has that method)."""
    if getattr(type(v), "release", None) is not _release_py:
        v.release()
        return 0
    v.released = True
    v.impl = None
    v.packed = None
    return 0


cdef int _op_release(object node) except -1:
    """``OpNode.release_variables``, compiled: free every saved tensor."""
    for v in node._saved.values():
        if isinstance(v, _SavedTensor):
            _release(v)
        elif isinstance(v, list):
            for s in v:
                if isinstance(s, _SavedTensor):
                    s.release()
    return 0


cdef class _Heap:
    """The ready queue: a max-heap of nodes keyed by ``_seq_nr``, in ``ReadyQueue``'s order.

    ``ReadyQueue`` is a ``heapq`` min-heap of ``-seq_nr``. Here the keys are the numbers
    themselves and every ``a < b`` of heapq's reads ``key[a] > key[b]``; the sifts are heapq's
    (CPython's ``_heapqmodule.c``) move for move, so equal keys end up in the same places. It
    holds a reference to each node it holds. ``push`` is also what ``engine._send`` calls."""

    cdef unsigned long long* keys
    cdef PyObject** nodes
    cdef Py_ssize_t n, cap

    def __cinit__(self):
        self.n = 0
        self.cap = 16
        self.keys = <unsigned long long*>malloc(self.cap * sizeof(unsigned long long))
        self.nodes = <PyObject**>malloc(self.cap * sizeof(PyObject*))
        if self.keys is NULL or self.nodes is NULL:
            raise MemoryError()

    def __dealloc__(self):
        cdef Py_ssize_t i
        for i in range(self.n):
            Py_XDECREF(self.nodes[i])
        free(self.keys)
        free(self.nodes)

    def __len__(self):
        return self.n

    cpdef push(self, node):
        """heapq.heappush: append, then sift the new item up towards the root."""
        cdef unsigned long long key = node._seq_nr
        cdef Py_ssize_t pos, parent
        if self.n == self.cap:
            self._grow()
        pos = self.n
        self.n += 1
        Py_INCREF(node)
        while pos > 0:   # heapq's _siftdown(heap, 0, pos)
            parent = (pos - 1) >> 1
            if key > self.keys[parent]:
                self.keys[pos] = self.keys[parent]
                self.nodes[pos] = self.nodes[parent]
                pos = parent
                continue
            break
        self.keys[pos] = key
        self.nodes[pos] = <PyObject*>node

    cpdef object pop(self):
        """heapq.heappop: take the root, put the last item there and sift it (heapq's _siftup)."""
        cdef Py_ssize_t end, pos, child, limit, parent
        cdef unsigned long long key
        cdef PyObject* item
        cdef PyObject* top
        if self.n == 0:
            raise IndexError("pop from an empty ready queue")
        self.n -= 1
        end = self.n
        item = self.nodes[end]
        key = self.keys[end]
        if end == 0:
            top = item
        else:
            top = self.nodes[0]
            # bubble the larger child up until a leaf (on a tie, the right child)
            pos = 0
            limit = end // 2
            while pos < limit:
                child = 2 * pos + 1
                if child + 1 < end and not (self.keys[child] > self.keys[child + 1]):
                    child += 1
                self.keys[pos] = self.keys[child]
                self.nodes[pos] = self.nodes[child]
                pos = child
            # then sift the last item up from there (heapq's _siftdown(heap, 0, pos))
            while pos > 0:
                parent = (pos - 1) >> 1
                if key > self.keys[parent]:
                    self.keys[pos] = self.keys[parent]
                    self.nodes[pos] = self.nodes[parent]
                    pos = parent
                    continue
                break
            self.keys[pos] = key
            self.nodes[pos] = item
        result = <object>top
        Py_XDECREF(top)   # the heap's reference; ``result`` holds its own
        return result

    cdef int _grow(self) except -1:
        cdef Py_ssize_t cap = self.cap * 2
        cdef unsigned long long* keys = <unsigned long long*>realloc(self.keys, cap * sizeof(unsigned long long))
        if keys is NULL:
            raise MemoryError()
        self.keys = keys
        cdef PyObject** nodes = <PyObject**>realloc(self.nodes, cap * sizeof(PyObject*))
        if nodes is NULL:
            raise MemoryError()
        self.nodes = nodes
        self.cap = cap
        return 0


def run_all(root_edges, root_grads, retain_graph, create_graph, dict dependencies):
    """``engine._run_all`` compiled; ``dependencies`` is ``count_dependencies(topological_order(
    roots))``, computed by the caller (engine.py keeps those two calls its own)."""
    cdef dict buffers = {}
    cdef dict pending = {}
    cdef dict slot
    cdef dict buf
    cdef _Heap ready = _Heap()
    cdef object node, nr, g, child, meta, edges, metas, grad_inputs, grad_outputs, hook, new
    cdef object prev_mode, prev_filter, tf_state, shield, impl_meta, hooks_dict
    cdef bint shielded, lifted, is_leaf, plain, keep_graph = bool(retain_graph)
    cdef Py_ssize_t i, n_grads, n_metas, left, k, n_out

    for node, _ in root_edges:
        pending[node] = pending.get(node, 0) + 1
    for (node, nr), g in zip(root_edges, root_grads):
        _add_to_buffer(buffers, node, nr, g)
        pending[node] -= 1
        if pending[node] == 0 and not dependencies.get(node):
            ready.push(node)
    g = None

    prev_mode, prev_filter = _gm._enabled, _graph.should_compute[0]
    _gm._enabled = bool(create_graph)
    _graph.should_compute[0] = None   # every formula runs (a backward inside a hook may be nested)
    tf_state = _tf_state
    # The shield: __torch_function__ disabled once for the whole loop and lifted only around
    # nodes that run user code (see engine._run_all).
    shield = None if tf_state.quiet else _DisableTorchFunction()
    if shield is not None:
        shield.__enter__()
    shielded = shield is not None
    try:
        while ready.n:
            node = ready.pop()
            lifted = shielded and not _runs_no_user_code(node)
            if lifted:
                shield.__exit__(None, None, None)
                shielded = False
            try:
                buf = buffers.pop(node, None)
                if buf is None:   # no gradient reached this node (see run_backward)
                    _send(node, (), buffers, dependencies, ready)
                    continue
                is_leaf = type(node) is _AccumulateGrad
                if len(buf) == 1 and 0 in buf and (is_leaf or not getattr(node, "_output_meta", None)):
                    grad_outputs = (buf[0],)
                else:
                    n_out = max(max(buf) + 1, len(getattr(node, "_output_meta", ())) or 1)
                    grad_outputs = tuple([buf.get(k) for k in range(n_out)])
                buf = None
                # (a tuple from here on; the hooks below work on a list, made only when they exist)
                if node._tensor_pre_hooks or node._retains_grad:
                    grad_outputs = list(grad_outputs)
                    _call_tensor_hooks(node, grad_outputs)
                    grad_outputs = tuple(grad_outputs)
                elif is_leaf and node._impl is not None:
                    impl_meta = node._impl.autograd_meta
                    if impl_meta and impl_meta.get("hooks"):   # a leaf's register_hook
                        grad_outputs = list(grad_outputs)
                        _call_tensor_hooks(node, grad_outputs)
                        grad_outputs = tuple(grad_outputs)
                    impl_meta = None
                hooks_dict = node._pre_hooks
                if hooks_dict:
                    for hook in list(hooks_dict.values()):
                        new = hook(grad_outputs)
                        if new is not None:
                            grad_outputs = tuple(new)
                hooks_dict = None
                plain = _plain_op_node(node)
                grad_inputs = _op_apply(node, grad_outputs) if plain else node.apply(grad_outputs)
                hooks_dict = node._post_hooks
                if hooks_dict:
                    for hook in list(hooks_dict.values()):
                        new = hook(grad_inputs, grad_outputs)
                        if new is not None:
                            grad_inputs = tuple(new)
                hooks_dict = None
                grad_outputs = None
                if not keep_graph:
                    if plain:
                        _op_release(node)
                    else:
                        node.release_variables()
                edges = node.next_functions
                if not edges:
                    grad_inputs = None
                    continue   # a leaf: nothing to send
                if not tf_state.quiet:   # as run_backward: nothing may intercept the sums and casts
                    with _DisableTorchFunction():
                        _send(node, grad_inputs, buffers, dependencies, ready)
                    grad_inputs = None
                    continue
                # engine._send, written out
                metas = node._input_metadata
                n_metas = len(metas)
                n_grads = len(grad_inputs)
                i = -1
                for child, nr in edges:
                    i += 1
                    if child is None:
                        continue
                    g = grad_inputs[i] if i < n_grads else None
                    if g is not None:
                        meta = metas[i] if i < n_metas else None
                        # (no local name for g._impl: AccumulateGrad's steal test counts its users)
                        if meta is not None and (g._impl.sizes != meta[0] or g._impl.dtype is not meta[1]):
                            g = _validate(node, i, g, meta)
                        meta = None
                        slot = buffers.get(child)
                        if slot is None:
                            buffers[child] = {nr: g}
                        elif nr in slot:
                            slot[nr] = slot[nr] + g
                        else:
                            slot[nr] = g
                        g = None   # hold no gradient past here (AccumulateGrad counts users)
                        slot = None
                    left = dependencies[child] - 1
                    dependencies[child] = left
                    if left == 0:
                        ready.push(child)
                child = nr = metas = edges = None
                grad_inputs = None
            finally:
                if lifted:
                    shield.__enter__()
                    shielded = True
    finally:
        if shielded:
            shield.__exit__(None, None, None)
        _gm._enabled = prev_mode
        _graph.should_compute[0] = prev_filter
