"""Oracle: the memory layout of fresh results, and writes into overlapping memory, against PyTorch 2.13.

PyTorch's elementwise ops, ``clone()``, the ``*_like`` factories and ``to(dtype)`` keep the memory
order of their input (``x.t().exp()`` is column-major like ``x.t()``); a binary op picks it from
both operands; in-place ops refuse to write into a tensor whose elements share memory
(``x.expand(3, 4).add_(1)``). Every case is built the same way in both libraries from plain
data (shape, permutation of the stored dims, a strided slice, an expansion) and ``stride()`` is
compared exactly. The rules live in ``minitorch_nn/backends/layout.py``.
"""

import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

_DTYPES = {"float32": (mt.float32, torch.float32), "float64": (mt.float64, torch.float64),
           "int64": (mt.int64, torch.int64), "int32": (mt.int32, torch.int32), "bool": (mt.bool, torch.bool)}


def _dtype(L, name):
    return _DTYPES[name][0 if L is mt else 1]


# -- building the same layout in both libraries -------------------------------------------------------

@st.composite
def geometries(draw, shape, expand_to=None):
    """How a tensor of logical ``shape`` sits in memory: the stored order of its dims (a
    permutation), one dim read with step 2 (or none), and which size-1 dims are expanded (to the
    matching dim of ``expand_to``, aligned from the right, or to 3)."""
    n = len(shape)
    perm = tuple(draw(st.permutations(range(n))))
    step_dim = draw(st.sampled_from([None, *range(n)])) if n and draw(st.booleans()) else None
    target = tuple(expand_to[len(expand_to) - n:]) if expand_to is not None else (3,) * n
    expand = shape
    if draw(st.booleans()):
        expand = tuple(draw(st.sampled_from([1, big])) if s == 1 else s for s, big in zip(shape, target))
    return shape, perm, step_dim, expand


def shapes(max_dims=4):
    return st.lists(st.sampled_from([1, 1, 2, 3, 4, 0]), min_size=0, max_size=max_dims).map(tuple)


def build(L, geom, dtype="float32"):
    shape, perm, step_dim, expand = geom
    stored_full = list(shape)
    if step_dim is not None:
        stored_full[step_dim] *= 2
    stored = [stored_full[p] for p in perm]
    n = int(np.prod(stored, dtype=np.int64))
    # (functions, not operators: this builds inputs, and must not depend on the operator fast path)
    t = L.sub(L.remainder(L.arange(n), 7), 3).to(_dtype(L, dtype)).reshape(stored)
    t = t.permute(tuple(np.argsort(perm).tolist()))
    if step_dim is not None:
        t = t[(slice(None),) * step_dim + (slice(None, None, 2),)]
    if expand != shape:
        t = t.expand(*expand)
    return t


def both(geom, dtype="float32"):
    return build(mt, geom, dtype), build(torch, geom, dtype)


def assert_same(m, t):
    assert tuple(m.shape) == tuple(t.shape)
    assert m.stride() == t.stride(), f"strides {m.stride()}, torch {t.stride()}"
    assert m.dtype.name == str(t.dtype).removeprefix("torch.")
    # (values too, to the last few bits: the layout must not move any element)
    np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)


@st.composite
def broadcast_pair(draw):
    """Two operand geometries whose shapes broadcast: each a suffix of one shape with some dims set to 1."""
    out = draw(shapes())

    def operand():
        cut = draw(st.integers(0, len(out)))
        return tuple(1 if draw(st.booleans()) else s for s in out[cut:])

    return draw(geometries(operand(), out)), draw(geometries(operand(), out))


# -- elementwise results -----------------------------------------------------------------------------

UNARY = {
    "neg": lambda L, x: L.neg(x), "abs": lambda L, x: x.abs(), "exp": lambda L, x: L.exp(x),
    "relu": lambda L, x: L.relu(x), "sigmoid": lambda L, x: x.sigmoid(), "isnan": lambda L, x: L.isnan(x),
    "clamp": lambda L, x: x.clamp(-1, 1), "pow2": lambda L, x: x.pow(2), "add_scalar": lambda L, x: L.add(x, 2),
    "mul_0d": lambda L, x: L.mul(x, L.tensor(2.0)), "gt_scalar": lambda L, x: L.gt(x, 0),
    "int_plus_float": lambda L, x: L.add(x.to(L.int64), 0.5),
}


