"""``minitorch_nn.utils.data`` on its own (no torch needed): batching, shuffling that changes per
epoch but repeats under a seed, worker processes returning batches in order, persistent workers,
and errors from workers. The comparison with PyTorch is in tests/oracle/test_data_oracle.py."""

import numpy as np
import pytest

import minitorch_nn as mt
from minitorch_nn.utils.data import (
    DataLoader,
    IterableDataset,
    TensorDataset,
    get_worker_info,
    random_split,
)


def _labels(loader):
    return [y.tolist() for _, y in loader]


def test_batches_cover_dataset_in_order_without_shuffle():
    ds = TensorDataset(mt.arange(10.0).reshape(10, 1), mt.arange(10))
    batches = _labels(DataLoader(ds, batch_size=4))
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert len(DataLoader(ds, batch_size=4)) == 3 and len(DataLoader(ds, batch_size=4, drop_last=True)) == 2


def test_shuffle_is_a_permutation_each_epoch_and_repeats_under_seed():
    ds = TensorDataset(mt.arange(20))
    loader = DataLoader(ds, batch_size=5, shuffle=True)
    mt.manual_seed(0)
    first, second = [sum((b[0].tolist() for b in loader), []) for _ in range(2)]
    assert sorted(first) == sorted(second) == list(range(20)) and first != second
    mt.manual_seed(0)
    assert sum((b[0].tolist() for b in loader), []) == first


@pytest.mark.parametrize("persistent", [False, True])
def test_worker_processes_keep_sampler_order(persistent):
    ds = TensorDataset(mt.arange(23))
    loader = DataLoader(ds, batch_size=3, num_workers=2, persistent_workers=persistent, prefetch_factor=2)
    for _ in range(2):
        assert sum((b[0].tolist() for b in loader), []) == list(range(23))


def test_workers_are_separate_processes_with_distinct_seeds():
    class Report:
        def __len__(self):
            return 4

        def __getitem__(self, i):
            info = get_worker_info()
            return mt.tensor([info.id, info.seed % 1000])

    rows = [r.tolist() for b in DataLoader(Report(), batch_size=1, num_workers=2) for r in b]
    assert {r[0] for r in rows} == {0, 1}
    assert len({r[1] for r in rows}) == 2  # base_seed + worker id differ


def test_iterable_dataset_split_across_workers():
    class Stream(IterableDataset):
        def __iter__(self):
            info = get_worker_info()
            start, step = (0, 1) if info is None else (info.id, info.num_workers)
            return iter(range(start, 12, step))

    single = sorted(v for b in DataLoader(Stream(), batch_size=4) for v in b.tolist())
    multi = sorted(v for b in DataLoader(Stream(), batch_size=4, num_workers=3) for v in b.tolist())
    assert single == multi == list(range(12))


def test_worker_error_reaches_main_process():
    class Bad:
        def __len__(self):
            return 2

        def __getitem__(self, i):
            raise KeyError(i)

    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        list(DataLoader(Bad(), num_workers=1))


def test_random_split_is_a_partition():
    parts = random_split(range(11), [0.5, 0.5], generator=mt.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [6, 5]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(11))


def test_numpy_samples_collate_to_tensors():
    batch = next(iter(DataLoader([(np.ones(2, dtype=np.float32), 1.5)] * 3, batch_size=3)))
    assert batch[0].dtype == mt.float32 and tuple(batch[0].shape) == (3, 2)
    assert batch[1].dtype == mt.float64 and batch[1].tolist() == [1.5] * 3


def test_set_num_threads_round_trip():
    before = mt.get_num_threads()
    try:
        mt.set_num_threads(1)
        assert mt.get_num_threads() == 1
        with pytest.raises(RuntimeError, match="positive integer"):
            mt.set_num_threads(0)
        assert mt.get_num_threads() == 1
    finally:
        mt.set_num_threads(before)
