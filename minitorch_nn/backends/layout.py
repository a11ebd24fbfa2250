"""Memory layout rules: which strides a fresh result gets, and when a write may not overlap itself.

Mirrors three pieces of PyTorch's C++ core, for every device (they only look at sizes and strides):

* ``TensorIterator``'s output allocation (``aten/src/ATen/TensorIterator.cpp``: ``fast_set_up``,
  ``reorder_dimensions``, ``allocate_or_resize_outputs``): an elementwise result keeps the memory
  order of its operands, so ``x.t().exp()`` is laid out like ``x.t()`` (column-major), not
  row-major. :func:`elementwise_strides` computes it.
* ``empty_like``/``clone``/``to`` with ``memory_format=torch.preserve_format``
  (``TensorFactories.cpp``, ``infer_dense_strides`` in ``TensorUtils.cpp``): a dense tensor's
  strides are copied as they are; any other tensor gets dense strides in the same dimension order.
  :func:`preserve_strides` computes it.
* ``MemoryOverlap.cpp``: an in-place op refuses to write into a tensor in which several elements
  share one memory location (``x.expand(3, 4).add_(1)``), and into a tensor that partly overlaps
  one of its inputs (``x[1:].add_(x[:-1])``). :func:`check_inplace_overlap`.

Strides are in elements (PyTorch's ``TensorIterator`` compares bytes, which orders the dims of one
operand the same way). ``None`` as a result means "plain contiguous strides".

Worked example, ``a + b`` with ``a = x.t()`` (sizes (3, 2), strides (1, 3)) and ``b`` of sizes
(2,): ``b`` broadcasts along dim 0, so only ``a``'s strides order the dims: dim 0 moves fastest,
and the result gets strides (1, 3), like ``a``.
"""

from __future__ import annotations

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._tensor import _STRIDES_CACHE as _ROW_MAJOR
from minitorch_nn._tensor import contiguous_strides as _row_major  # (cached: every op asks)


def contiguous_strides(sizes) -> tuple:
    """Row-major strides for ``sizes`` (a dim of size 0 counts as 1, as in PyTorch)."""
    strides, acc = [], 1
    for s in reversed(sizes):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def is_contiguous(sizes, strides) -> bool:
    """PyTorch's ``is_contiguous``: row-major, ignoring dims of size 1; empty tensors are."""
    if 0 in sizes:
        return True
    expected = 1
    for size, stride in zip(reversed(sizes), reversed(strides)):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def is_non_overlapping_and_dense(sizes, strides) -> bool:
    """PyTorch's ``is_non_overlapping_and_dense``: the elements fill a block of memory exactly once,
    in some order of the dims (a permutation of a contiguous tensor is; a slice with a step or an
    expanded tensor is not). Contiguous tensors, empty ones included, always are."""
    if is_contiguous(sizes, strides):
        return True
    if len(sizes) == 1:
        return sizes[0] < 2 or strides[0] == 1
    # dims of size 0 or 1 do not matter; the others, from the smallest stride up, must tile memory
    dims = sorted((d for d in range(len(sizes)) if sizes[d] >= 2), key=lambda d: strides[d])
    expected = 1
    for d in dims:
        if strides[d] != expected:
            return False
        expected *= sizes[d]
    return True


def is_channels_last(sizes, strides) -> bool:
    """PyTorch's ``is_contiguous(memory_format=torch.channels_last)`` (4-d tensors only): dims
    ordered C, W, H, N from the fastest, ignoring dims of size 1."""
    if len(sizes) != 4:
        return False
    expected = 1
    for d in (1, 3, 2, 0):
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


def is_channels_last_3d(sizes, strides) -> bool:
    """``is_contiguous(memory_format=torch.channels_last_3d)`` (5-d tensors only): dims ordered
    C, W, H, D, N from the fastest, ignoring dims of size 1."""
    if len(sizes) != 5:
        return False
    expected = 1
    for d in (1, 4, 3, 2, 0):
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


def channels_last_3d_strides(sizes) -> tuple:
    """The strides of ``torch.empty(sizes, memory_format=torch.channels_last_3d)`` (5-d)."""
    n, c, d, h, w = sizes
    return (d * h * w * c, 1, h * w * c, w * c, c)


