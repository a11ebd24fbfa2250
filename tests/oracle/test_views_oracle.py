"""Oracle: views and indexing against PyTorch 2.13: geometry, storage sharing, version counters.

A view must match PyTorch in ``shape``, ``stride()``, ``storage_offset()`` and
``is_contiguous()``, and must share memory with its base: a write through one is read through
the other and both see one ``_version``. Indexing (basic and advanced, get and set) must give
PyTorch's values and the same view/copy behaviour.
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402
from tests.strategies import TensorSpec, build, run_both, tensor_specs  # noqa: E402

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _geometry(t):
    return tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.is_contiguous()


def check_view(fn, spec, *, shares=True):
    """Run view ``fn`` in both libraries; compare geometry, values, sharing and versions."""
    m, t = run_both(fn, spec, exact=True)
    if isinstance(t, Exception):
        return
    ms = m if isinstance(m, (list, tuple)) else [m]
    ts = t if isinstance(t, (list, tuple)) else [t]
    for mv, tv in zip(ms, ts):
        assert _geometry(mv) == _geometry(tv), f"view geometry {_geometry(mv)} != torch's {_geometry(tv)}"
    if shares and spec.dtype != "bool":
        _check_shares_storage(fn, spec)


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _check_shares_storage(fn, spec):
    """Each result shares memory with the input exactly when PyTorch's does; writes go through."""
    t_base, m_base = build(torch, spec), build(mt, spec)
    if spec.layout == "expanded":
        t_base, m_base = t_base.contiguous(), m_base.contiguous()
    root = m_base._base if m_base._base is not None else m_base
    for tv, mv in zip(_as_list(fn(torch, t_base)), _as_list(fn(mt, m_base))):
        t_shares = tv.untyped_storage().data_ptr() == t_base.untyped_storage().data_ptr()
        m_shares = np.shares_memory(mv.numpy(), m_base.numpy()) if mv.numel() and m_base.numel() else t_shares
        assert m_shares == t_shares, f"shares memory: {m_shares}, torch: {t_shares}"
        if not t_shares or mv is m_base or mv.numel() == 0 or 0 in mv.stride():
            continue
        before = m_base._version
        mv.fill_(7)
        assert m_base._version == mv._version == before + 1, "a view shares its base's version counter"
        assert (mv.numpy() == 7).all()
        assert (mv._base is None) == (tv._base is None), "a view has a _base exactly when torch's has"
        assert mv._base is None or mv._base is root, "a view remembers its base"


VIEWS = {
    "view_flat": lambda lib, x: x.view(-1) if x.is_contiguous() else x.reshape(-1),
    "reshape_flat": lambda lib, x: x.reshape(-1),
    "reshape_2": lambda lib, x: x.reshape(x.shape[0], -1) if x.dim() else x.reshape(1, 1),
    "permute_rev": lambda lib, x: x.permute(*reversed(range(x.dim()))) if x.dim() else x.permute(()),
    "transpose": lambda lib, x: x.transpose(0, -1),
    "t": lambda lib, x: x.t() if x.dim() <= 2 else x.mT,
    "T": lambda lib, x: x.T if x.dim() <= 2 else x.mT,
    "unsqueeze0": lambda lib, x: x.unsqueeze(0),
    "unsqueeze_last": lambda lib, x: x.unsqueeze(-1),
    "squeeze": lambda lib, x: x.squeeze(),
    "squeeze0": lambda lib, x: x.squeeze(0),
    "expand": lambda lib, x: x.unsqueeze(0).expand(3, *x.shape),
    "expand_neg1": lambda lib, x: x.expand(2, *([-1] * x.dim())),
    "narrow": lambda lib, x: x.narrow(0, 1, x.shape[0] - 1) if x.dim() and x.shape[0] > 1 else x.narrow(0, 0, 1),
    "flatten": lambda lib, x: x.flatten(),
    "flatten_1": lambda lib, x: x.flatten(1) if x.dim() > 1 else x.flatten(0),
    "unflatten": lambda lib, x: x.reshape(-1).unflatten(0, (1, -1)),
    "chunk": lambda lib, x: x.chunk(2, 0) if x.dim() else [x],
    "split": lambda lib, x: x.split(2, -1) if x.dim() else [x],
    "split_sizes": lambda lib, x: x.split([1, x.shape[0] - 1]) if x.dim() and x.shape[0] > 1 else [x],
    "unbind": lambda lib, x: x.unbind(0) if x.dim() else [x],
    "diagonal": lambda lib, x: x.diagonal() if x.dim() >= 2 else x.unsqueeze(0).diagonal(),
    "diagonal_off": lambda lib, x: x.diagonal(1, -1, 0) if x.dim() >= 2 else x.unsqueeze(0).diagonal(-1),
    "as_strided": lambda lib, x: x.contiguous().as_strided((2,), (1,), 0) if x.numel() >= 2 else x,
    "slice_step": lambda lib, x: x[::2] if x.dim() else x,
    "select": lambda lib, x: x[-1] if x.dim() else x,
    "getitem_ellipsis": lambda lib, x: x[..., None, :1] if x.dim() else x[None],
    "unfold": lambda lib, x: x.unfold(0, 1, 1) if x.dim() else x,
    "movedim": lambda lib, x: x.movedim(0, -1) if x.dim() else x,
    "detach": lambda lib, x: x.detach(),
    "view_as": lambda lib, x: x.contiguous().view_as(x),
    "contiguous": lambda lib, x: x.contiguous(),
    "tensor_split": lambda lib, x: x.tensor_split(3) if x.dim() else [x],
}


