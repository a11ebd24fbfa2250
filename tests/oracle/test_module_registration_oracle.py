"""Oracle: registering things on an ``nn.Module`` against PyTorch 2.13.

``__setattr__``/``register_*`` errors, module reprs, ``zero_grad``/``requires_grad_``, and the
behaviour of ``Parameter`` and ``Buffer`` objects.
"""

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import minitorch_nn as mt  # noqa: E402
from tests.oracle._module_helpers import (  # noqa: F401, E402  (keep_global_rng_state: autouse fixture)
    LIBS,
    Leaf,
    assert_same_error,
    error_of,
    keep_global_rng_state,
)


# -- setattr / registration errors ------------------------------------------------------------------
def registration_errors(lib):
    nn = lib.nn
    out = []

    class Early(nn.Module):
        def __init__(self, what):
            if what == "param":
                self.w = nn.Parameter(lib.zeros(1))
            elif what == "module":
                self.c = nn.Module()
            elif what == "register":
                self.register_parameter("w", None)
            elif what == "buffer":
                self.register_buffer("w", None)

    for what in ("param", "module", "register", "buffer"):
        out.append(error_of(lambda: Early(what)))  # noqa: B023  (called at once)
    m = nn.Module()
    m.weight = nn.Parameter(lib.zeros(2))
    m.child = nn.Module()
    m.register_buffer("buf", lib.zeros(1))
    m.plain = 3
    cases = [
        lambda: setattr(m, "weight", lib.zeros(2)),
        lambda: setattr(m, "weight", lib.zeros(2, dtype=lib.float64)),
        lambda: setattr(m, "child", 3),
        lambda: setattr(m, "buf", 3),
        lambda: m.register_parameter("a.b", None),
        lambda: m.register_parameter("", None),
        lambda: m.register_parameter("plain", None),
        lambda: m.register_parameter("x", lib.zeros(1)),
        lambda: m.register_buffer("a.b", None),
        lambda: m.register_buffer("", None),
        lambda: m.register_buffer("x", 3),
        lambda: m.register_buffer("plain", None),
        lambda: m.add_module("a.b", None),
        lambda: m.add_module("", None),
        lambda: m.add_module("x", 3),
        lambda: m.add_module("plain", None),
        lambda: m.missing,
        lambda: nn.Module(1),
        lambda: nn.Module(foo=1),
        lambda: m(1),
        lambda: m.train("yes"),
        lambda: m.get_submodule("child.nope"),
        lambda: m.get_submodule("plain"),
        lambda: m.get_parameter("nope"),
        lambda: m.get_parameter("buf"),
        lambda: m.get_buffer("weight"),
        lambda: m.to(lib.int32),
        lambda: m.to_empty("cpu"),
        lambda: nn.Sequential(nn.Module())[3],
        lambda: nn.ModuleList([nn.Module()])[-2],
    ]
    for c in cases:
        out.append(error_of(c))
    # assigning None to a parameter keeps the key; a Parameter over a buffer name moves it
    m.weight = None
    m.buf = nn.Parameter(lib.zeros(1))
    m.nb = nn.Buffer(lib.zeros(1), persistent=False)
    out.append(
        (
            list(m._parameters),
            list(m._buffers),
            sorted(m._non_persistent_buffers_set),
            list(m.state_dict()),
        )
    )
    return out


def test_registration_errors_match():
    ours, theirs = registration_errors(mt), registration_errors(torch)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if isinstance(t, tuple) and len(t) == 2 and isinstance(t[1], str):
            assert_same_error(o, t)
        else:
            assert o == t


# -- repr -------------------------------------------------------------------------------------------
def reprs(lib):
    nn = lib.nn

    class One(nn.Module):
        def extra_repr(self):
            return "x=5"

    class Blank(nn.Module):
        def extra_repr(self):
            return "line1\n\nline3"

    outer = nn.Module()
    outer.c = Blank()
    seq = nn.Sequential(One(), One(), nn.ModuleList([One(), One(), One(), Blank(), One()]))
    pl = nn.ParameterList([lib.zeros(2)])
    pl2 = nn.ParameterList([lib.zeros(2), nn.Parameter(lib.zeros(1, 3)), "s"])
    pd = nn.ParameterDict({"b": lib.zeros(2), "a": lib.zeros(1, dtype=lib.float64)})
    md = nn.ModuleDict({"x": One(), "y": nn.Sequential()})
    return [
        repr(x) for x in (One(), Blank(), outer, seq, nn.ModuleList(), pl, pl2, pd, md, nn.Module())
    ]


def test_reprs_match():
    assert reprs(mt) == reprs(torch)


def test_zero_grad_and_requires_grad_match():
    out = []
    for lib in LIBS:
        m = Leaf(lib)
        m.weight.grad = lib.ones(3, 2)
        g = m.weight.grad
        m.zero_grad(set_to_none=False)
        a = (m.weight.grad is g, m.weight.grad.tolist())
        m.zero_grad()
        r = m.requires_grad_(False)
        out.append(
            (
                a,
                m.weight.grad,
                r is m,
                [p.requires_grad for p in m.parameters()],
                m.eval() is m,
                m.training,
            )
        )
    assert out[0] == out[1]


# -- Parameter and Buffer ---------------------------------------------------------------------------
def parameter_behaviour(lib):
    import copy
    import pickle

    nn = lib.nn
    out = []
    base = lib.tensor([1.0, 2.0])
    p = nn.Parameter(base)
    q = nn.Parameter(lib.tensor([[1, 2]]), requires_grad=False)
    e = nn.Parameter()
    out.append((repr(p), repr(q), repr(e), str(p)))
    out.append(
        (
            p.data_ptr() == base.data_ptr(),
            p.requires_grad,
            base.requires_grad,
            type(p.detach()).__name__,
        )
    )
    p.note = "kept"
    for clone in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        out.append(
            (
                type(clone).__name__,
                clone.requires_grad,
                clone.tolist(),
                getattr(clone, "note", None),
                clone is p,
            )
        )
    memo = {}
    a = copy.deepcopy(p, memo)
    out.append(copy.deepcopy(p, memo) is a)
    b = nn.Buffer(lib.ones(2), persistent=False)
    out.append(
        (
            type(b).__name__,
            isinstance(b, nn.Buffer),
            b.persistent,
            isinstance(lib.ones(1), nn.Buffer),
        )
    )
    g = nn.Buffer(lib.ones(2, requires_grad=True))
    out.append(
        (
            g.requires_grad,
            g.is_leaf,
            g.persistent,
            isinstance(g, nn.Parameter),
            isinstance(p, nn.Buffer),
        )
    )
    return out


def test_parameter_and_buffer_match():
    assert parameter_behaviour(mt) == parameter_behaviour(torch)