def format_strides(sizes, memory_format):
    """The strides a factory gives ``sizes`` in ``memory_format`` (None: row-major), with PyTorch's
    errors for a rank that does not fit the format."""
    if memory_format is None or memory_format is dt.contiguous_format:
        return None
    if memory_format is dt.channels_last:
        if len(sizes) != 4:
            raise RuntimeError("required rank 4 tensor to use channels_last format")
        return _none_if_contiguous(tuple(sizes), channels_last_strides(sizes))
    if memory_format is dt.channels_last_3d:
        if len(sizes) != 5:
            raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
        return _none_if_contiguous(tuple(sizes), channels_last_3d_strides(sizes))
    raise RuntimeError("unsupported memory format Preserve" if memory_format is dt.preserve_format
                       else f"unsupported memory format {memory_format}")


def channels_last_strides(sizes) -> tuple:
    """The strides of ``torch.empty(sizes, memory_format=torch.channels_last)`` (4-d; as in
    PyTorch, a size of 0 is not counted as 1 here)."""
    n, c, h, w = sizes
    return (h * w * c, 1, w * c, c)


def _should_swap(operands, shape, dim0, dim1) -> int:
    """TensorIterator's comparison of two dims: 1 if ``dim0`` should iterate after (be slower
    than) ``dim1``, -1 if before, 0 if no operand can tell (each is broadcast in one of them)."""
    for strides in operands:
        s0, s1 = strides[dim0], strides[dim1]
        if s0 == 0 or s1 == 0:
            continue  # broadcast along one of the dims: this operand has no opinion
        if s0 < s1:
            return -1
        if s0 > s1:
            return 1
        # equal strides (dims of size 1): the smaller dim goes first; else ask the next operand
        if shape[dim0] > shape[dim1]:
            return 1
    return 0


