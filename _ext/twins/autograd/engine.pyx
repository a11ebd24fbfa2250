# cython: boundscheck=False, wraparound=False
"""The compiled twin of ``run_backward`` in ``minitorch_nn/autograd/engine.py``.

Read ``run_backward`` first: this file does the same thing, phase for phase and with the same
names (``root_edges``, ``targets``, ``captured``, ``order``, ``dependencies``, ``buffers``,
``ready``, ``grad_outputs``, ``grad_inputs``...), so that the two can be read side by side. The
same nodes run in the same order, with the same hooks, buffers, ``_validate`` calls, captured
gradients, errors and ``retain_graph`` release. Only *how* the steps are done differs:

* locals are C variables and the dict, list and tuple operations compile to C-API calls, instead
  of bytecode run by the interpreter;
* ``ready`` is a C array of sequence numbers with the nodes beside it (:class:`_Heap`), sifted
  exactly as ``heapq`` sifts ``ReadyQueue``'s negated numbers, so ties pop in
  ``std::priority_queue``'s order as before, without an ``_Entry`` object per node;
* ``_send`` and ``_add_to_buffer`` are compiled copies of engine.py's, and so are
  ``topological_order`` and ``count_dependencies`` (:func:`_topological_order_c`,
  :func:`_count_dependencies_c`: the same depth-first search, so the same order; on a recurrent
  model's graph of thousands of nodes the interpreted search costs a few percent of a step);
* a node whose class has ``recording.OpNode``'s own ``apply``, ``_apply`` and
  ``release_variables`` (every recorded op's node) runs compiled copies of those methods
  (:func:`_op_apply`, :func:`_op_release`); any other node, or a class that overrides one of
  them, has its methods called;
* a leaf's tensor hooks are looked up here, and ``engine._call_tensor_hooks`` is called only when
  there are some (it does nothing otherwise).

When it runs: ``engine.run_backward`` hands over on its first line while the switch
``minitorch_nn.backends.compiled`` is on and :func:`guards_hold`: every engine function this twin
calls or copies is still the object it was set up with (an identity check at every backward
pass; a replaced ``topological_order``, ``_send`` or ``ReadyQueue.push`` sends the pass through the
readable loop). Source edits are caught at import: engine.py checks the fingerprints of the
originals of ``_twin_originals()`` against ``minitorch_nn/_twin_manifest.json`` and does not set
this module up when one has changed.

Where it differs: a node's ``_seq_nr`` must fit in an unsigned 64-bit integer (every node's does:
numbers count up from 0 and ``AccumulateGrad``'s is ``2**64 - 1``); another raises
``OverflowError``.

``tests/twins/test_engine_twin.py`` runs every scenario with the switch on and off and compares
what each observes.
"""

from libc.stdlib cimport malloc, realloc, free
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from cpython.dict cimport PyDict_GetItem

# engine.py's functions and classes, as set up (see setup() and guards_hold())
cdef object _gradient_edge = None
cdef object _topological_order = None
cdef object _count_dependencies = None
cdef object _validate = None
cdef object _call_tensor_hooks = None
cdef object _capture = None
cdef object _store_grad = None
cdef object _AccumulateGrad = None
cdef object _TensorBase = None
cdef object _DisableTorchFunction = None
cdef object _ReadyQueue = None
cdef object _ready_push = None   # ReadyQueue.push and .pop, as defined in ready_queue.py
cdef object _ready_pop = None
cdef list _guards = []           # (namespace, name, the object it held at setup)
# the state objects the loop reads and sets
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

# the names in engine.py this twin calls or copies: guards_hold() checks each is unchanged
_ENGINE_NAMES = ("gradient_edge", "topological_order", "count_dependencies", "_add_to_buffer", "_send",
                 "_validate", "_call_tensor_hooks", "_run_tensor_hooks", "_capture", "_store_grad",
                 "AccumulateGrad", "TensorBase", "DisableTorchFunction", "ReadyQueue", "_gm", "_graph",
                 "_tf_state")


