"""
.. _tutorial-lazy-modules:

Lazy modules: one dry run, step by step
=======================================

``nn.LazyLinear(out_features)`` does not ask for ``in_features``: it learns it from the first
batch it sees. Until then its weight is a *placeholder* with no shape. The first call, the "dry
run", fills in the placeholders and turns the module into an ordinary ``nn.Linear``, the same
Python object with a new class. This tutorial follows one dry run through the code.

**Source files this tutorial walks through**

* ``minitorch_nn/nn/modules/lazy.py``: ``LazyModuleMixin`` (``__init__``, ``_infer_parameters``,
  ``_save_to_state_dict``, ``_lazy_load_hook``) and ``describe_lazy``; its module docstring lists
  the same six steps as this tutorial.
* ``minitorch_nn/nn/modules/lazy_layers.py``: ``LazyLinear`` and its ``initialize_parameters``.
* ``minitorch_nn/nn/parameter_lazy.py``: ``UninitializedParameter`` and ``materialize``.
* ``minitorch_nn/nn/modules/_hooks.py``: ``_call_impl``, which runs the forward pre-hooks.
* ``minitorch_nn/optim/optimizer.py``: ``step()``'s check for placeholders.
"""

import minitorch_nn as torch
from minitorch_nn.nn.modules.lazy import describe_lazy

nn = torch.nn

# %%
# Step 1: construction
# --------------------
# ``LazyLinear.__init__`` builds a ``Linear(0, 0)`` and replaces its weight and bias with
# ``UninitializedParameter`` placeholders (``parameter_lazy.py``). ``LazyModuleMixin.__init__``
# (``lazy.py``) registers a forward pre-hook, ``_infer_parameters``, and a load-state-dict pre-hook,
# and keeps their handles.

layer = nn.LazyLinear(4)
print(layer)
print("weight:", layer.weight, "| class:", type(layer.weight).__name__)
print("forward pre-hooks:", [h.__name__ for h in layer._forward_pre_hooks.values()])

# %%
# Step 2 (optional): conversions before the dry run
# -------------------------------------------------
# ``Module._apply`` converts placeholders like any parameter; their class stays. The dtype is
# remembered and used when the real weight is made.

layer = layer.double()
print("placeholder dtype:", layer.weight.dtype, "| still a placeholder:", type(layer.weight).__name__)

# %%
# ``describe_lazy`` (``lazy.py``, not in PyTorch) lists what is still waiting for its dry run:

print(describe_lazy(nn.Sequential(layer, nn.ReLU())))

# %%
# Steps 3 to 5: the call
# ----------------------
# ``layer(x)`` enters ``_call_impl`` (``_hooks.py``), which runs the forward pre-hooks before
# ``forward``. Ours is first: ``_infer_parameters`` calls ``initialize_parameters(x)``
# (``lazy_layers.py``), which reads ``in_features = x.shape[-1]``, calls
# ``weight.materialize((4, 3))`` (the placeholder becomes a real ``Parameter`` in place) and then
# ``reset_parameters()``. Back in ``_infer_parameters`` the hooks are removed and ``__class__``
# becomes ``Linear``. To watch, we subclass and print around ``initialize_parameters``:


class TracedLazyLinear(nn.LazyLinear):
    def initialize_parameters(self, x):
        print(f"  before: weight is {type(self.weight).__name__}, class {type(self).__name__}")
        super().initialize_parameters(x)
        w = self.weight
        print(f"  after:  weight is {type(w).__name__} {tuple(w.shape)} {w.dtype}")


torch.manual_seed(0)
traced = TracedLazyLinear(4).double()
obj_id = id(traced)
print("calling traced(x):")
out = traced(torch.ones(2, 3, dtype=torch.float64))
print("after the call:", traced, "| same object:", id(traced) == obj_id)
print("isinstance LazyLinear:", isinstance(traced, nn.LazyLinear), "| hooks left:", len(traced._forward_pre_hooks))

# %%
# Step 6: forward
# ---------------
# The pre-hook returned nothing, so ``_call_impl`` went on to ``Linear.forward``. The output is an
# ordinary linear layer's output, and later calls pay nothing extra: there is no hook any more.

print(out)

# %%
# A LazyMLP
# ---------
# Lazy layers shine in a stack where you do not want to compute each input size yourself. One dry
# run initialises every lazy layer in order, each from the output of the previous one.


class LazyMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.LazyLinear(10)
        self.relu = nn.ReLU()
        self.fc2 = nn.LazyLinear(1)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


torch.manual_seed(0)
mlp = LazyMLP()
print(mlp)
print(describe_lazy(mlp))

