"""
.. _tutorial-parametrizations:

Parametrizations: a weight computed from another tensor
=======================================================

Sometimes a weight must keep a property while it trains: symmetric, orthogonal, with a fixed norm.
A *parametrization* stores an unconstrained tensor and computes the weight from it each time you
read ``module.weight``. The optimizer trains the unconstrained tensor; the layer only ever sees a
weight with the property. This tutorial registers one by hand, uses the three built-in ones, caches
the computation and removes it again.

**Source files this tutorial walks through**

* ``minitorch_nn/nn/utils/parametrize.py``: ``register_parametrization`` (with
  ``_inject_new_class`` and ``_inject_property``), ``ParametrizationList``, ``cached`` and
  ``CacheStats``, ``remove_parametrizations``, ``describe_parametrizations``.
* ``minitorch_nn/nn/utils/parametrizations.py``: ``orthogonal``, ``weight_norm`` and
  ``spectral_norm``.
"""

import minitorch_nn as torch
from minitorch_nn.nn.utils import parametrizations, parametrize

nn = torch.nn

# %%
# A parametrization is a module
# -----------------------------
# Any ``nn.Module`` whose ``forward`` maps the stored tensor ``X`` to the weight will do. This one
# keeps the upper triangle and mirrors it, so the result is always symmetric.


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


torch.manual_seed(0)
layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Symmetric())
print(layer.weight)
print("symmetric:", torch.equal(layer.weight, layer.weight.T))

# %%
# What registration changed
# -------------------------
# ``register_parametrization`` (``parametrize.py``) did three things:
#
# 1. moved the ``Parameter`` out of ``layer._parameters`` into
#    ``layer.parametrizations.weight.original`` (a ``ParametrizationList``);
# 2. gave this one object a new class, ``ParametrizedLinear`` (``_inject_new_class``), so that
# 3. a ``property`` named ``weight`` can live on that class (``_inject_property``) without touching
#    every other ``Linear``.

print(type(layer).__name__, "| base:", type(layer).__bases__[0].__name__)
print([name for name, _ in layer.named_parameters()])
print(parametrize.describe_parametrizations(layer))

# %%
# ``minitorch_nn.viz.parametrization_chain`` (``minitorch_nn/viz/parametrization_chain.py``) draws
# the chain: ``original`` (what an optimizer trains) through each parametrization to the weight the
# layer reads, with a heat map of each matrix. The computed weight is symmetric; the original is not.

import matplotlib.pyplot as plt

from minitorch_nn import viz

fig = viz.parametrization_chain(layer)
plt.show()

# %%
# Reading ``layer.weight`` runs the property's getter, which calls the ``ParametrizationList``,
# which runs ``Symmetric()(original)``. Gradients flow back to ``original``:

layer(torch.ones(1, 3)).sum().backward()
print("grad of original:\n", layer.parametrizations.weight.original.grad)

# %%
# Orthogonal
# ----------
# ``parametrizations.orthogonal`` keeps a weight ``Q`` with ``Q @ Q.T == I``. By default, for real
# square matrices, it maps through the matrix exponential of a skew-symmetric matrix.

torch.manual_seed(0)
rot = parametrizations.orthogonal(nn.Linear(4, 4))
Q = rot.weight.detach()
print("max |Q Q^T - I| =", float((Q @ Q.T - torch.eye(4)).abs().max()))
print(parametrize.describe_parametrizations(rot))

# %%
# Weight norm
# -----------
# ``weight_norm`` splits the weight into a magnitude ``original0`` (one number per output row with
# ``dim=0``) and a direction ``original1``, and computes ``weight = g * v / ||v||``.

torch.manual_seed(0)
wn = parametrizations.weight_norm(nn.Linear(3, 2))
g = wn.parametrizations.weight.original0
v = wn.parametrizations.weight.original1
print("g:", tuple(g.shape), "| v:", tuple(v.shape))
print("row norms of weight:", wn.weight.detach().norm(dim=1))
print("g:                  ", g.detach().flatten())

# %%
# Spectral norm
# -------------
# ``spectral_norm`` divides the weight by an estimate of its largest singular value. The estimate
# comes from power iteration: each forward in training mode does one more step and stores the
# vectors ``_u`` and ``_v`` as buffers. After a few calls the largest singular value is about 1.

