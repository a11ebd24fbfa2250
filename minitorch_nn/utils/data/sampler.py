"""Samplers: the order in which a ``DataLoader`` visits a map-style dataset (mirrors
``torch/utils/data/sampler.py``).

A sampler is any iterable of indices with a ``__len__``. ``BatchSampler`` groups another
sampler's indices into lists. The random samplers draw from the project's PyTorch-compatible
generator with the same calls in the same order as PyTorch (``randperm`` for shuffling,
``randint`` in chunks of 32 for sampling with replacement, ``multinomial`` for weights), so under
the same seed they yield the same indices.

``RandomSampler`` without a generator draws a fresh seed from the default generator *when
iteration starts* (not when it is built), as PyTorch does; a ``DataLoader`` draws its worker base
seed before that, which is why a seeded loop visits the same order in both libraries.
"""

from __future__ import annotations

import itertools

import minitorch_nn as _t

__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
]


class Sampler:
    """Base class: subclasses define ``__iter__`` (indices) and, usually, ``__len__``."""

    def __init__(self, data_source=None) -> None:
        # PyTorch accepts and ignores the argument (kept for old subclasses calling super().__init__(ds))
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A shuffled order (``replacement=False``), or ``num_samples`` independent draws."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            # a private generator seeded from the default one: one int64 draw per epoch
            seed = int(_t.empty((), dtype=_t.int64).random_().item())
            generator = _t.Generator()
            generator.manual_seed(seed)
        if self.replacement:
            # drawn 32 at a time, so the stream is consumed exactly as PyTorch consumes it
            for _ in range(self.num_samples // 32):
                yield from _t.randint(high=n, size=(32,), dtype=_t.int64, generator=generator).tolist()
            yield from _t.randint(
                high=n, size=(self.num_samples % 32,), dtype=_t.int64, generator=generator
            ).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _t.randperm(n, generator=generator).tolist()
            yield from _t.randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (a fresh permutation each epoch)."""

    def __init__(self, indices, generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _t.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        weights_tensor = _t.as_tensor(weights, dtype=_t.double)
        if len(weights_tensor.shape) != 1:
            raise ValueError(
                "weights should be a 1d sequence but given "
                f"weights have shape {tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = _t.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler``; the short last one kept unless ``drop_last``."""

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        indices = iter(self.sampler)
        batch = list(itertools.islice(indices, self.batch_size))
        while batch:
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch
            batch = list(itertools.islice(indices, self.batch_size))

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
