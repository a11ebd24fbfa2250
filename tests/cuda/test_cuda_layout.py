"""The cuda backend follows the cpu backend's memory-layout and overlap rules (``backends/layout.py``).

For random permuted / sliced / expanded inputs, a cuda result must have the same ``stride()`` and
values as the cpu backend's (which is checked against PyTorch in ``tests/oracle/``): elementwise
results keep their operands' memory order, ``clone``/``*_like``/``to`` keep a tensor's layout, and
in-place writes that overlap themselves are refused with the same error, leaving the tensor as it was.

Tiny shapes and few examples: the CUDA simulator runs each thread as Python.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt

FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def views(draw, max_dims=3):
    """A recipe for a view of a fresh tensor: a shape, then a permutation, steps, an expanded dim."""
    ndim = draw(st.integers(1, max_dims))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    perm = tuple(draw(st.permutations(range(ndim))))
    steps = tuple(draw(st.lists(st.sampled_from([1, 1, 2]), min_size=ndim, max_size=ndim)))
    expand = draw(st.sampled_from([None] + list(range(ndim))))  # a dim to make size 1, then expand
    return shape, perm, steps, expand


def _base(shape, dtype=mt.float32):
    n = int(np.prod(shape))
    # distinct, exactly representable values (so values compare exactly, whatever the kernel)
    return (mt.arange(n, dtype=mt.float64).reshape(shape) * 0.5 - 1).to(dtype)


def _view(t, recipe):
    shape, perm, steps, expand = recipe
    v = t.permute(*perm)
    v = v[tuple(slice(None, None, s) for s in steps)]
    if expand is not None:
        sizes = list(v.shape)
        index = [slice(None)] * v.dim()
        index[expand] = slice(0, 1)
        sizes[expand] = 3
        v = v[tuple(index)].expand(*sizes)
    return v


def _pair(recipe, dtype=mt.float32):
    """The same view of the same values on cpu and on cuda."""
    base = _base(recipe[0], dtype)
    return _view(base, recipe), _view(base.cuda(), recipe)


def _same(cuda_t, cpu_t):
    assert cuda_t.device.type == "cuda"
    assert cuda_t.dtype == cpu_t.dtype
    assert tuple(cuda_t.shape) == tuple(cpu_t.shape)
    assert cuda_t.stride() == cpu_t.stride(), (cuda_t.stride(), cpu_t.stride())
    got = cuda_t.cpu()
    np.testing.assert_allclose(got.double().numpy(), cpu_t.double().numpy(), rtol=1e-6, atol=1e-6)


UNARY = {
    "exp": lambda t: t.exp(),
    "neg": lambda t: -t,
    "abs": lambda t: t.abs(),
    "sigmoid": lambda t: t.sigmoid(),
    "half": lambda t: t.half().neg(),        # a 16-bit result: computed in float32, cast keeping layout
    "gt": lambda t: t > 0,                   # a bool result
    "pow": lambda t: t ** 2,
    "nan_to_num_int": lambda t: t.long().nan_to_num(),  # nothing to replace: a copy, laid out as clone
    "masked_fill": lambda t: t.masked_fill(t > 0, 2.0),  # PyTorch fills a contiguous clone
    "relu": lambda t: mt.nn.functional.relu(t),
    "remainder": lambda t: t % 1.5,
    # binary ops with a number: the number is an operand for the layout (a wrapped 0-dim tensor)
    "fmod": lambda t: t.fmod(1.5),
    "floor_divide": lambda t: t // 2,
    "div_trunc": lambda t: t.div(2, rounding_mode="trunc"),
    "rsub": lambda t: 2 - t,
    "int_remainder": lambda t: t.long() % 3,
    "bitwise_and": lambda t: t.long() & 3,
    "rpow": lambda t: 2 ** t,                # number ** tensor: PyTorch allocates it contiguous
}


@FEW
@given(recipe=views(), name=st.sampled_from(sorted(UNARY)))
def test_unary_results_keep_the_operands_layout(recipe, name):
    a, b = _pair(recipe)
    _same(UNARY[name](b), UNARY[name](a))


BINARY = {
    "add": lambda x, y: x + y,
    "mul": lambda x, y: x * y,
    "sub_alpha": lambda x, y: mt.sub(x, y, alpha=2),
    "div": lambda x, y: x / (y.abs() + 1),
    "maximum": lambda x, y: mt.maximum(x, y),
    "where": lambda x, y: mt.where(x > 0, x, y),
}


@FEW
@given(recipe=views(), second=st.sampled_from(["same_view", "permuted", "row", "number"]),
       name=st.sampled_from(sorted(BINARY)))
def test_binary_results_follow_the_operands_layout(recipe, second, name):
    a, b = _pair(recipe)
    shape = tuple(a.shape)
    if second == "same_view":
        x, y = a, b
    elif second == "permuted":
        # a contiguous tensor of the same shape: the two operands disagree about the order
        other = _base(shape) * -1
        x, y = other, other.cuda()
    elif second == "row":
        other = _base(shape[-1:]) + 3  # broadcast along the leading dims
        x, y = other, other.cuda()
    else:
        x = y = 1.5
    fn = BINARY[name]
    if second == "number" and name in ("div", "where", "maximum"):
        fn = BINARY["add"]  # (these need a tensor second operand)
    _same(fn(b, y), fn(a, x))
    _same(fn(y, b) if second != "number" else fn(b, b), fn(x, a) if second != "number" else fn(a, a))


@FEW
@given(recipe=views(), dtype=st.sampled_from([mt.float32, mt.float64, mt.float16, mt.int64, mt.bfloat16]))
def test_clone_like_and_to_keep_the_layout(recipe, dtype):
    a, b = _pair(recipe)
    _same(b.clone(), a.clone())
    _same(mt.zeros_like(b), mt.zeros_like(a))
    _same(mt.full_like(b, 2.5), mt.full_like(a, 2.5))
    assert mt.empty_like(b).stride() == mt.empty_like(a).stride()
    _same(b.to(dtype, copy=True), a.to(dtype, copy=True))  # cuda -> cuda, with a cast
    _same(a.cuda(), a.clone())                          # cpu -> cuda keeps the layout...
    _same(a.to("cuda", dtype), a.to(dtype, copy=True))
    r = mt.rand_like(b)                                 # (values differ: cuda draws with Philox)
    assert r.device.type == "cuda" and r.stride() == mt.rand_like(a).stride()
    back = b.cpu()                                      # ... and cuda -> cpu too
    assert back.device.type == "cpu" and back.stride() == a.clone().stride()
    np.testing.assert_array_equal(back.numpy(), a.numpy())


def test_explicit_memory_formats_match_cpu():
    a = _base((2, 3, 2, 2)).permute(0, 2, 3, 1)
    b = a.cuda()
    for fmt in (mt.contiguous_format, mt.channels_last, mt.preserve_format):
        _same(b.clone(memory_format=fmt), a.clone(memory_format=fmt))
        _same(mt.ones_like(b, memory_format=fmt), mt.ones_like(a, memory_format=fmt))
    with pytest.raises(RuntimeError) as cpu_err:
        _base((2, 3)).clone(memory_format=mt.channels_last)
    with pytest.raises(RuntimeError) as cuda_err:
        _base((2, 3)).cuda().clone(memory_format=mt.channels_last)
    assert str(cuda_err.value) == str(cpu_err.value)


# -- overlap refusals ---------------------------------------------------------------------------------

INPLACE = {
    "add_": lambda t, o: t.add_(o),
    "add_alpha": lambda t, o: t.add_(o, alpha=0.5),
    "mul_": lambda t, o: t.mul_(o),
    "div_mode": lambda t, o: t.div_(o + 10, rounding_mode="floor"),
    "copy_": lambda t, o: t.copy_(o),
    "exp_": lambda t, o: t.exp_(),
    "clamp_": lambda t, o: t.clamp_(-1, 1),
    "lerp_": lambda t, o: t.lerp_(o, 0.5),
    "addcmul_": lambda t, o: t.addcmul_(o, o),
    "uniform_": lambda t, o: t.uniform_(),
    "normal_": lambda t, o: t.normal_(),
    "exponential_": lambda t, o: t.exponential_(),
    "random_": lambda t, o: t.random_(0, 3),
    "bernoulli_": lambda t, o: t.bernoulli_(0.5),
    "scatter_": lambda t, o: t.scatter_(0, mt.zeros(tuple(t.shape), dtype=mt.int64, device=o.device), o),
    "index_add_": lambda t, o: t.index_add_(0, mt.zeros(t.shape[0], dtype=mt.int64, device=o.device), o),
}


def _error(fn):
    with pytest.raises(RuntimeError) as info:
        fn()
    return info.type, str(info.value)


def _storage_values(t):
    """The whole storage of ``t``'s base, as the cpu sees it (to check nothing was written)."""
    impl = t._impl
    if t.device.type == "cuda":
        return impl.storage.copy_to_host().copy()
    return np.array(impl.storage, copy=True)