torch.manual_seed(0)
sn = parametrizations.spectral_norm(nn.Linear(5, 4))
print("buffers:", [name for name, _ in sn.named_buffers()])
for _ in range(10):
    sn(torch.ones(1, 5))
print("singular values:", torch.linalg.svdvals(sn.weight.detach()))

# %%
# Caching
# -------
# Every read of ``layer.weight`` recomputes the chain. A forward that reads the weight many times
# (an RNN's recurrent weight, once per time step) pays that each time. Inside
# ``parametrize.cached()`` the first read stores the result and later reads reuse it. In
# minitorch_nn the block also yields a ``CacheStats`` that counts both (PyTorch yields ``None``):


def unrolled(model, steps):
    h = torch.zeros(1, 3)
    for _ in range(steps):
        h = torch.tanh(h @ model.weight.T + 1)
    return h


with parametrize.cached() as stats:
    unrolled(layer, 8)
print(stats)

# %%
# Drawn inside a ``cached()`` block after one read, the picture says the value is cached and
# shows the block's counts so far.

with parametrize.cached():
    _ = layer.weight  # one read computes and caches the weight
    fig = viz.parametrization_chain(layer, title="inside parametrize.cached(), after one read")
plt.show()

# %%
# Outside the block nothing is kept, so the next optimizer step always sees fresh weights.
#
# Removal
# -------
# ``remove_parametrizations(module, name)`` undoes registration. With ``leave_parametrized=True``
# (the default) the current *computed* weight becomes a plain ``Parameter`` again; with ``False``
# the stored ``original`` does. When nothing is left, the module gets its old class back.

before = layer.weight.detach().clone()
parametrize.remove_parametrizations(layer, "weight")
print(type(layer).__name__, "| keys:", list(layer.state_dict()))
print("kept the symmetric weight:", torch.equal(layer.weight.detach(), before))

# %%
# Compare with PyTorch
# --------------------
# The same steps with PyTorch, same seed: weights, state-dict keys, the spectral-norm estimate.
# ``compare_with_pytorch`` (``minitorch_nn/testing/pytorch_side.py``) prints our lines and
# PyTorch's one under the other (PyTorch runs now when it is installed, otherwise its lines come
# from a recording made with torch 2.13 in ``tutorials/torch_reference/``).

from minitorch_nn.testing.pytorch_side import compare_with_pytorch


def story(lib):
    P = lib.nn.utils.parametrize
    PZ = lib.nn.utils.parametrizations

    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    def r(t):
        return [round(x, 4) for x in t.detach().flatten().tolist()]

    lines = []
    lib.manual_seed(0)
    layer = lib.nn.Linear(3, 3)
    P.register_parametrization(layer, "weight", Symmetric())
    lines.append(f"{type(layer).__name__} {r(layer.weight)}")
    lines.append(" ".join(layer.state_dict()))
    lib.manual_seed(0)
    wn = PZ.weight_norm(lib.nn.Linear(3, 2))
    lines.append(" ".join(wn.state_dict()))
    lib.manual_seed(0)
    sn = PZ.spectral_norm(lib.nn.Linear(5, 4))
    for _ in range(10):
        sn(lib.ones(1, 5))
    lines.append(f"spectral_norm weight {r(sn.weight)[:4]}")
    P.remove_parametrizations(layer, "weight")
    lines.append(f"{type(layer).__name__} {' '.join(layer.state_dict())}")
    return lines


compare_with_pytorch(story, "plot_08_parametrizations")

# %%
# Exercises
# ---------
# 1. Register ``Symmetric`` and then a second parametrization, ``MatrixExp`` (``torch.matrix_exp``
#    of its input), on the same weight. What does ``describe_parametrizations`` print, and in which
#    order do the two run?
# 2. Give ``Symmetric`` a ``right_inverse(self, W)`` that returns ``W.triu()``. Assign
#    ``layer.weight = some_symmetric_matrix``. Which method in ``parametrize.py`` calls yours?
# 3. Build an ``SGD`` optimizer *before* registering a parametrization, then train one step. Does
#    the optimizer update ``original``? Read the "Why ``set_``?" paragraph in ``parametrize.py``.
# 4. Inside ``cached()``, change ``original`` in place and read ``weight`` again. What do you get,
#    and why is the cache emptied only when the outermost block exits?
