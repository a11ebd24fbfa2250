"""
.. _tutorial-tensor-object:

The tensor object: a handle, a payload slot and a storage
=========================================================

A PyTorch tensor is two objects. The one you hold in Python is a small *handle*; the data and
everything that describes it (sizes, strides, dtype, device, the version counter, the autograd
fields) live in a C++ ``TensorImpl`` that the handle points at. minitorch_nn keeps the same split,
in Cython instead of C++, and lets you look inside.

**Source files this tutorial walks through**

* ``_ext/_C.pyx``: ``TensorBase`` (the handle, one C slot called ``_impl``), ``TensorImpl``
  (the payload), ``VersionCounter``, ``_is_contiguous``.
* ``minitorch_nn/_tensor.py``: the ``Tensor`` class, and the three ways a tensor comes to exist:
  ``_from_array``, ``_new_meta``, ``_make_view``.
* ``minitorch_nn/backends/views.py``: the view kernels (``t``, ``slice``, ``expand``, ``view``),
  which run when the compiled twins are switched off (``torch.backends.compiled``).
* ``minitorch_nn/_dtype.py``: ``dtype``, ``promote_types`` and ``result_type_from``.
* ``minitorch_nn/backends/meta.py``: kernels for the meta device, which compute shapes only.

Every printed result below is what PyTorch 2.13 prints for the same code; the last section
prints PyTorch's lines beside ours (run live when PyTorch is installed, else from a recording
made with torch 2.13).
"""

import matplotlib.pyplot as plt

import minitorch_nn as torch

# %%
# The handle and its payload slot
# -------------------------------
# ``torch.randn`` (``minitorch_nn/_functions/factories.py``) makes a tensor from PyTorch's CPU
# random stream, so with the same seed you get the same numbers as PyTorch.

torch.manual_seed(0)
x = torch.randn(2, 3)
print(x)

# %%
# ``x`` is an instance of ``Tensor`` (``minitorch_nn/_tensor.py``), which extends the Cython
# class ``TensorBase`` (``_ext/_C.pyx``). ``TensorBase`` has one C-level data field, ``_impl``
# (besides the slot that lets Python keep weak references to it). That field holds a
# ``TensorImpl``: the payload, the part PyTorch keeps in C++.

print([cls.__name__ for cls in type(x).__mro__])
print(x._impl)

# %%
# Every metadata accessor on the handle reads the payload. ``x.shape`` is
# ``TensorBase.shape``, which wraps ``x._impl.sizes`` in a ``torch.Size``; ``x.stride()`` is
# ``x._impl.strides``; ``x.dtype`` is ``x._impl.dtype``.

print(x.shape, x._impl.sizes)
print(x.stride(), x._impl.strides)
print(x.dtype is x._impl.dtype)

# %%
# Storage: one flat array
# -----------------------
# The payload's ``storage`` is a flat, one-dimensional numpy array. ``_from_array`` in
# ``_tensor.py`` builds it when a factory produces fresh data: it keeps the numpy array's
# memory and records row-major strides computed by ``contiguous_strides``.

storage = x._impl.storage
print(type(storage).__name__, storage.shape, storage.dtype)
print(storage)

# %%
# Strides say how to walk that flat array. Element ``[i, j]`` lives at position
# ``offset + i * stride[0] + j * stride[1]``. We can check that by hand for every element.

offset = x.storage_offset()
s0, s1 = x.stride()
for i in range(2):
    for j in range(3):
        assert storage[offset + i * s0 + j * s1] == x[i, j].item()
print(f"x[i, j] is storage[{offset} + i*{s0} + j*{s1}] for all i, j")

# %%
# Views share the storage
# -----------------------
# A *view* is a new handle with a new payload that points at the **same** storage, with its
# own sizes, strides and offset. ``_make_view`` in ``_tensor.py`` builds that payload; the
# view kernels in ``backends/views.py`` only compute the new sizes, strides and offset.
#
# What runs by default is not this Python code: common views such as ``x.t()`` and ``x[1:]``
# have compiled *twins* (``_ext/twins/backends/views.pyx``, the twin of ``backends/views.py``, and
# ``_ext/twins/_functions/indexing.pyx``) that
# build the very same payload in C. The switch ``torch.backends.compiled`` turns every twin off,
# so that only the code you read runs: inside ``with torch.backends.compiled.flags(enabled=False):``
# ``x.t()`` goes through the dispatcher to the ``t`` kernel of ``backends/views.py`` and
# ``_make_view``. The walk-throughs of views below run that way; the results are the same either
# way (tutorial 12, "Making it fast", shows how the two are kept equal).
#
# Transposing swaps the strides. No element moves.

