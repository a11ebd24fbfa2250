"""
.. _tutorial-swap-tensors:

``swap_tensors``: new contents, same Python object
==================================================

Converting a model (``model.double()``, ``model.to(device)``, loading a state dict) has to give
every parameter new data. The hard part is that other code already holds references to those
parameter objects: an optimizer's parameter list, a hook, your own variables. PyTorch 2.3
added ``torch.utils.swap_tensors`` for this, and its recipe "Extension points in ``nn.Module``
for ``load_state_dict`` and tensor subclasses" tells the story. This tutorial rebuilds that
story with minitorch_nn, where you can read every line of the mechanism.

**Source files this tutorial walks through**

* ``minitorch_nn/utils/_swap.py``: ``swap_tensors`` and its safety checks
  (``_check_use_count``).
* ``_ext/_C.pyx``: ``_swap_payload`` (the C half of the swap), ``TensorBase._use_count``,
  and the ``owner`` pointer each ``TensorImpl`` keeps to its handle.
* ``minitorch_nn/_tensor.py``: the ``Tensor.data`` setter, the older way to change contents.
* ``minitorch_nn/nn/parameter.py``: ``Parameter``, the tensor subclass that modules register.
* ``minitorch_nn/optim/optimizer.py``: the ``param_groups`` in which an optimizer keeps its
  references to the parameters.
* ``minitorch_nn/nn/modules/_conversion.py``: ``_ConversionMixin._apply``, which every
  ``Module.to``/``double``/``half`` goes through, and ``minitorch_nn/__future__.py``, the two
  flags that choose how it changes a parameter.
* ``minitorch_nn/autograd/graph.py``: the ``AccumulateGrad`` node that a swap poisons.

We start with tensors and a hand-written stand-in for a module, and end with a real
``nn.Linear``; the ``nn.Module`` tutorial covers the rest of the module machinery.
"""

import importlib
import weakref

import minitorch_nn as torch
from minitorch_nn.nn import Parameter
from minitorch_nn.optim import SGD
from minitorch_nn.utils import swap_tensors

# %%
# The problem: other code holds references
# ----------------------------------------
# A model stores its weight as an attribute; an optimizer stores a list of the same
# parameter objects. Both names point at **one** Python object.


class TinyModel:
    """A stand-in for an ``nn.Module`` with one parameter."""

    def __init__(self):
        torch.manual_seed(0)
        self.weight = Parameter(torch.randn(2, 2))


model = TinyModel()
optimizer_params = [model.weight]  # what ``SGD(model.parameters())`` keeps
print(optimizer_params[0] is model.weight)

# %%
# The naive conversion makes a **new** tensor and rebinds the attribute. The model now has
# float64 data, but the optimizer still holds the old float32 parameter and would update a
# tensor the model no longer uses: training silently stops changing the model.

model.weight = Parameter(model.weight.detach().double())
print("model:    ", model.weight.dtype)
print("optimizer:", optimizer_params[0].dtype)
print("same object:", optimizer_params[0] is model.weight)

# %%
# The old fix: assign to ``.data``
# --------------------------------
# For years ``nn.Module._apply`` did ``param.data = fn(param)``. The ``data`` setter in
# ``minitorch_nn/_tensor.py`` re-points the existing payload at the new tensor's storage,
# sizes, strides, dtype and device, so the object, and every reference to it, stays.

model = TinyModel()
optimizer_params = [model.weight]
model.weight.data = model.weight.detach().double()
w = optimizer_params[0]
print("optimizer:", w.dtype, "| same object:", w is model.weight)

# %%
# But ``.data`` only moves the *payload fields*. It cannot change the object's class or its
# Python attributes. That matters when a conversion returns a **tensor subclass**, for example
# a parameter that carries a quantization scale in its ``__dict__``:


class QuantParam(Parameter):
    """A parameter stored in half precision with a per-tensor ``scale`` attribute."""


def quantize(p):
    q = QuantParam(p.detach().half(), requires_grad=False)
    q.scale = 0.5
    return q


model = TinyModel()
model.weight.data = quantize(model.weight)
w = model.weight
print(type(w).__name__, w.dtype, "| has scale:", hasattr(w, "scale"))

# %%
# The dtype changed, but the object is still a plain ``Parameter`` and the ``scale`` is lost.
# In PyTorch, ``.data`` assignment between tensor kinds that do not share a C++ ``TensorImpl``
# type (a wrapper subclass and a dense tensor, say) is refused outright.
#
# ``swap_tensors``: exchange everything
# -------------------------------------
# ``swap_tensors(t1, t2)`` (``minitorch_nn/utils/_swap.py``) exchanges the two objects'
# payloads, their classes, their ``__dict__`` and their ``__slots__`` values. The objects keep
# their identities (``id``); everything else trades places.

