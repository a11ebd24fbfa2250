"""
.. _tutorial-autograd:

Autograd: the graph, the engine and a custom ``Function``
==========================================================

Every op on a tensor that requires grad leaves a node behind. ``loss.backward()`` walks those
nodes from the loss back to the leaves, in an order that makes sure each node has received all of
its incoming gradients before it runs. This tutorial looks at the nodes, at the walk, and at the
places where you can step in: a custom ``autograd.Function``, hooks and ``create_graph``.

**Source files this tutorial walks through**

* ``minitorch_nn/autograd/recording.py``: the autograd layer of the dispatch chain, which makes a
  node for each differentiable op and sets the output's ``grad_fn``.
* ``minitorch_nn/autograd/graph.py``: ``Node`` (``next_functions``, hooks) and
  ``AccumulateGrad``, the node at each leaf.
* ``minitorch_nn/autograd/derivatives.py``: the backward formula of each op (``MulBackward0``...).
* ``minitorch_nn/autograd/engine.py``: ``topological_order`` and ``run_backward``, the engine.
* ``minitorch_nn/autograd/function.py``: ``autograd.Function`` and its ``ctx``
  (``save_for_backward``, ``saved_tensors`` with the version check).

Both the recorder and the engine have compiled *twins* that run by default:
``_ext/twins/autograd/recording.pyx`` (the twin of ``recording.py``'s autograd layer) and
``_ext/twins/autograd/engine.pyx`` (the twin of ``run_backward``). They make the same nodes and run the same
steps, faster. The walk-throughs below that follow ``recording.py`` and ``run_backward`` line by
line run inside ``with torch.backends.compiled.flags(enabled=False):``, which switches every twin
off, so that what you read is what runs (tutorial 12, "Making it fast", is about the twins).
"""

import minitorch_nn as torch
from minitorch_nn.autograd.engine import topological_order

# %%
# A node per op: ``grad_fn``
# --------------------------
# The autograd layer runs before the kernel for every op: ``autograd_layer`` in ``recording.py``
# (by default its compiled twin, ``autograd_layer`` of ``_ext/twins/autograd/recording.pyx``, runs
# in its place; with the switch off, as
# here, ``recording.py`` itself runs). When an input requires grad it creates a node whose class is
# named after the op (``SinBackward0``, ``MulBackward0``) and stores it in the output's
# ``grad_fn``. A leaf that you created yourself has no ``grad_fn``.

torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)
w = torch.randn(3, requires_grad=True)
with torch.backends.compiled.flags(enabled=False):   # recording.py records every op below
    y = (x * w).sin().sum()
print("x.grad_fn:", x.grad_fn, "| is_leaf:", x.is_leaf)
print("y.grad_fn:", type(y.grad_fn).__name__)

# %%
# Edges: ``next_functions``
# -------------------------
# Each node (``Node`` in ``graph.py``) knows where to send gradients: ``next_functions`` is a tuple
# of ``(node, output_nr)`` pairs, one per differentiable input. Following them from ``y`` walks the
# whole graph back to the leaves.


def show(node, depth=0):
    print("  " * depth + type(node).__name__)
    for child, _ in node.next_functions:
        if child is not None:
            show(child, depth + 1)


show(y.grad_fn)

# %%
# ``minitorch_nn.viz.autograd_graph`` (``minitorch_nn/viz/autograd_graph.py``) draws the same walk
# in layers, one layer per step back from ``y``, with what each node saved for backward: the
# tensor's name in the formula, its dtype and shape, and the version it had when saved. The leaves
# are named after the tensors we pass in ``names``.

import matplotlib.pyplot as plt

from minitorch_nn import viz

fig = viz.autograd_graph(y, names={"x": x, "w": w})
plt.show()

# %%
# ``AccumulateGrad``: where gradients land
# ----------------------------------------
# The graph ends at one ``AccumulateGrad`` node per leaf (``graph.py``). Its ``variable`` is the
# leaf itself; when the engine reaches it, it adds the incoming gradient into ``leaf.grad``.

mul_node = y.grad_fn.next_functions[0][0].next_functions[0][0]
acc_x = mul_node.next_functions[0][0]
print(type(acc_x).__name__, "| variable is x:", acc_x.variable is x)