@SETTINGS
@given(geom=shapes().flatmap(geometries), name=st.sampled_from(sorted(UNARY)))
def test_unary_result_keeps_the_input_memory_order(geom, name):
    m, t = both(geom)
    assert_same(UNARY[name](mt, m), UNARY[name](torch, t))


BINARY = {
    "add": lambda L, a, b: L.add(a, b), "mul": lambda L, a, b: a.mul(b), "eq": lambda L, a, b: L.eq(a, b),
    "maximum": lambda L, a, b: L.maximum(a, b), "sub_alpha": lambda L, a, b: L.sub(a, b, alpha=2),
    # mixed dtypes: the int operand is converted first (a non-dense one densely), then the rule runs
    "int_times_float": lambda L, a, b: L.mul(a.to(L.int64), b),
    "where": lambda L, a, b: L.where(L.gt(a, 0), a, b),
}


@SETTINGS
@given(pair=broadcast_pair(), name=st.sampled_from(sorted(BINARY)))
def test_binary_result_layout_comes_from_both_operands(pair, name):
    ga, gb = pair
    (ma, ta), (mb, tb) = both(ga), both(gb)
    assert_same(BINARY[name](mt, ma, mb), BINARY[name](torch, ta, tb))


@SETTINGS
@given(pair=broadcast_pair())
def test_three_operand_ops_follow_all_operands(pair):
    ga, gb = pair
    (ma, ta), (mb, tb) = both(ga), both(gb)
    assert_same(mt.addcmul(ma, mb, ma), torch.addcmul(ta, tb, ta))
    assert_same(mt.clamp(ma, mb), torch.clamp(ta, tb))
    assert_same(mt.lerp(ma, ma * 2, 0.25), torch.lerp(ta, ta * 2, 0.25))


def test_named_cases():
    # the cases the rules were written for, spelled out
    x = (mt.arange(24.0).reshape(2, 3, 4), torch.arange(24.0).reshape(2, 3, 4))
    for fn in (lambda L, a: a.permute(2, 0, 1).exp(), lambda L, a: a[0].t() + 1,
               lambda L, a: L.add(a.permute(2, 0, 1), a.permute(2, 0, 1)),     # same layout: kept
               lambda L, a: L.mul(a.permute(2, 0, 1), a.permute(2, 1, 0).transpose(1, 2)),  # mixed: first decides
               lambda L, a: L.add(a[0].t(), L.ones(4, 1)),                     # broadcast operand
               lambda L, a: L.add(a.permute(0, 2, 1), L.tensor(1.0)),          # 0-dim operand
               lambda L, a: a[:, ::2].permute(2, 1, 0).neg(),           # non-dense input
               lambda L, a: a.expand(2, 2, 3, 4).permute(3, 0, 1, 2).abs()):  # expanded and permuted
        assert_same(fn(mt, x[0]), fn(torch, x[1]))


LOSSES = {
    "mse_loss": lambda F, a, b: F.mse_loss(a, b, reduction="none"),
    "bce": lambda F, a, b: F.binary_cross_entropy(a.sigmoid(), b.sigmoid(), reduction="none"),
    "bce_with_logits": lambda F, a, b: F.binary_cross_entropy_with_logits(a, b.sigmoid(), reduction="none"),
}


@SETTINGS
@given(geom=shapes(3).flatmap(geometries), name=st.sampled_from(sorted(LOSSES)))
def test_unreduced_losses_are_laid_out_like_elementwise_results(geom, name):
    import torch.nn.functional as TF

    import minitorch_nn.nn.functional as MF

    m, t = both(geom)
    other_m, other_t = mt.mul(m, 0.5), torch.mul(t, 0.5)
    assert_same(LOSSES[name](MF, m, other_m), LOSSES[name](TF, t, other_t))


# -- copies and factories ----------------------------------------------------------------------------

