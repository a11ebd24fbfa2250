"""
.. _tutorial-export:

Export and weight swapping: the two views of a state dict
=========================================================

``torch.export.export(model, example_args)`` runs the model once and records every ``aten`` op it
calls into a graph: a program you can read, save, and run without the Python class that made it.
The program needs the model's tensors, and here a subtle point appears: a module names its tensors
in **two** ways. The *runtime* names come from ``named_parameters()`` and ``named_buffers()``; the
*serialization* names are the keys of ``state_dict()``, which state-dict hooks can rename. Export
uses the runtime names (PyTorch PR #137609), so a checkpoint saved through a renaming hook does not
fit an exported program as is. This tutorial exports a model with such a hook, looks at both views
and swaps new weights into the program.

**Source files this tutorial walks through**

* ``minitorch_nn/export/__init__.py``: ``export``; ``minitorch_nn/export/_trace.py``: the tracer
  that records one node per op.
* ``minitorch_nn/export/graph.py``: the recorded ``Graph`` and how it prints and runs.
* ``minitorch_nn/export/exported_program.py``: ``ExportedProgram`` (``state_dict``,
  ``graph_signature``, ``module()``, and minitorch_nn's ``swap_weights`` with its checks and hint).
* ``minitorch_nn/export/describe.py``: ``describe_state``, every tensor under its two names.
* ``minitorch_nn/_export/utils.py``: ``_disable_load_state_dict_hooks``, the runtime view of
  ``state_dict()``.
* ``minitorch_nn/export/serialize.py``: ``save`` and ``load`` of a program.
* ``minitorch_nn/nn/modules/_state_dict.py``: where state-dict post-hooks run.
"""

import os
import tempfile

import minitorch_nn as torch
from minitorch_nn._export.utils import _disable_load_state_dict_hooks

nn = torch.nn

# %%
# A model whose checkpoint uses old names
# ---------------------------------------
# A common reason for a state-dict hook: the layer was renamed from ``linear`` to ``fc``, and old
# checkpoints must keep loading, so saving writes the old names. The post-hook (run by
# ``state_dict`` in ``_state_dict.py``) renames keys in place. The model also has a persistent
# buffer ``mean`` and a non-persistent buffer ``calls``, which ``state_dict()`` leaves out.


def rename_fc_to_linear(module, state_dict, prefix, local_metadata):
    for key in list(state_dict):
        if key.startswith(prefix + "fc."):
            state_dict[key.replace("fc.", "linear.", 1)] = state_dict.pop(key)