@pytest.mark.parametrize("name", sorted(VIEWS))
@SETTINGS
@given(spec=tensor_specs(specials=False, max_side=4))
def test_view_geometry_values_and_sharing(name, spec):
    check_view(VIEWS[name], spec, shares=name not in ("contiguous",))


def test_reshape_copies_only_when_needed():
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    spec = TensorSpec(base, "float32", "contiguous", (2, 3, 4))
    for fn in (lambda lib, x: x.transpose(0, 1).reshape(-1), lambda lib, x: x.reshape(6, 4),
               lambda lib, x: x[:, ::2].reshape(-1), lambda lib, x: x.transpose(0, 1).flatten(1)):
        m, t = run_both(fn, spec)
        mx, tx = build(mt, spec), build(torch, spec)
        assert (fn(mt, mx).data_ptr() == mx.data_ptr()) == (fn(torch, tx).data_ptr() == tx.data_ptr())
        assert _geometry(m) == _geometry(t)


def test_view_errors_match():
    spec = TensorSpec(np.arange(6, dtype=np.float32).reshape(2, 3), "float32", "contiguous", (2, 3))
    for fn in (lambda lib, x: x.t().view(-1), lambda lib, x: x.view(4, 2), lambda lib, x: x.view(-1, -1),
               lambda lib, x: x.expand(3, 3), lambda lib, x: x.permute(0), lambda lib, x: x.permute(0, 0),
               lambda lib, x: x.squeeze(3), lambda lib, x: x.transpose(0, 2), lambda lib, x: x.narrow(1, 2, 2),
               lambda lib, x: x.as_strided((4,), (2,), 0), lambda lib, x: x.split([1, 1]),
               lambda lib, x: x.unflatten(1, (2, 2)), lambda lib, x: x.diagonal(0, 1, 1), lambda lib, x: x.chunk(0),
               lambda lib, x: x.reshape(5), lambda lib, x: x.flatten(1, 0)):
        m, t = run_both(fn, spec)
        if isinstance(t, Exception):
            assert str(t).split("\n")[0][:40] == str(m).split("\n")[0][:40], (str(m), str(t))


def test_version_counter_shared_and_bumped():
    for lib in (mt, torch):
        x = lib.zeros(4)
        v = x[1:3]
        assert x._version == v._version == 0
        v.add_(1)
        assert x._version == v._version == 1
        x[0] = 5
        assert v._version == 2
        d = x.detach()
        d.mul_(2)
        assert x._version == 3, lib.__name__
        assert x.tolist() == [10.0, 2.0, 2.0, 0.0]


# -- indexing -----------------------------------------------------------------------------------------------


@st.composite
def index_exprs(draw, shape):
    """A random index for a tensor of ``shape``: ints, slices, None, Ellipsis, int lists, masks."""
    parts, dim = [], 0
    used_ellipsis = False
    while dim < len(shape) and draw(st.booleans()):
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis", "list", "tensor", "mask"]))
        n = shape[dim]
        if kind == "int":
            parts.append(draw(st.integers(-n, n - 1)))
            dim += 1
        elif kind == "slice":
            a = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            b = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            parts.append(slice(a, b, draw(st.one_of(st.none(), st.integers(1, 3)))))
            dim += 1
        elif kind == "none":
            parts.append(None)
        elif kind == "ellipsis" and not used_ellipsis:
            parts.append(Ellipsis)
            used_ellipsis = True
            dim = len(shape)
        elif kind == "list":
            parts.append(draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=3)))
            dim += 1
        elif kind == "tensor":
            parts.append(("tensor", draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=3))))
            dim += 1
        elif kind == "mask":
            parts.append(("mask", draw(st.lists(st.booleans(), min_size=n, max_size=n))))
            dim += 1
    return parts


