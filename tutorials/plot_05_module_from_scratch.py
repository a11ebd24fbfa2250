"""
.. _tutorial-module:

``nn.Module`` from scratch: registration, hooks, state dicts, the meta device
=============================================================================

An ``nn.Module`` looks like a plain Python object with attributes, but assigning a layer or a
``Parameter`` to it does something special: the value is *registered*, so that ``parameters()``,
``state_dict()``, ``to()`` and hooks can find it later. This tutorial builds a small network and
follows each of those mechanisms into the source.

**Source files this tutorial walks through**

* ``minitorch_nn/nn/modules/module.py``: ``Module.__setattr__``, ``__getattr__``,
  ``register_parameter``, ``register_buffer``, ``named_parameters``.
* ``minitorch_nn/nn/modules/_hooks.py``: ``_call_impl`` (what ``module(x)`` runs) and the
  forward hooks.
* ``minitorch_nn/nn/modules/_state_dict.py``: ``state_dict``, ``load_state_dict`` and its error
  message with the prefix hint (``_prefix_hint``).
* ``minitorch_nn/_tensor_module_load.py``: ``Tensor.module_load``, how one tensor takes a
  checkpoint value.
* ``minitorch_nn/nn/modules/_conversion.py``: ``to_empty``, used after building on the meta
  device.
"""

import minitorch_nn as torch

nn = torch.nn

# %%
# Registration happens in ``__setattr__``
# ---------------------------------------
# ``Module.__setattr__`` (``module.py``) looks at the value's type. A ``Parameter`` goes into
# ``self._parameters``, a ``Module`` into ``self._modules``; ``register_buffer`` puts a tensor
# into ``self._buffers``. None of them end up in the instance ``__dict__``: reading ``self.fc1``
# falls through to ``Module.__getattr__``, which searches the three dictionaries.


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.scale = nn.Parameter(torch.ones(1))
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))
        self.fc2 = nn.Linear(3, 2)

    def forward(self, x):
        self.steps += 1
        return self.fc2(self.fc1(x).relu()) * self.scale


torch.manual_seed(0)
net = Net()
print("_parameters:", list(net._parameters))
print("_modules:   ", list(net._modules))
print("_buffers:   ", list(net._buffers))
print("'fc1' in __dict__:", "fc1" in net.__dict__)

# %%
# The order of ``named_parameters``
# ---------------------------------
# ``named_parameters`` yields the module's *own* parameters first, then recurses into the children
# in the order they were assigned. So ``scale``, assigned after ``fc1``, still comes first. The
# order matters: an optimizer's ``param_groups`` and its saved state are indexed by it.

for name, p in net.named_parameters():
    print(f"{name:11s} {tuple(p.shape)}")

# %%
# ``module(x)`` and hooks
# -----------------------
# Calling a module runs ``_call_impl`` in ``_hooks.py``: forward pre-hooks (which may replace the
# inputs), then ``forward``, then forward hooks (which may replace the output). A hook returns a
# handle; ``handle.remove()`` takes it away. Global hooks
# (``nn.modules.module.register_module_forward_hook``) run before every module's own; they live
# in dicts that are globals of ``nn/modules/module.py`` and are looked up there at each call, so
# rebinding one (``module._global_forward_hooks = OrderedDict()``) clears it, as in PyTorch.
# A full backward hook passes the module's inputs through an identity ``autograd.Function``
# (``_backward_hooks.py``), so a ``forward`` that writes into its input in place (``x += 1``)
# gets PyTorch's "Output 0 of BackwardHookFunction is a view..." error: clone the input first.

calls = []
pre = net.register_forward_pre_hook(lambda mod, args: calls.append(f"pre: {len(args)} input(s)"))
post = net.fc1.register_forward_hook(
    lambda mod, args, out: calls.append(f"fc1 out: {tuple(out.shape)}")
)
out = net(torch.ones(5, 4))
print(calls)
pre.remove()
post.remove()
net(torch.ones(5, 4))
print("after remove():", len(calls), "entries, steps =", int(net.steps))

# %%
# ``state_dict``: parameters and buffers by dotted name
# -----------------------------------------------------
# ``state_dict`` (``_state_dict.py``) saves each module's own parameters and buffers under its
# prefix, then each child under ``prefix + name + "."``. Buffers are included; plain attributes
# are not.

sd = net.state_dict()
for k, v in sd.items():
    print(f"{k:11s} {tuple(v.shape)} {v.dtype}")

# %%
# ``minitorch_nn.viz.module_tree`` (``minitorch_nn/viz/module_tree.py``) draws the whole module:
# each submodule with the hooks registered on it, and each parameter and buffer with its shape,
# its runtime name (``named_parameters``, ``named_buffers``) and its ``state_dict`` key. A forward
# hook is put back on ``fc1`` for the picture.

import matplotlib.pyplot as plt

from minitorch_nn import viz

post = net.fc1.register_forward_hook(lambda mod, args, out: None)
fig = viz.module_tree(net)
plt.show()
post.remove()

# %%
# ``load_state_dict`` and its error message
# -----------------------------------------
# Loading compares key sets: keys the model has but the dict lacks are *missing*, keys the dict has
# but the model lacks are *unexpected*. Both go into one ``RuntimeError`` with PyTorch's text. A
# common cause is a checkpoint saved from a wrapper, so every key has an extra ``"model."``. After
# PyTorch's message, minitorch_nn adds a hint line (``_prefix_hint``) that names the prefix.

