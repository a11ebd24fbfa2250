"""``minitorch_nn.utils.data``: datasets, samplers, collation and ``DataLoader`` (mirrors
``torch.utils.data``).

Read ``dataset.py`` (what a dataset is), ``sampler.py`` (the order of indices), ``collate.py``
(samples to a batch), ``dataloader.py`` (putting it together) and ``worker.py`` (what a worker
process does).
"""

from minitorch_nn.utils.data.collate import default_collate, default_convert
from minitorch_nn.utils.data.dataloader import DataLoader
from minitorch_nn.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from minitorch_nn.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from minitorch_nn.utils.data.worker import WorkerInfo, get_worker_info

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
    "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler",
    "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "default_collate", "default_convert",
    "get_worker_info", "random_split",
]