def _materialize(lib, parts):
    out = []
    for p in parts:
        if isinstance(p, tuple) and p and p[0] == "tensor":
            out.append(lib.tensor(p[1]))
        elif isinstance(p, tuple) and p and p[0] == "mask":
            out.append(lib.tensor(p[1], dtype=lib.bool))
        else:
            out.append(p)
    return tuple(out)


@SETTINGS
@given(data=st.data())
def test_getitem(data):
    spec = data.draw(tensor_specs(specials=False, min_dims=1), label="x")
    parts = data.draw(index_exprs(spec.shape), label="index")
    m, t = run_both(lambda lib, x: x[_materialize(lib, parts)], spec, exact=True)
    if not isinstance(t, Exception):
        assert _geometry(m)[:2] == _geometry(t)[:2] or m.numel() == 0


@SETTINGS
@given(data=st.data())
def test_setitem(data):
    spec = data.draw(tensor_specs(specials=False, min_dims=1, layouts=("contiguous", "transposed", "sliced")), label="x")
    parts = data.draw(index_exprs(spec.shape), label="index")
    value = data.draw(st.sampled_from([0, 1, 2.5, True, "tensor"]), label="value")

    def fn(lib, x):
        key = _materialize(lib, parts)
        v = x[key]
        val = lib.arange(v.numel()).reshape(v.shape).to(x.dtype) if value == "tensor" else value
        before = x._version
        x[key] = val
        assert x._version == before + 1
        return x

    run_both(fn, spec, exact=True)


def test_setitem_broadcast_and_index_put_accumulate():
    spec = TensorSpec(np.zeros((3, 4), np.float32), "float32", "contiguous", (3, 4))
    run_both(lambda lib, x: (x.__setitem__((slice(None), 1), lib.tensor([1.0, 2.0, 3.0])), x)[1], spec)
    run_both(lambda lib, x: (x.__setitem__(0, lib.tensor([1.0, 2.0, 3.0, 4.0])), x)[1], spec)
    run_both(lambda lib, x: x.index_put_((lib.tensor([0, 0, 2]),), lib.tensor(1.0), accumulate=True), spec)
    run_both(lambda lib, x: (x.__setitem__(x == 0, 5.0), x)[1], spec)
    run_both(lambda lib, x: (x.__setitem__((slice(None), 1), lib.tensor([1.0, 2.0])), x)[1], spec)


def test_index_errors_match():
    spec = TensorSpec(np.arange(6, dtype=np.float32).reshape(2, 3), "float32", "contiguous", (2, 3))
    for fn in (lambda lib, x: x[2], lambda lib, x: x[0, 0, 0], lambda lib, x: x[:, 5], lambda lib, x: x[lib.tensor([3])],
               lambda lib, x: x[lib.tensor([True, False, True])], lambda lib, x: x[1.5],
               lambda lib, x: x[lib.tensor([0.0])], lambda lib, x: x[::-1]):
        run_both(fn, spec)


@SETTINGS
@given(data=st.data())
def test_gather_scatter_index_select(data):
    spec = data.draw(tensor_specs(specials=False, min_dims=1, dtypes=("float32", "int64", "float64")), label="x")
    dim = data.draw(st.integers(-len(spec.shape), len(spec.shape) - 1))
    n = spec.shape[dim]
    idx = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4))
    run_both(lambda lib, x: lib.index_select(x, dim, lib.tensor(idx)), spec)
    shape = list(spec.shape)
    shape[dim] = len(idx)
    g = np.resize(np.array(idx), shape)
    run_both(lambda lib, x: lib.gather(x, dim, lib.tensor(g)), spec)
    run_both(lambda lib, x: x.scatter_add(dim, lib.tensor(g), lib.ones(shape, dtype=x.dtype)), spec)
    run_both(lambda lib, x: x.masked_fill(x > 0, 2), spec)
    run_both(lambda lib, x: lib.masked_select(x, x > 0), spec)
    run_both(lambda lib, x: x.nonzero(), spec)
    run_both(lambda lib, x: lib.where(x > 0, x, lib.zeros_like(x)), spec)
    run_both(lambda lib, x: lib.where(x > 0, x, 0.5), spec)
    run_both(lambda lib, x: lib.where(x > 0), spec)
