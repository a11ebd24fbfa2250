"""Oracle: ``minitorch_nn.utils.data`` against ``torch.utils.data`` (PyTorch 2.13).

Each scenario runs once per library on the same seed and compares what comes out: the order of
indices (shuffling, samplers with and without replacement, weights, ``random_split``), collated
batch structure and values, worker seeding in real worker processes, lengths, and the errors for
bad arguments (type and message).
"""

import collections
import random
import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
import torch.utils.data as tdata  # noqa: E402

import minitorch_nn as mt  # noqa: E402
import minitorch_nn.utils.data as mdata  # noqa: E402

LIBS = [(mt, mdata), (torch, tdata)]


def _plain(x):
    """Batches as nested Python values, so both libraries' outputs compare with ==."""
    if isinstance(x, (mt.Tensor, torch.Tensor)):
        return ("tensor", str(x.dtype).split(".")[-1], tuple(x.shape), x.tolist())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, *(_plain(v) for v in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_plain(v) for v in x])
    return x


def _both(scenario):
    results = [scenario(lib, data) for lib, data in LIBS]
    assert results[0] == results[1]
    return results[0]


def _errors(scenario):
    out = []
    for lib, data in LIBS:
        with pytest.raises(Exception) as info:
            scenario(lib, data)
        out.append((info.type.__name__, str(info.value).split("\n")[0]))
    assert out[0] == out[1]


# ---------------------------------------------------------------------- order under seeds
@pytest.mark.parametrize("seed", [0, 7, 12345])
@pytest.mark.parametrize("drop_last", [False, True])
def test_shuffled_epochs_follow_manual_seed(seed, drop_last):
    def run(lib, data):
        lib.manual_seed(seed)
        ds = data.TensorDataset(lib.arange(37.0), lib.arange(37))
        loader = data.DataLoader(ds, batch_size=8, shuffle=True, drop_last=drop_last)
        epochs = [[y.tolist() for _, y in loader] for _ in range(3)]
        return epochs, len(loader), lib.rand(2).tolist()  # the stream after: same draws consumed
    _both(run)


def test_shuffle_with_generator_leaves_default_stream_alone():
    def run(lib, data):
        lib.manual_seed(1)
        g = lib.Generator().manual_seed(99)
        loader = data.DataLoader(list(range(20)), batch_size=6, shuffle=True, generator=g)
        return [b.tolist() for b in loader], [b.tolist() for b in loader], lib.rand(1).tolist()
    _both(run)


@pytest.mark.parametrize("num_samples", [None, 5, 33, 70])
@pytest.mark.parametrize("replacement", [False, True])
def test_random_sampler(num_samples, replacement):
    def run(lib, data):
        g = lib.Generator().manual_seed(3)
        sampler = data.RandomSampler(range(30), replacement=replacement, num_samples=num_samples, generator=g)
        return list(sampler), len(sampler)
    _both(run)


def test_subset_and_weighted_samplers():
    def run(lib, data):
        lib.manual_seed(5)
        subset = list(data.SubsetRandomSampler([10, 20, 30, 40, 50]))
        with_repl = list(data.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 12, replacement=True))
        without = list(data.WeightedRandomSampler([0.9, 0.4, 0.05, 0.2, 0.3, 0.1], 5, replacement=False))
        return subset, with_repl, without
    _both(run)


@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_sampler(drop_last):
    def run(lib, data):
        bs = data.BatchSampler(data.SequentialSampler(range(10)), batch_size=3, drop_last=drop_last)
        return list(bs), len(bs)
    _both(run)


@pytest.mark.parametrize("lengths", [[3, 7], [0.8, 0.2], [0.3, 0.3, 0.4], [0.5, 0.5]])
def test_random_split(lengths):
    def run(lib, data):
        lib.manual_seed(11)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parts = data.random_split(range(10), lengths)
        g_parts = data.random_split(range(11), [4, 7], generator=lib.Generator().manual_seed(2))
        return [list(p) for p in parts], [p.indices for p in g_parts]
    _both(run)


# ---------------------------------------------------------------------- collation and datasets
def test_default_collate_structures():
    Point = collections.namedtuple("Point", ["x", "y"])

    def run(lib, data):
        samples = [
            {"a": lib.tensor([i, i + 1.0]), "b": i, "c": float(i) / 2, "d": f"s{i}",
             "e": np.array([i, 2 * i], dtype=np.int32), "f": Point(np.float32(i), True),
             "g": (i, [i, i])}
            for i in range(3)
        ]
        return _plain(data.default_collate(samples))
    _both(run)


def test_default_convert_and_no_batching():
    def run(lib, data):
        converted = data.default_convert([np.arange(3), (np.float64(1.5), "x"), {"k": np.ones(2)}])
        loader = data.DataLoader([np.arange(2) + i for i in range(3)], batch_size=None)
        return _plain(converted), [_plain(b) for b in loader]
    _both(run)