a = torch.ones(2)
a.note = "I was a"
b = torch.zeros(3, dtype=torch.int64)
b.note = "I was b"
id_a, id_b = id(a), id(b)
payload_a = id(a._impl)  # only its id: holding the payload itself would count as a use (below)

swap_tensors(a, b)
print("ids kept:", id(a) == id_a, id(b) == id_b)
print("a:", a, "| a.note =", a.note)
print("b:", b, "| b.note =", b.note)
print("b now holds a's old payload:", id(b._impl) == payload_a)

# %%
# Applied to the model, a swap gives the parameter object the quantized contents **and** the
# subclass and its attributes, and the optimizer's reference sees all of it.

model = TinyModel()
optimizer_params = [model.weight]
swap_tensors(model.weight, quantize(model.weight))
w = optimizer_params[0]
print(w is model.weight, type(w).__name__, w.dtype, "scale =", w.scale)

# %%
# How the swap is done
# --------------------
# Read ``swap_tensors`` in ``_swap.py`` top to bottom: first every check, then the exchange.
# The exchange of the data is one call, ``_C._swap_payload`` in ``_ext/_C.pyx``, which trades
# the ``_impl`` slots of the two handles and updates each payload's ``owner`` pointer. Because
# a tensor's data lives behind that one slot, swapping is as cheap for a billion elements as for
# one: no element is copied.

big = torch.zeros(1000, 1000)
small = torch.ones(1)
storage_before = big._impl.storage
swap_tensors(big, small)
print(big.shape, small.shape, "| storage moved, not copied:", small._impl.storage is storage_before)

# %%
# When PyTorch refuses to swap
# ----------------------------
# A swap must not leave anything pointing at the "wrong" contents. ``swap_tensors`` refuses,
# and changes nothing, in three situations. The messages are PyTorch's own.
#
# **1. A weak reference exists.** A weakref points at the Python object; after a swap it would
# silently reach the other contents.

t = torch.ones(2)
ref = weakref.ref(t)
try:
    swap_tensors(t, torch.zeros(2))
except RuntimeError as err:
    print("RuntimeError:", err)
del ref

# %%
# **2. The classes have different slots.** ``__dict__`` can be exchanged wholesale, but values
# in ``__slots__`` can only move between classes that declare the same slots.


class Tagged(Parameter):
    __slots__ = ("tag",)


try:
    swap_tensors(Parameter(torch.ones(2)), Tagged(torch.zeros(2)))
except RuntimeError as err:
    print("RuntimeError:", err)

# %%
# **3. The payload is used elsewhere.** A view's payload keeps a reference to its base's
# payload (``_make_view`` sets ``base``), and so does a saved tensor in an autograd graph. If we
# swapped, those would keep reading the old data. ``TensorBase._use_count`` (``_ext/_C.pyx``)
# counts the references to the payload, like the C++ use count of PyTorch's ``TensorImpl``;
# names bound to the Python handle do not count.

t = torch.ones(3)
alias = t  # another name for the same handle: not counted
print("no views:", t._use_count())
v1 = t[1:]
print("one view:", t._use_count())
v2 = t[:2]
print("two views:", t._use_count())

try:
    swap_tensors(t, torch.zeros(3))
except RuntimeError as err:
    print("RuntimeError:", err)
print("t unchanged:", t)

# %%
# A use count of 2 is allowed in one case: when the second reference is the tensor's own
# ``AccumulateGrad`` node (a leaf that requires grad and has been used in a graph). PyTorch then
# swaps and "poisons" that node so a later backward through the old graph fails loudly. A plain
# tensor with one view has no gradient edge at all, and the message says exactly that:

del v2
try:
    swap_tensors(t, torch.zeros(3))
except RuntimeError as err:
    print("RuntimeError:", err)
del v1
swap_tensors(t, torch.zeros(3))  # no views left: the swap goes through
print("after deleting the views:", t)

