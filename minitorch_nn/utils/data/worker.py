"""What runs inside a ``DataLoader`` worker process (mirrors ``torch/utils/data/_utils/worker.py``).

Each worker is a separate process with its own copy of the dataset. It receives
``(task_index, batch_indices)`` on its own index queue, fetches and collates that batch, and puts
``(task_index, batch)`` on the shared data queue; the main process puts results back in order.

Seeding follows PyTorch exactly: the loader draws one int64 ``base_seed`` per epoch from its
generator; worker ``i`` then calls ``random.seed(base_seed + i)``, ``manual_seed(base_seed + i)``
and seeds numpy's legacy global generator with the same four 32-bit words PyTorch derives
(``_generate_state``, a SeedSequence-style hash), so random augmentations in a worker draw the same
numbers in both libraries.

``get_worker_info()`` returns ``None`` in the main process and a ``WorkerInfo`` in a worker.
"""

from __future__ import annotations

import queue
import random
import sys
import traceback
from dataclasses import dataclass

__all__ = ["WorkerInfo", "get_worker_info"]

# how often (seconds) a waiting worker checks that the main process is still alive
_STATUS_CHECK_INTERVAL = 5.0


class WorkerInfo:
    """``id``, ``num_workers``, ``seed`` and ``dataset`` (this process's copy) of the current worker."""

    def __init__(self, **kwargs) -> None:
        for key, value in kwargs.items():
            object.__setattr__(self, key, value)
        object.__setattr__(self, "_keys", tuple(kwargs))

    def __setattr__(self, key, value):
        raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self._keys)
        return f"{self.__class__.__name__}({items})"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The current worker's ``WorkerInfo``, or ``None`` in the main process."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """Sent by a worker whose copy of an ``IterableDataset`` is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch (and echoed back)."""

    seed: int | None = None


class ExceptionWrapper:
    """An exception from a worker, carried to the main process as its type and formatted traceback."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        message = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            # KeyError quotes its argument; a wrapper keeps the traceback readable
            message = KeyErrorMessage(message)
        try:
            exception = self.exc_type(message)
        except TypeError:  # an exception type whose constructor wants other arguments
            raise RuntimeError(message) from None
        raise exception


class KeyErrorMessage(str):
    def __repr__(self):
        return self


def _generate_state(base_seed: int, worker_id: int) -> list[int]:
    """Four 32-bit words for ``numpy.random.seed``: numpy's SeedSequence hash of
    ``[worker_id, base_seed low, base_seed high, 0]``, written out as PyTorch does."""
    init_a, mult_a = 0x43B0D7E5, 0x931E8875
    init_b, mult_b = 0x8B51F9DD, 0x58F38DED
    mix_mult_l, mix_mult_r = 0xCA01F9DD, 0x4973F715
    shift, mask = 16, 0xFFFFFFFF

    entropy = [worker_id, base_seed & mask, base_seed >> 32, 0]
    hash_const = init_a

    def hash_word(value):
        nonlocal hash_const
        value = (value ^ hash_const) & mask
        hash_const = (hash_const * mult_a) & mask
        value = (value * hash_const) & mask
        return (value ^ (value >> shift)) & mask

    def mix(x, y):
        result = ((mix_mult_l * x) - (mix_mult_r * y)) & mask
        return (result ^ (result >> shift)) & mask

    pool = [hash_word(word) for word in entropy]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_word(pool[i_src]))

    state, hash_const_b = [], init_b
    for word in pool:
        word = (word ^ hash_const_b) & mask
        hash_const_b = (hash_const_b * mult_b) & mask
        word = (word * hash_const_b) & mask
        state.append((word ^ (word >> shift)) & mask)
    return state


def _seed_worker(base_seed: int, worker_id: int) -> int:
    import numpy as np

    import minitorch_nn as _t

    seed = base_seed + worker_id
    random.seed(seed)
    _t.manual_seed(seed)
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn,
                 drop_last, base_seed, init_fn, worker_id, num_workers, persistent_workers):
    """The body of one worker process: fetch batches until told to stop (``None``)."""
    from minitorch_nn.utils.data.dataloader import _create_fetcher

    global _worker_info
    try:
        import minitorch_nn as _t

        _t.set_num_threads(1)  # workers share the machine; one BLAS thread each, as PyTorch
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)

        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        iteration_end = False
        while True:
            try:
                task = index_queue.get(timeout=_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    break
                continue
            if isinstance(task, _ResumeIteration):
                data_queue.put((task, None))
                iteration_end = False
                fetcher = _create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
                continue
            if task is None:  # the main process is shutting this worker down
                break
            if done_event.is_set() or iteration_end:
                continue
            task_index, indices = task
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(indices)
                except StopIteration:
                    if dataset_kind != "iterable":
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((task_index, data))
            del data, task
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