def _sorted_dims(operands, shape) -> list:
    """The dims of ``shape`` from the fastest-moving to the slowest, as TensorIterator sorts them.

    Starts from the row-major order (last dim fastest) and moves a dim only where some operand
    says so: an insertion sort that stops at the first operand with a strict opinion.
    """
    perm = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(perm)):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            comparison = _should_swap(operands, shape, perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    return perm


def _operand_strides(sizes, strides, shape) -> list:
    """An operand's strides against the broadcast ``shape``: 0 where it is broadcast."""
    lead = len(shape) - len(sizes)
    out = [0] * lead
    for i, (size, stride) in enumerate(zip(sizes, strides)):
        out.append(0 if size == 1 and shape[lead + i] != 1 else stride)
    return out


def elementwise_strides(shape, operands, common_dtype=None):
    """The strides PyTorch gives the result of an elementwise op over ``operands``, or None when
    they are the contiguous ones.

    ``operands`` are the op's inputs: tensors, (sizes, strides) pairs, Python numbers (which
    PyTorch wraps as 0-dim tensors, e.g. the ``2`` of ``x + 2``; pass only those that are
    operands of the op: ``clamp``'s bounds or ``pow``'s exponent are not), None (skipped). ``shape``
    their broadcast shape. ``common_dtype``, when given, is the dtype the inputs are computed in:
    on cpu PyTorch first converts an input of another dtype with ``.to()``, which lays out a
    non-dense input densely (see :func:`preserve_strides`) before the rule below sees it.

    The rule (TensorIterator): if every input is contiguous and of the same shape, the result is
    contiguous; if every one is channels-last, channels-last; if all have the same shape and the
    same dense strides, the result copies them. Otherwise the dims are sorted by the inputs'
    strides (:func:`_sorted_dims`) and the result is dense in that order.
    """
    # the common case first, and cheaply: every input already has plain row-major strides (no
    # rule below can then give anything else, as long as the result is not empty)
    plain = True
    row_major = _ROW_MAJOR.get   # (contiguous_strides' own cache, read without a call)
    for op in operands:
        if isinstance(op, TensorBase):
            impl = op._impl
            sizes = impl.sizes
            if impl.strides != (row_major(sizes) or _row_major(sizes)):
                plain = False
                break
        elif type(op) is tuple and op[1] != _row_major(op[0]):
            plain = False
            break
    if plain and 0 not in shape:
        return None
    geoms = []
    for op in operands:
        if isinstance(op, TensorBase):
            geoms.append(converted_geometry(op, common_dtype))
        elif type(op) is tuple:
            geoms.append(op)
        elif op is not None:
            geoms.append(((), ()))  # a Python number: PyTorch wraps it as a 0-dim operand
    shape = tuple(shape)
    if not geoms:
        return None
    # the decision depends on geometry only, and programs repeat theirs: remember it
    key = (shape, tuple(geoms))
    try:
        return _DECISIONS[key]
    except KeyError:
        pass
    if len(_DECISIONS) > 4096:
        _DECISIONS.clear()
    strides = _DECISIONS[key] = _decide(shape, geoms)
    return strides


_DECISIONS: dict = {}


def _decide(shape, geoms):
    """:func:`elementwise_strides` once the operands are (sizes, strides) pairs."""
    same_shape = all(sz == shape for sz, _ in geoms) and not any(
        sz == () for sz, _ in geoms) or all(sz == () for sz, _ in geoms)
    if same_shape:
        if all(is_contiguous(sz, st) for sz, st in geoms):
            return None
        if all(is_channels_last(sz, st) for sz, st in geoms):
            return channels_last_strides(shape)
        if all(is_channels_last_3d(sz, st) for sz, st in geoms):
            return channels_last_3d_strides(shape)
        if all(is_non_overlapping_and_dense(sz, st) for sz, st in geoms):
            first = geoms[0][1]
            if all(st == first for _, st in geoms):
                return _none_if_contiguous(shape, first)
    operand_strides = [_operand_strides(sz, st, shape) for sz, st in geoms]
    perm = _sorted_dims(operand_strides, shape)
    if perm == list(range(len(shape) - 1, -1, -1)):
        return None
    strides = [0] * len(shape)
    acc = 1
    for d in perm:  # dense in the sorted order (a dim of size 0 zeroes the later strides, as in PyTorch)
        strides[d] = acc
        acc *= shape[d]
    return _none_if_contiguous(shape, tuple(strides))


def converted_geometry(t, dtype=None) -> tuple:
    """(sizes, strides) of ``t.to(dtype)``: ``t``'s own when it has that dtype (or ``dtype`` is None)."""
    impl = t._impl
    sizes, strides = tuple(impl.sizes), tuple(impl.strides)
    if dtype is not None and impl.dtype is not dtype:
        strides = preserve_strides(sizes, strides) or contiguous_strides(sizes)
    return sizes, strides


def _none_if_contiguous(shape, strides):
    return None if strides == contiguous_strides(shape) else tuple(strides)


def preserve_strides(sizes, strides):
    """The strides of ``empty_like(t)`` / ``t.clone()`` / ``t.to(dtype)`` for a tensor with these
    sizes and strides, or None when they are the contiguous ones.

    A non-overlapping, dense tensor's strides are kept exactly; any other (a strided slice, an
    expanded tensor) gets dense strides in the order of its own strides (PyTorch's
    ``infer_dense_strides``; dims with stride 0 keep their row-major place).
    """
    sizes, strides = tuple(sizes), tuple(strides)
    if is_non_overlapping_and_dense(sizes, strides):
        return _none_if_contiguous(sizes, strides)
    perm = _sorted_dims([strides], sizes)
    out = [0] * len(sizes)
    acc = 1
    for d in perm:
        out[d] = acc
        if sizes[d] > 1:
            acc *= sizes[d]
    return _none_if_contiguous(sizes, tuple(out))


def strides_like_channels_last(sizes, strides) -> bool:
    """PyTorch's ``is_channels_last_strides_2d``: a 4-d tensor whose strides order its dims C, W,
    H, N from the fastest (dims of size 1 allowed anywhere; ambiguous cases count as not)."""
    if len(sizes) != 4 or strides[1] == 0:
        return False
    smallest = 0
    for d in (1, 3, 2, 0):
        if sizes[d] == 0 or strides[d] < smallest:
            return False
        if d == 0 and smallest == strides[1]:
            return False  # N111-like: the default (contiguous) reading wins
        smallest = strides[d] * (sizes[d] if sizes[d] > 1 else 1)
    return True


def strides_like_channels_last_3d(sizes, strides) -> bool:
    """PyTorch's ``is_channels_last_strides_3d``: the 5-d analogue of
    :func:`strides_like_channels_last` (dims C, W, H, D, N from the fastest)."""
    if len(sizes) != 5 or strides[1] == 0:
        return False
    smallest = 0
    for d in (1, 4, 3, 2, 0):
        if sizes[d] == 0 or strides[d] < smallest:
            return False
        if d == 0 and smallest == strides[1]:
            return False
        smallest = strides[d] * (sizes[d] if sizes[d] > 1 else 1)
    return True


def suggest_memory_format(t):
    """PyTorch's ``suggest_memory_format``: channels_last (4-d) or channels_last_3d (5-d) for
    channels-last-like strides, else contiguous."""
    impl = t._impl
    if strides_like_channels_last(impl.sizes, impl.strides):
        return dt.channels_last
    if strides_like_channels_last_3d(impl.sizes, impl.strides):
        return dt.channels_last_3d
    return dt.contiguous_format


def like_strides(t, memory_format=None):
    """The strides of ``empty_like(t, memory_format=...)``, which ``clone``, ``to`` and the other
    ``*_like`` factories share; None means contiguous."""
    impl = t._impl
    if memory_format is None or memory_format is dt.preserve_format:
        if impl.strides == _ROW_MAJOR.get(impl.sizes):
            return None  # (a row-major tensor, the usual case: preserve_strides' answer, without its walk)
        return preserve_strides(impl.sizes, impl.strides)
    if memory_format is dt.contiguous_format:
        return None
    return format_strides(impl.sizes, memory_format)


# -- overlap checks ---------------------------------------------------------------------------------

_INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory "
    "location. Please clone() the tensor before performing the operation."
)
_PARTIAL_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
    "single memory location. Please clone() the tensor before performing the operation."
)


