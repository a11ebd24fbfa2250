"""Inference tensors, in-place writes into multi-output views, and reshape's view op, against PyTorch.

Each case runs the same program on ``torch`` and on ``minitorch_nn`` and compares what comes out:
values, ``grad_fn`` names, ``is_inference()``, and the type and full text of any error.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn.utils._python_dispatch import TorchDispatchMode as OurMode

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")
TorchMode = pytest.importorskip("torch.utils._python_dispatch").TorchDispatchMode


def _outcome(fn):
    """What ``fn()`` gives: ('ok', value) or ('error', type name, message)."""
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        return ("error", type(e).__name__, str(e))


def _same(program):
    """Run ``program(lib)`` for both libraries; every step's outcome must match."""
    ours, theirs = program(mt), program(torch)
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"step {i}: ours {a!r}, torch {b!r}"


def _name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


# -- inference tensors --------------------------------------------------------------------------


def _inference_program(lib):
    normal = lib.ones(3)
    x = lib.ones(3, requires_grad=True)
    steps = []
    with lib.inference_mode():
        y = lib.ones(3)
        w = lib.arange(3.0)   # read only: PyTorch writes before refusing (see test_refused_write...)
        made = [y, y * 2, normal.view(3), x * 2, y[1:], lib.zeros_like(normal), lib.exp(y)]
        steps.append([t.is_inference() for t in made])
        steps.append((x * 2).requires_grad)
        steps.append(_outcome(lambda: normal.add_(1).tolist()))     # a normal tensor stays normal
        steps.append(normal.is_inference())
        steps.append(_outcome(lambda: y.add_(1).tolist()))          # allowed inside
        steps.append(lib.is_inference_mode_enabled())
        with lib.inference_mode(False):
            steps.append((lib.is_inference_mode_enabled(), lib.is_grad_enabled(), lib.ones(1).is_inference()))
    steps.append(lib.is_inference_mode_enabled())
    # views of an inference tensor are inference tensors; out-of-place results are not
    steps.append([y.is_inference(), y[1:].is_inference(), y.detach().is_inference(),
                  y.view(3, 1).is_inference(), y.clone().is_inference(), (y + 1).is_inference()])
    steps.append(_outcome(lambda: y._version))
    steps.append(_outcome(lambda: y.add_(1)))
    steps.append(_outcome(lambda: y[0].fill_(1)))
    steps.append(_outcome(lambda: y.view(3).mul_(2)))
    steps.append(_outcome(lambda: y.requires_grad_()))
    steps.append(_outcome(lambda: setattr(y, "requires_grad", True)))
    steps.append(_outcome(lambda: y.requires_grad_(False).requires_grad))
    with lib.no_grad():
        steps.append(_outcome(lambda: y.mul_(2)))                   # refused with grad mode off too
        steps.append(_outcome(lambda: (x * w).tolist()))            # nothing recorded: allowed
    # autograd may not save an inference tensor; ops that save nothing are fine
    steps.append(_outcome(lambda: _name(x * w)))
    steps.append(_outcome(lambda: _name(w * x)))
    steps.append(_outcome(lambda: (_name(x + w), (x + w).tolist())))
    steps.append(_outcome(lambda: _name(lib.matmul(x.view(1, 3), w.view(3, 1)))))
    steps.append(_outcome(lambda: _name(lib.exp(w))))
    steps.append(_outcome(lambda: w.clone().requires_grad_().is_inference()))
    steps.append(w.tolist())
    return steps


def test_refused_write_into_inference_tensor_leaves_it_unchanged():
    # PyTorch raises after its kernel has written (the check sits where the version counter would
    # be bumped); we refuse before writing, so the tensor keeps its values.
    with mt.inference_mode():
        y = mt.ones(3)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        y.add_(1)
    assert y.tolist() == [1.0, 1.0, 1.0]


def test_inference_tensors_match_torch():
    _same(_inference_program)


def test_inplace_on_inference_leaf_that_requires_grad_reports_the_leaf_first():
    def program(lib):
        with lib.inference_mode():
            y = lib.ones(2).requires_grad_()
        return [y.requires_grad, y.is_inference(), _outcome(lambda: y.add_(1)),
                _outcome(lambda: y.requires_grad_())]
    _same(program)


def test_inference_mode_decorator_marks_results():
    def program(lib):
        @lib.inference_mode()
        def f(t):
            return t * 3
        out = f(lib.ones(2, requires_grad=True))
        return [out.is_inference(), out.requires_grad, out.tolist(), lib.is_grad_enabled()]
    _same(program)


# -- reshape: view or _reshape_alias ------------------------------------------------------------