# %%
# The engine's order
# ------------------
# ``run_backward`` in ``engine.py`` first calls ``topological_order(roots)``: an iterative
# depth-first search that lists each node before every node it sends gradients to. From that list
# it counts, for each node, the edges leading into it; a node is ready once all of them have
# delivered, so it runs only after all its gradient contributions are summed. Among ready nodes,
# the one made last in the forward pass runs first, as in PyTorch (``ready_queue.py``).
# Here ``x`` is used twice; its ``AccumulateGrad`` comes last, after both users.

z = x * x + x.exp()
print([type(n).__name__ for n in topological_order([z.sum().grad_fn])])

# %%
# Running it: the gradient of ``sum(sin(x * w))`` with respect to ``x`` is ``cos(x * w) * w``.
# With the switch off, ``y.backward()`` runs ``run_backward``'s loop in ``engine.py`` line by
# line; by default its twin ``run_backward`` in ``_ext/twins/autograd/engine.pyx`` runs instead, with the
# same phases and the same names.

with torch.backends.compiled.flags(enabled=False):
    y.backward()
print("x.grad:  ", x.grad)
print("formula: ", (x * w).detach().cos() * w.detach())

# %%
# A custom ``autograd.Function``
# ------------------------------
# ``Function`` (``function.py``) lets you write both directions yourself. ``apply`` runs
# ``forward`` with gradient recording off, then makes a node of class ``CubeBackward`` whose
# ``backward`` calls yours. ``ctx.save_for_backward`` keeps tensors for later.


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t**3

    @staticmethod
    def backward(ctx, grad_out):
        (t,) = ctx.saved_tensors
        return 3 * t**2 * grad_out


x.grad = None
out = Cube.apply(x)
print("grad_fn:", type(out.grad_fn).__name__)
out.sum().backward()
print("x.grad:", x.grad)
print("3 x^2: ", 3 * x.detach() ** 2)

# %%
# ``gradcheck`` (``minitorch_nn/autograd/gradcheck.py``) compares your backward with finite
# differences. It wants float64 inputs.

x64 = torch.randn(4, dtype=torch.float64, requires_grad=True)
print("gradcheck:", torch.autograd.gradcheck(Cube.apply, (x64,)))

# %%
# The saved-tensor version check
# ------------------------------
# Every tensor carries a version counter, bumped by each in-place op (tutorial 1). When a node
# saves a tensor it records the version; ``saved_tensors`` compares it when backward reads it.
# ``sin`` saves its input, so changing that input in place between forward and backward is an
# error, with PyTorch's message:

a = torch.randn(3, requires_grad=True)
b = a * 2
c = b.sin()  # saves b at version 0
b.add_(1)  # b is now at version 1
print("b._version:", b._version)
try:
    c.sum().backward()
except RuntimeError as err:
    print("RuntimeError:", str(err)[:160], "...")

# %%
# In the picture of ``c``'s graph, the saved ``self`` of ``SinBackward0`` is marked stale: saved
# at version 0, now at version 1.

fig = viz.autograd_graph(c)
plt.show()

# %%
# Views go stale with the version counter
# ---------------------------------------
# A view shares its base's version counter, and remembers the counter's value when its node was
# made (``view_version`` on the payload, set by ``_C.mark_view``). Once the base (or any other
# view of it) is written in place, even under ``no_grad``, the view's old node would miss the
# write, so reading ``grad_fn`` gives a fresh ``AsStridedBackward0`` that leads to the base's
# current history (``graph.current_grad_fn``, ``inplace.regenerate_view_node``), as in PyTorch:

b = torch.arange(6.0).reshape(2, 3).requires_grad_() * 1
row = b[0]
print("before:", type(row.grad_fn).__name__, "version", row._version)
with torch.no_grad():
    b.mul_(10)
print("after b.mul_ under no_grad:", type(row.grad_fn).__name__, "version", row._version)
b[1].zero_()   # a write through another view: b's node becomes CopySlices
print("b:", b.grad_fn.name(), "| row leads to:", row.grad_fn.next_functions[0][0].name())