with torch.backends.compiled.flags(enabled=False):   # the readable path: backends/views.py
    xt = x.t()
print(xt.shape, xt.stride(), xt.storage_offset())
print("same storage:", xt._impl.storage is x._impl.storage)
print("the compiled twin gives the same view:", x.t().stride() == xt.stride())

# %%
# Slicing moves the offset. ``x[:, 1:]`` starts one element into the storage and keeps the
# row stride of 3, so it skips the first column of each row.

with torch.backends.compiled.flags(enabled=False):
    xs = x[:, 1:]
print(xs.shape, xs.stride(), xs.storage_offset())
print("same storage:", xs._impl.storage is x._impl.storage)

# %%
# ``expand`` repeats data without copying it: a stride of 0 means "stay on the same element"
# as the index grows, so four rows read the same three numbers.

row = torch.tensor([1.0, 2.0, 3.0])
with torch.backends.compiled.flags(enabled=False):
    big = row.expand(4, 3)
print(big.stride())
print(big)
print("same storage:", big._impl.storage is row._impl.storage)

# %%
# Here is which storage position each of these tensors reads, element by element in row-major
# order. The same six numbers of ``x`` serve three different tensors.


def positions(t):
    """Storage index of every element of a 2-d tensor, in row-major order."""
    off, (a, b) = t.storage_offset(), t.stride()
    return [[off + i * a + j * b for j in range(t.shape[1])] for i in range(t.shape[0])]


views = {"x": x, "x.t()": xt, "x[:, 1:]": xs}
for name, t in views.items():
    print(f"{name:9s} reads storage positions {positions(t)}")

# %%
# The same, drawn: each cell is one element of the tensor, and the number in it is the
# storage position it reads.

fig, axes = plt.subplots(1, 3, figsize=(9, 3.2), layout="constrained")
for ax, (name, t) in zip(axes, views.items()):
    grid = positions(t)
    ax.imshow(grid, cmap="viridis", vmin=0, vmax=5)
    for i, line in enumerate(grid):
        for j, p in enumerate(line):
            ax.text(j, i, str(p), ha="center", va="center", color="white", fontsize=14)
    ax.set_title(f"{name}\nstrides {t.stride()}, offset {t.storage_offset()}")
    ax.set_xticks([])
    ax.set_yticks([])
fig.suptitle("Storage position of each element (one storage of 6 floats)")
plt.show()

# %%
# ``minitorch_nn.viz.storage_views`` (``minitorch_nn/viz/storage_views.py``) draws this from the
# live tensors: the flat storage on top, and under it the storage positions each tensor reads,
# labelled with the element that reads them, with its sizes, strides, offset and contiguity.

from minitorch_nn import viz

fig = viz.storage_views({"x": x, "x.t()": xt, "x[:, 1:]": xs})
plt.show()

# %%
# A write through a view is a write to the shared storage, so ``x`` sees it. The payloads
# also share one ``VersionCounter`` (``_ext/_C.pyx``): every in-place op bumps it, and
# ``_version`` on any of the views shows the same count. Autograd uses this counter to detect
# "a tensor needed for gradient computation has been modified by an inplace operation".

print("versions before:", x._version, xt._version, xs._version)
xt.mul_(10)  # an in-place op on the transposed view
print(x)
print("versions after: ", x._version, xt._version, xs._version)
print("xt._base is x:", xt._base is x)

# %%
# Contiguity
# ----------
# A tensor is *contiguous* when its strides are the row-major strides of its shape
# (``_is_contiguous`` in ``_ext/_C.pyx``, with PyTorch's rule that dimensions of size 1 may have
# any stride). ``contiguous()`` returns the tensor itself when it already is, and a fresh
# copy with a new storage when it is not.

print(x.is_contiguous(), xt.is_contiguous(), xs.is_contiguous())
print("x.contiguous() is x:", x.contiguous() is x)
xtc = xt.contiguous()
print(xtc.stride(), xtc._impl.storage is x._impl.storage)  # new strides, new storage

# %%
# ``view`` never copies, so it refuses shapes that its input's strides cannot express;
# ``reshape`` falls back to a copy. This is PyTorch's error message, word for word.

try:
    xt.view(6)
except RuntimeError as err:
    print("RuntimeError:", err)
print(xt.reshape(6))

# %%
# dtypes and type promotion
# -------------------------
# A ``dtype`` (``minitorch_nn/_dtype.py``) names the numpy dtype its storage uses
# (``bfloat16`` comes from the ``ml_dtypes`` package).

for d in (torch.float32, torch.bfloat16, torch.int64, torch.bool):
    print(f"{d!s:15s} numpy: {d.numpy_dtype!s:9s} {d.itemsize} bytes")

