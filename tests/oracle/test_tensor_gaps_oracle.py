"""Oracle: small Tensor behaviours against PyTorch 2.13.

``is_contiguous(memory_format=...)``, ``Tensor.index_add``/``index_add_``, and pickling, deep
copying and saving a tensor that is a view with its own strides (a permutation, a slice).
"""

import copy
import io
import itertools
import pickle

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


# -- is_contiguous(memory_format=...) --------------------------------------------------------------

def _layouts(L, shape, perm, step):
    x = L.zeros([shape[p] for p in perm]).permute([perm.index(d) for d in range(len(shape))])
    return x[..., ::step] if x.dim() and step > 1 else x


@SETTINGS
@given(
    shape=st.lists(st.integers(1, 3), min_size=0, max_size=5),
    seed=st.integers(0, 200),
    step=st.integers(1, 2),
    fmt=st.sampled_from(["channels_last", "contiguous_format", "preserve_format", None]),
)
def test_is_contiguous_memory_format_matches_torch(shape, seed, step, fmt):
    perms = list(itertools.permutations(range(len(shape))))
    perm = list(perms[seed % len(perms)])

    def ask(L):
        x = _layouts(L, shape, perm, step)
        return x.is_contiguous() if fmt is None else x.is_contiguous(memory_format=getattr(L, fmt))

    assert ask(mt) == ask(torch)


def test_channels_last_tensor_reports_its_format():
    for L in (mt, torch):
        x = L.zeros(2, 3, 4, 5).to(memory_format=L.channels_last)
        assert x.is_contiguous(memory_format=L.channels_last)
        assert not x.is_contiguous()
        assert not x.is_contiguous(memory_format=L.contiguous_format)


# -- index_add / index_add_ ------------------------------------------------------------------------

def _outcome(fn, L):
    try:
        r = fn(L)
    except Exception as e:  # noqa: BLE001 - both libraries' errors are compared
        return type(e).__name__, str(e).split("\n")[0]
    return r


def _ia(L, self_shape=(3, 2), dim=0, index=(0, 2), source_shape=(2, 2), sdtype="float32", idtype="int64", **kw):
    x = L.zeros(*self_shape) if self_shape else L.zeros(())
    s = L.arange(1.0, 1 + _prod(source_shape)).reshape(source_shape).to(getattr(L, sdtype))
    y = x.index_add_(dim, L.tensor(list(index), dtype=getattr(L, idtype)), s, **kw)
    return y is x, x.tolist(), x._version


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


INDEX_ADD = {
    "plain": lambda L: _ia(L),
    "alpha": lambda L: _ia(L, alpha=-2),
    "dim1_repeated": lambda L: _ia(L, dim=1, index=(1, 1), source_shape=(3, 2)),
    "negative_dim": lambda L: _ia(L, dim=-1, index=(0,), source_shape=(3, 1)),
    "int32_index": lambda L: _ia(L, idtype="int32"),
    "float_index": lambda L: _ia(L, idtype="float32"),
    "source_dtype": lambda L: _ia(L, sdtype="float64"),
    "count": lambda L: _ia(L, source_shape=(3, 2)),
    "index_2d": lambda L: (x := L.zeros(3, 2), x.index_add_(0, L.tensor([[0, 1]]), L.ones(2, 2)))[1].tolist(),
    "out_of_range": lambda L: _ia(L, index=(0, 3)),
    "negative_index": lambda L: _ia(L, index=(0, -1)),
    "other_dims": lambda L: _ia(L, source_shape=(2, 3)),
    "dim_out_of_range": lambda L: _ia(L, dim=2),
    "int_self_float_alpha": lambda L: (x := L.zeros(3, 2, dtype=L.int64), x.index_add_(0, L.tensor([1]), L.ones(1, 2, dtype=L.int64) * 3, alpha=1.5))[0].tolist(),
    "zero_dim_self": lambda L: (x := L.zeros(()), x.index_add_(0, L.tensor([0]), L.ones(())))[0].tolist(),
    "method_not_in_place": lambda L: (x := L.zeros(3, 2), y := x.index_add(0, L.tensor([2]), L.ones(1, 2), alpha=3), y.tolist(), x.tolist())[2:],
    "function_out": lambda L: (o := L.zeros(0), r := L.index_add(L.zeros(2), 0, L.tensor([1]), L.ones(1), out=o), r is o, o.tolist())[2:],
    "function_out_dtype_refused": lambda L: L.index_add(L.zeros(2), 0, L.tensor([1]), L.ones(1), out=L.zeros(0, dtype=L.float64)),
}


@pytest.mark.parametrize("name", sorted(INDEX_ADD))
def test_index_add_matches_torch(name):
    assert _outcome(INDEX_ADD[name], mt) == _outcome(INDEX_ADD[name], torch)


