"""The one harness for the compiled twins: the reference run, what is compared, and the probes.

Every test under ``tests/twins/`` runs twice, with the switch ``minitorch_nn.backends.compiled``
on and off (``conftest.py``). The reference it compares with is always the readable code:
:func:`full_path` turns the switch off for a block (so a test run with the switch off compares the
readable path with itself, and checks that it works and answers to the switch).

* :func:`outcome` / :func:`assert_fast_equals_full`: everything observable about one call -- the
  result's class, dtype, shape, strides, offset, version, grad state, the bytes of its values, what
  it shares with its inputs (storage, version counter, ``_base``), or the error; and the warnings.
* :func:`assert_same_graph`: with grad, the graph and the gradients after backward
  (``tests/test_fast_record.py``'s signatures), against the readable path.
* :func:`kernel_calls`: counts entries into the cpu kernels registered for some ops (by their code
  objects, through ``sys.setprofile``), without replacing them -- a replaced kernel would turn the
  twin off (its guard), which is what the guard tests check.
* :func:`twin_ran`: whether a call took the compiled twin (no readable kernel ran) -- always False
  with the switch off.
"""

from __future__ import annotations

import contextlib
import sys
import types
import warnings

import numpy as np

import minitorch_nn as mt
from minitorch_nn.autograd.graph import Node
from minitorch_nn.backends import compiled
from minitorch_nn.overrides import TorchFunctionMode


def switch_on() -> bool:
    """The switch's value in the running test (the ``switch`` fixture sets it)."""
    return compiled.enabled


@contextlib.contextmanager
def full_path():
    """Run a block on the readable path: the switch off."""
    with compiled.flags(enabled=False):
        yield


class _Sub(mt.Tensor):
    pass


class _Passthrough(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _base_label(out, inputs):
    base = out._base
    if base is None:
        return None
    for i, t in enumerate(inputs):
        if base is t:
            return ("input", i)
        if out._impl.base is t._impl.base:
            return ("base of input", i)
    return "other"


def _value_bytes(array, any_nan):
    """The result's bytes; with ``any_nan``, every NaN written as one canonical NaN first."""
    if any_nan and array.dtype.kind in "fc":
        array = np.where(np.isnan(array), np.array(np.nan, dtype=array.dtype), array)
    return array.tobytes()


def outcome(fn, inputs=(), any_nan=False):
    """Everything observable about ``fn()`` (see the module docstring), and the warnings it gave.

    ``any_nan`` compares every NaN as one value, for a twin that is a C loop where the readable
    original is a chain of numpy calls: which operand's NaN an arithmetic instruction passes on
    (and so its sign) is left to the compiler by C and to the vector loop by numpy, and PyTorch
    promises no NaN sign either. Every other bit is still compared."""
    inputs = [t for t in inputs if isinstance(t, mt.Tensor)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn()
        except Exception as e:  # noqa: BLE001 - the error itself is what we compare
            result = ("error", type(e).__name__, str(e))
        else:
            if not isinstance(out, mt.Tensor):
                result = ("value", type(out).__name__, repr(out))
            else:
                impl = out._impl
                result = (
                    "ok", type(out).__name__, out.dtype, tuple(out.shape), out.stride(), out.storage_offset(),
                    out.is_contiguous(), [type(s) for s in impl.sizes + impl.strides], out._version,
                    out.requires_grad, out.is_leaf, None if out.grad_fn is None else out.grad_fn.name(),
                    _value_bytes(np.asarray(out.detach()._array), any_nan),
                    [impl.storage is t._impl.storage for t in inputs],
                    [impl.version is t._impl.version for t in inputs],
                    _base_label(out, inputs), out._is_view(),
                )
    return result, [(w.category.__name__, str(w.message)) for w in caught]


def assert_fast_equals_full(fn, *inputs, any_nan=False):
    """``fn()`` as the test's switch runs it equals ``fn()`` on the readable path; inputs untouched.
    (``any_nan``: see :func:`outcome`.)"""
    tensors = [t for t in inputs if isinstance(t, mt.Tensor)]
    versions = [t._version for t in tensors]
    fast = outcome(fn, tensors, any_nan)
    with full_path():
        full = outcome(fn, tensors, any_nan)
    assert fast == full
    assert [t._version for t in tensors] == versions


# -- with grad: the graph and the gradients --------------------------------------------------------

def _graph_outcome(make, fn, modify):
    tensors, x, y = make()
    before = Node()._sequence_nr()
    try:
        out = fn(x, y)
    except Exception as e:  # noqa: BLE001
        return ("error", type(e).__name__, str(e))
    if not isinstance(out, mt.Tensor):
        return ("value", repr(out))
    sig = _result_signature(out, tensors, before)
    try:
        backward = _backward_outcome(out, tensors, modify) if out.requires_grad else None
    except RuntimeError as e:  # (an expanded input cannot be modified in place)
        backward = ("error", str(e))
    return sig, out.grad_fn.name() if out.grad_fn else None, backward


def reference_path():
    """The readable path, with the readable recorder where that can be chosen
    (``signatures.recorder_reference_path`` inside :func:`full_path`)."""
    stack = contextlib.ExitStack()
    stack.enter_context(full_path())
    stack.enter_context(recorder_reference_path())
    return stack


def assert_same_graph(make, fn, modify=None):
    fast = _graph_outcome(make, fn, modify)
    with reference_path():
        full = _graph_outcome(make, fn, modify)
    assert fast == full


# -- probes: which code ran -------------------------------------------------------------------------

def _code_of(fn):
    while getattr(fn, "__wrapped__", None) is not None:
        fn = fn.__wrapped__
    return fn.__code__ if isinstance(fn, types.FunctionType) else None


@contextlib.contextmanager
def code_calls(functions):
    """Count, in ``calls``, every entry into one of ``functions`` (by code object, so closures made
    by one factory all count) while the block runs. Nothing is replaced."""
    codes = {c for c in map(_code_of, functions) if c is not None}
    calls = []
    previous = sys.getprofile()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            calls.append(frame.f_code.co_qualname)
        if previous is not None:   # (an enclosing count goes on counting)
            previous(frame, event, arg)

    sys.setprofile(profile)
    try:
        yield calls
    finally:
        sys.setprofile(previous)


def kernel_calls(ops, device="cpu"):
    """:func:`code_calls` for the kernels registered for ``ops`` on ``device``."""
    return code_calls([op.kernel_for(device) for op in ops])


def ran_kernels(fn, ops, errors=(RuntimeError,)):
    """Whether ``fn()`` entered one of the registered kernels of ``ops`` (a kernel's own error
    counts as having run)."""
    with kernel_calls(ops) as calls:
        try:
            fn()
        except errors:
            pass
    return bool(calls)


def twin_ran(fn, ops):
    """Whether ``fn()`` took a compiled twin: none of the kernels of ``ops`` ran."""
    return not ran_kernels(fn, ops)


def fast_when_on(ran_readable: bool) -> bool:
    """For a call a twin should take: True when, with the switch on, no readable kernel ran, or,
    with it off, the readable kernel did (``assert fast_when_on(ran_full_path(...))``)."""
    return not ran_readable if switch_on() else ran_readable


from tests.twins.signatures import _backward_outcome, _result_signature, recorder_reference_path  # noqa: E402