LIKE = {
    "clone": lambda L, x: x.clone(), "clone_contiguous": lambda L, x: x.clone(memory_format=L.contiguous_format),
    "zeros_like": lambda L, x: L.zeros_like(x), "ones_like": lambda L, x: L.ones_like(x, dtype=L.int64),
    "full_like": lambda L, x: L.full_like(x, 2.5), "empty_like": lambda L, x: L.empty_like(x).fill_(1),
    "to_double": lambda L, x: x.to(L.float64), "to_int": lambda L, x: x.to(L.int32), "double": lambda L, x: x.double(),
    "contiguous": lambda L, x: x.contiguous(),
}


@SETTINGS
@given(geom=shapes().flatmap(geometries), name=st.sampled_from(sorted(LIKE)))
def test_copies_and_like_factories_preserve_the_layout(geom, name):
    m, t = both(geom)
    assert_same(LIKE[name](mt, m), LIKE[name](torch, t))


TO_FORMATS = {
    "to_channels_last": lambda L, x: x.to(memory_format=L.channels_last),
    "to_double_channels_last": lambda L, x: x.to(L.float64, memory_format=L.channels_last),
    "to_contiguous_format": lambda L, x: x.to(memory_format=L.contiguous_format),
    "to_double_contiguous_format": lambda L, x: x.to(L.float64, memory_format=L.contiguous_format),
    "to_preserve": lambda L, x: x.to(memory_format=L.preserve_format),
}


@SETTINGS
@given(geom=st.lists(st.sampled_from([1, 2, 3]), min_size=4, max_size=4).map(tuple).flatmap(geometries),
       name=st.sampled_from(sorted(TO_FORMATS)))
def test_to_memory_format_copies_or_aliases_like_torch(geom, name):
    m, t = both(geom)
    rm, rt = TO_FORMATS[name](mt, m), TO_FORMATS[name](torch, t)
    assert (rm is m) == (rt is t)  # returned as is when the format is already the suggested one
    assert_same(rm, rt)


