"""Complex tensors give the same results, errors and gradients with the compiled twins on and off.

The compiled fast paths (``_ext/twins/``, ``_unary_kernels``) accept only
float32/float64/int64 tensors; a complex tensor must step aside to the readable kernels. This
checks it by running each op with ``minitorch_nn.backends.compiled`` enabled and disabled.
"""

import numpy as np
import pytest

import minitorch_nn as torch
from minitorch_nn.backends import compiled

A = [[1 + 2j, -0.5 + 0.25j, 3], [0.5j, 2, -1 - 1j]]
B = [[0.5 - 1j, 2 + 0j, -1 + 1j], [1, 1j, 2]]
OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "radd": lambda a, b: 2 + a, "mul_float": lambda a, b: a * 2.0, "add_complex": lambda a, b: a + 1j,
    "exp": lambda a, b: a.exp(), "tanh": lambda a, b: a.tanh(), "sigmoid": lambda a, b: a.sigmoid(),
    "neg": lambda a, b: -a, "sum": lambda a, b: a.sum(), "sum_dim": lambda a, b: a.sum(1), "mean": lambda a, b: a.mean(),
    "mm": lambda a, b: a @ b.t(), "bmm": lambda a, b: torch.bmm(a.unsqueeze(0), b.t().unsqueeze(0)),
    "view": lambda a, b: a.view(3, 2), "reshape": lambda a, b: a.t().reshape(6), "cat": lambda a, b: torch.cat([a, b]),
    "stack": lambda a, b: torch.stack([a, b]), "clone": lambda a, b: a.clone(), "getitem": lambda a, b: a[:, 1],
    "index": lambda a, b: a[torch.tensor([1, 0])], "flatten": lambda a, b: a.flatten(),
    "masked_fill": lambda a, b: a.masked_fill(torch.tensor([[True, False, True], [False, False, True]]), 1j),
    "to": lambda a, b: a.to(torch.complex128), "detach": lambda a, b: a.detach(), "cumsum": lambda a, b: a.cumsum(1),
    "softmax": lambda a, b: a.softmax(1), "relu": lambda a, b: a.relu(), "clamp": lambda a, b: a.clamp(0, 1),
    "iadd": lambda a, b: a.clone().__iadd__(b), "imul": lambda a, b: a.clone().__imul__(2j), "pow": lambda a, b: a ** 2,
    "linear": lambda a, b: torch.nn.functional.linear(a, b), "abs": lambda a, b: a.abs(),
}


def _outcome(fn, requires_grad):
    a = torch.tensor(A, requires_grad=requires_grad)
    b = torch.tensor(B, requires_grad=requires_grad)
    try:
        r = fn(a, b)
    except Exception as e:  # noqa: BLE001 - compared below
        return type(e).__name__, str(e)
    grads = None
    if requires_grad and r.requires_grad:
        (r.abs() ** 2).sum().backward()
        grads = [None if x.grad is None else x.grad.numpy().copy() for x in (a, b)]
    return str(r.dtype), r.detach().numpy().copy(), grads


def _same(x, y):
    if isinstance(x, np.ndarray):
        return np.array_equal(x, y)
    if isinstance(x, list):
        return len(x) == len(y) and all(_same(p, q) for p, q in zip(x, y))
    return x == y


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", OPS)
def test_complex_ops_equal_with_compiled_on_and_off(name, requires_grad):
    with compiled.flags(enabled=True):
        on = _outcome(OPS[name], requires_grad)
    with compiled.flags(enabled=False):
        off = _outcome(OPS[name], requires_grad)
    assert len(on) == len(off) and all(_same(x, y) for x, y in zip(on, off)), (on, off)
    if name in ("softmax", "relu", "clamp"):
        assert on[0] == "NotImplementedError"  # PyTorch refuses these for complex tensors
    else:
        assert on[0].startswith("torch.complex") or on[0] == "torch.float32"
