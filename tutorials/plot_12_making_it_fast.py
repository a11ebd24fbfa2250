"""
.. _tutorial-making-it-fast:

Making it fast: compiled twins, one switch, and guards
======================================================

Everything the earlier tutorials walk through is Python, written to be read. Python is slow for
the tiny ops of a small model: a ``+`` on four numbers costs a few microseconds of bookkeeping
before numpy does any arithmetic. PyTorch does that bookkeeping in C++. minitorch_nn keeps its
readable Python as the *reference* and gives a few hot spots a compiled *twin* (Cython, in
``_ext/``) that does the same work faster. This tutorial shows the rules that keep the twins
honest: one switch that turns them all off, a guard that makes a twin step aside when what it
mirrors has been replaced, and fingerprints that catch an edit to the source.

**Source files this tutorial walks through**

* ``minitorch_nn/backends/compiled.py``: the switch ``torch.backends.compiled`` (``enabled``,
  ``flags(enabled=...)``, ``disabled()``).
* ``minitorch_nn/autograd/engine.py`` and its twin ``_ext/twins/autograd/engine.pyx``: ``run_backward``.
* ``minitorch_nn/autograd/recording.py`` and its twin ``_ext/twins/autograd/recording.pyx``: the autograd
  layer that records a node per op.
* ``minitorch_nn/backends/cpu/pointwise.py``: the cpu kernel of ``aten.add.Tensor``, whose work
  its twin ``_ext/twins/backends/cpu/pointwise.pyx`` does for ``a + b`` on small plain tensors.
* ``minitorch_nn/backends/_fingerprint.py`` and ``minitorch_nn/_twin_manifest.json``: the
  fingerprints of the originals.
"""

import inspect
import timeit
from pathlib import Path

import matplotlib.pyplot as plt

import minitorch_nn as torch
from minitorch_nn.autograd import engine
from minitorch_nn.backends import _fingerprint, compiled

# %%
# One switch
# ----------
# ``torch.backends.compiled`` sits where PyTorch keeps its backend flags
# (``torch.backends.cudnn.enabled``). ``enabled`` is on by default; ``flags(enabled=False)`` turns
# every twin off for a block and restores the old value after it; the environment variable
# ``MINITORCH_NN_COMPILED=0`` turns them off from import on. With the switch off, only the
# readable code runs: the dispatcher, the Python kernels, ``recording.py`` and ``run_backward``.

print("enabled:", torch.backends.compiled.enabled)
with torch.backends.compiled.flags(enabled=False):
    print("inside flags(enabled=False):", torch.backends.compiled.enabled)
print("after the block:", torch.backends.compiled.enabled)
print("twins turned off by a changed original:", torch.backends.compiled.disabled())

# %%
# Both settings give the same results. Here is a small training step's loss and gradients, computed
# once each way and compared bit for bit.

torch.manual_seed(0)
w1 = torch.randn(8, 16, requires_grad=True)
w2 = torch.randn(16, 4, requires_grad=True)
x = torch.randn(32, 8)
target = torch.randint(0, 4, (32,))


def step():
    w1.grad = w2.grad = None
    loss = torch.nn.functional.cross_entropy((x @ w1).relu() @ w2, target)
    loss.backward()
    return loss


results = {}
for on in (True, False):
    with torch.backends.compiled.flags(enabled=on):
        loss = step()
        results[on] = (loss.item(), w1.grad.numpy().tobytes(), w2.grad.numpy().tobytes())
print("same loss and gradients either way:", results[True] == results[False])

# %%
# What the twins buy
# ------------------
# Timing both settings (the best of a few short runs, so these numbers move a little from build to
# build): a ``+`` on tiny tensors, where the time is all bookkeeping, and the training step above.

a, b = torch.ones(4), torch.ones(4)


