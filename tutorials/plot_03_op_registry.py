"""
.. _tutorial-op-registry:

One op, end to end: ``aten.add.Tensor`` from ``a + b`` to its kernel
====================================================================

Every tensor operation in PyTorch, whatever Python spelling you use (``a + b``, ``torch.add``,
``a.add``), ends up as a call to one *operator overload* in the ``aten`` namespace, here
``torch.ops.aten.add.Tensor``. That object knows its signature (the *schema*), has one kernel per
device, and is called through the *dispatcher*, which gives autograd and tensor subclasses their
turn before the kernel runs. minitorch_nn has the same pieces, in Python you can read.

**Source files this tutorial walks through**

* ``minitorch_nn/_aten.py``: every op declared once with PyTorch's schema string.
* ``minitorch_nn/_ops.py``: ``parse_schema``, ``OpOverload`` (``impl``, ``kernel_for``,
  ``__call__``), ``OpOverloadPacket``, ``define``.
* ``minitorch_nn/_tensor_methods.py`` and ``minitorch_nn/_functions/pointwise.py``: how ``a + b``
  becomes ``aten.add.Tensor(a, b)``.
* ``minitorch_nn/overrides.py``: ``public``, the ``__torch_function__`` check on every public
  function.
* ``minitorch_nn/_dispatch/__init__.py``: the chain ``dispatch`` -> ``autograd_layer`` ->
  ``below_autograd`` -> ``python_layer`` -> ``backend``.
* ``minitorch_nn/utils/_python_dispatch.py``: ``TorchDispatchMode``, PyTorch's public way to
  watch ops at the Python layer, and ``minitorch_nn/utils/_dispatch_trace.py``:
  ``dispatch_trace()``, which shows every layer of a call at once.
* ``minitorch_nn/backends/cpu/pointwise.py``, ``minitorch_nn/backends/meta.py`` and
  ``minitorch_nn/backends/views.py``: the kernels.
"""

import contextlib
import importlib
import inspect

import minitorch_nn as torch
from minitorch_nn import _dispatch, _ops
from minitorch_nn.autograd import recording

# %%
# An op is an object
# ------------------
# ``torch.ops.aten.add`` is an ``OpOverloadPacket``: every overload of the name ``add``.
# ``torch.ops.aten.add.Tensor`` is one ``OpOverload`` (``_ops.py``). ``define`` in ``_ops.py``
# created both when ``_aten.py`` declared the schema string.

op = torch.ops.aten.add.Tensor
print(repr(torch.ops.aten.add), torch.ops.aten.add.overloads())
print(repr(op))
print(op.name())
print("ops declared in _aten.py:", len(_ops.all_ops()))

# %%
# The schema
# ----------
# The schema is PyTorch's own signature string for the op, parsed by ``parse_schema``. It
# says what the kernels accept: two tensors and a keyword-only ``alpha`` (``*`` starts the
# keyword-only part), and one tensor returned.

print(op._schema)
for arg in op._schema.arguments:
    default = arg.default if arg.has_default else "(required)"
    print(f"  {arg.name:6s} {arg.type:7s} default={default!s:10s} kwarg_only={arg.kwarg_only}")

# %%
# Alias annotations in the schema become flags on the ``OpOverload``. ``Tensor(a!)`` marks an
# argument the op writes to (an in-place op); a result annotated ``Tensor(a)`` without ``!``
# aliases an input, which makes the op a *view* op.

for o in (torch.ops.aten.add.Tensor, torch.ops.aten.add_.Tensor, torch.ops.aten.t.default):
    print(f"{o!s:18s} inplace={o.is_inplace!s:5s} view={o.is_view!s:5s} writes={o.mutated_args}")
    print(f"{'':18s} {o._schema}")

# %%
# Kernels, one per device
# -----------------------
# A backend registers a kernel with the ``OpOverload.impl`` decorator, e.g.
# ``@aten.add.Tensor.impl("cpu")`` in ``backends/cpu/pointwise.py``. ``kernel_for`` picks the
# one for a device type. View ops compute only sizes, strides and an offset, so
# ``backends/views.py`` registers a single kernel for ``"any"`` device.