wrapped = {"model." + k: v for k, v in sd.items()}
try:
    net.load_state_dict(wrapped)
except RuntimeError as err:
    print(err)

# %%
# Strip the prefix as the hint says, and it loads:

print(net.load_state_dict({k.removeprefix("model."): v for k, v in wrapped.items()}))

# %%
# ``Tensor.module_load``: one tensor at a time
# --------------------------------------------
# By default ``load_state_dict`` simply copies each value into the parameter (``copy_``). With the
# swap flag on (``torch.__future__.set_swap_module_params_on_conversion(True)``, tutorial 2) it
# instead asks the module's tensor how to take the checkpoint's value:
# ``new = param.module_load(value, assign=...)`` (``_tensor_module_load.py``), then
# ``swap_tensors(param, new)`` (``_swap_in`` in ``_state_dict.py``). The default ``module_load``
# copies into the existing storage; with ``assign=True`` it hands back the checkpoint's own tensor.
# A tensor subclass can change this through ``__torch_function__``. ``load_state_dict`` calls it
# under ``no_grad``, and so must we: it copies into a leaf that requires grad.

p = nn.Parameter(torch.zeros(2))
with torch.no_grad():
    copied = p.module_load(torch.ones(2, dtype=torch.float64))
    assigned = p.module_load(torch.ones(2, dtype=torch.float64), assign=True)
print("copy:  ", copied.dtype, "shares p's storage:", copied._impl.storage is p._impl.storage)
print("assign:", assigned.dtype, "shares p's storage:", assigned._impl.storage is p._impl.storage)

# %%
# Building on the meta device
# ---------------------------
# A big model's random initialisation is wasted work when a checkpoint will overwrite it. Under
# ``with torch.device("meta")`` every tensor is a *meta* tensor: shapes and dtypes, no storage.

with torch.device("meta"):
    big = Net()
print(big.fc1.weight)

# %%
# Two ways to make it real. ``to_empty(device="cpu")`` (``_conversion.py``) gives every parameter
# uninitialised CPU storage, which ``load_state_dict`` then fills:

big.to_empty(device="cpu")
print(big.load_state_dict(sd), "|", big.fc1.weight.device)
print("same output:", torch.equal(big(torch.ones(1, 4)), net(torch.ones(1, 4))))

# %%
# Or skip the allocation entirely: ``load_state_dict(sd, assign=True)`` makes the module's
# parameters *be* the checkpoint's tensors (``module_load`` with ``assign=True``, then wrapped in
# ``Parameter`` again).

with torch.device("meta"):
    big = Net()
print(big.load_state_dict(sd, assign=True), "|", big.fc1.weight.device)
print("is a Parameter:", isinstance(big.fc1.weight, nn.Parameter))
print("shares the checkpoint's storage:", big.fc1.weight._impl.storage is sd["fc1.weight"]._impl.storage)

# %%
# Compare with PyTorch
# --------------------
# The same network with PyTorch, same seed: names, order, outputs and the error text (PyTorch has
# no hint line, so we compare the message up to it). ``compare_with_pytorch``
# (``minitorch_nn/testing/pytorch_side.py``) prints our lines and PyTorch's one under the other
# (PyTorch runs now when it is installed, otherwise its lines come from a recording made with
# torch 2.13 in ``tutorials/torch_reference/``).

from minitorch_nn.testing.pytorch_side import compare_with_pytorch


def story(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = lib.nn.Linear(4, 3)
            self.scale = lib.nn.Parameter(lib.ones(1))
            self.register_buffer("steps", lib.zeros((), dtype=lib.int64))
            self.fc2 = lib.nn.Linear(3, 2)

        def forward(self, x):
            return self.fc2(self.fc1(x).relu()) * self.scale

    lib.manual_seed(0)
    net = Net()
    lines = [" ".join(n for n, _ in net.named_parameters()), " ".join(net.state_dict())]
    lines.append(str([round(v, 4) for v in net(lib.ones(1, 4)).flatten().tolist()]))
    try:
        net.load_state_dict({"model." + k: v for k, v in net.state_dict().items()})
    except RuntimeError as err:
        lines.append(str(err).split("\nHint")[0].replace("\n", " ")[:100])
    with lib.device("meta"):
        meta_net = Net()
    meta_net.load_state_dict(net.state_dict(), assign=True)
    lines.append(f"assign=True: {meta_net.fc1.weight.device}")
    return lines


compare_with_pytorch(story, "plot_05_module_from_scratch")

# %%
# Exercises
# ---------
# 1. Assign a plain tensor (not a ``Parameter``) as ``self.w = torch.ones(2)`` in ``__init__``.
#    Is it in ``state_dict()``? Read ``__setattr__`` in ``module.py`` to explain, then fix it with
#    ``register_buffer``, and try ``persistent=False``.
# 2. Write a forward pre-hook that doubles the input. What must it return, and what happens if it
#    returns ``None``? Find the line in ``_call_impl`` that decides.
# 3. Load a state dict whose keys lack a prefix the model has (``nn.Sequential(net)``). What does
#    the hint say now? Find the branch in ``_prefix_hint``.
# 4. After ``to_empty``, print a parameter before loading. Why are the values arbitrary, and why
#    is that fine?
