"""Oracle: ``UninitializedParameter`` and ``UninitializedBuffer`` against PyTorch 2.13
(torch_behaviours.md items 119-125): what the placeholders allow, refuse and print.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

from tests.oracle._lazy_helpers import Approx, arr, assert_same, both, err, error_summary  # noqa: E402

# ------------------------------------------------------------------------------------------------
# The placeholders (119-125)
# ------------------------------------------------------------------------------------------------


def test_placeholder_classes():
    def run(lib):
        n = lib.nn
        p, b = n.UninitializedParameter(), n.UninitializedBuffer(persistent=False)
        m = n.Module()
        m.buf = n.UninitializedBuffer()
        m.p = n.UninitializedParameter(requires_grad=False)
        return (
            repr(p),
            repr(b),
            isinstance(p, n.Parameter),
            isinstance(b, n.Parameter),
            p.requires_grad,
            b.requires_grad,
            b.persistent,
            b._is_buffer,
            n.parameter.is_lazy(p),
            n.parameter.is_lazy(b),
            n.parameter.is_lazy(n.Parameter(lib.ones(1))),
            p.cls_to_become.__name__,
            b.cls_to_become.__name__,
            list(m._buffers),
            list(m._parameters),
            m.p.requires_grad,
            str(p.dtype),
            str(p.device),
        )

    assert_same(*both(run))


def test_materialize():
    def run(lib):
        n = lib.nn
        p = n.UninitializedParameter(dtype=lib.float64)
        same = p
        p.materialize(10)
        b = n.UninitializedBuffer()
        b.materialize((2, 3), dtype=lib.int64)
        q = n.UninitializedParameter(requires_grad=False)
        q.materialize((2,), dtype=lib.int32)
        e = err(lambda: n.UninitializedParameter().materialize(3, dtype=lib.int64))
        h = n.UninitializedParameter().half()
        return (
            type(p).__name__,
            p is same,
            tuple(p.shape),
            str(p.dtype),
            p.requires_grad,
            p.is_leaf,
            type(b).__name__,
            tuple(b.shape),
            str(b.dtype),
            str(q.dtype),
            e,
            type(h).__name__,
            str(h.dtype),
        )

    assert_same(*both(run))


def test_materialize_dtype_after_module_half():
    def run(lib):
        m = lib.nn.LazyLinear(3)
        m.weight.materialize(10)
        d1 = str(m.weight.dtype)
        m2 = lib.nn.LazyLinear(3).half()
        kept = type(m2.weight).__name__
        m2.weight.materialize(10)
        return d1, kept, str(m2.weight.dtype)

    assert_same(*both(run))


def test_allowed_and_refused_operations():
    def run(lib):
        p = lib.nn.UninitializedParameter()
        b = lib.nn.UninitializedBuffer()
        allowed = [
            str(p.size()),
            p.is_complex(),
            p.is_floating_point(),
            str(p.dtype),
            str(p.device),
            p.requires_grad,
            type(p.data).__name__,
            hash(p) == hash(p),
            str(p.double().dtype),
            str(p.float().dtype),
            str(p.int().dtype),
            str(p.long().dtype),
            str(p.short().dtype),
            str(p.char().dtype),
            str(p.to(lib.float64).dtype),
            type(p.cpu()).__name__,
            type(b.to(lib.float64)).__name__,
            type(b.data).__name__,
        ]
        refused = [
            error_summary(err(f))
            for f in (
                lambda: p.shape,
                lambda: b.shape,
                lambda: p.dim(),
                lambda: p.numel(),
                lambda: p + p,
                lambda: lib.add(p, p),
                lambda: lib.empty_like(p),
                lambda: p.sum(),
                lambda: b * 2,
                lambda: p.share_memory_(),
                lambda: b.share_memory_(),
            )
        ]
        return allowed, refused

    assert_same(*both(run))


def test_copy_between_placeholders_is_allowed():
    def run(lib):
        a, c = lib.nn.UninitializedParameter(), lib.nn.UninitializedParameter()
        with lib.no_grad():
            a.copy_(c)
        return repr(a)

    assert_same(*both(run))


def test_share_memory_of_a_lazy_module():
    assert_same(*both(lambda lib: err(lambda: lib.nn.LazyLinear(2).share_memory())))


@pytest.mark.parametrize("conv", ["half", "double", "to64", "type_then_float"])
def test_conversions_before_the_dry_run_carry_over(conv):
    def run(lib):
        lib.manual_seed(4)
        m = lib.nn.LazyLinear(3)
        bn = lib.nn.LazyBatchNorm1d()
        seq = lib.nn.Sequential(m, bn)
        if conv == "half":
            seq.half()
        elif conv == "double":
            seq.double()
        elif conv == "to64":
            seq.to(lib.float64)
        else:
            seq.double()
            seq.float()
        kinds = [
            (n, type(t).__name__, str(t.dtype))
            for n, t in list(seq.named_parameters()) + list(seq.named_buffers())
        ]
        dtype = m.weight.dtype
        e = err(lambda: seq(lib.ones(4, 2))) if dtype != lib.float32 else None
        # PyTorch: "mat1 and mat2 must have the same dtype, but got Float and Double" (the kernel's text
        # is the layers' business; here only the error type and the gist are compared)
        e = e and (e[0], "same dtype" in e[1])
        if dtype == lib.float16:
            return kinds, e is not None
        y = seq(lib.randn(4, 2, dtype=dtype))
        after = [(n, type(t).__name__, str(t.dtype), arr(t)) for n, t in seq.named_parameters()]
        after += [
            (n, type(t).__name__, str(t.dtype), Approx(arr(t))) for n, t in seq.named_buffers()
        ]
        return kinds, e, after, Approx(arr(y))

    assert_same(*both(run))
