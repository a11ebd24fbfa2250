"""``DataLoader``: batches from a dataset, in one process or several (mirrors
``torch/utils/data/dataloader.py``).

The pieces, in the order one batch meets them:

1. a sampler yields indices (``SequentialSampler``, or ``RandomSampler`` when ``shuffle=True``);
2. a ``BatchSampler`` groups them into lists of ``batch_size`` (unless ``batch_size=None``);
3. a *fetcher* looks the samples up (``dataset[i]`` for each, or ``dataset.__getitems__(indices)``;
   ``next(iterator)`` for an ``IterableDataset``) and calls ``collate_fn`` on the list;
4. with ``num_workers=0`` that happens right here; otherwise worker processes (``worker.py``) do
   steps 3 and 4 while the main process hands out index lists round-robin, keeps
   ``prefetch_factor`` tasks per worker in flight, and returns results in sampler order.

Seeds are drawn in PyTorch's order: each epoch's iterator first draws the workers' ``base_seed``
(one int64 from ``generator`` or the default generator), then the sampler draws its own on its
first ``next``; so ``manual_seed(s)`` gives the same batches as in PyTorch.

Differences from PyTorch: ``pin_memory`` is accepted and does nothing (CPU only, with PyTorch's
warning); no ``in_order=False`` reordering (results always come in sampler order), no DataPipes and
no distributed sharding; batches travel from workers by pickling rather than shared memory.
"""

from __future__ import annotations

import itertools
import multiprocessing as python_multiprocessing
import os
import queue
import threading

import minitorch_nn as _t
from minitorch_nn._warnings import warn_user
from minitorch_nn.utils.data import _batched_fetch
from minitorch_nn.utils.data import worker as _worker
from minitorch_nn.utils.data.collate import default_collate, default_convert
from minitorch_nn.utils.data.dataset import IterableDataset
from minitorch_nn.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

get_worker_info = _worker.get_worker_info

# how long (seconds) the main process waits for a batch before checking its workers are alive
_STATUS_CHECK_INTERVAL = 5.0