def _reshape_cases(lib, data, requires_grad):
    base = lib.tensor(data, requires_grad=requires_grad)
    return {
        "contiguous": (base, (2, 6)),
        "transposed": (base.t(), (3, 2, 2)),
        "transposed_same_shape": (base.t(), (3, 4)),
        "transposed_infer": (base.t(), (-1, 4)),
        "sliced_columns": (base[:, :2], (2, 2, 2)),
        "needs_copy": (base.t(), (12,)),
        "size_one_odd_stride": (base.view(4, 1, 3).as_strided((4, 1, 3), (3, 7, 1)), (12,)),
    }


@pytest.mark.parametrize("case", ["contiguous", "transposed", "transposed_same_shape", "transposed_infer",
                                  "sliced_columns", "needs_copy", "size_one_odd_stride"])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_reshape_grad_fn_and_aliasing_match_torch(case, requires_grad):
    data = np.arange(12, dtype=np.float32).reshape(4, 3).tolist()
    (a, shape), (b, tshape) = _reshape_cases(mt, data, requires_grad)[case], _reshape_cases(torch, data, requires_grad)[case]
    ours, theirs = a.reshape(*shape), b.reshape(*tshape)
    assert _name(ours) == _name(theirs)
    assert (ours._base is not None) == (theirs._base is not None)
    assert tuple(ours.stride()) == tuple(theirs.stride())
    assert ours.tolist() == theirs.tolist()
    assert _name(mt.reshape(a, shape)) == _name(torch.reshape(b, tshape))
    if requires_grad:
        ours.sum().backward()
        theirs.sum().backward()
        root_a = a if a.grad_fn is None else a._base
        root_b = b if b.grad_fn is None else b._base
        assert root_a.grad.tolist() == root_b.grad.tolist()


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 4), cols=st.integers(1, 4), data=st.data())
def test_reshape_of_transposed_matches_torch(rows, cols, data):
    target = data.draw(st.sampled_from([(rows * cols,), (cols, rows), (cols, 1, rows), (1, cols * rows)]))
    values = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols)
    a = mt.tensor(values.tolist(), dtype=mt.float64, requires_grad=True)
    b = torch.tensor(values.tolist(), dtype=torch.float64, requires_grad=True)
    ours, theirs = a.t().reshape(target), b.t().reshape(target)
    assert _name(ours) == _name(theirs)
    assert tuple(ours.stride()) == tuple(theirs.stride())
    assert ours.tolist() == theirs.tolist()


def test_reshape_under_a_dispatch_mode_is_a_view_as_in_torch():
    def run(lib, mode_cls):
        seen = []

        class Recorder(mode_cls):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(str(func))
                return func(*args, **(kwargs or {}))

        x = lib.ones(4, 3, requires_grad=True)
        with Recorder():
            out = x.t().reshape(3, 2, 2)
        return seen, _name(out)

    assert run(mt, OurMode) == run(torch, TorchMode)


# -- in-place writes into outputs of functions that return several views ------------------------

_MULTI_VIEW_FUNCTIONS = {
    "unbind0": lambda t: t.unbind(0),
    "unbind1": lambda t: t.unbind(1),
    "split": lambda t: t.split(2),
    "split_dim1": lambda t: t.split(2, dim=1),
    "split_with_sizes": lambda t: t.split([1, 3]),
    "chunk": lambda t: t.chunk(2),
    "tensor_split": lambda t: t.tensor_split(2),
}

_FOLLOW_UPS = {
    "itself": lambda o: o,
    "view": lambda o: o.view(-1),
    "slice": lambda o: o[..., 1:],
    "transpose": lambda o: o.transpose(0, -1),
    "detach": lambda o: o.detach(),
}


@pytest.mark.parametrize("function", sorted(_MULTI_VIEW_FUNCTIONS))
@pytest.mark.parametrize("follow_up", sorted(_FOLLOW_UPS))
def test_inplace_on_multi_output_view_matches_torch(function, follow_up):
    def program(lib):
        leaf = lib.tensor(np.arange(12.0).reshape(4, 3).tolist(), requires_grad=True)
        steps = []
        for base in (leaf * 1, leaf):   # a base with history, and a leaf base
            outs = _MULTI_VIEW_FUNCTIONS[function](base)
            for i, o in enumerate(outs):
                steps.append((i, _outcome(lambda: _name(_FOLLOW_UPS[follow_up](o).mul_(2)))))
        return steps
    _same(program)


