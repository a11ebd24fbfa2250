"""Probes for differential tests: ``probe(torch_like, *args)`` runs the same lines on whichever
implementation it is given and returns plain data (numpy arrays, tuples) for comparison."""

import numpy as np


def transpose_probe(torch, arr, dims):
    x = torch.from_numpy(arr.copy()).permute(*reversed(range(arr.ndim)))
    y = x.transpose(*dims)
    return np.asarray(y.contiguous().numpy()), tuple(y.stride())


def view_strides_probe(torch, sizes, strides, new_sizes):
    from minitorch_nn.backends.views import compute_view_strides

    out = compute_view_strides(list(sizes), list(strides), list(new_sizes))
    return None if out is None else tuple(out)


def state_dict_probe(torch, seed):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU(), torch.nn.LayerNorm(2))
    return {k: np.asarray(v.numpy()) for k, v in model.state_dict().items()}