def test_channels_last_and_its_error():
    m, t = mt.zeros(2, 3, 4, 5), torch.zeros(2, 3, 4, 5)
    for fn in (lambda L, x: x.clone(memory_format=L.channels_last), lambda L, x: L.empty_like(x, memory_format=L.channels_last).fill_(1),
               lambda L, x: x.clone(memory_format=L.channels_last).exp(),
               lambda L, x: x.contiguous(memory_format=L.channels_last),
               lambda L, x: x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2).contiguous(memory_format=L.channels_last)):
        assert_same(fn(mt, m), fn(torch, t))
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        mt.zeros(3).clone(memory_format=mt.channels_last)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        torch.zeros(3).clone(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        mt.zeros(3).contiguous(memory_format=mt.channels_last)
    y = mt.zeros(2, 3, 4, 5).contiguous(memory_format=mt.channels_last)
    assert y.contiguous(memory_format=mt.channels_last) is y


@SETTINGS
@given(geom=shapes(3).flatmap(geometries), normal=st.booleans(), seed=st.integers(0, 2**16))
def test_random_like_fills_memory_order_like_torch(geom, normal, seed):
    m, t = both(geom)
    mt.manual_seed(seed)
    torch.manual_seed(seed)
    fn = "randn_like" if normal else "rand_like"
    rm, rt = getattr(mt, fn)(m), getattr(torch, fn)(t)
    assert rm.stride() == rt.stride()
    np.testing.assert_allclose(rm.numpy(), rt.numpy(), rtol=1e-6, atol=1e-6)


@SETTINGS
@given(pair=broadcast_pair())
def test_meta_results_get_the_same_strides(pair):
    ga, gb = pair
    (ma, _), (mb, _) = both(ga), both(gb)
    cpu = (mt.add(ma, mb), mt.add(ma, 2), ma.exp(), ma.clone())
    meta = (mt.add(ma.to("meta"), mb.to("meta")), mt.add(ma.to("meta"), 2), ma.to("meta").exp(), ma.to("meta").clone())
    for c, m in zip(cpu, meta):
        assert m.device.type == "meta" and m.stride() == c.stride()


# -- in-place writes into overlapping memory ----------------------------------------------------------------

INPLACE = {
    "add_": lambda L, x, o: x.add_(1), "mul_": lambda L, x, o: x.mul_(o), "neg_": lambda L, x, o: x.neg_(),
    "exp_": lambda L, x, o: x.exp_(), "relu_": lambda L, x, o: x.relu_(), "clamp_": lambda L, x, o: x.clamp_(0, 1),
    "copy_": lambda L, x, o: x.copy_(o), "uniform_": lambda L, x, o: x.uniform_(), "normal_": lambda L, x, o: x.normal_(),
    "addcmul_": lambda L, x, o: x.addcmul_(o, o), "div_": lambda L, x, o: x.div_(2), "iadd": lambda L, x, o: x.__iadd__(o),
    "pow_": lambda L, x, o: x.pow_(2), "sigmoid_": lambda L, x, o: x.sigmoid_(), "lerp_": lambda L, x, o: x.lerp_(o, 0.5),
    "scatter_": lambda L, x, o: x.scatter_(0, L.zeros(1, 4, dtype=L.int64), o[:1]),
    "scatter_add_": lambda L, x, o: x.scatter_add_(0, L.zeros(1, 4, dtype=L.int64), o[:1]),
    "bernoulli_": lambda L, x, o: x.bernoulli_(0.5), "exponential_": lambda L, x, o: x.exponential_(),
}


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the point is to compare whatever is raised
        return type(e), str(e)
    return None


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_into_expanded_tensor_raises_and_changes_nothing(name):
    results = []
    for L in (mt, torch):
        base = L.arange(4.0)
        x = base.expand(3, 4)
        results.append((_error(lambda L=L, x=x: INPLACE[name](L, x, L.ones(3, 4))), base.tolist(), x._version))
    (m_err, m_base, m_ver), (t_err, t_base, t_ver) = results
    assert t_err is not None and m_err == t_err
    assert "more than one element of the written-to tensor refers to a single memory location" in m_err[1]
    assert m_base == t_base == [0.0, 1.0, 2.0, 3.0] and m_ver == t_ver


@SETTINGS
@given(geom=shapes(3).flatmap(geometries), name=st.sampled_from(["add_", "mul_", "neg_", "copy_", "uniform_"]))
def test_inplace_on_random_layouts_raises_exactly_when_torch_does(geom, name):
    outcomes = []
    for L in (mt, torch):
        x = build(L, geom)
        base = x._base if x._base is not None else x
        before = base.tolist()
        L.manual_seed(0)
        err = _error(lambda L=L, x=x: INPLACE[name](L, x, L.ones(x.shape)))
        outcomes.append((err, before == base.tolist()))
    assert outcomes[0] == outcomes[1]


PARTIAL = {
    "shifted_add_": lambda L, x: x[1:].add_(x[:-1]),
    "transposed_add_": lambda L, x: x[:4].view(2, 2).add_(x[:4].view(2, 2).t()),
    "shifted_copy_": lambda L, x: x[1:].copy_(x[:-1]),
    "shifted_mul_": lambda L, x: x[2:].mul_(x[:-2]),
    "same_memory_is_fine": lambda L, x: x.add_(x),
    "disjoint_is_fine": lambda L, x: x[:3].add_(x[3:]),
    "fill_expanded_is_fine": lambda L, x: x[:1].expand(3).fill_(2),
    "zero_expanded_is_fine": lambda L, x: x[:1].expand(3).zero_(),
}


@pytest.mark.parametrize("name", sorted(PARTIAL))
def test_partial_overlap_with_an_input(name):
    out = []
    for L in (mt, torch):
        x = L.arange(6.0)
        out.append((_error(lambda L=L, x=x: PARTIAL[name](L, x)), x.tolist()))
    assert out[0] == out[1]


def test_masked_fill_on_expanded_warns_like_torch():
    msgs = []
    for L in (mt, torch):
        base = L.zeros(4)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            base.expand(3, 4).masked_fill_(L.ones(3, 4, dtype=L.bool), 1.0)
        # (torch appends where in its C++ source the warning was raised)
        texts = [str(w.message).split(" (Triggered internally")[0] for w in caught]
        msgs.append(([m for m in texts if "expanded tensors" in m], base.tolist()))
    assert msgs[0] == msgs[1] and msgs[0][0]