def test_inplace_on_multi_output_view_is_allowed_under_no_grad_and_without_grad():
    def program(lib):
        leaf = lib.ones(2, 3, requires_grad=True)
        outs = (leaf * 1).unbind(0)
        with lib.no_grad():
            outs[0].mul_(5)
        plain = lib.ones(2, 3).unbind(0)
        plain[1].add_(1)
        return [outs[0].tolist(), [p.tolist() for p in plain]]
    _same(program)


def test_multi_output_view_whose_base_changed_in_place_matches_torch():
    def program(lib):
        leaf = lib.ones(2, 3, requires_grad=True)
        base = leaf * 1
        outs = base.unbind(0)
        view = outs[1].view(3)
        base.mul_(2)
        return [_outcome(lambda: _name(outs[0])), _outcome(lambda: _name(view)),
                _outcome(lambda: _name(outs[1] * 1)), base.tolist()]
    _same(program)


# -- logspace -------------------------------------------------------------------------------------

_LOGSPACE_DTYPES = [("float32", None), ("float64", None), ("int64", None), ("int32", None), ("float32", "default")]


@settings(max_examples=60, deadline=None)
@given(start=st.floats(-6, 6), end=st.floats(-6, 6), steps=st.integers(0, 40),
       base=st.sampled_from([10.0, 2.0, 3.7, 0.5, 2.718281828459045]), which=st.sampled_from(_LOGSPACE_DTYPES))
def test_logspace_matches_torch_bit_for_bit(start, end, steps, base, which):
    name, default = which
    kw = {} if default else {"dtype": getattr(torch, name)}
    mkw = {} if default else {"dtype": getattr(mt, name)}
    theirs = torch.logspace(start, end, steps, base=base, **kw)
    ours = mt.logspace(start, end, steps, base=base, **mkw)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_logspace_arguments_and_errors_match_torch():
    def program(lib):
        return [
            _outcome(lambda: lib.logspace(0, 3, 4).tolist()),
            _outcome(lambda: lib.logspace(1, 2, 1, 2).tolist()),
            _outcome(lambda: lib.logspace(2, 1, 3, dtype=lib.float64).tolist()),
            _outcome(lambda: lib.logspace(0, 1, -1)),
            _outcome(lambda: lib.logspace(0, 1, 3, requires_grad=True).requires_grad),
            _outcome(lambda: lib.logspace(0, 1, 3, device="meta").shape),
            _outcome(lambda: lib.logspace(0, 1, 3, out=lib.empty(3)).tolist()),
        ]
    _same(program)


# -- new_* factories with bad sizes ----------------------------------------------------------------


@pytest.mark.parametrize("method", ["new_zeros", "new_ones", "new_empty"])
def test_new_factories_refuse_negative_sizes_like_torch(method):
    def program(lib):
        x = lib.ones(2, dtype=lib.float64)
        make = getattr(x, method)
        return [
            _outcome(lambda: make(-1)),
            _outcome(lambda: make(2, -3)),
            _outcome(lambda: make((-2,))),
            _outcome(lambda: tuple(make(2, 3).shape)),
            _outcome(lambda: str(make(2).dtype)),
            _outcome(lambda: make([2], requires_grad=True).requires_grad),
            _outcome(lambda: make(2, dtype=lib.int64, requires_grad=True)),
        ]
    _same(program)


# -- Module.__dir__ ----------------------------------------------------------------------------------

# PyTorch-only methods we do not have: torch.compile and the ipu/mtia/xpu devices
_TORCH_ONLY_METHODS = {"compile", "ipu", "mtia", "xpu"}


@pytest.mark.parametrize("make", [lambda nn: nn.Linear(2, 2), lambda nn: nn.Module(), lambda nn: nn.Sequential(nn.Linear(2, 2))])
def test_module_dir_lists_torchs_public_names(make):
    theirs = {n for n in dir(make(torch.nn)) if not n.startswith("_") or n == "__constants__"} - _TORCH_ONLY_METHODS
    ours = set(dir(make(mt.nn)))
    assert theirs - ours == set()
    assert ("__constants__" in ours) == ("__constants__" in theirs)
    assert type(mt.nn.Module.T_destination).__name__ == type(torch.nn.Module.T_destination).__name__


def test_parameters_of_inference_tensors_match_torch():
    def program(lib):
        with lib.inference_mode():
            y = lib.ones(3)
            inside = lib.nn.Parameter(lib.ones(2))
            layer = lib.nn.Linear(2, 2)
        return [
            (inside.requires_grad, inside.is_inference()),
            layer.weight.is_inference(),
            _outcome(lambda: lib.nn.Parameter(y)),
            _outcome(lambda: lib.nn.Parameter(y, requires_grad=False).is_inference()),
            _outcome(lambda: _name(layer(lib.ones(1, 2, requires_grad=True)))),
        ]
    _same(program)
