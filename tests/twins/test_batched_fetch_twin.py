"""The DataLoader's batched fetch (``utils/data/_batched_fetch.py``) against the readable per-sample
path (``_MapDatasetFetcher.fetch`` with ``TensorDataset.__getitem__`` and ``default_collate``).

Each loader is run twice from the same seed: with the test's switch (the batched fetch while
``backends.compiled`` is on) and with the switch off. Every batch must agree in values, dtype,
shape, strides and grad state, and the default generator must end in the same state. Then the
cases where the speed path must step aside, and its guard. Agreement with PyTorch's order is
checked in ``tests/oracle/test_data_oracle.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn.overrides import TorchFunctionMode
from minitorch_nn.utils.data import (
    DataLoader,
    Sampler,
    TensorDataset,
    _batched_fetch,
    collate,
    dataset,
)
from tests.twins.harness import full_path, switch_on

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

DTYPES = [mt.float32, mt.float64, mt.int64, mt.int32, mt.bool, mt.float16]


def _describe(batch):
    """Everything a caller can see of one batch (a list/tuple of tensors, or a tensor)."""
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [_describe(b) for b in batch])
    return (type(batch).__name__, batch.dtype, tuple(batch.shape), batch.stride(), batch.requires_grad,
            type(batch.grad_fn).__name__, batch._version, batch.numpy().tobytes() if not batch.requires_grad
            else batch.detach().numpy().tobytes())


def _epoch(make_loader, seed=0):
    mt.manual_seed(seed)
    loader = make_loader()
    batches = [_describe(b) for b in loader]
    return batches, mt.get_rng_state().numpy().tobytes()


def _assert_same(make_loader, seed=0):
    fast = _epoch(make_loader, seed)
    with full_path():
        slow = _epoch(make_loader, seed)
    assert fast == slow


def _tensors(draw_shapes, n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for shape, dtype in draw_shapes:
        values = rng.standard_normal((n, *shape)) * 10
        out.append(mt.tensor(values).to(dtype))
    return out


@SETTINGS
@given(
    n=st.integers(1, 70),
    columns=st.lists(st.tuples(st.lists(st.integers(1, 3), max_size=2).map(tuple), st.sampled_from(DTYPES)),
                     min_size=1, max_size=3),
    batch_size=st.integers(1, 20),
    shuffle=st.booleans(),
    drop_last=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_batches_equal_the_per_sample_path(n, columns, batch_size, shuffle, drop_last, seed):
    tensors = _tensors(columns, n, seed)
    _assert_same(lambda: DataLoader(TensorDataset(*tensors), batch_size=batch_size, shuffle=shuffle,
                                    drop_last=drop_last), seed)


def test_the_path_runs_only_with_the_switch_on():
    x = mt.arange(12.0).reshape(6, 2)
    got = _batched_fetch.fetch_batch(TensorDataset(x), [3, 1], collate.default_collate)
    if switch_on():
        assert got is not None and got[0].tolist() == [[6.0, 7.0], [2.0, 3.0]]
    else:
        assert got is None


class _Doubled(TensorDataset):
    def __getitem__(self, index):
        return tuple(t[index] * 2 for t in self.tensors)


def _data():
    return mt.arange(20.0).reshape(10, 2), mt.arange(10)


@pytest.mark.parametrize("case", ["subclass", "collate_fn", "grad", "non_contiguous", "numpy_indices"])
def test_the_readable_path_runs_where_the_gather_could_differ(case):
    x, y = _data()
    kwargs = {"batch_size": 4, "shuffle": True}
    if case == "subclass":
        make = lambda: DataLoader(_Doubled(x, y), **kwargs)  # noqa: E731
    elif case == "collate_fn":
        make = lambda: DataLoader(TensorDataset(x, y), collate_fn=lambda b: [s[1] for s in b], **kwargs)  # noqa: E731
    elif case == "grad":
        xg = x.clone().requires_grad_(True)
        make = lambda: DataLoader(TensorDataset(xg, y), **kwargs)  # noqa: E731
    elif case == "non_contiguous":
        make = lambda: DataLoader(TensorDataset(x.t().contiguous().t(), y), **kwargs)  # noqa: E731
    else:
        class NumpyIndices(Sampler):
            def __iter__(self):
                return iter([np.int64(3), np.int64(0), np.int64(9)])

            def __len__(self):
                return 3

        make = lambda: DataLoader(TensorDataset(x, y), batch_size=2, sampler=NumpyIndices())  # noqa: E731
    _assert_same(make, seed=5)
    if case == "grad":
        batch = next(iter(make()))
        assert type(batch[0].grad_fn).__name__ == "StackBackward0"


def test_an_index_out_of_range_raises_the_readable_error():
    x, y = _data()

    class TooFar(Sampler):
        def __iter__(self):
            return iter([2, 10])

        def __len__(self):
            return 2

    errors = []
    for readable in (False, True):
        loader = DataLoader(TensorDataset(x, y), batch_size=2, sampler=TooFar())
        with pytest.raises(IndexError) as info:
            if readable:
                with full_path():
                    list(loader)
            else:
                list(loader)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_a_mode_sees_the_per_sample_calls():
    x, y = _data()
    seen = []

    class Recording(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    with Recording():
        batch = next(iter(DataLoader(TensorDataset(x, y), batch_size=3)))
    assert batch[1].tolist() == [0, 1, 2]
    assert seen.count("stack") == 2 and seen.count("__getitem__") == 6


def test_guard_an_extended_collate_table_is_used():
    x, y = _data()
    calls = []
    original = collate.default_collate_fn_map[mt.Tensor]

    def counting(batch, *, collate_fn_map=None):
        calls.append(len(batch))
        return original(batch, collate_fn_map=collate_fn_map)

    collate.default_collate_fn_map[mt.Tensor] = counting
    try:
        batches = list(DataLoader(TensorDataset(x, y), batch_size=4))
    finally:
        collate.default_collate_fn_map[mt.Tensor] = original
    assert calls == [4, 4, 4, 4, 2, 2]
    assert batches[-1][1].tolist() == [8, 9]


def test_guard_a_replaced_getitem_runs():
    x, y = _data()
    calls = []
    original = dataset.TensorDataset.__getitem__

    def counting(self, index):
        calls.append(index)
        return original(self, index)

    dataset.TensorDataset.__getitem__ = counting
    try:
        batch = next(iter(DataLoader(TensorDataset(x, y), batch_size=3)))
    finally:
        dataset.TensorDataset.__getitem__ = original
    assert calls == [0, 1, 2]
    assert batch[0].tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
