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


def _error(fn, *args, **kwargs):
    """``("ok", value)`` or ``("error", type name, message)``: errors compared as data."""
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as err:  # noqa: BLE001 - the type is what we compare
        return ("error", type(err).__name__, str(err))


def broadcast_probe(torch, a, b):
    from minitorch_nn._shape import _infer_size

    return _error(lambda: tuple(_infer_size(tuple(a), tuple(b))))


def promotion_probe(torch, dims, zeros, scalars):
    from minitorch_nn._dtype import result_type_from

    get = lambda name: getattr(torch, name)  # noqa: E731
    return str(result_type_from([get(d) for d in dims], [get(d) for d in zeros], scalars))


def add_probe(torch, a, b, dtype_a, dtype_b, alpha):
    x = torch.tensor(a, dtype=getattr(torch, dtype_a))
    y = torch.tensor(b, dtype=getattr(torch, dtype_b))
    def run():
        out = torch.ops.aten.add.Tensor(x, y, alpha=alpha)
        return str(out.dtype), np.asarray(out.float().numpy() if out.dtype == torch.bfloat16 else out.numpy())
    return _error(run)


def sum_probe(torch, arr, dtype, dims, keepdim, out_dtype):
    x = torch.tensor(arr, dtype=getattr(torch, dtype))
    def run():
        kw = {"dtype": getattr(torch, out_dtype)} if out_dtype else {}
        out = torch.ops.aten.sum.dim_IntList(x, dims, keepdim, **kw)
        return str(out.dtype), tuple(out.shape), np.asarray(out.double().numpy())
    return _error(run)


def mm_grad_probe(torch, a, b, g, transposed_b):
    x = torch.tensor(a, requires_grad=True)
    w = torch.tensor(b.T.copy() if transposed_b else b, requires_grad=True)
    y = x @ (w.t() if transposed_b else w)
    y.backward(torch.tensor(g))
    return np.asarray(x.grad.numpy()), np.asarray(w.grad.numpy()), tuple(w.grad.stride())


def softmax_grad_probe(torch, arr, g, dim, log, dtype):
    x = torch.tensor(arr, dtype=getattr(torch, dtype), requires_grad=True)
    y = x.log_softmax(dim) if log else x.softmax(dim)
    y.backward(torch.tensor(g, dtype=getattr(torch, dtype)))
    return np.asarray(x.grad.double().numpy())


def sgd_probe(torch, p0, grads, hyper):
    p = torch.nn.Parameter(torch.tensor(p0))
    opt = torch.optim.SGD([p], **hyper)
    for g in grads:
        p.grad = torch.tensor(g)
        opt.step()
    buf = opt.state[p].get("momentum_buffer") if p in opt.state else None
    return np.asarray(p.detach().numpy()), None if buf is None else np.asarray(buf.numpy())


def clip_probe(torch, arrays, max_norm, norm_type):
    params = []
    for a in arrays:
        p = torch.nn.Parameter(torch.zeros(len(a), dtype=torch.float64))
        p.grad = torch.tensor(a, dtype=torch.float64)
        params.append(p)
    total = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type)
    return float(total), [np.asarray(p.grad.numpy()) for p in params]