def setup(*, engine, recording, graph, grad_mode, dispatch, tf_state, ready_queue):
    """Take engine.py's functions and the state objects (engine.py calls this once, at import)."""
    global _gradient_edge, _topological_order, _count_dependencies, _validate, _call_tensor_hooks
    global _capture, _store_grad, _AccumulateGrad, _TensorBase, _DisableTorchFunction, _ReadyQueue
    global _ready_push, _ready_pop, _guards, _tf_state, _gm, _graph
    global _op_apply_py, _op__apply_py, _op_release_py, _OutputGrads, _SavedTensor, _dispatch
    global _unpack_py, _release_py, _TensorImpl, _wrap
    _gradient_edge, _topological_order = engine.gradient_edge, engine.topological_order
    _count_dependencies, _validate = engine.count_dependencies, engine._validate
    _call_tensor_hooks, _capture, _store_grad = engine._call_tensor_hooks, engine._capture, engine._store_grad
    _AccumulateGrad, _TensorBase = engine.AccumulateGrad, engine.TensorBase
    _DisableTorchFunction, _ReadyQueue = engine.DisableTorchFunction, ready_queue.ReadyQueue
    _ready_push, _ready_pop = _ReadyQueue.push, _ReadyQueue.pop
    _tf_state, _gm, _graph = tf_state, grad_mode, graph
    namespace = vars(engine)
    _guards = [(namespace, name, namespace[name]) for name in _ENGINE_NAMES]
    OpNode = recording.OpNode
    _op_apply_py, _op__apply_py, _op_release_py = OpNode.apply, OpNode._apply, OpNode.release_variables
    _OutputGrads, _SavedTensor, _dispatch = recording._OutputGrads, graph.SavedTensor, dispatch
    _unpack_py, _release_py = graph.SavedTensor.unpack, graph.SavedTensor.release
    from minitorch_nn._C import TensorImpl, _wrap as wrap
    _TensorImpl, _wrap = TensorImpl, wrap


cdef list _topological_order_c(list roots):
    """``engine.topological_order``, compiled: nodes reachable from ``roots``, each after every
    node that sends it gradients (the same iterative depth-first search, so the same order)."""
    # BEGIN SOLUTION autograd-toposort
    cdef list post = [], stack
    cdef set seen = set()
    cdef tuple top
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root.next_functions))]
        while stack:
            top = <tuple>stack[len(stack) - 1]
            node, children = top
            for child, _ in children:
                if child is not None and child not in seen:
                    seen.add(child)
                    stack.append((child, iter(child.next_functions)))
                    break
            else:
                stack.pop()
                post.append(node)
    post.reverse()
    return post
    # STARTER
    # return _topological_order(roots)   # in a student copy: the student's topological_order
    # END SOLUTION


cdef dict _count_dependencies_c(list order):
    """``engine.count_dependencies``, compiled: for every node of ``order``, how many edges lead
    into it from the others."""
    cdef dict dependencies = {}
    cdef PyObject* count
    for node in order:
        for child, _ in node.next_functions:
            if child is not None:
                count = PyDict_GetItem(dependencies, child)
                dependencies[child] = 1 if count == NULL else <object>count + 1
    return dependencies


def guards_hold():
    """True while every engine.py function this twin calls or copies is the one it was set up
    with, and ``ReadyQueue`` still has its own ``push`` and ``pop``: identity checks."""
    cdef tuple guard
    for guard in _guards:
        if (<dict>guard[0]).get(guard[1]) is not guard[2]:
            return False
    return getattr(_ReadyQueue, "push", None) is _ready_push and getattr(_ReadyQueue, "pop", None) is _ready_pop


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




cdef int _add_to_buffer(dict buffers, object node, object nr, object g) except -1:
    """``engine._add_to_buffer``, compiled."""
    cdef dict slot = buffers.get(node)
    if slot is None:
        buffers[node] = {nr: g}
    elif nr in slot:
        slot[nr] = slot[nr] + g   # gradients meeting in one slot add up
    else:
        slot[nr] = g
    return 0


cdef int _send(object node, object grad_inputs, dict buffers, dict dependencies, _Heap ready) except -1:
    """``engine._send``, compiled: put each of ``node``'s output gradients in the buffer of the
    node its edge leads to, and push the nodes that have now heard from all their dependencies."""
    cdef object metas = node._input_metadata
    cdef Py_ssize_t n_grads = len(grad_inputs), n_metas = len(metas), i = -1, left
    cdef object child, nr, g, meta
    cdef dict slot
    for child, nr in node.next_functions:
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
            slot = buffers.get(child)   # _add_to_buffer, inlined
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
    return 0