def where(fn):
    """'file:line function' for a kernel, relative to the repository."""
    path = inspect.getsourcefile(fn)
    rel = path[path.rindex("minitorch_nn/") :]
    return f"{rel}:{inspect.getsourcelines(fn)[1]} {fn.__qualname__}"


for o in (torch.ops.aten.add.Tensor, torch.ops.aten.t.default):
    for device_type, kernel in sorted(o._kernels.items()):
        print(f"{o!s:17s} {device_type:5s} -> {where(kernel)}")

# %%
# Calling the op runs the whole chain and picks the kernel from the inputs' device. On the meta
# device the same op runs the shape-only kernel: no data is touched.

a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
b = torch.tensor([10.0, 20.0, 30.0])
print(op(a, b, alpha=2))
print(op(a.to("meta"), b.to("meta")))

# %%
# From ``a + b`` to the op
# ------------------------
# The Python spellings are thin layers over the op:
#
# 1. ``a + b`` calls ``Tensor.__add__``, installed in ``_tensor_methods.py`` around the public
#    function ``add``. By default ``Tensor.__add__`` is its compiled twin (``tensor_add`` in
#    ``_ext/twins/backends/cpu/pointwise.pyx``, the twin of ``backends/cpu/pointwise.py``):
#    for plain cpu tensors that nothing could observe, and while the cpu kernel registered for
#    ``aten.add.Tensor`` is the one it mirrors, it computes the same result itself; otherwise it
#    calls ``add`` and the steps below run. With the compiled twins switched off
#    (``with torch.backends.compiled.flags(enabled=False):``, tutorial 12) every spelling runs
#    the steps below, line by line.
# 2. ``add`` in ``_functions/pointwise.py`` is wrapped by ``overrides.public``. The wrapper checks
#    whether any argument is a tensor subclass with its own ``__torch_function__`` (or a
#    function mode is active). For plain tensors it goes straight on: that is the fast path.
# 3. ``add`` checks its operands and calls ``aten.add.Tensor(input, other)``. A Python number is
#    passed on as it is; the kernels treat it as PyTorch treats its "wrapped number" zero-dim
#    tensors, which type promotion ranks like a Python scalar.
# 4. ``OpOverload.__call__`` (``_ops.py``) hands the op to the dispatcher.

print(f"torch.add is {torch.add.__module__}.{torch.add.__qualname__}, wrapped by overrides.public")
print(inspect.getsource(torch.add.__wrapped_impl__))

# %%
# The dispatch chain
# ------------------
# ``_dispatch/__init__.py`` is the dispatcher. It is short enough to print here. Each layer
# either handles the call or returns ``NotImplemented`` to let the next one run:
#
# * ``autograd_layer`` records a graph node when an input requires grad, and otherwise lets the
#   call through. Its readable code is ``autograd_layer`` in ``autograd/recording.py``; what the
#   autograd package installs is its compiled twin, ``autograd_layer`` in
#   ``_ext/twins/autograd/recording.pyx``, which hands every op to the readable one while the compiled
#   twins are switched off;
# * ``python_layer`` gives ``__torch_dispatch__`` subclasses and dispatch modes their turn
#   (``_dispatch/python_dispatch.py`` installs it only while such a class or mode exists);
# * ``backend`` finds the device and calls ``op.kernel_for(device_type)``.
#
# A hook that is not installed is ``None`` and costs one ``is not None`` check, so plain tensors
# with no subclass and no mode go to the kernel almost directly.

for fn in (_dispatch.dispatch, _dispatch.below_autograd, _dispatch.backend):
    print(inspect.getsource(fn))
for hook in ("autograd_layer", "python_layer"):
    installed = getattr(_dispatch, hook)
    print(f"{hook}: {'not installed' if installed is None else 'from ' + installed.__module__}")
print("the readable autograd layer:", recording.autograd_layer.__module__ + "." + recording.autograd_layer.__name__)