@FEW
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=2), lead=st.integers(2, 3),
       name=st.sampled_from(sorted(INPLACE)))
def test_inplace_into_an_expanded_tensor_is_refused_like_cpu(shape, lead, name):
    shape = tuple(shape)
    results = []
    for device in ("cpu", "cuda"):
        base = _base(shape).to(device)
        target = base.expand(lead, *shape)
        other = (_base((lead,) + shape) + 2).to(device)
        before = _storage_values(base)
        results.append(_error(lambda: INPLACE[name](target, other)))
        np.testing.assert_array_equal(_storage_values(base), before)  # left unchanged
    assert results[1] == results[0]
    assert "more than one element of the written-to tensor" in results[0][1]


@FEW
@given(n=st.integers(5, 7), shift=st.integers(1, 2), name=st.sampled_from(["add_", "mul_", "copy_", "lerp_"]))
def test_inplace_partly_overlapping_its_input_is_refused_like_cpu(n, shift, name):
    results = []
    for device in ("cpu", "cuda"):
        z = _base((n,)).to(device)
        before = _storage_values(z)
        results.append(_error(lambda: INPLACE[name](z[shift:], z[:-shift])))
        np.testing.assert_array_equal(_storage_values(z), before)
    assert results[1] == results[0]
    assert "some elements of the input tensor and the written-to tensor" in results[0][1]


def test_out_argument_is_checked_on_cuda_too():
    for device in ("cpu", "cuda"):
        z = _base((4,)).to(device)
        with pytest.raises(RuntimeError, match="some elements of the input tensor"):
            mt.add(z[:-1], 1, out=z[1:])
        with pytest.raises(RuntimeError, match="more than one element"):
            mt.add(z, 1, out=_base((1,)).to(device).expand(4))


def test_exact_self_overlap_is_allowed():
    # writing a tensor into itself (or an op reading its own output) is fine, on both devices
    for device in ("cpu", "cuda"):
        z = _base((2, 3)).to(device).t()
        z.add_(z)
        z.copy_(z)
        np.testing.assert_array_equal(z.cpu().numpy(), (_base((2, 3)) * 2).t().numpy())