# %%
# Module conversion: ``nn.Module._apply``
# ---------------------------------------
# ``model.to(...)``, ``double()``, ``half()`` and ``cuda()`` all call ``_apply(fn)``
# (``_ConversionMixin._apply`` in ``minitorch_nn/nn/modules/_conversion.py``). For each
# parameter it computes ``new = fn(param)`` and then takes one of three paths, chosen by the two
# flags in ``minitorch_nn/__future__.py``:
#
# * by default, ``param.data = new``: same object, new payload fields;
# * with ``set_overwrite_module_params_on_conversion(True)``, a **new** ``Parameter(new)`` is
#   stored in the module, and old references keep the old tensor;
# * with ``set_swap_module_params_on_conversion(True)``,
#   ``swap_tensors(param, Parameter(new))``: same object, new payload *and* class.
#
# Here is ``nn.Linear`` (``minitorch_nn/nn/modules/linear.py``) and an ``SGD`` optimizer
# (``minitorch_nn/optim/sgd.py``) built before the conversion, as in a typical training script,
# under each setting. With the same seed the layer's initial weights are PyTorch's.

nn = torch.nn
torch.manual_seed(0)
print(nn.Linear(3, 2).weight)


def convert_and_report(label):
    model = nn.Linear(3, 2)
    optimizer = SGD(model.parameters(), lr=0.1)
    model.double()  # -> model._apply(lambda t: t.double() if floating point)
    w = optimizer.param_groups[0]["params"][0]  # the weight the optimizer will update
    print(f"{label:9s} module: {model.weight.dtype}, optimizer: {w.dtype}, same: {w is model.weight}")


flags = torch.__future__
convert_and_report("default")
try:
    flags.set_overwrite_module_params_on_conversion(True)
    convert_and_report("overwrite")
finally:
    flags.set_overwrite_module_params_on_conversion(False)
try:
    flags.set_swap_module_params_on_conversion(True)
    convert_and_report("swap")
finally:
    flags.set_swap_module_params_on_conversion(False)

# %%
# The overwrite path is the naive conversion from the start of this tutorial: the optimizer is
# left behind. The two in-place paths differ when something else holds the parameter's payload.
# Keep a view of the weight, as a tensor saved for backward would, and convert:


def convert_with_a_view(swap):
    flags.set_swap_module_params_on_conversion(swap)
    try:
        model = nn.Linear(3, 2)
        first_row = model.weight[0]
        model.half()
        shared = first_row._impl.storage is model.weight._impl.storage
        print(f"swap={swap!s:5s} converted to {model.weight.dtype}")
        print(f"{'':10s} the view is still {first_row.dtype}; shares the weight's storage: {shared}")
    except RuntimeError as err:
        print(f"swap={swap!s:5s} RuntimeError: {err}")
    finally:
        flags.set_swap_module_params_on_conversion(False)


convert_with_a_view(False)
convert_with_a_view(True)

# %%
# With ``.data`` the conversion "succeeds" and the view silently reads memory the model no longer
# uses. With the swap flag, the conversion is refused (the ``RuntimeError`` wraps the use-count
# error from ``swap_tensors``) and nothing is left half-converted.
#
# Converting between forward and backward
# ---------------------------------------
# A forward pass records a graph, and the graph's leaf node for the weight, its
# ``AccumulateGrad`` (``minitorch_nn/autograd/graph.py``), holds a reference to the weight's
# payload: a use count of 2. That is the one case ``_check_use_count`` in ``_swap.py`` lets
# through. It swaps, and marks the node as poisoned so the old graph cannot write a gradient of
# the old dtype into the converted parameter.


def convert_between_forward_and_backward(swap):
    flags.set_swap_module_params_on_conversion(swap)
    try:
        model = nn.Linear(3, 2)
        loss = model(torch.ones(1, 3)).sum()
        print(f"swap={swap!s:5s} use count after forward: {model.weight._use_count()}")
        model.double()
        loss.backward()
        print(f"{'':10s} backward ran: weight {model.weight.dtype}, grad {model.weight.grad.dtype}")
    except RuntimeError as err:
        print(f"{'':10s} RuntimeError: {err}")
    finally:
        flags.set_swap_module_params_on_conversion(False)


convert_between_forward_and_backward(False)
convert_between_forward_and_backward(True)

# %%
# Here is that graph, drawn by ``minitorch_nn.viz.autograd_graph``
# (``minitorch_nn/viz/autograd_graph.py``) after a swap-flag conversion. The weight's
# ``AccumulateGrad`` still holds the old float32 payload, which now belongs to the temporary
# tensor the swap traded with, so it no longer carries the name ``weight``; the poison is the
# pre-hook marked on it (the bias was converted too, and its node is poisoned the same way).

import matplotlib.pyplot as plt

from minitorch_nn import viz

flags.set_swap_module_params_on_conversion(True)
try:
    model = nn.Linear(3, 2)
    loss = model(torch.ones(1, 3)).sum()
    model.double()
    fig = viz.autograd_graph(loss, model)
    plt.show()
