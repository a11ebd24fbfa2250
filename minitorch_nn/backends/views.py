"""View ops: new sizes, strides and offset over the same storage, for every device at once.

Mirrors PyTorch's view kernels (``aten/src/ATen/native/TensorShape.cpp``). A view never touches
data, so one kernel serves cpu, meta and cuda: it is registered under the ``"any"`` device key.
Each function computes the view's geometry and calls :func:`_make_view`, which shares the
storage and the version counter with the base.

Worked example, ``x.transpose(0, 1)`` on a contiguous (2, 3) tensor: sizes (2, 3) -> (3, 2) and
strides (3, 1) -> (1, 3). Element [i, j] of the view sits at ``offset + i*1 + j*3`` in storage,
which is element [j, i] of ``x``.
"""

from __future__ import annotations

from minitorch_nn._C import Size, VersionCounter
from minitorch_nn.backends.common import type_name
from minitorch_nn._ops import aten
from minitorch_nn._shape import infer_size, wrap_dim
from minitorch_nn._tensor import _make_view, contiguous_strides


def _geometry(t):
    impl = t._impl
    return list(impl.sizes), list(impl.strides), impl.offset


def compute_view_strides(old_sizes, old_strides, new_sizes):
    """Strides that read ``old`` as ``new_sizes`` without copying, or None if impossible.

    Works chunk by chunk: a run of old dims that is contiguous in memory can be re-split into
    any new dims with the same element count (PyTorch's ``computeStride``).

    Rules (the tests check each one):

    * a 0-d ``old`` views as any shape of ones: every new stride is 1;
    * an empty tensor (a size 0) keeps its strides for the same sizes, else gets
      ``contiguous_strides(new_sizes)``;
    * walking the old dims from the last, a *chunk* ends at dim ``d`` when ``d`` is the first dim,
      or when dim ``d - 1`` is not laid out right after the chunk: its size is not 1 and its stride
      is not (elements of the chunk so far) * (the chunk's innermost stride). An old dim of size 1
      never ends a chunk, whatever its stride;
    * the new dims are filled from the last, each chunk's elements re-split into new dims whose
      sizes multiply to the chunk's element count; new stride = (product of the new sizes to its
      right within the chunk) * the chunk's innermost stride;
    * a new dim of size 1 takes the stride that a dim at its place would have (the running
      product times the chunk's base stride), computed, never copied from an old size-1 dim:
      ``zeros(2, 3)[:, :1]`` (strides (3, 1)) viewed as ``(1, 2, 1)`` has strides (6, 3, 1) and
      as ``(2, 1, 1)`` strides (3, 1, 1); ``zeros(3, 1)[::2]`` (strides (2, 1)) viewed as
      ``(1, 2)`` has strides (4, 2);
    * when a chunk's elements cannot be matched exactly by whole new dims, return None (the
      caller raises "view size is not compatible with input tensor's size and stride").
    """
    # BEGIN SOLUTION views-strides
    if not old_sizes:
        # a 0-d tensor views as any shape of ones
        return [1] * len(new_sizes)
    numel = 1
    for s in old_sizes:
        numel *= s
    if numel == 0:
        if list(old_sizes) == list(new_sizes):
            return list(old_strides)
        return list(contiguous_strides(new_sizes))
    new_strides = [0] * len(new_sizes)
    view_d = len(new_sizes) - 1
    chunk_base_stride = old_strides[-1] if old_strides else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_sizes) - 1, -1, -1):
        tensor_numel *= old_sizes[tensor_d]
        # a chunk ends where the next-outer dim is not laid out right after this one
        if tensor_d == 0 or (
            old_sizes[tensor_d - 1] != 1
            and old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_sizes[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_sizes[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return new_strides
    # END SOLUTION


@aten.view.default.impl("any")
def view(self, size):
    sizes, strides, offset = _geometry(self)
    new_sizes = infer_size(size, self.numel())
    new_strides = compute_view_strides(sizes, strides, new_sizes)
    if new_strides is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension "
            "spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return _make_view(self, new_sizes, new_strides, offset)


@aten._unsafe_view.default.impl("any")
def _unsafe_view(self, size):
    # used on a fresh temporary (reshape's copy, matmul's result): the output shares its storage
    # but is no view of it for autograd (``_base`` None, in-place ops do not rebase), as in PyTorch
    out = view(self, size)
    out._impl.base = None
    return out


@aten._reshape_alias.default.impl("any")
def _reshape_alias(self, size, stride):
    return _make_view(self, size, stride, self._impl.offset)


@aten.alias.default.impl("any")
def alias(self):
    sizes, strides, offset = _geometry(self)
    return _make_view(self, sizes, strides, offset)


@aten.detach.default.impl("any")
def detach(self):
    # A detached tensor shares storage but is not a view for autograd purposes.
    out = alias(self)
    out._impl.base = None
    version = self._impl.version
    if version.inference or type(version) is not VersionCounter:
        from minitorch_nn.autograd import grad_mode   # (autograd imports the backends)

        # of an inference tensor outside inference_mode: a counter of its own, as in PyTorch
        counter = grad_mode.detached_counter(version)
        out._impl.version = counter if counter is not None else version
    return out


@aten.permute.default.impl("any")
def permute(self, dims):
    sizes, strides, offset = _geometry(self)
    n = len(sizes)
    if len(dims) != n:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal to len(dims) = {len(dims)}"
        )
    dims = [wrap_dim(d, n) for d in dims]
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _make_view(self, [sizes[d] for d in dims], [strides[d] for d in dims], offset)


@aten.transpose.int.impl("any")
def transpose(self, dim0, dim1):
    """The view of ``self`` with dims ``dim0`` and ``dim1`` swapped (``aten.transpose.int``).

    Rules:

    * the sizes and the strides of the two dims are swapped; the storage offset stays; the result
      is a view (``_make_view(self, sizes, strides, offset)``: it shares storage and version
      counter, and its ``_base`` is ``self``);
    * dims may be negative (``wrap_dim(d, n)`` wraps them and raises PyTorch's IndexError
      "Dimension out of range" otherwise); ``dim0 == dim1`` gives a view equal to ``self``;
    * a 0-d tensor accepts the dims 0 and -1 (``wrap_dim(d, 0)`` checks them) and gives
      ``alias(self)``, a 0-d view.
    """
    # BEGIN SOLUTION views-transpose
    sizes, strides, offset = _geometry(self)
    n = len(sizes)
    if n == 0:
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return alias(self)
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
    strides[d0], strides[d1] = strides[d1], strides[d0]
    return _make_view(self, sizes, strides, offset)
    # END SOLUTION


@aten.t.default.impl("any")
def t(self):
    n = self.dim()
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return transpose(self, 0, 1) if n == 2 else alias(self)


@aten.unsqueeze.default.impl("any")
def unsqueeze(self, dim):
    sizes, strides, offset = _geometry(self)
    d = wrap_dim(dim, len(sizes) + 1)
    new_stride = 1 if d >= len(sizes) else sizes[d] * strides[d]
    sizes.insert(d, 1)
    strides.insert(d, new_stride)
    return _make_view(self, sizes, strides, offset)


def _squeeze_dims(self, dims):
    sizes, strides, offset = _geometry(self)
    keep = [i for i in range(len(sizes)) if not (i in dims and sizes[i] == 1)]
    return _make_view(self, [sizes[i] for i in keep], [strides[i] for i in keep], offset)


@aten.squeeze.default.impl("any")
def squeeze(self):
    return _squeeze_dims(self, set(range(self.dim())))


@aten.squeeze.dim.impl("any")
def squeeze_dim(self, dim):
    return _squeeze_dims(self, {wrap_dim(dim, self.dim())})


@aten.squeeze.dims.impl("any")
def squeeze_dims(self, dim):
    return _squeeze_dims(self, {wrap_dim(d, self.dim()) for d in dim})


@aten.expand.default.impl("any")
def expand(self, size, *, implicit=False):
    sizes, strides, offset = _geometry(self)
    size = list(size)
    if len(size) < len(sizes):
        raise RuntimeError(
            f"expand(torch.{type_name(self.dtype)}Tensor{{{list(sizes)}}}, size={size}): the number of sizes provided ({len(size)}) must be greater or equal to the number of dimensions in the tensor ({len(sizes)})"
        )
    lead = len(size) - len(sizes)
    new_sizes, new_strides = [], []
    # last dim first, as PyTorch checks them: with several bad dims, the error names the last one
    for i in reversed(range(len(size))):
        target = size[i]
        j = i - lead
        if j < 0:
            if target == -1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target}) isn't allowed in a leading, non-existing dimension {i}"
                )
            new_sizes.append(target)
            new_strides.append(0)
            continue
        cur = sizes[j]
        if target == -1:
            target = cur
        if cur == target:
            new_sizes.append(cur)
            new_strides.append(strides[j])
        elif cur == 1:
            new_sizes.append(target)
            new_strides.append(0)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({target}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(size)}.  Tensor sizes: {sizes}"
            )
    if any(s < 0 for s in new_sizes):
        # a size below -1 (in a new dim, or for a dim of size 1): PyTorch's element count refuses it
        raise RuntimeError("numel: integer multiplication overflow")
    return _make_view(self, new_sizes[::-1], new_strides[::-1], offset)