# %%
# We can walk the chain one layer at a time and get the same answer at every level.

expected = a + b
levels = {
    "a + b": expected,
    "torch.add(a, b)": torch.add(a, b),
    "aten.add.Tensor(a, b)": op(a, b),
    "_dispatch.dispatch(op, ...)": _dispatch.dispatch(op, (a, b), {}),
    "_dispatch.backend(op, ...)": _dispatch.backend(op, (a, b), {}),
    "op.kernel_for('cpu')(a, b)": op.kernel_for("cpu")(a, b),
}
for name, value in levels.items():
    print(f"{name:28s} {value.tolist() == expected.tolist()}")

# %%
# The autograd layer only acts when an input requires grad. Then the result carries the graph
# node the layer recorded, under PyTorch's name; calling the chain below autograd gives the same
# numbers with no node.

w = torch.ones(3, requires_grad=True)
print("through dispatch:", op(w, b).grad_fn.name())
print("below autograd:  ", _dispatch.below_autograd(op, (w, b), {}).grad_fn)

# %%
# Watching the chain
# ------------------
# The ``python_layer`` hook sees every op that reaches the dispatcher, with PyTorch's names.
# A few lines are enough to turn it into a tracer that records each op and passes it on. The
# tracing below runs with the compiled twins switched off, so that every op goes through the
# Python code this tutorial reads (the twins step aside for a tracer too, and give the same ops).


@contextlib.contextmanager
def trace_ops():
    seen = []
    previous = _dispatch.python_layer

    def spy(op, args, kwargs):
        seen.append(str(op))
        return NotImplemented if previous is None else previous(op, args, kwargs)

    _dispatch.python_layer = spy
    try:
        yield seen
    finally:
        _dispatch.python_layer = previous


def run_examples(lib, x):
    """The same expressions, for minitorch_nn or for PyTorch."""
    x + 1  # a Python number goes to aten.add.Tensor too
    (x * 2).sum()
    x.reshape(3, 2)  # contiguous: reshape is a view
    x.t().reshape(6)  # not contiguous: reshape must copy
    x @ x.t()  # matmul of two matrices decomposes to mm
    x[:, 1:]  # slicing is the slice op


with torch.backends.compiled.flags(enabled=False), trace_ops() as seen:
    run_examples(torch, a)
for name in seen:
    print(name)

# %%
# Notice what is *not* in the list: ``reshape``, ``matmul`` and ``__getitem__`` are not ops.
# Like PyTorch, minitorch_nn implements them in Python (``_functions/shape.py``,
# ``_functions/linalg.py``) by calling the ops they decompose into, so a tracer, an export or a
# ``__torch_dispatch__`` subclass only ever sees the small set of ops declared in ``_aten.py``.
#
# The PyTorch way: a dispatch mode
# --------------------------------
# PyTorch does not let you replace its dispatcher's hooks; its public way to see every op at the
# Python layer is a ``TorchDispatchMode``: a context manager whose ``__torch_dispatch__`` gets
# each op, its arguments, and the job of calling it. minitorch_nn has the same class at the
# same path (``minitorch_nn/utils/_python_dispatch.py``); entering a mode installs the real
# ``python_layer`` (``minitorch_nn/_dispatch/python_dispatch.py``). This function builds the
# same recorder for either library.