def has_internal_overlap(t) -> bool:
    """True when ``t`` surely has two elements at one memory location (a dim of size > 1 with
    stride 0, as ``expand`` makes); PyTorch calls the other non-dense cases "too hard" and lets
    them through, and so do we."""
    impl = t._impl
    if impl.strides == _ROW_MAJOR.get(impl.sizes) or is_non_overlapping_and_dense(impl.sizes, impl.strides):
        return False  # (row-major, the usual case, is dense: no walk over the dims needed)
    return any(size > 1 and stride == 0 for size, stride in zip(impl.sizes, impl.strides))


def _same_storage(a, b) -> bool:
    sa, sb = a._impl.storage, b._impl.storage
    if sa is None or sb is None:
        return False  # meta tensors have no memory to share
    if sa is sb:
        return True
    base_a, base_b = getattr(sa, "base", None), getattr(sb, "base", None)
    return (base_a is not None and base_a is base_b) or base_a is sb or base_b is sa


def partial_overlap(a, b) -> bool:
    """True when ``a`` and ``b`` share some, but not all, memory (PyTorch's ``MemOverlapStatus::Partial``).

    Only dense tensors are compared (PyTorch gives up on the others): same storage, memory ranges
    that intersect, and not exactly the same elements in the same order.
    """
    ia, ib = a._impl, b._impl
    if ia is ib or not _same_storage(a, b):
        return False  # (tested first: most pairs share no memory at all)
    na, nb = _numel(ia.sizes), _numel(ib.sizes)
    if na == 0 or nb == 0:
        return False
    if not (is_non_overlapping_and_dense(ia.sizes, ia.strides) and is_non_overlapping_and_dense(ib.sizes, ib.strides)):
        return False
    if ia.device != ib.device:
        return False
    a_begin, b_begin = ia.offset * ia.dtype.itemsize, ib.offset * ib.dtype.itemsize
    a_end, b_end = a_begin + na * ia.dtype.itemsize, b_begin + nb * ib.dtype.itemsize
    if a_begin == b_begin and a_end == b_end:
        return ia.strides != ib.strides
    return a_begin < b_end and b_begin < a_end


def check_no_overlap(out, *inputs) -> None:
    """PyTorch's ``assert_no_overlap`` (``index_put_``): ``out`` may not share memory with an input
    at all, not even exactly (a kernel that reads an input while scattering into ``out``)."""
    for x in inputs:
        if not isinstance(x, TensorBase):
            continue
        ia, ib = out._impl, x._impl
        exact = ia is ib or (
            _same_storage(out, x) and ia.offset == ib.offset and ia.sizes == ib.sizes and ia.strides == ib.strides
            and _numel(ia.sizes) > 0
        )
        if exact or partial_overlap(out, x):
            raise RuntimeError(_PARTIAL_OVERLAP)


def _numel(sizes) -> int:
    n = 1
    for s in sizes:
        n *= s
    return n


def check_inplace_overlap(out, *inputs, internal=True) -> None:
    """Raise PyTorch's RuntimeError before an in-place op or ``out=`` write into ``out`` that would
    write one memory location twice, or read an input that the write changes under it
    (``internal=False``: skip the first check, for the ops where PyTorch only warns)."""
    if internal and has_internal_overlap(out):
        raise RuntimeError(_INTERNAL_OVERLAP)
    for x in inputs:
        if isinstance(x, TensorBase) and partial_overlap(out, x):
            raise RuntimeError(_PARTIAL_OVERLAP)