def make_net(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(3, 2)
            self.register_buffer("mean", lib.zeros(3))
            self.register_buffer("calls", lib.zeros(()), persistent=False)
            self.register_state_dict_post_hook(rename_fc_to_linear)

        def forward(self, x):
            return self.fc(x - self.mean)

    return Net()


torch.manual_seed(0)
model = make_net(torch)
print("named_parameters:", [n for n, _ in model.named_parameters()])
print("named_buffers:   ", [n for n, _ in model.named_buffers()])
print("state_dict():    ", list(model.state_dict()))

# %%
# The two views side by side
# --------------------------
# ``describe_state`` (``describe.py``, not in PyTorch) prints each tensor's runtime name, its
# serialization name and whether ``state_dict()`` saves it.

print(torch.export.describe_state(model))

# %%
# Export: a graph of aten ops
# ---------------------------
# ``export`` (``export/__init__.py``) runs ``forward`` once on the example input with a tracer
# (``_trace.py``) that records each op. Every tensor the graph reads is a graph *input*: the
# parameters (``p_``), the buffers (``b_``) and then the user's inputs. ``print(ep.graph)`` gives
# FX's one-line-per-node form, as in PyTorch; ``ep.graph_module.print_readable()`` shows the same
# nodes as code, each group headed by the source line that produced it. ``nn.Linear`` is one
# ``aten.linear`` node, as in PyTorch's export (``export/composites.py``).

x = torch.randn(4, 3)
ep = torch.export.export(model, (x,))
print(ep.graph)
print(ep.graph_module.print_readable(print_output=False))

# %%
# The graph signature says what each input is, by runtime name (``target``):

print(ep.graph_signature)

# %%
# ``ep.state_dict`` holds the parameters and *persistent* buffers under their runtime names,
# whatever the hooks do; the non-persistent buffer is a constant of the program.

print("ep.state_dict:   ", list(ep.state_dict))
print("ep.constants:    ", list(ep.constants))
print("model.state_dict:", list(model.state_dict()))

# %%
# ``minitorch_nn.viz.module_tree`` (``minitorch_nn/viz/module_tree.py``) puts all three names of
# each tensor in one picture: the runtime name, the ``state_dict()`` key the hook renamed (in
# orange), and the name the program's ``state_dict`` uses.

import matplotlib.pyplot as plt

from minitorch_nn import viz

fig = viz.module_tree(model, program=ep)
plt.show()

# %%
# The program runs without the ``Net`` class: ``ep.module()`` replays the graph.

print("same output:", torch.equal(ep.module()(x), model(x)))

# %%
# Swapping in new weights: the wrong dict
# ---------------------------------------
# Say a better model was trained and we want its weights in the exported program without
# exporting again. ``ExportedProgram.swap_weights`` (minitorch_nn's own; ``exported_program.py``)
# checks every key, shape, dtype and device before changing anything. Given the trained model's
# ``state_dict()``, it refuses and lists the missing and unexpected keys, as ``load_state_dict``
# would:

torch.manual_seed(1)
trained = make_net(torch)
try:
    ep.swap_weights(trained.state_dict())
except RuntimeError as err:
    print(err)

# %%
# When the unexpected keys hold the very tensors the program expects (here: the exported model's
# own ``state_dict()``), ``check_weights`` can tell that the keys were renamed and adds a hint
# saying how to get the runtime names (``_hooked_keys_hint``):

try:
    ep.swap_weights(model.state_dict())
except RuntimeError as err:
    print(err)

# %%
# Swapping in new weights: the runtime view
# -----------------------------------------
# ``_disable_load_state_dict_hooks`` (``_export/utils.py``, as in PyTorch's ``torch/_export/utils.py``)
# takes the module's state-dict hooks off for the duration of a ``with`` block, so
# ``state_dict()`` inside it returns the runtime names:

with _disable_load_state_dict_hooks(trained):
    runtime_sd = trained.state_dict()
print(list(runtime_sd))
ep.swap_weights(runtime_sd)
print("program now computes the trained model:", torch.equal(ep.module()(x), trained(x)))
print("hooks back after the block:", list(trained.state_dict()))

# %%
# Saving and loading the program
# ------------------------------
# ``torch.export.save`` and ``load`` (``serialize.py``) write the graph, its signature and its
# tensors to one file; the loaded program gives the same output.

with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "net.mtep")
    torch.export.save(ep, path)
    loaded = torch.export.load(path)
print("loaded program, same output:", torch.equal(loaded.module()(x), trained(x)))

# %%
# Compare with PyTorch
# --------------------
# The same model exported with ``torch.export``, same seed: the two views, the signature's
# targets, ``ep.state_dict`` and the output. (PyTorch has no ``swap_weights`` or
# ``describe_state``; those are compared by their effect, the runtime-view dict.)
# ``compare_with_pytorch`` (``minitorch_nn/testing/pytorch_side.py``) prints our lines and
# PyTorch's one under the other (PyTorch runs now when it is installed, otherwise its lines come
# from a recording made with torch 2.13 in ``tutorials/torch_reference/``).

from minitorch_nn.testing.pytorch_side import compare_with_pytorch


def story(lib):
    from importlib import import_module

    import_module(f"{lib.__name__}.export")
    disable = import_module(f"{lib.__name__}._export.utils")._disable_load_state_dict_hooks
    lib.manual_seed(0)
    model = make_net(lib)
    x = lib.ones(4, 3)
    ep = lib.export.export(model, (x,))
    lines = [
        "state_dict(): " + " ".join(model.state_dict()),
        "ep.state_dict: " + " ".join(ep.state_dict),
        "targets: " + " ".join(str(s.target) for s in ep.graph_signature.input_specs),
        f"output: {[round(v, 4) for v in ep.module()(x).flatten().tolist()]}",
    ]
    with disable(model):
        lines.append("runtime view: " + " ".join(model.state_dict()))
    return lines


compare_with_pytorch(story, "plot_09_export_weight_swap")

# %%
# Exercises
# ---------
# 1. Make ``calls`` persistent. Where does it move in ``ep.graph_signature``, ``ep.state_dict``
#    and ``describe_state``?
# 2. Change ``forward`` to ``return self.fc(x - self.mean) * 2``. Which new node appears in the
#    graph, and which source line heads it?
# 3. Swap in a dict whose ``fc.weight`` is float64. Read the error; then find in
#    ``exported_program.py`` the check that caught it, and explain why nothing was changed.
# 4. Instead of ``_disable_load_state_dict_hooks``, build the runtime dict from
#    ``named_parameters()`` and ``named_buffers()``. Which buffer must you leave out, and why?