def record_ops(lib, x):
    """The aten ops ``run_examples`` dispatches, seen by a TorchDispatchMode of ``lib``."""
    base = importlib.import_module(f"{lib.__name__}.utils._python_dispatch")

    class RecordOps(base.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            names.append(str(func))
            return func(*args, **(kwargs or {}))

    names = []
    with RecordOps():
        run_examples(lib, x)
    return names


with torch.backends.compiled.flags(enabled=False):
    print("mode sees the same ops as our hook:", record_ops(torch, a) == seen)

# %%
# Every layer at once: ``dispatch_trace()``
# -----------------------------------------
# PyTorch has no single tool that shows one call passing through every layer; minitorch_nn adds
# one, ``minitorch_nn.utils.dispatch_trace`` (``minitorch_nn/utils/_dispatch_trace.py``). It
# prints a tree per call: the public function or method you called, the aten op it dispatched,
# the graph node autograd recorded (if any) and the kernel that computed the result.

with torch.backends.compiled.flags(enabled=False), torch.utils.dispatch_trace() as trace:
    a + b  # plain tensors: straight to the kernel
    w + b  # an input requires grad: autograd records AddBackward0 on the way
    a.t().reshape(6)  # a view op, then reshape's decomposition into clone + _unsafe_view
print(trace)

# %%
# ``minitorch_nn.viz.dispatch_timeline`` (``minitorch_nn/viz/dispatch_timeline.py``) draws the
# same record as nested bars: time runs left to right in call order, each bar spans the calls made
# inside it, and its colour says which layer of the chain it belongs to.

import matplotlib.pyplot as plt

from minitorch_nn import viz

fig = viz.dispatch_timeline(trace)
plt.show()

# %%
# The tutorial on dispatch uses the same tool to follow ``__torch_function__`` and
# ``__torch_dispatch__`` handlers of tensor subclasses, which appear as extra levels of the tree.
#
# Compare with PyTorch
# --------------------
# ``story`` records the same expressions with a library's own ``TorchDispatchMode`` and reads the
# schema string, the result of ``add`` with ``alpha`` and the autograd node ``add`` records.
# ``compare_with_pytorch`` (``minitorch_nn/testing/pytorch_side.py``) prints our lines and
# PyTorch's one under the other (PyTorch runs now when it is installed, otherwise its lines come
# from a recording made with torch 2.13 in ``tutorials/torch_reference/``).

from minitorch_nn.testing.pytorch_side import compare_with_pytorch


def story(lib):
    x = lib.arange(6.0).reshape(2, 3)
    y = lib.ones(2, 3)
    add = lib.ops.aten.add.Tensor
    w = lib.ones(2, 3, requires_grad=True)
    return [
        "ops seen by a dispatch mode: " + ", ".join(record_ops(lib, x)),
        f"schema: {add._schema}",
        f"add(x, y, alpha=2): {add(x, y, alpha=2).tolist()}",
        f"node recorded by add: {add(w, y).grad_fn.name()}",
    ]


compare_with_pytorch(story, "plot_03_op_registry")

# %%
# Exercises
# ---------
# 1. Find where ``alpha`` is applied in the cpu kernel for ``aten.add.Tensor``
#    (``backends/cpu/pointwise.py``) and in the meta kernel (``backends/meta.py``). Why does the
#    meta kernel still need to look at ``alpha``? (Hint: type promotion.)
# 2. Extend ``trace_ops`` to record, for each op, the shapes and dtypes of its tensor arguments.
#    Trace ``torch.ones(2, 3).float().sum(0)`` and explain every line.
# 3. ``x.reshape(3, 2)`` showed ``view`` but ``x.t().reshape(6)`` showed ``clone`` and
#    ``_unsafe_view``. Read ``reshape`` in ``_functions/shape.py`` and find the test that decides.
# 4. ``op.redispatch_to_backend(a, b)`` skips autograd and ``python_layer``. Use ``trace_ops`` to
#    show that it is invisible to the tracer.
# 5. Register your own cpu kernel for ``aten.add.Tensor``: a function that prints a line and
#    returns ``original(a, b, alpha=alpha)``, where ``original = op.kernel_for("cpu")``, installed
#    with ``op.impl("cpu")(my_add)``. Check that ``a + b``, ``torch.add(a, b)`` and ``a.add(b)`` all
#    print, with the compiled twins on (the default: their guard sees the new kernel and steps
#    aside) and off. Put the original back with ``op.impl("cpu")(original)``.
# 6. Write the schema string of a new op ``my_relu(Tensor self) -> Tensor``, parse it with
#    ``_ops.parse_schema`` and print its arguments. What would you need to add, and in which files,
#    for ``ops.aten.my_relu.default(x)`` to run on cpu and meta tensors?
