"""
.. _tutorial-train-cnn:

Training a small CNN, and getting PyTorch's loss curve
======================================================

Everything from the earlier tutorials at work together: tensors and views, the op registry,
autograd, ``nn.Module`` layers and an optimizer. We generate a small image dataset in the tutorial
itself (no download), train a two-layer convolutional network on it with a ``tqdm`` progress bar,
plot the loss and accuracy with matplotlib, and then run *the same code* with PyTorch: with the
same seed, the loss curves agree.

**Source files this tutorial walks through**

* ``minitorch_nn/nn/modules/conv.py`` (``Conv2d``), ``minitorch_nn/nn/modules/pooling.py``
  (``MaxPool2d``), ``minitorch_nn/nn/modules/linear.py`` and ``minitorch_nn/nn/modules/flatten.py``:
  the layers.
* ``minitorch_nn/nn/functional.py``: ``cross_entropy``, ``conv2d`` and ``max_pool2d``, which the
  layers call.
* ``minitorch_nn/backends/cpu/``: the numpy kernels doing the arithmetic.
* ``minitorch_nn/optim/sgd.py``: ``SGD`` with momentum.
* ``minitorch_nn/utils/data/``: ``TensorDataset`` and ``DataLoader``, which shuffle and batch the
  data (``sampler.py`` draws the order, ``collate.py`` stacks the samples).
* ``minitorch_nn/random.py``: the random generator that makes the same data and the same initial
  weights as PyTorch.
"""

import ast
import io
import sys
import time

import matplotlib.pyplot as plt
import numpy as np
from tqdm.auto import tqdm

import minitorch_nn as torch
from minitorch_nn.testing.pytorch_side import print_side_by_side, pytorch_lines

# tqdm redraws its bar in place: a widget in Jupyter, one rewritten line in a terminal. Where the
# output is captured instead (the built page), every redraw would stay behind as a line of its
# own, so there the bar draws into a buffer and ``train`` prints its final state once.
LIVE_BAR = sys.stderr.isatty() or "ipykernel" in sys.modules

# %%
# The dataset: four kinds of strokes
# ----------------------------------
# Each 8x8 image holds one stroke at a random place: a horizontal bar, a vertical bar, or one of
# the two diagonals, plus Gaussian noise. The class is the kind of stroke. All randomness comes
# from the library's generator (``randint``, ``randn`` in ``random.py``), so with the same seed
# PyTorch makes exactly the same images. The function takes the library as an argument so the
# comparison at the end can call it with real PyTorch.

CLASSES = ["horizontal", "vertical", "diagonal", "anti-diagonal"]


def make_strokes(lib, n):
    labels = lib.randint(0, 4, (n,))
    offsets = lib.randint(0, 8, (n,))
    noise = lib.randn(n, 1, 8, 8) * 0.4
    clean = np.zeros((n, 1, 8, 8), dtype=np.float32)
    idx = np.arange(8)
    for i, (label, k) in enumerate(zip(labels.tolist(), offsets.tolist())):
        if label == 0:
            clean[i, 0, k, :] = 1.0
        elif label == 1:
            clean[i, 0, :, k] = 1.0
        elif label == 2:
            clean[i, 0, idx, (idx + k) % 8] = 1.0
        else:
            clean[i, 0, idx, (k - idx) % 8] = 1.0
    return lib.tensor(clean) + noise, labels


torch.manual_seed(0)
x_train, y_train = make_strokes(torch, 512)
x_test, y_test = make_strokes(torch, 256)
print("train:", tuple(x_train.shape), x_train.dtype, "| test:", tuple(x_test.shape))
print("class counts:", [int((y_train == c).sum()) for c in range(4)])

# %%
# Four training images, one per class:

fig, axes = plt.subplots(1, 4, figsize=(8, 2.3))
for c, ax in enumerate(axes):
    i = int((y_train == c).nonzero()[0, 0])
    ax.imshow(x_train[i, 0].numpy(), cmap="gray")
    ax.set_title(CLASSES[c], fontsize=9)
    ax.axis("off")
fig.tight_layout()

# %%
# The network
# -----------
# Two convolution blocks and a linear classifier. ``Conv2d`` keeps the 8x8 size (padding 1),
# ``MaxPool2d(2)`` halves it: 8 -> 4 -> 2, so the flattened features are 16 * 2 * 2 = 64. The
# initial weights come from ``reset_parameters`` in ``conv.py`` and ``linear.py``, drawn from the
# same generator, in the same order, as PyTorch's.


def make_model(lib):
    return lib.nn.Sequential(
        lib.nn.Conv2d(1, 8, 3, padding=1),
        lib.nn.ReLU(),
        lib.nn.MaxPool2d(2),
        lib.nn.Conv2d(8, 16, 3, padding=1),
        lib.nn.ReLU(),
        lib.nn.MaxPool2d(2),
        lib.nn.Flatten(),
        lib.nn.Linear(64, 4),
    )


print(make_model(torch))

# %%
# The graph of one loss on four images, drawn by ``minitorch_nn.viz.autograd_graph``
# (``minitorch_nn/viz/autograd_graph.py``): each layer's ops from the loss down to the
# ``AccumulateGrad`` of every parameter, named after the module's parameters (``0.weight`` is the
# first ``Conv2d``'s), with what each node saved for backward.

from minitorch_nn import viz

model = make_model(torch)
loss = torch.nn.functional.cross_entropy(model(x_train[:4]), y_train[:4])
fig = viz.autograd_graph(loss, model)
plt.show()

