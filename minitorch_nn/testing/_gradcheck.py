"""Gradient checks for course tests: thin wrappers over ``minitorch_nn.autograd.gradcheck``
(mirrors ``torch.autograd.gradcheck``; see that module for how the check works).

``check_gradients`` raises ``AssertionError`` (which pytest reports as a failed check, not a
crash) with the gradcheck's own explanation, and makes float64 leaf inputs for you from
shapes or numpy arrays, because finite differences in float32 are too noisy to grade on.
"""

from __future__ import annotations

import numpy as np


def gradcheck(func, inputs, **kwargs):
    """``minitorch_nn.autograd.gradcheck.gradcheck`` (imported on first use)."""
    from minitorch_nn.autograd.gradcheck import gradcheck as _gradcheck

    return _gradcheck(func, inputs, **kwargs)


def gradgradcheck(func, inputs, grad_outputs=None, **kwargs):
    """``minitorch_nn.autograd.gradcheck.gradgradcheck`` (imported on first use)."""
    from minitorch_nn.autograd.gradcheck import gradgradcheck as _gradgradcheck

    return _gradgradcheck(func, inputs, grad_outputs, **kwargs)


def make_leaves(*inputs, seed=0):
    """float64 leaf tensors that require grad, one per input: a shape tuple draws normal values
    (from ``seed``), an array or tensor is copied."""
    import minitorch_nn as mt

    rng = np.random.default_rng(seed)
    out = []
    for x in inputs:
        if isinstance(x, tuple) and all(isinstance(s, int) for s in x):
            arr = rng.standard_normal(x)
        elif hasattr(x, "detach"):
            arr = np.asarray(x.detach().double().numpy())
        else:
            arr = np.asarray(x, dtype=np.float64)
        out.append(mt.tensor(arr, dtype=mt.float64, requires_grad=True))
    return tuple(out)


def check_gradients(func, *inputs, second_order=False, seed=0, **kwargs):
    """Assert that autograd's gradients of ``func`` agree with finite differences at ``inputs``
    (shapes, arrays or tensors; see :func:`make_leaves`). With ``second_order`` also check the
    gradients of the gradients. Returns the leaf tensors used."""
    leaves = make_leaves(*inputs, seed=seed)
    checks = [("gradcheck", gradcheck)] + ([("gradgradcheck", gradgradcheck)] if second_order else [])
    for name, check in checks:
        try:
            ok = check(func, leaves, **kwargs)
        except Exception as err:  # GradcheckError, or the function itself failing under autograd
            raise AssertionError(f"{name} failed for {getattr(func, '__name__', func)}: "
                                 f"{type(err).__name__}: {err}") from err
        if ok is False:
            raise AssertionError(f"{name} returned False for {getattr(func, '__name__', func)}")
    return leaves