class _InfiniteConstantSampler(Sampler):
    """The "sampler" of an ``IterableDataset``: ``None`` forever (the dataset decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


# ---------------------------------------------------------------------- fetchers
class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last) -> None:
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            # a TensorDataset batch as one gather per tensor, when that gives the same batch
            # (``_batched_fetch.py``; None otherwise)
            batch = _batched_fetch.fetch_batch(self.dataset, possibly_batched_index, self.collate_fn)
            if batch is not None:
                return batch
            if getattr(self.dataset, "__getitems__", None):
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last) -> None:
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = list(itertools.islice(self.dataset_iter, len(possibly_batched_index)))
        if len(data) < len(possibly_batched_index):
            self.ended = True
        if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


def _create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableDatasetFetcher if kind == "iterable" else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


# ---------------------------------------------------------------------- the loader
class DataLoader:
    """Iterate over ``dataset`` in batches.

    Parameters follow ``torch.utils.data.DataLoader``: ``batch_size=1``, ``shuffle``, ``sampler``,
    ``batch_sampler``, ``num_workers=0``, ``collate_fn``, ``pin_memory`` (a no-op here),
    ``drop_last``, ``timeout``, ``worker_init_fn``, ``multiprocessing_context``, ``generator``, and
    keyword-only ``prefetch_factor``, ``persistent_workers``, ``pin_memory_device``, ``in_order``.

    Example::

        >>> import minitorch_nn as torch
        >>> from minitorch_nn.utils.data import DataLoader, TensorDataset
        >>> ds = TensorDataset(torch.arange(5.0), torch.arange(5))
        >>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
        [[0, 1], [2, 3], [4]]
    """

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = "iterable"
            if shuffle not in {False, None}:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified "
                    f"batch_sampler option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = "map"

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
            )

        if sampler is None:
            if self._dataset_kind == "iterable":
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self._initialized = True
        self.check_worker_number_rationality()

    def check_worker_number_rationality(self) -> None:
        """Warn, as PyTorch does, when asking for more workers than this process has CPUs."""
        if not self.num_workers:
            return
        cpuset_checked = hasattr(os, "sched_getaffinity")
        suggested = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
        if suggested is None or self.num_workers > suggested:
            if suggested is None:
                advice = "DataLoader is not able to compute a suggested max number of worker in current system."
            else:
                advice = (
                    f"Our suggested max number of worker in current system is {suggested}"
                    f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, which is smaller "
                    "than what this DataLoader is going to create."
                )
            warn_user(
                f"This DataLoader will create {self.num_workers} worker processes in total. {advice} "
                "Please be aware that excessive worker creation might get DataLoader running slow or "
                "even freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
            )

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
            if isinstance(context, str):
                valid = python_multiprocessing.get_all_start_methods()
                if context not in valid:
                    raise ValueError(
                        "multiprocessing_context option should specify a valid start method in "
                        f"{valid!r}, but got multiprocessing_context={context!r}"
                    )
                context = python_multiprocessing.get_context(context)
            if not isinstance(context, python_multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context object or a string "
                    f"specifying the start method, but got multiprocessing_context={context}"
                )
        self._multiprocessing_context = context

    def __setattr__(self, attr, value):
        if self._initialized and attr in (
            "batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is initialized"
            )
        super().__setattr__(attr, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if self._dataset_kind == "iterable":
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


# ---------------------------------------------------------------------- iterators
class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory:
            warn_user(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
            )
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        # the sampler iterator is a generator: its own seed draw happens on the first next(),
        # i.e. after the base seed below, as in PyTorch
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(_t.empty((), dtype=_t.int64).random_(generator=loader.generator).item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == "iterable" and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            message = (
                f"Length of IterableDataset {self._dataset} was reported to be "
                f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                f"{self._num_yielded} samples have been fetched. "
            )
            if self._num_workers > 0:
                message += (
                    "For multiprocessing data-loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker."
                )
            warn_user(message)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader) -> None:
        super().__init__(loader)
        self._fetcher = _create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn, self._drop_last
        )

    def _next_data(self):
        index = self._next_index()  # StopIteration ends the epoch
        return self._fetcher.fetch(index)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Hands index lists to worker processes and gives their batches back in sampler order.

    Bookkeeping: ``_send_idx`` numbers the tasks sent, ``_rcvd_idx`` the next one to return;
    ``_task_info[i]`` is ``(worker_id,)`` while task ``i`` is out and ``(worker_id, data)`` once it
    arrived early (out of order).
    """

    def __init__(self, loader) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        context = loader.multiprocessing_context or python_multiprocessing
        self._worker_init_fn = loader.worker_init_fn
        self._worker_result_queue = context.Queue()
        self._workers_done_event = context.Event()
        self._index_queues, self._workers = [], []
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()  # a worker killed mid-put must not hang the exit
            process = context.Process(
                target=_worker._worker_loop,
                args=(self._dataset_kind, self._dataset, index_queue, self._worker_result_queue,
                      self._workers_done_event, self._auto_collation, self._collate_fn,
                      self._drop_last, self._base_seed, self._worker_init_fn, worker_id,
                      self._num_workers, self._persistent_workers),
                daemon=True,
            )
            process.start()
            self._index_queues.append(index_queue)
            self._workers.append(process)
        self._shutdown = False
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # persistent workers: restart their fetchers and wait until each has acknowledged
            for index_queue in self._index_queues:
                index_queue.put(_worker._ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                task_index, _ = self._get_data()
                if isinstance(task_index, _worker._ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self) -> None:
        if self._tasks_outstanding >= self._prefetch_factor * self._num_workers:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next worker still running
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return  # every worker has finished its copy of an IterableDataset
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_data(self):
        """The next ``(task_index, data)`` from any worker, checking on the workers while waiting."""
        timeout = self._timeout if self._timeout > 0 else _STATUS_CHECK_INTERVAL
        while True:
            try:
                return self._worker_result_queue.get(timeout=timeout)
            except queue.Empty:
                if self._timeout > 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None
                dead = [w for w in self._workers if not w.is_alive()]
                if dead:
                    pids = ", ".join(str(w.pid) for w in dead)
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from None

    def _next_data(self):
        while True:
            # skip tasks of workers that have stopped (their IterableDataset ended)
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._workers_status[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:  # it arrived earlier, out of order
                data = self._task_info.pop(self._rcvd_idx)[1]
                return self._process_data(data)

            task_index, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                if not self._persistent_workers:
                    self._index_queues[data.worker_id].put(None)
                self._try_put_index()
                continue
            if task_index != self._rcvd_idx:
                self._task_info[task_index] += (data,)
            else:
                del self._task_info[task_index]
                return self._process_data(data)

    def _process_data(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self) -> None:
        if self._shutdown:
            return
        self._shutdown = True
        self._workers_done_event.set()
        for index_queue in self._index_queues:
            try:
                index_queue.put(None)
            except (OSError, ValueError):
                pass
        for process in self._workers:
            process.join(timeout=_STATUS_CHECK_INTERVAL)
            if process.is_alive():
                process.terminate()
        for index_queue in self._index_queues:
            index_queue.cancel_join_thread()
            index_queue.close()
        self._worker_result_queue.cancel_join_thread()
        self._worker_result_queue.close()

    def __del__(self):
        if threading.main_thread().is_alive():
            try:
                self._shutdown_workers()
            except Exception:  # noqa: BLE001 - interpreter shutdown: the queues may already be gone
                pass