@aten.slice.Tensor.impl("any")
def slice_(self, dim=0, start=None, end=None, step=1):
    sizes, strides, offset = _geometry(self)
    if not sizes:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(sizes))
    if step <= 0:
        raise ValueError("step must be greater than zero")
    n = sizes[d]
    start = 0 if start is None else start
    end = n if end is None else end
    if start < 0:
        start += n
    if end < 0:
        end += n
    start = min(max(start, 0), n)
    end = min(max(end, start), n)
    length = (end - start + step - 1) // step
    offset += start * strides[d]
    sizes[d] = length
    strides[d] *= step
    return _make_view(self, sizes, strides, offset)


@aten.select.int.impl("any")
def select(self, dim, index):
    sizes, strides, offset = _geometry(self)
    if not sizes:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(sizes))
    n = sizes[d]
    if index < -n or index >= n:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {n}")
    if index < 0:
        index += n
    offset += index * strides[d]
    del sizes[d], strides[d]
    return _make_view(self, sizes, strides, offset)


@aten.as_strided.default.impl("any")
def as_strided(self, size, stride, storage_offset=None):
    offset = self._impl.offset if storage_offset is None else storage_offset
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got strides: " + str(list(stride)))
    _check_in_bounds(self, size, stride, offset)
    return _make_view(self, size, stride, offset)