def test_datasets_concat_subset_len():
    def run(lib, data):
        a = data.TensorDataset(lib.arange(4))
        b = data.TensorDataset(lib.arange(10, 13))
        cat = a + b
        sub = data.Subset(cat, [6, 0, 4])
        loader = data.DataLoader(sub, batch_size=2)
        return len(cat), cat[-1][0].item(), cat[4][0].item(), [_plain(x) for x in loader], len(loader)
    _both(run)


def test_iterable_dataset_batches_and_len():
    def run(lib, data):
        class Stream(data.IterableDataset):
            def __iter__(self):
                return iter(range(7))

            def __len__(self):
                return 7

        loader = data.DataLoader(Stream(), batch_size=3)
        loader_drop = data.DataLoader(Stream(), batch_size=3, drop_last=True)
        return [b.tolist() for b in loader], len(loader), [b.tolist() for b in loader_drop], len(loader_drop)
    _both(run)


# ---------------------------------------------------------------------- worker processes
class _SeedReport:
    """Each sample reports the worker that made it and that worker's random draws."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = self.data.get_worker_info()
        return [i, info.id, info.num_workers, info.seed,
                self.lib.randint(0, 1000, (1,)).item(), int(np.random.randint(0, 1000)), random.randint(0, 1000)]


@pytest.mark.parametrize("persistent", [False, True])
def test_workers_seeded_as_pytorch(persistent):
    def run(lib, data):
        ds = _SeedReport()
        ds.lib, ds.data = lib, data
        lib.manual_seed(123)
        loader = data.DataLoader(ds, batch_size=2, num_workers=2, shuffle=True,
                                 persistent_workers=persistent, prefetch_factor=1)
        epochs = [[b for b in loader] for _ in range(2)]
        # each batch is a list of columns: index, worker id, num_workers, seed, three draws
        return [[[column.tolist() for column in batch] for batch in epoch] for epoch in epochs]
    result = _both(run)
    assert {wid for epoch in result for batch in epoch for wid in batch[1]} == {0, 1}


def test_worker_init_fn_and_iterable_sharding():
    def run(lib, data):
        class Shards(data.IterableDataset):
            def __iter__(self):
                info = data.get_worker_info()
                return iter(range(info.id, 10, info.num_workers))

        loader = data.DataLoader(Shards(), batch_size=2, num_workers=2, worker_init_fn=lambda wid: None)
        return sorted(v for batch in loader for v in batch.tolist())
    assert _both(run) == list(range(10))


def test_worker_exception_is_reraised():
    class Bad:
        def __len__(self):
            return 4

        def __getitem__(self, i):
            raise ValueError(f"bad sample {i}")

    for _lib, data in LIBS:
        with pytest.raises(ValueError, match="Caught ValueError in DataLoader worker process 0"):
            list(data.DataLoader(Bad(), num_workers=1))


def test_get_worker_info_in_main_process():
    assert mdata.get_worker_info() is None and tdata.get_worker_info() is None


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize("kwargs", [
    {"num_workers": -1},
    {"timeout": -1},
    {"prefetch_factor": 2},
    {"persistent_workers": True},
    {"shuffle": True, "sampler": [0, 1]},
    {"batch_sampler": [[0]], "batch_size": 4},
    {"batch_size": None, "drop_last": True},
    {"batch_size": 0},
    {"multiprocessing_context": "spawn"},
])
def test_dataloader_argument_errors(kwargs):
    _errors(lambda lib, data: data.DataLoader(list(range(4)), **kwargs))


def test_sampler_and_dataset_errors():
    _errors(lambda lib, data: data.RandomSampler(range(3), replacement=1))
    _errors(lambda lib, data: data.RandomSampler([], num_samples=None))
    _errors(lambda lib, data: data.WeightedRandomSampler([1.0], 0))
    _errors(lambda lib, data: data.WeightedRandomSampler([[1.0]], 1))
    _errors(lambda lib, data: data.BatchSampler(range(3), 2, drop_last=None))
    _errors(lambda lib, data: data.TensorDataset(lib.zeros(3), lib.zeros(4)))
    _errors(lambda lib, data: data.ConcatDataset([]))
    _errors(lambda lib, data: data.random_split(range(5), [2, 2]))
    _errors(lambda lib, data: data.random_split(range(5), [1.5, -0.5]))
    _errors(lambda lib, data: data.default_collate([object(), object()]))
    _errors(lambda lib, data: data.default_collate([[1, 2], [3]]))
    _errors(lambda lib, data: data.DataLoader(range(3), shuffle=True).__setattr__("batch_size", 2))


def test_pin_memory_is_accepted_with_pytorch_warning():
    messages = []
    for _lib, data in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = [b.tolist() for b in data.DataLoader(list(range(3)), batch_size=2, pin_memory=True)]
        messages.append(([str(w.message) for w in caught], out))
    assert messages[0] == messages[1]


def test_too_many_workers_warns_as_pytorch():
    messages = []
    for _lib, data in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            data.DataLoader(list(range(4)), num_workers=64)
        messages.append([str(w.message) for w in caught])
    assert messages[0] == messages[1] and messages[0]