# %%
# ``minitorch_nn.viz.module_tree`` (``minitorch_nn/viz/module_tree.py``) draws the same model:
# the placeholders in red (they have no shape yet), and on each ``LazyLinear`` the two hooks
# ``LazyModuleMixin`` registered.

import matplotlib.pyplot as plt

from minitorch_nn import viz

fig = viz.module_tree(mlp, title="LazyMLP before its dry run")
plt.show()

# %%
# The state dict before and after
# -------------------------------
# Before the dry run, ``_save_to_state_dict`` (``lazy.py``) puts the placeholder objects in the
# dict: they have no values to save.

print(mlp.state_dict())

# %%
# An optimizer may be built now, as in PyTorch: it holds the placeholder objects, and the dry
# run turns them into real parameters *in place*, so the optimizer then holds the real ones.
# Stepping it before the dry run would update nothing (PyTorch skips them silently);
# minitorch_nn's ``step()`` raises with a hint instead (``check_initialized`` in ``lazy.py``,
# called from ``optimizer.py``).

opt = torch.optim.SGD(mlp.parameters(), lr=0.1)
first = opt.param_groups[0]["params"][0]
try:
    opt.step()
except RuntimeError as err:
    print("RuntimeError:", err)

# %%
# The dry run, and the state dict after it:

mlp(torch.ones(5, 3))
print("the optimizer holds the materialized weight:", first is mlp.fc1.weight, type(first).__name__)
print(mlp)
for k, v in mlp.state_dict().items():
    print(f"{k:10s} {tuple(v.shape)}")
print(describe_lazy(mlp))

# %%
# Drawn again: real shapes, plain ``Linear`` layers, and the hooks are gone.

fig = viz.module_tree(mlp, title="LazyMLP after its dry run")
plt.show()

# %%
# Loading a checkpoint into a lazy model
# --------------------------------------
# The load pre-hook (``_lazy_load_hook``) materializes each placeholder to the incoming tensor's
# shape before the usual copy. As in PyTorch, the module stays ``LazyLinear`` until its first
# forward.

fresh = LazyMLP()
print(fresh.load_state_dict(mlp.state_dict()))
print(fresh.fc1)
print("same output:", torch.equal(fresh(torch.ones(2, 3)), mlp(torch.ones(2, 3))))
print(fresh.fc1)

# %%
# Compare with PyTorch
# --------------------
# The LazyMLP story with PyTorch, same seed: reprs, state-dict keys and shapes, and outputs.
# ``compare_with_pytorch`` (``minitorch_nn/testing/pytorch_side.py``) prints our lines and
# PyTorch's one under the other (PyTorch runs now when it is installed, otherwise its lines come
# from a recording made with torch 2.13 in ``tutorials/torch_reference/``).

from minitorch_nn.testing.pytorch_side import compare_with_pytorch


def story(lib):
    class LazyMLP(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = lib.nn.LazyLinear(10)
            self.relu = lib.nn.ReLU()
            self.fc2 = lib.nn.LazyLinear(1)

        def forward(self, x):
            return self.fc2(self.relu(self.fc1(x)))

    lib.manual_seed(0)
    mlp = LazyMLP()
    lines = [repr(mlp.fc1), str(list(mlp.state_dict().items())[0])]
    out = mlp(lib.ones(5, 3))
    lines.append(repr(mlp.fc1))
    lines.append(str({k: tuple(v.shape) for k, v in mlp.state_dict().items()}))
    lines.append(str([round(v, 4) for v in out.flatten().tolist()]))
    fresh = LazyMLP()
    fresh.load_state_dict(mlp.state_dict())
    lines.append(repr(fresh.fc1))
    return lines


compare_with_pytorch(story, "plot_07_lazy_modules")

# %%
# Exercises
# ---------
# 1. Build ``nn.Sequential(nn.LazyLinear(3), nn.Linear(3, 2))`` and
#    ``nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))`` with the same seed and run both on a batch
#    with 4 features. Why do the second layers get different weights? (See "RNG order" in
#    ``lazy.py``.)
# 2. Write a ``LazyScale`` module with one ``UninitializedParameter`` that becomes a vector of the
#    input's last dimension, filled with ones. What must ``initialize_parameters`` do, and what is
#    ``cls_to_become``?
# 3. Load a lazy model's state dict (before its dry run) into an ordinary ``nn.Linear``. Read the
#    error. Which line of the loading code compares shapes?
# 4. In ``_infer_parameters``, what happens if ``initialize_parameters`` forgets one placeholder?
#    Try it with your ``LazyScale``.