@aten.as_strided_.default.impl("any")
def as_strided_(self, size, stride, storage_offset=None):
    """Re-point this tensor at another window of its own storage (no data moves)."""
    offset = self._impl.offset if storage_offset is None else storage_offset
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    _check_in_bounds(self, size, stride, offset)
    self._impl.set_metadata(tuple(size), tuple(stride), offset)
    return self


def _check_in_bounds(self, size, stride, offset):
    storage = self._impl.storage
    if storage is None or any(s == 0 for s in size):
        return
    last = offset + sum((s - 1) * st for s, st in zip(size, stride))
    nbytes = storage.shape[0] * self.dtype.itemsize
    if (last + 1) * self.dtype.itemsize > nbytes:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and itemsize "
            f"{self.dtype.itemsize} requiring a storage size of {(last + 1) * self.dtype.itemsize} are out of bounds for storage of size {nbytes}"
        )


@aten.unfold.default.impl("any")
def unfold(self, dimension, size, step):
    sizes, strides, offset = _geometry(self)
    d = wrap_dim(dimension, max(len(sizes), 1))
    n = sizes[d] if sizes else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    st = strides[d] if sizes else 1
    if sizes:
        sizes[d] = (n - size) // step + 1
        strides[d] = st * step
    return _make_view(self, sizes + [size], strides + [st], offset)


@aten.split_with_sizes.default.impl("any")
def split_with_sizes(self, split_sizes, dim=0):
    d = wrap_dim(dim, self.dim())
    n = self.shape[d]
    if sum(split_sizes) != n:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at dimension {d}), but got split_sizes={list(split_sizes)}"
        )
    out, start = [], 0
    for s in split_sizes:
        out.append(slice_(self, d, start, start + s))
        start += s
    return out


@aten.split.Tensor.impl("any")
def split(self, split_size, dim=0):
    if self.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, self.dim())
    n = self.shape[d]
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    if split_size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    if n == 0:
        return [slice_(self, d, 0, 0)]
    sizes = [split_size] * (n // split_size) + ([n % split_size] if n % split_size else [])
    return split_with_sizes(self, sizes, d)


@aten.unbind.int.impl("any")
def unbind(self, dim=0):
    if self.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, self.dim())
    return [select(self, d, i) for i in range(self.shape[d])]


@aten.diagonal.default.impl("any")
def diagonal(self, offset=0, dim1=0, dim2=1):
    sizes, strides, storage_offset = _geometry(self)
    n = len(sizes)
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if offset >= 0:
        length = max(min(sizes[d1], sizes[d2] - offset), 0)
        if length > 0:
            storage_offset += offset * strides[d2]
    else:
        length = max(min(sizes[d1] + offset, sizes[d2]), 0)
        if length > 0:
            storage_offset -= offset * strides[d1]
    diag_stride = strides[d1] + strides[d2]
    keep = [i for i in range(n) if i not in (d1, d2)]
    return _make_view(self, [sizes[i] for i in keep] + [length], [strides[i] for i in keep] + [diag_stride], storage_offset)


@aten.view.dtype.impl("any")
def view_dtype(self, dtype):
    if dtype.itemsize != self.dtype.itemsize:
        raise RuntimeError(
            "minitorch_nn only supports Tensor.view(dtype) between dtypes of the same size; "
            f"got {self.dtype} -> {dtype}"
        )
    out = alias(self)
    out._impl.dtype = dtype
    if out._impl.storage is not None and hasattr(out._impl.storage, "view"):
        cuda_bf16 = dtype.numpy_dtype.name == "bfloat16" and self.device.type == "cuda"  # stored as uint16 words
        out._impl.storage = out._impl.storage.view("uint16" if cuda_bf16 else dtype.numpy_dtype)
        out._impl.array = None
    return out


__all__ = ["Size", "compute_view_strides"]
