"""Datasets: what a ``DataLoader`` reads from (mirrors ``torch/utils/data/dataset.py``).

Two kinds, as in PyTorch:

* a *map-style* ``Dataset`` answers ``dataset[i]`` and usually ``len(dataset)``;
* an ``IterableDataset`` is only iterated (a stream: lines of a file, generated samples).

The helpers wrap other datasets: ``TensorDataset`` zips tensors along their first dimension,
``Subset`` picks indices, ``ConcatDataset``/``ChainDataset`` join datasets, and ``random_split``
cuts one dataset into random non-overlapping ``Subset`` s. ``random_split`` draws its permutation
with ``randperm`` on the given generator (the default one otherwise), so under the same seed it
splits exactly as PyTorch does.

Differences from PyTorch: no ``StackDataset`` and no DataPipes.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

import minitorch_nn as _t
from minitorch_nn._warnings import warn_user

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "ConcatDataset",
    "ChainDataset",
    "Subset",
    "random_split",
]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__`` (and usually ``__len__``).

    ``a + b`` joins two datasets into a ``ConcatDataset``.
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is iterated rather than indexed; subclasses define ``__iter__``.

    With ``num_workers > 0`` every worker process iterates its own copy: use
    ``get_worker_info()`` inside ``__iter__`` to give each worker a different shard.
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``; all tensors share their first dimension."""

    def __init__(self, *tensors) -> None:
        if not all(tensors[0].size(0) == tensor.size(0) for tensor in tensors):
            raise AssertionError(
                "Size mismatch between tensors\n"
                "Every tensor given to TensorDataset must have the same size in dimension 0."
            )
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    """Map-style datasets one after another: index ``i`` finds its dataset by bisection."""

    @staticmethod
    def cumsum(sequence):
        totals, running = [], 0
        for dataset in sequence:
            running += len(dataset)
            totals.append(running)
        return totals

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for dataset in self.datasets:
            if isinstance(dataset, IterableDataset):
                raise AssertionError(
                    "ConcatDataset does not support IterableDataset\n"
                    "Use ChainDataset to join iterable datasets."
                )
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        start = 0 if dataset_idx == 0 else self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another (the iterable counterpart of ``ConcatDataset``)."""

    def __init__(self, datasets) -> None:
        self.datasets = datasets

    def __iter__(self):
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from dataset

    def __len__(self) -> int:
        total = 0
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(dataset)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        # a whole batch at once when the wrapped dataset can do that (the fetcher asks for it)
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self) -> int:
        return len(self.indices)


def _fractions_to_lengths(n: int, fractions) -> list[int]:
    """Floor each share, then hand the remainder out one by one from the first split (as PyTorch)."""
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warn_user(
                f"Length of split at index {i} is 0. This might result in an empty dataset.",
            )
    return lengths


def random_split(dataset, lengths, generator=None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random ``Subset`` s of the given lengths.

    ``lengths`` are counts, or fractions summing to 1 (``[0.8, 0.2]``). The permutation is
    ``randperm(len(dataset), generator=generator)``, so the split matches PyTorch's under the
    same seed.

    Example::

        >>> import minitorch_nn as torch
        >>> train, val = random_split(range(10), [0.8, 0.2], generator=torch.Generator().manual_seed(0))
        >>> len(train), len(val)
        (8, 2)
    """
    if generator is None:
        generator = _t.default_generator
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _fractions_to_lengths(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError(
            "Sum of input lengths does not equal the length of the input dataset!"
        )
    indices = _t.randperm(sum(lengths), generator=generator).tolist()
    splits, offset = [], 0
    for length in lengths:
        splits.append(Subset(dataset, indices[offset : offset + length]))
        offset += length
    return splits