# %%
# When two dtypes meet, ``promote_types`` picks the smallest type that keeps the category
# (bool < integer < floating) of both.

print(torch.promote_types(torch.int64, torch.float16))
print(torch.promote_types(torch.uint8, torch.int8))
print(torch.promote_types(torch.float16, torch.bfloat16))

# %%
# Operators use ``result_type_from`` (``_dtype.py``), PyTorch's three tiers: tensors with
# dimensions first, then zero-dim tensors, then Python numbers. A lower tier only counts when
# its category is higher. That is why these differ from what numpy would give.

ints = torch.tensor([1, 2, 3])  # int64
halfs = torch.tensor([1.0, 2.0], dtype=torch.float16)
print((ints + 2.5).dtype)  # a Python float lifts int64 to the default dtype
print((halfs + 1000.0).dtype)  # same category: the tensor's dtype wins
print((ints + torch.tensor(2.5, dtype=torch.float64)).dtype)  # zero-dim, higher category
print((halfs + torch.tensor(2.5, dtype=torch.float64)).dtype)  # zero-dim, same category

# %%
# The meta device: shapes without data
# ------------------------------------
# A tensor on the ``meta`` device has sizes, strides and a dtype but no storage
# (``_new_meta`` in ``_tensor.py`` leaves ``storage`` as ``None``). Ops on meta tensors run
# the kernels in ``backends/meta.py``, which only compute the output's metadata. That is how a
# model too big for memory can be described, checked and later materialized.

m = torch.empty(3, 4, device="meta")
print(m)
print("storage:", m._impl.storage)
w = torch.empty(4, 100_000, device="meta")  # 1.6 GB of float32, if it were real
print((m @ w).shape, (m @ w).device)

# %%
# Asking a meta tensor for its values is an error: there are none.

try:
    m.sum().item()
except RuntimeError as err:
    print("RuntimeError:", err)

# %%
# Compare with PyTorch
# --------------------
# The public results above (values, strides, offsets, dtypes, shapes, the ``view`` error) match
# PyTorch 2.13. ``story`` runs the key lines with a library it is given, and
# ``compare_with_pytorch`` (``minitorch_nn/testing/pytorch_side.py``) prints minitorch_nn's line
# and PyTorch's line one under the other: PyTorch runs now when it is installed, otherwise its
# lines come from a recording made with torch 2.13 (``tutorials/torch_reference/``).

from minitorch_nn.testing.pytorch_side import compare_with_pytorch


def story(lib):
    lib.manual_seed(0)
    x = lib.randn(2, 3)
    meta = lib.empty(3, 4, device="meta") @ lib.empty(4, 5, device="meta")
    lines = [
        f"randn(2, 3) after manual_seed(0): {[[round(v, 4) for v in row] for row in x.tolist()]}",
        f"x.t(): strides {x.t().stride()}, offset {x.t().storage_offset()}",
        f"x[:, 1:]: strides {x[:, 1:].stride()}, offset {x[:, 1:].storage_offset()}",
        f"x[0].expand(4, 3): strides {x[0].expand(4, 3).stride()}",
        f"tensor([1, 2]) + 2.5: {lib.tensor([1, 2]).add(2.5).dtype}",
        f"meta (3, 4) @ (4, 5): {tuple(meta.shape)} on {meta.device}",
    ]
    try:
        x.t().view(6)
    except RuntimeError as err:
        lines.append(f"x.t().view(6): RuntimeError: {err}")
    return lines


compare_with_pytorch(story, "plot_01_tensor_object")

# %%
# Exercises
# ---------
# 1. ``x.t().t()`` is a view of a view. Print its ``_impl.base`` and explain why
#    ``_make_view`` in ``_tensor.py`` points it at ``x``'s payload rather than at ``x.t()``'s.
# 2. Predict the strides and offset of ``torch.arange(24).view(2, 3, 4)[1, :, ::2]``, then check.
#    Which kernel in ``backends/views.py`` computes the step of 2?
# 3. ``expand`` gives stride 0, so four elements share one memory location. What should an
#    in-place op such as ``row.expand(4, 3).add_(1)`` do? Run it in PyTorch and in minitorch_nn,
#    explain what each does, and find where a check would belong.
# 4. Find the line in ``_is_contiguous`` (``_ext/_C.pyx``) that makes a tensor with a size-1
#    dimension contiguous whatever that dimension's stride is. Build such a tensor with
#    ``as_strided`` and check ``is_contiguous()``.
# 5. Use the meta device to compute the output shape of a chain of three matrix products with
#    inner sizes of a million, without allocating any memory.