# %%
# Hooks
# -----
# ``Tensor.register_hook(fn)`` runs ``fn(grad)`` when the gradient for that tensor is computed;
# a returned tensor replaces the gradient (``_run_tensor_hooks`` in ``engine.py``). Nodes have
# hooks too: ``grad_fn.register_hook(fn)`` sees the node's input and output gradients.

x.grad = None
handle = x.register_hook(lambda g: g * 10)
(x * x).sum().backward()
print("with the hook (10 * 2x):", x.grad)
handle.remove()

seen = []
q = (x * 3).sum()
q.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(type(q.grad_fn).__name__))
q.backward()
print("node hook ran on:", seen)

# %%
# Higher-order gradients
# ----------------------
# With ``create_graph=True`` the engine keeps recording while it runs the backward formulas
# (``run_backward`` turns grad mode on), so the gradient is itself part of a graph and can be
# differentiated again. ``d/dx x^3 = 3x^2`` and ``d/dx 3x^2 = 6x``:

(g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
print("first: ", g)
(g2,) = torch.autograd.grad(g.sum(), x)
print("second:", g2)
print("6x:    ", 6 * x.detach())

# %%
# Compare with PyTorch
# --------------------
# The same steps with PyTorch, same seed: the node names, the order, the gradients and the error
# text should match. ``compare_with_pytorch`` (``minitorch_nn/testing/pytorch_side.py``) prints
# our lines and PyTorch's one under the other (PyTorch runs now when it is installed, otherwise
# its lines come from a recording made with torch 2.13 in ``tutorials/torch_reference/``).

from minitorch_nn.testing.pytorch_side import compare_with_pytorch


def story(lib):
    lines = []
    lib.manual_seed(0)
    x = lib.randn(3, requires_grad=True)
    w = lib.randn(3, requires_grad=True)
    y = (x * w).sin().sum()
    names = []
    node = y.grad_fn
    while node is not None:
        names.append(type(node).__name__)
        nxt = [c for c, _ in node.next_functions if c is not None]
        node = nxt[0] if nxt else None
    lines.append(" -> ".join(names))
    y.backward()
    lines.append(f"x.grad {[round(v, 4) for v in x.grad.tolist()]}")
    (g,) = lib.autograd.grad((x**3).sum(), x, create_graph=True)
    (g2,) = lib.autograd.grad(g.sum(), x)
    lines.append(f"second derivative {[round(v, 4) for v in g2.tolist()]}")
    a = lib.randn(3, requires_grad=True)
    b = a * 2
    c = b.sin()
    b.add_(1)
    try:
        c.sum().backward()
    except RuntimeError as err:
        lines.append(str(err)[:90])
    return lines


compare_with_pytorch(story, "plot_04_autograd")

# %%
# Exercises
# ---------
# 1. Draw the graph of ``(x * x + x.exp()).sum()`` by hand, then check it with ``show``. Why does
#    ``x``'s ``AccumulateGrad`` appear only once in ``topological_order``?
# 2. In ``engine.py``, replace ``topological_order`` with a plain breadth-first walk (edit the
#    file and restart, or assign ``engine.topological_order = my_walk``). Does any gradient become
#    wrong? Which parts of ``run_backward`` rely on the order, and which only on the set of nodes?
#    Every backward pass calls ``topological_order``, with the compiled twins on or off, so your
#    walk runs either way.
# 3. Add a ``print(node.name())`` after ``node = ready.pop()`` in ``run_backward`` and restart.
#    ``loss.backward()`` now prints every node, with the switch on too: the compiled twin of
#    ``run_backward`` sees at import that its original no longer has its recorded fingerprint,
#    turns itself off with a warning, and ``torch.backends.compiled.disabled()`` says why (a
#    rebuild does not change that). Which line would you add to ``_ext/twins/autograd/engine.pyx`` to make
#    the twin print too? (Tutorial 12 shows how a twin is then brought back.)
# 4. Write an ``autograd.Function`` for ``relu`` that saves only a boolean mask (not the input).
#    Check it with ``gradcheck``. Does an in-place change of the input still raise the version
#    error? Why not?
# 5. Use ``torch.autograd.grad`` with ``create_graph=True`` twice to get the third derivative of
#    ``x.sin().sum()``. Which node names appear in the second gradient's graph?