finally:
    flags.set_swap_module_params_on_conversion(False)

# %%
# Without the flag, backward "works": a gradient computed from the old float32 weights lands, as
# float32, on the float64 weight, and an optimizer step would use it without complaint. With the
# flag, the mistake is reported where it happens, with advice. Both are what PyTorch 2.13 does.
#
# Compare with PyTorch
# --------------------
# The three refusals and the module conversions, replayed with a library given as ``lib``; then
# ``compare_with_pytorch`` (``minitorch_nn/testing/pytorch_side.py``) prints our lines and
# PyTorch's one under the other (PyTorch runs now when it is installed, otherwise its lines come
# from a recording made with torch 2.13 in ``tutorials/torch_reference/``).

from minitorch_nn.testing.pytorch_side import compare_with_pytorch


def refusals(lib):
    """The message of each refusal, for a library that has swap_tensors."""
    out = []
    t = lib.ones(2)
    r = weakref.ref(t)  # noqa: F841 (kept alive on purpose)
    slotted = type("Slotted", (lib.nn.Parameter,), {"__slots__": ("tag",)})
    for make in (
        lambda: (t, lib.zeros(2)),
        lambda: (lib.nn.Parameter(lib.ones(2)), slotted(lib.zeros(2))),
    ):
        try:
            lib.utils.swap_tensors(*make())
        except RuntimeError as err:
            out.append(str(err))
    u = lib.ones(3)
    views = (u[1:], u[:2])  # noqa: F841
    try:
        lib.utils.swap_tensors(u, lib.zeros(3))
    except RuntimeError as err:
        out.append(str(err))
    return out


def conversions(lib):
    """What an optimizer sees after ``double()`` under each flag, and the swap-with-a-view error."""

    out = []
    for overwrite, swap in ((False, False), (True, False), (False, True)):
        lib.__future__.set_overwrite_module_params_on_conversion(overwrite)
        lib.__future__.set_swap_module_params_on_conversion(swap)
        try:
            lib.manual_seed(0)
            m = lib.nn.Linear(3, 2)
            out.append(f"initial weight: {m.weight.tolist()}")
            opt = importlib.import_module(f"{lib.__name__}.optim").SGD(m.parameters(), lr=0.1)
            held = opt.param_groups[0]["params"][0]
            m.double()
            out.append(f"overwrite={overwrite} swap={swap}: {held.dtype}, same={held is m.weight}")
            m = lib.nn.Linear(3, 2)
            view = m.weight[0]  # noqa: F841
            m.half()
            out.append("converted with a view alive")
        except RuntimeError as err:
            out.append(f"RuntimeError: {err}")
        finally:
            lib.__future__.set_overwrite_module_params_on_conversion(False)
            lib.__future__.set_swap_module_params_on_conversion(False)
    return out


def forward_convert_backward(lib):
    """What backward does after converting between forward and backward, per swap flag."""
    out = []
    for swap in (False, True):
        lib.__future__.set_swap_module_params_on_conversion(swap)
        try:
            model = lib.nn.Linear(3, 2)
            loss = model(lib.ones(1, 3)).sum()
            model.double()
            loss.backward()
            out.append(f"swap={swap}: grad {model.weight.grad.dtype}, weight {model.weight.dtype}")
        except RuntimeError as err:
            out.append(f"swap={swap}: RuntimeError: {err}")
        finally:
            lib.__future__.set_swap_module_params_on_conversion(False)
    return out


def story(lib):
    return refusals(lib) + conversions(lib) + forward_convert_backward(lib)


compare_with_pytorch(story, "plot_02_swap_tensors")

# %%
# Exercises
# ---------
# 1. In ``_swap.py``, every check runs before anything is exchanged. Move the
#    ``_check_use_count`` calls after the ``__class__`` exchange and find an input for which the
#    failed swap now leaves the two tensors half-swapped.
# 2. ``swap_tensors(a, b[1:])`` succeeds even though ``b`` has a view. Why? What does ``a``
#    read afterwards, and what is ``a._base``?
# 3. ``TensorBase._use_count`` subtracts one. Whose reference is that? Check by calling
#    ``sys.getrefcount(t._impl)``.
# 4. Write ``convert_with_overwrite`` that mimics ``set_overwrite_module_params_on_conversion``:
#    it rebinds the attribute to a new ``Parameter``. Which of the three strategies in this
#    tutorial keeps the optimizer working after ``quantize``?