# %%
# The training loop
# -----------------
# The loop you would write for PyTorch: a ``DataLoader`` over a ``TensorDataset`` shuffles the
# samples every epoch (a ``randperm`` on a generator seeded from the default one) and stacks them
# into mini-batches; then ``zero_grad``, forward, ``cross_entropy``, ``backward`` (tutorial 4)
# and ``step``. We record the loss of every step and the accuracy after every epoch. The progress
# bar is tqdm's; in the built page it shows only its last frame.

EPOCHS = 6
BATCH = 32


def accuracy(lib, model, x, y):
    with lib.no_grad():
        return float((model(x).argmax(dim=1) == y).float().mean())


def train(lib, x_train, y_train, x_test, y_test, progress=False):
    lib.manual_seed(1)
    model = make_model(lib)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses, train_acc, test_acc = [], [], []
    data = lib.utils.data
    loader = data.DataLoader(data.TensorDataset(x_train, y_train), batch_size=BATCH, shuffle=True)
    bar_file = None if LIVE_BAR else io.StringIO()
    epochs = tqdm(range(EPOCHS), desc="epochs", file=bar_file) if progress else range(EPOCHS)
    for _ in epochs:
        for images, labels in loader:
            optimizer.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        train_acc.append(accuracy(lib, model, x_train, y_train))
        test_acc.append(accuracy(lib, model, x_test, y_test))
        if progress:
            epochs.set_postfix(loss=f"{losses[-1]:.3f}", test_acc=f"{test_acc[-1]:.2f}")
    if progress and bar_file is not None and bar_file.getvalue():
        print(epochs)  # the bar's final line (see LIVE_BAR)
    return losses, train_acc, test_acc


start = time.perf_counter()
losses, train_acc, test_acc = train(torch, x_train, y_train, x_test, y_test, progress=True)
seconds = time.perf_counter() - start
print(f"{len(losses)} steps in {seconds:.1f} s")
print(f"first loss {losses[0]:.4f}, last loss {losses[-1]:.4f}")
print(f"test accuracy per epoch: {[round(a, 3) for a in test_acc]}")

# %%
# Loss and accuracy
# -----------------

fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(9, 3.2))
ax_loss.plot(losses, lw=1, label="minitorch_nn")
ax_loss.set_xlabel("step")
ax_loss.set_ylabel("cross-entropy loss")
ax_loss.set_title("training loss")
epochs_axis = range(1, EPOCHS + 1)
ax_acc.plot(epochs_axis, train_acc, "o-", label="train")
ax_acc.plot(epochs_axis, test_acc, "s-", label="test")
ax_acc.set_xlabel("epoch")
ax_acc.set_ylabel("accuracy")
ax_acc.set_ylim(0, 1.05)
ax_acc.set_title("accuracy")
ax_acc.legend()
fig.tight_layout()

# %%
# Compare with PyTorch
# --------------------
# The same ``make_strokes``, ``make_model`` and ``train`` with PyTorch. The data, the initial
# weights and the shuffling orders come out identical (same generator, same calls); the arithmetic
# is float32 in both but done in a different order (numpy versus PyTorch's kernels), so the losses
# are not bit-identical: they agree to about six digits, step after step.
#
# ``pytorch_lines`` and ``print_side_by_side`` (``minitorch_nn/testing/pytorch_side.py``) print
# our lines and PyTorch's one under the other (PyTorch trains now when it is installed, otherwise
# its lines come from a recording made with torch 2.13 in ``tutorials/torch_reference/``). Our
# side is the run above, not a second training.


def loss_lines(losses, test_acc):
    steps = (0, 1, 2, 10, 50, len(losses) - 1)
    lines = [f"loss at step {k}: {losses[k]:.4f}" for k in steps]
    lines.append(f"loss every 8 steps: {[round(v, 3) for v in losses[::8]]}")
    lines.append(f"test accuracy, last epoch: {test_acc[-1]:.3f}")
    return lines


def story(lib):
    lib.manual_seed(0)
    x_train, y_train = make_strokes(lib, 512)
    x_test, y_test = make_strokes(lib, 256)
    # Batches this small gain nothing from PyTorch's thread pool, and on a busy two-core machine
    # the threads fight each other (30x slower here), so train on one thread, then restore.
    threads = lib.get_num_threads() if hasattr(lib, "get_num_threads") else None
    if threads is not None:
        lib.set_num_threads(1)
    try:
        losses, _, test_acc = train(lib, x_train, y_train, x_test, y_test)
    finally:
        if threads is not None:
            lib.set_num_threads(threads)
    return loss_lines(losses, test_acc)


theirs, source = pytorch_lines(story, "plot_11_train_cnn")
print_side_by_side(loss_lines(losses, test_acc), theirs, source)

# %%
# PyTorch's loss every 8 steps (read from its line above) on our curve:

if theirs:
    every_8 = ast.literal_eval(theirs[-2].split(": ", 1)[1])
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot(losses, lw=2, label="minitorch_nn")
    ax.plot(range(0, len(losses), 8), every_8, "o", ms=5, mfc="none", label="PyTorch")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title("same seed, same loss curve")
    ax.legend()
    fig.tight_layout()

# %%
# Exercises
# ---------
# 1. Replace ``SGD`` with ``torch.optim.Adam(model.parameters(), lr=1e-2)``
#    (``minitorch_nn/optim/adam.py``). Does the curve still match PyTorch's?
# 2. Remove the first ``MaxPool2d``. What must the ``Linear`` layer's input size become? Read the
#    error message you get before you fix it.
# 3. Time one training step with ``time.perf_counter`` and find the slowest op with
#    ``minitorch_nn.utils.dispatch_trace()`` (tutorial 3). Which kernel in
#    ``minitorch_nn/backends/cpu/`` does the work of ``Conv2d``?
# 4. Make the task harder: noise 0.8 instead of 0.4, or strokes of length 4. How does test
#    accuracy change, and does it still match PyTorch?