def best_us(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


timings = {}
for on in (True, False):
    with torch.backends.compiled.flags(enabled=on):
        timings[on] = {"a + b": best_us(lambda: a + b, 2000), "training step": best_us(step, 30)}
for name in timings[True]:
    fast, readable = timings[True][name], timings[False][name]
    print(f"{name:14s} twins on {fast:7.1f} us   off {readable:7.1f} us   ({readable / fast:.1f}x)")

fig, ax = plt.subplots(figsize=(6, 2.4), layout="constrained")
names = list(timings[True])
ax.barh([n + ", twins off" for n in names], [timings[False][n] for n in names], color="tab:gray")
ax.barh([n + ", twins on" for n in names], [timings[True][n] for n in names], color="tab:blue")
ax.set_xscale("log")
ax.set_xlabel("microseconds per call (log scale)")
plt.show()

# %%
# A twin beside its original
# --------------------------
# ``loss.backward()`` ends in ``run_backward`` (``engine.py``). Its first lines hand the pass to the
# compiled twin while the switch is on and the twin's guards hold; below them is the loop the twin
# copies, phase for phase and with the same names.

source = inspect.getsource(engine.run_backward)
print(source[: source.index("    # Where to capture gradients")])

# %%
# ``_send``, which the loop calls for every node, puts each gradient into the buffer of the node
# it is for. Here is the original, then its twin from ``_ext/twins/autograd/engine.pyx``: the same steps,
# with C types, so that Cython turns the dictionary and tuple operations into C calls.

print(inspect.getsource(engine._send))
pyx = Path(torch.__file__).resolve().parents[1] / "_ext" / "twins" / "autograd" / "engine.pyx"
if pyx.exists():
    text = pyx.read_text()
    start = text.index("cdef int _send(")
    print(text[start : text.index("\n\n\n", start)])
else:
    print("(the twin's source is not installed here; see _ext/twins/autograd/engine.pyx in the repository)")

# %%
# The same holds for kernels. This is the cpu kernel of ``aten.add.Tensor``
# (``backends/cpu/pointwise.py``); for small plain cpu tensors, ``a + b`` runs its twin
# ``tensor_add`` in ``_ext/twins/backends/cpu/pointwise.pyx``, which makes the same numpy calls without going through
# the dispatcher.

add = torch.ops.aten.add.Tensor
original_add = add.kernel_for("cpu")
print(inspect.getsource(original_add))

# %%
# Guards: a twin steps aside for code you replace
# -----------------------------------------------
# A twin runs only while what it mirrors is the object it was built for: the kernel registered
# for its op, the functions of ``engine.py`` or ``recording.py`` it copies. That check is an
# identity comparison, made at every call. Register your own kernel for ``aten.add.Tensor`` and
# every spelling of ``+`` runs it, with the switch on:

calls = []


def my_add(a, b, alpha=1):
    calls.append(1)
    return original_add(a, b, alpha=alpha)


add.impl("cpu")(my_add)
try:
    for spelling, fn in {"a + b": lambda: a + b, "torch.add(a, b)": lambda: torch.add(a, b),
                         "a.add(b)": lambda: a.add(b), "a + 1": lambda: a + 1}.items():
        before = len(calls)
        fn()
        print(f"{spelling:16s} ran my_add: {len(calls) > before}")
    ran_everywhere = len(calls) == 4
finally:
    add.impl("cpu")(original_add)   # put the original back: the twin runs again
print("every spelling ran the new kernel:", ran_everywhere)
assert ran_everywhere

# %%
# The engine's twin does the same for the functions of ``engine.py`` it relies on. Replace
# ``_send`` with a version that counts its calls, and ``backward()`` runs ``run_backward``'s own
# loop, which calls it, once per node:

sent = []
readable_send = engine._send
engine._send = lambda node, *rest: sent.append(node.name()) or readable_send(node, *rest)
try:
    (a.clone().requires_grad_() * 2).sum().backward()
finally:
    engine._send = readable_send
print("_send ran for:", sent)
print("the twin's guards hold again:", engine._twin.guards_hold())

# %%
# Edits to the source: fingerprints
# ---------------------------------
# A twin is compiled from its own source, so an edit to the Python original does not reach it, not
# even after a rebuild. For that case the fingerprints of the originals, as they were when the twins
# were written to match them, are part of the source (``minitorch_nn/_twin_manifest.json``): a hash
# of each function's bytecode, names and constants, not of its line numbers or local variable names
# (``backends/_fingerprint.py``). At import, a twin whose original no longer has its recorded
# fingerprint turns itself off, warns once, and is listed by ``torch.backends.compiled.disabled()``
# (``compiled.check_original``). Here are some of the originals the engine's twin mirrors, and how a
# change shows up:

for fn in engine._twin_originals()[:5]:
    print(f"{fn.__qualname__:22s} changed: {compiled.original_changed(fn) is not None}")


def one_version(x):
    y = x + 1
    return y


def moved_and_renamed(x):

    result = x + 1
    return result


def edited(x):
    y = x + 2
    return y


fingerprint = _fingerprint.code_fingerprint
print("moved, local renamed:", fingerprint(one_version.__code__) == fingerprint(moved_and_renamed.__code__))
print("an edit is seen:     ", fingerprint(one_version.__code__) != fingerprint(edited.__code__))

# %%
# Compare with PyTorch
# --------------------
# PyTorch has no such switch: its C++ is not meant to be edited by its users. Here it exists so that
# the fast path and the reading path can be compared, timed and taught, and either way the numbers
# are PyTorch's. The story below runs one small forward and backward pass with the switch on and
# again with it off; ``compare_with_pytorch`` (``minitorch_nn/testing/pytorch_side.py``) prints our
# lines and PyTorch's one under the other (PyTorch runs now when installed, else its lines come
# from a recording made with torch 2.13).

from minitorch_nn.testing.pytorch_side import compare_with_pytorch


def story(lib):
    lines = []
    switch = getattr(getattr(lib, "backends", None), "compiled", None)
    for enabled in (True, False):
        lib.manual_seed(0)
        x = lib.randn(3, 4, requires_grad=True)
        w = lib.randn(4, 2, requires_grad=True)
        if switch is not None:   # minitorch_nn: this pass with the switch set; PyTorch: as it is
            with switch.flags(enabled=enabled):
                loss = (x @ w).tanh().sum()
                loss.backward()
        else:
            loss = (x @ w).tanh().sum()
            loss.backward()
        lines.append(f"loss {loss.item():.6f}, w.grad[0] {[round(v, 6) for v in w.grad[0].tolist()]}")
    return lines


compare_with_pytorch(story, "plot_12_making_it_fast")

# %%
# Exercises
# ---------
# 1. Time ``loss.backward()`` alone (build the graph outside the timer) with the switch on and off.
#    How much of the training step's difference comes from the engine, and how much from recording
#    the forward pass (``recording.py`` against ``_ext/twins/autograd/recording.pyx``)?
# 2. Replace ``recording._record_simple`` with a wrapper that prints each op's name, and run the
#    training step with the switch on. Which ops print? Why do ``cat`` and in-place ops not go
#    through ``_record_simple``? (Read ``autograd_layer`` in ``recording.py``.)
# 3. Edit ``_add_to_buffer`` in ``engine.py`` (add a comment, then change a line) and restart
#    Python each time. Which edit turns the engine's twin off? Check with
#    ``torch.backends.compiled.disabled()``.
# 4. Write the twin of ``_add_to_buffer``'s one-line change in ``_ext/twins/autograd/engine.pyx``, rebuild
#    (``make build``), record the new fingerprint with ``make twins-manifest`` and run
#    ``tests/twins/test_engine_twin.py``, which compares the twin with the original.
