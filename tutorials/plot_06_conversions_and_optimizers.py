"""
.. _tutorial-conversions-optimizers:

Module conversions and the optimizer pitfall
============================================

``model.to(...)``, ``model.double()`` and ``model.half()`` change every parameter of a model.
An optimizer built *before* the conversion holds references to the parameter objects. Whether
those references still reach the model after the conversion depends on *how* the conversion
changes a parameter, and PyTorch has three ways, chosen by two ``torch.__future__`` flags. With
the wrong one, training runs without errors and the model never changes.

**Source files this tutorial walks through**

* ``minitorch_nn/nn/modules/_conversion.py``: ``_ConversionMixin._apply``, where every ``to``,
  ``double``, ``half`` and ``cpu`` ends up, and its three paths.
* ``minitorch_nn/__future__.py``: ``set_overwrite_module_params_on_conversion`` and
  ``set_swap_module_params_on_conversion``.
* ``minitorch_nn/optim/optimizer.py``: ``Optimizer.__init__`` stores the parameter objects in
  ``param_groups``; ``minitorch_nn/optim/sgd.py``: ``step`` updates those objects;
  ``_warn_replaced_params`` warns when the model replaced one of them (not in PyTorch).
* ``minitorch_nn/utils/_swap.py``: ``swap_tensors``, used by the swap path.

Every optimizer in ``minitorch_nn/optim/`` (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``,
``Adagrad``, ``Adadelta``, ``Adamax``, ``ASGD``, ``NAdam``, ``RAdam``, ``Rprop``, ``LBFGS``) keeps
the parameter objects in ``param_groups`` the same way, so the pitfall is the same for all of
them. (``LBFGS.step`` takes a ``closure`` that recomputes the loss: see ``lbfgs.py``.)

Tutorial 2 showed the mechanism (``.data`` versus ``swap_tensors``); here we train.
"""

import warnings

import minitorch_nn as torch

nn = torch.nn
flags = torch.__future__

# %%
# What ``to()`` and ``double()`` do
# ---------------------------------
# All conversion methods build a function ``fn`` from their arguments and call
# ``self._apply(fn)`` (``_conversion.py``). ``_apply`` recurses into the children, then, for each
# parameter, computes ``new = fn(param)`` and installs it. Buffers are simply replaced. The
# parameter's gradient, if it has one, is converted too.

torch.manual_seed(0)
model = nn.Linear(2, 1)
model(torch.ones(1, 2)).sum().backward()
weight_before = model.weight
model.double()
print("weight:", model.weight.dtype, "| grad:", model.weight.grad.dtype)
print("same Parameter object as before:", model.weight is weight_before)

# %%
# ``to`` only converts floating-point tensors when given a dtype; an integer buffer keeps its
# type.

counter = nn.Module()
counter.register_buffer("count", torch.zeros(2, dtype=torch.int64))
counter.lin = nn.Linear(2, 2)
counter.to(torch.float16)
print({k: v.dtype for k, v in counter.state_dict().items()})

# %%
# The same module drawn by ``minitorch_nn.viz.module_tree`` (``minitorch_nn/viz/module_tree.py``):
# the ``Linear``'s parameters are now ``f16``, the integer buffer is still ``i64``.

import matplotlib.pyplot as plt

from minitorch_nn import viz

fig = viz.module_tree(counter)
plt.show()

# %%
# One training step, three ways
# -----------------------------
# The pitfall in a few lines: build the optimizer, convert, train one step, and ask whether the
# model's weight moved. ``step`` in ``sgd.py`` updates the tensors in
# ``optimizer.param_groups[0]["params"]``, whatever the model holds now. (We also count the
# warnings ``step`` gives; the section "Does our optimizer warn?" below explains them.)


def one_step(label):
    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.double()  # conversion AFTER building the optimizer
    before = model.weight.detach().clone()
    loss = model(torch.ones(4, 2, dtype=torch.float64)).pow(2).mean()
    loss.backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optimizer.step()
    held = optimizer.param_groups[0]["params"][0]
    moved = not torch.equal(before, model.weight.detach())
    print(
        f"{label:9s} optimizer holds the model's weight: {held is model.weight!s:5s} "
        f"| model weight moved: {moved!s:5s} | warnings from step(): {len(caught)}"
    )


one_step("default")
try:
    flags.set_overwrite_module_params_on_conversion(True)
    one_step("overwrite")
finally:
    flags.set_overwrite_module_params_on_conversion(False)
try:
    flags.set_swap_module_params_on_conversion(True)
    one_step("swap")
finally:
    flags.set_swap_module_params_on_conversion(False)

# %%
# Why overwrite breaks training
# -----------------------------
# Under the overwrite flag, ``_apply`` stores a **new** ``Parameter(new)`` in
# ``module._parameters``. The optimizer keeps the old float32 object. ``backward`` writes the
# gradient into the new parameter's ``.grad``; the old one has no ``.grad``, so ``SGD.step`` skips
# it. Nothing raises, and nothing learns:

torch.manual_seed(0)
model = nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
flags.set_overwrite_module_params_on_conversion(True)
try:
    model.double()
finally:
    flags.set_overwrite_module_params_on_conversion(False)
model(torch.ones(4, 2, dtype=torch.float64)).pow(2).mean().backward()
stale = optimizer.param_groups[0]["params"][0]
print("model weight:     ", model.weight.dtype, "grad is None:", model.weight.grad is None)
print("optimizer's copy: ", stale.dtype, "grad is None:", stale.grad is None)

# %%
# Does our optimizer warn?
# ------------------------
# Yes, and here minitorch_nn goes beyond PyTorch: PyTorch 2.13's optimizers do not notice that
# their parameters were replaced, so the failure is silent there. In minitorch_nn, whenever a
# module drops a registered Parameter for a different object (``_apply`` under the overwrite
# flag, ``module.weight = nn.Parameter(...)``, ``load_state_dict(assign=True)``), it writes
# ``_replaced_by = "Linear.weight"`` into the old object's ``__dict__`` (``mark_replaced`` in
# ``_conversion.py``). ``Optimizer.step`` looks for that mark and warns once per parameter,
# naming it and the fix. (A plain attribute, not a weak reference: ``swap_tensors`` refuses to
# swap a tensor that has weak references.) The default and swap paths keep the objects, so they
# never warn.

print("the old weight is marked:", stale.__dict__.get("_replaced_by"))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    optimizer.step()
    optimizer.step()  # warned once per parameter: the second step is quiet
for w in caught:
    print(f"{w.category.__name__}: {w.message}")

# %%
# The same goes for an assignment, the most common way to replace a parameter by hand:

torch.manual_seed(0)
model = nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.weight = nn.Parameter(torch.zeros(1, 2))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    optimizer.step()
print("warnings after model.weight = nn.Parameter(...):", [str(w.message).split(";")[0] for w in caught])

# %%
# A check you can write yourself (and the only one PyTorch users have) compares the identities:


def optimizer_matches(model, optimizer):
    held = {id(p) for g in optimizer.param_groups for p in g["params"]}
    return all(id(p) in held for p in model.parameters())


print("optimizer still matches the model:", optimizer_matches(model, optimizer))

# %%
# The safe habits
# ---------------
# * Convert first, build the optimizer after. Then no flag matters.
# * If you must convert later, keep the default or turn on the swap flag: both keep the parameter
#   objects. The swap flag also keeps subclasses and refuses conversions that would leave a view
#   or a saved tensor pointing at the old data (tutorial 2).

torch.manual_seed(0)
model = nn.Linear(2, 1).double()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
print("built after conversion, matches:", optimizer_matches(model, optimizer))

# %%
# Compare with PyTorch
# --------------------
# The same step under each flag with PyTorch, same seed: the updated weights should agree to the
# printed digits, and the overwrite flag should leave the weight unchanged in both. The warning
# is ours alone: PyTorch's ``step`` says nothing (we silence ours here to compare only weights).
# ``compare_with_pytorch`` (``minitorch_nn/testing/pytorch_side.py``) prints our lines and
# PyTorch's one under the other (PyTorch runs now when it is installed, otherwise its lines come
# from a recording made with torch 2.13 in ``tutorials/torch_reference/``).

from minitorch_nn.testing.pytorch_side import compare_with_pytorch


def story(lib):
    lines = []
    for overwrite, swap in ((False, False), (True, False), (False, True)):
        lib.__future__.set_overwrite_module_params_on_conversion(overwrite)
        lib.__future__.set_swap_module_params_on_conversion(swap)
        try:
            lib.manual_seed(0)
            model = lib.nn.Linear(2, 1)
            optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
            model.double()
            model(lib.ones(4, 2, dtype=lib.float64)).pow(2).mean().backward()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                optimizer.step()
            if caught and lib is not torch:
                lines.append(f"{lib.__name__} warned!")
            w = [round(v, 6) for v in model.weight.flatten().tolist()]
            lines.append(f"overwrite={overwrite!s:5s} swap={swap!s:5s} weight after step: {w}")
        finally:
            lib.__future__.set_overwrite_module_params_on_conversion(False)
            lib.__future__.set_swap_module_params_on_conversion(False)
    return lines


compare_with_pytorch(story, "plot_06_conversions_and_optimizers")

# %%
# Exercises
# ---------
# 1. Under the overwrite flag, call ``optimizer.step()`` after ``backward``. Which tensors does
#    ``SGD.step`` in ``sgd.py`` look at, and why does it not raise?
# 2. Add momentum (``SGD(..., momentum=0.9)``), take one step, then convert with ``double()``
#    under the default flag. What dtype is the momentum buffer in ``optimizer.state``? What does
#    the next step do?
# 3. Write ``convert_and_rebuild(model, optimizer, fn)`` that converts a model and returns a new
#    optimizer with the old one's ``state_dict()`` loaded. Check it with ``optimizer_matches``.
# 4. In ``_conversion.py``, find where the gradient is converted. What happens to ``.grad`` under
#    the swap flag?