cdef inline bint _leaf_has_tensor_hooks(object node) except -1:
    """What ``engine._run_tensor_hooks`` looks up for a leaf's ``AccumulateGrad``: hooks
    registered with ``register_hook`` on the leaf (kept in its payload's autograd_meta)."""
    impl = node._impl
    if impl is None:
        return False
    meta = impl.autograd_meta
    return bool(meta) and bool(meta.get("hooks"))


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None, accumulate=True):
    """``engine.run_backward``, compiled (see the module docstring); the same arguments and result."""
    cdef list root_edges = [], captured
    cdef dict targets = None, dependencies, buffers, pending
    cdef set leads_to_target = None, target_nodes = None
    cdef _Heap ready
    cdef object node, child, nr, g, edge, t, buf, grad_outputs, grad_inputs, hook, new, prev_mode, prev_filter, order
    cdef bint runs, plain, keep_graph = bool(retain_graph), accumulating = bool(accumulate)
    cdef Py_ssize_t i, j, k, n_out

    for i, t in enumerate(roots):
        edge = _gradient_edge(t)
        if edge is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        root_edges.append(edge)

    # Where to capture gradients: the edge of each input.
    if inputs is not None:
        targets = {}
        for j, t in enumerate(inputs):
            if not isinstance(t, _TensorBase):
                raise TypeError(f"inputs must be Tensors, got {type(t).__name__}")
            edge = _gradient_edge(t)
            if edge is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            targets.setdefault(edge, []).append(j)
    captured = [None] * (len(inputs) if inputs is not None else 0)
    edge = t = None

    order = _topological_order_c([node for node, _ in root_edges])
    dependencies = _count_dependencies_c(order)   # node -> edges into it that have not delivered yet
    if targets is not None:
        target_nodes = {node for node, _ in targets}
        leads_to_target = set()
        for node in reversed(order):   # children before parents
            for child, _ in node.next_functions:
                if child is not None and (child in leads_to_target or child in target_nodes):
                    leads_to_target.add(node)
                    break
    order = None

    buffers = {}   # node -> {output_nr: gradient so far}
    ready = _Heap()
    # PyTorch's GraphRoot: hand each root its gradient; a root is ready once it has them all,
    # unless it also receives gradients from another root.
    pending = {}
    for node, _ in root_edges:
        pending[node] = pending.get(node, 0) + 1
    for (node, nr), g in zip(root_edges, root_grads):
        _add_to_buffer(buffers, node, nr, g)
        pending[node] -= 1
        if pending[node] == 0 and not dependencies.get(node):
            ready.push(node)
    g = node = None

    prev_mode, prev_filter = _gm._enabled, _graph.should_compute[0]
    _gm._enabled = bool(create_graph)
    # With inputs given, formulas compute only gradients that lead somewhere useful (PyTorch's
    # task_should_compute_output); OpNode reads this.
    _graph.should_compute[0] = None if targets is None else (leads_to_target | target_nodes)
    try:
        while ready.n:
            node = ready.pop()
            runs = targets is None or node in leads_to_target or (
                accumulating and isinstance(node, _AccumulateGrad) and node in target_nodes)
            buf = buffers.pop(node, None)
            if buf is None:
                # No gradient reached this node: it has nothing to send on, but the nodes after
                # it are one input closer to being ready.
                if runs:
                    _send(node, (), buffers, dependencies, ready)
                continue
            if len(buf) == 1 and 0 in buf and (
                    type(node) is _AccumulateGrad or not getattr(node, "_output_meta", None)):
                # the usual node: one output, its gradient (a leaf's AccumulateGrad has no
                # _output_meta: the failed lookup is skipped)
                grad_outputs = [buf[0]]
            else:
                n_out = max(max(buf) + 1, len(getattr(node, "_output_meta", ())) or 1)
                grad_outputs = [buf.get(k) for k in range(n_out)]
            buf = None   # the engine keeps no extra reference (AccumulateGrad checks who shares a gradient)
            if targets is not None and not accumulating and runs:
                # PyTorch's ordering: a node that will run captures its gradient *before* the
                # tensor hooks (they run when the node runs); one that only captures runs the
                # hooks first.
                _capture(node, grad_outputs, targets, captured)
            if node._tensor_pre_hooks or node._retains_grad or (
                    type(node) is _AccumulateGrad and _leaf_has_tensor_hooks(node)):
                _call_tensor_hooks(node, grad_outputs)
            if targets is not None and not accumulating and not runs:
                _capture(node, grad_outputs, targets, captured)
            elif targets is not None and accumulating and not isinstance(node, _AccumulateGrad):
                for k, g in enumerate(grad_outputs):   # backward(inputs=[non_leaf]) fills .grad
                    for j in targets.get((node, k), ()):
                        if g is not None:
                            _store_grad(inputs[j]._impl, g)
                g = None
            if not runs:
                continue   # as in PyTorch, the nodes after a skipped node are not made ready
            if node._pre_hooks:
                for hook in list(node._pre_hooks.values()):
                    new = hook(tuple(grad_outputs))
                    if new is not None:
                        grad_outputs = list(new)
                hook = new = None
            grad_outputs = tuple(grad_outputs)
            plain = _plain_op_node(node)
            grad_inputs = _op_apply(node, grad_outputs) if plain else node.apply(grad_outputs)
            if node._post_hooks:
                for hook in list(node._post_hooks.values()):
                    new = hook(grad_inputs, grad_outputs)
                    if new is not None:
                        grad_inputs = tuple(new)
                hook = new = None
            grad_outputs = None
            if not keep_graph:
                if plain:
                    _op_release(node)
                else:
                    node.release_variables()
            if _tf_state.quiet:
                _send(node, grad_inputs, buffers, dependencies, ready)
            else:   # something could intercept the sums and casts: turn it off, as in PyTorch
                with _DisableTorchFunction():
                    _send(node, grad_inputs, buffers, dependencies, ready)
            grad_inputs = None
    finally:
        _gm._enabled = prev_mode
        _graph.should_compute[0] = prev_filter
    return captured