@SETTINGS
@given(
    shape=st.lists(st.integers(1, 3), min_size=1, max_size=3),
    dim=st.integers(-3, 2),
    picks=st.lists(st.integers(0, 2), min_size=0, max_size=4),
    alpha=st.sampled_from([1, -1, 2]),
    dtype=st.sampled_from(["float32", "float64", "int64"]),
)
def test_index_add_property(shape, dim, picks, alpha, dtype):
    dim = dim % len(shape)
    index = [p % shape[dim] for p in picks]
    src_shape = list(shape)
    src_shape[dim] = len(index)

    def go(L):
        d = getattr(L, dtype)
        x = L.arange(_prod(shape)).reshape(shape).to(d)
        s = L.arange(_prod(src_shape)).reshape(src_shape).to(d) * 10
        x.index_add_(dim, L.tensor(index, dtype=L.int64), s, alpha=alpha)
        return x.tolist()

    assert go(mt) == go(torch)


def test_index_add_alpha_is_keyword_only():
    for L in (mt, torch):  # (Python counts ``self`` among the positional arguments; PyTorch does not)
        with pytest.raises(TypeError, match="positional arguments"):
            L.zeros(3, 2).index_add_(0, L.tensor([0]), L.ones(1, 2), 2)


def test_index_add_gradients_match_torch():
    got = {}
    for L in (mt, torch):
        a = L.ones(3, 2, requires_grad=True)
        s = L.ones(2, 2, requires_grad=True)
        (a.index_add(0, L.tensor([0, 0]), s, alpha=3) * L.arange(6.0).reshape(3, 2)).sum().backward()
        got[L] = (a.grad.tolist(), s.grad.tolist())
    assert got[mt] == got[torch]


# -- pickle / deepcopy / save of a strided tensor --------------------------------------------------

def _round_trips(L, v):
    buf = io.BytesIO()
    L.save(v, buf)
    buf.seek(0)
    return {
        "pickle": pickle.loads(pickle.dumps(v)),
        "deepcopy": copy.deepcopy(v),
        "save": L.load(buf, weights_only=True),
    }


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(
    shape=st.lists(st.integers(1, 3), min_size=2, max_size=4),
    seed=st.integers(0, 200),
    start=st.integers(0, 1),
    step=st.integers(1, 2),
    dtype=st.sampled_from(["float32", "int64", "bool"]),
    requires_grad=st.booleans(),
)
def test_copies_keep_strides_and_offset_like_torch(shape, seed, start, step, dtype, requires_grad):
    perms = list(itertools.permutations(range(len(shape))))
    perm = list(perms[seed % len(perms)])

    def go(L):
        base = L.arange(_prod(shape)).reshape(shape).to(getattr(L, dtype))
        v = base.permute(perm)[start:, ..., ::step]
        if requires_grad and dtype == "float32":
            v = v.detach().requires_grad_()  # a leaf that is still a strided view
        return {k: (t.stride(), t.storage_offset(), t.tolist(), t.requires_grad, t.is_contiguous())
                for k, t in _round_trips(L, v).items()}

    assert go(mt) == go(torch)


def test_pickled_view_is_independent_of_the_original():
    for L in (mt, torch):
        x = L.arange(6.0).reshape(2, 3)
        y = pickle.loads(pickle.dumps(x.t()))
        y[0, 0] = 100.0
        assert x[0, 0].item() == 0.0 and y.stride() == (1, 3)


def test_pickled_expanded_and_channels_last_tensors_keep_layout():
    for L in (mt, torch):
        e = pickle.loads(pickle.dumps(L.arange(3.0).expand(2, 3)))
        c = pickle.loads(pickle.dumps(L.zeros(2, 3, 2, 2).to(memory_format=L.channels_last)))
        assert e.stride() == (0, 1) and e.tolist() == [[0.0, 1.0, 2.0]] * 2
        assert c.is_contiguous(memory_format=L.channels_last)


# -- nonzero's layout ------------------------------------------------------------------------------

@SETTINGS
@given(shape=st.lists(st.integers(0, 3), min_size=0, max_size=3), seed=st.integers(0, 2**16))
def test_nonzero_result_layout_matches_torch(shape, seed):
    import numpy as np

    mask = np.random.default_rng(seed).random(shape) < 0.5

    def go(L):
        n = L.nonzero(L.tensor(mask.tolist() if shape else bool(mask)))
        return tuple(n.shape), n.stride(), n.tolist(), [t.tolist() for t in L.nonzero(L.tensor(mask.tolist() if shape else bool(mask)), as_tuple=True)]

    assert go(mt) == go(torch)
