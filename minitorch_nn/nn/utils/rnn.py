"""Variable-length sequences for the recurrent layers (mirrors ``torch/nn/utils/rnn.py``).

A batch of sequences of different lengths can be stored two ways:

* *padded*: one ``(T, B, *)`` tensor (``(B, T, *)`` with ``batch_first``), shorter sequences
  filled up with ``padding_value`` (``pad_sequence``);
* *packed*: a ``PackedSequence``. The sequences are sorted longest first and stored time step by
  time step: first the first element of every sequence, then the second element of every sequence
  that has one, and so on. ``batch_sizes[t]`` says how many sequences are still running at step
  ``t``, so the rows for step ``t`` are always the first ``batch_sizes[t]`` sequences. A recurrent
  layer can then work on exactly the live rows, without computing on padding.

  ``sorted_indices`` records the sort (``None`` when the input was already sorted) and
  ``unsorted_indices`` undoes it, so ``pad_packed_sequence`` returns the original batch order.

Everything is built from ordinary tensor ops (slicing, ``cat``, ``index_select``), so gradients
flow through packing and unpacking. ``batch_sizes`` is an int64 cpu tensor, as in PyTorch.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable

import minitorch_nn as _t

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]

_PackedSequenceBase = namedtuple(
    "PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"]
)


class PackedSequence(_PackedSequenceBase):
    """Sequences packed time step by time step (see the module docstring).

    Build one with ``pack_padded_sequence`` or ``pack_sequence``, not by hand.
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes), ...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                "created manually. They should be instantiated by functions like pack_sequence "
                "and pack_padded_sequences in nn.utils.rnn."
            )
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """``data`` (and the index tensors, for a device change) moved/converted like ``Tensor.to``."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = lambda t: None if t is None else t.to(data.device)  # noqa: E731
        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(dtype=_t.double)

    def float(self):
        return self.to(dtype=_t.float)

    def half(self):
        return self.to(dtype=_t.half)

    def long(self):
        return self.to(dtype=_t.long)

    def int(self):
        return self.to(dtype=_t.int)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation):
    """The permutation that undoes ``permutation`` (``None`` stays ``None``)."""
    if permutation is None:
        return None
    output = _t.empty_like(permutation)
    output.scatter_(0, permutation, _t.arange(0, permutation.numel(), device=permutation.device))
    return output


def _lengths_tensor(lengths):
    if isinstance(lengths, _t.Tensor):
        return lengths.to(dtype=_t.int64)
    return _t.as_tensor(lengths, dtype=_t.int64, device="cpu")


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` whose sequence ``b`` has ``lengths[b]`` real steps.

    With ``enforce_sorted=True`` the lengths must already be in decreasing order; otherwise the
    batch is sorted here and the order is remembered for ``pad_packed_sequence``.
    """
    lengths = _lengths_tensor(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = _t.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_sorted(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pack_sorted(input, lengths, batch_first):
    """The rows of step ``t`` are ``input[t, :batch_sizes[t]]``: concatenated, they are ``data``."""
    if batch_first:
        input = input.transpose(0, 1)
    lengths_list = lengths.tolist()
    if lengths.dim() != 1 or len(lengths_list) != input.size(1):
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths_list)} "
            f"(batch_size={input.size(1)})"
        )
    if any(length <= 0 for length in lengths_list):
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"
        )
    if any(a < b for a, b in zip(lengths_list, lengths_list[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
            "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
            "sidestep this requirement if you do not need ONNX exportability."
        )
    if lengths_list[0] > input.size(0):
        raise RuntimeError(
            f"Expected sequence length to be larger than 0 in RNN (the longest length "
            f"{lengths_list[0]} is longer than the padded input's {input.size(0)} steps)"
        )
    batch_sizes = [sum(1 for length in lengths_list if length > t) for t in range(lengths_list[0])]
    data = _t.cat([input[t, :size] for t, size in enumerate(batch_sizes)], 0)
    return data, _t.tensor(batch_sizes, dtype=_t.int64)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo ``pack_padded_sequence``: ``(padded, lengths)`` in the original batch order."""
    batch_sizes = sequence.batch_sizes.tolist()
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, "
                f"but got total_length={total_length} and max sequence length being {max_seq_length}"
            )
        max_seq_length = total_length
    data = sequence.data
    batch = batch_sizes[0]
    trailing = tuple(data.shape[1:])
    steps, offset = [], 0
    for size in batch_sizes:
        step = data[offset : offset + size]
        if size < batch:  # the finished sequences' rows are padding
            fill = _t.full((batch - size, *trailing), padding_value, dtype=data.dtype, device=data.device)
            step = _t.cat([step, fill], 0)
        steps.append(step)
        offset += size
    for _ in range(max_seq_length - len(batch_sizes)):
        steps.append(_t.full((batch, *trailing), padding_value, dtype=data.dtype, device=data.device))
    padded = _t.stack(steps, 0)
    lengths = _t.tensor([sum(1 for size in batch_sizes if size > b) for b in range(batch)], dtype=_t.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of shape ``(L_i, *)`` into ``(T, B, *)`` (or ``(B, T, *)``), padding each
    to the longest ``T`` on the right (or the left)."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of type: "
            f"{type(sequences)}"
        )
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.size(0) for s in sequences)
    rows = []
    for seq in sequences:
        missing = max_len - seq.size(0)
        if missing:
            fill = _t.full((missing, *seq.shape[1:]), padding_value, dtype=seq.dtype, device=seq.device)
            seq = _t.cat([seq, fill] if padding_side == "right" else [fill, seq], 0)
        rows.append(seq)
    return _t.stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of unpadded sequences of a padded batch (right padding)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[: int(length)] for seq, length in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True) -> PackedSequence:
    """Pack a list of sequences ``(L_i, *)`` (``pad_sequence`` then ``pack_padded_sequence``)."""
    lengths = _t.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences) -> list:
    """The list of sequences a ``PackedSequence`` holds, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
