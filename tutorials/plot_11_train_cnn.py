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

import time

import matplotlib.pyplot as plt
import numpy as np
from tqdm.auto import tqdm

import minitorch_nn as torch

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
    epochs = tqdm(range(EPOCHS), desc="epochs") if progress else range(EPOCHS)
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

try:
    import torch as real_torch
except ImportError:
    real_torch = None

if real_torch is None:
    print("PyTorch is not installed here; `pip install torch==2.13.0` to run this comparison.")
else:
    import torch.optim  # noqa: F401 (makes real_torch.optim available)

    real_torch.manual_seed(0)
    rx_train, ry_train = make_strokes(real_torch, 512)
    rx_test, ry_test = make_strokes(real_torch, 256)
    print("same data:", np.array_equal(rx_train.numpy(), x_train.numpy()))
    # Batches this small gain nothing from PyTorch's thread pool, and on a busy two-core machine
    # the threads fight each other (30x slower here), so train on one thread, then restore.
    threads = real_torch.get_num_threads()
    real_torch.set_num_threads(1)
    try:
        r_losses, _, r_test_acc = train(real_torch, rx_train, ry_train, rx_test, ry_test)
    finally:
        real_torch.set_num_threads(threads)
    print(f"{'step':>5s} {'minitorch_nn':>13s} {'PyTorch':>10s}")
    for step in (0, 1, 2, 10, 50, len(losses) - 1):
        print(f"{step:5d} {losses[step]:13.5f} {r_losses[step]:10.5f}")
    gap = max(abs(a - b) for a, b in zip(losses, r_losses))
    print(f"largest difference over {len(losses)} steps: {gap:.2e}")
    print(f"test accuracy, last epoch: {test_acc[-1]:.3f} (PyTorch {r_test_acc[-1]:.3f})")

    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot(losses, lw=2, label="minitorch_nn")
    ax.plot(r_losses, "--", lw=1, label="PyTorch")
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
