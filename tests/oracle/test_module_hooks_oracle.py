"""Oracle: ``nn.Module`` hooks against PyTorch 2.13.

Forward (pre-)hooks and their order, ``always_call``, nested hooks, state-dict and load hooks,
extra state, and full backward hooks: the logs of what ran, and with which arguments, match.
"""

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import minitorch_nn as mt  # noqa: E402
from tests.oracle._module_helpers import Leaf, error_of, keep_global_rng_state  # noqa: F401, E402  (keep_global_rng_state: autouse fixture)


# -- hooks ------------------------------------------------------------------------------------------
def forward_hook_log(lib):
    nn = lib.nn
    log = []

    class Add(nn.Module):
        def forward(self, x, y=0):
            log.append(("forward", x, y))
            return x + y

    m = Add()
    handles = []
    for i in range(5):
        handles.append(
            m.register_forward_hook(
                lambda mod, a, o, i=i: log.append(("post", i, a, o)) or o * 10 if i == 2 else None,
                prepend=i in (1, 4),
            )
        )
        handles.append(
            m.register_forward_pre_hook(
                lambda mod, a, i=i: log.append(("pre", i, a)) or (a[0] + 1,), prepend=i == 3
            )
        )
    m.register_forward_pre_hook(
        lambda mod, a, kw: log.append(("prekw", a, dict(kw))) or (a, {"y": 100}), with_kwargs=True
    )
    m.register_forward_hook(
        lambda mod, a, kw, o: log.append(("postkw", a, dict(kw), o)), with_kwargs=True
    )
    g1 = nn.modules.module.register_module_forward_pre_hook(
        lambda mod, a: log.append(("gpre", type(mod).__name__))
    )
    g2 = nn.modules.module.register_module_forward_hook(lambda mod, a, o: log.append(("gpost", o)))
    try:
        log.append(("result", m(1, y=2)))
        handles[0].remove()
        handles[0].remove()
        with handles[3]:
            log.append(("result", m(1)))
        log.append(("result", m(1)))
        log.append(("direct", m.forward(1)))
    finally:
        g1.remove()
        g2.remove()
    log.append(("result", m(1)))
    return log


def test_forward_hook_order_match():
    assert forward_hook_log(mt) == forward_hook_log(torch)


def always_call_log(lib):
    nn = lib.nn
    log = []

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    m.register_forward_hook(lambda mod, a, o: log.append(("normal", o)))
    m.register_forward_hook(lambda mod, a, o: log.append(("always", o)), always_call=True)
    m.register_forward_hook(
        lambda mod, a, kw, o: log.append(("always_kw", o, dict(kw))),
        always_call=True,
        with_kwargs=True,
    )

    def bad(mod, a, o):
        raise KeyError("inner")

    m.register_forward_hook(bad, always_call=True)
    import warnings

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        log.append(error_of(lambda: m(3)))
    log.append([str(x.message) for x in w])
    bad_pre = Boom()
    bad_pre.register_forward_pre_hook(lambda mod, a, kw: 5, with_kwargs=True)
    log.append(error_of(lambda: bad_pre(1)))
    return log


def test_always_call_and_bad_pre_hook_match():
    assert always_call_log(mt) == always_call_log(torch)


def nested_hook_log(lib):
    nn = lib.nn
    log = []

    class Id(nn.Module):
        def forward(self, x):
            return x

    seq = nn.Sequential(Id(), Id())
    for i, c in enumerate(seq):
        c.register_forward_hook(lambda mod, a, o, i=i: log.append(i))
    seq.register_forward_hook(lambda mod, a, o: log.append("seq"))
    seq(lib.zeros(1))
    visited = []
    nn.Sequential(Id(), nn.Sequential(Id(), nn.Module())).apply(
        lambda mod: visited.append(type(mod).__name__)
    )
    return log, visited


def test_nested_hooks_and_apply_order_match():
    assert nested_hook_log(mt) == nested_hook_log(torch)


def state_dict_hook_log(lib):
    nn = lib.nn
    log = []
    model = nn.Sequential(Leaf(lib), nn.Sequential(Leaf(lib)))
    for name, mod in model.named_modules():
        mod.register_state_dict_pre_hook(
            lambda m, prefix, kv, name=name: log.append(("pre", name, prefix, kv))
        )
        mod.register_state_dict_post_hook(
            lambda m, sd, prefix, meta, name=name: log.append(
                ("post", name, prefix, list(sd), dict(meta))
            )
        )
    model.state_dict(prefix="foo.", keep_vars=True)
    model.state_dict()

    def replace(m, sd, prefix, meta):
        return {"replaced": 1}

    h1 = model._register_state_dict_hook(replace)
    h2 = model[1]._register_state_dict_hook(replace)
    log.append(("private", list(model.state_dict())))
    h1.remove()
    h2.remove()

    def returns(m, sd, prefix, meta):
        return 1

    model.register_state_dict_post_hook(returns)
    log.append(error_of(lambda: model.state_dict()))
    log.append(error_of(lambda: model._register_state_dict_hook(returns)))
    return log


def test_state_dict_hooks_match():
    assert state_dict_hook_log(mt) == state_dict_hook_log(torch)


def load_hook_log(lib):
    nn = lib.nn
    log = []
    model = nn.Sequential(Leaf(lib), nn.Sequential(Leaf(lib)))
    sd = model.state_dict()
    sd["old.weight"] = sd.pop("1.0.weight")

    def rename(m, state_dict, prefix, meta, strict, missing, unexpected, errors):
        log.append(("pre", type(m).__name__, prefix, sorted(state_dict), dict(meta), strict))
        if "old.weight" in state_dict:
            state_dict["1.0.weight"] = state_dict.pop("old.weight")

    for mod in model.modules():
        mod.register_load_state_dict_pre_hook(rename)
        mod.register_load_state_dict_post_hook(
            lambda m, inc: log.append(
                ("post", type(m).__name__, list(inc.missing_keys), list(inc.unexpected_keys))
            )
        )
    model[1]._register_load_state_dict_pre_hook(lambda *a: log.append(("private", a[1])))
    log.append(repr(model.load_state_dict(sd, strict=False)))
    log.append(sorted(sd))  # the caller's dict is untouched
    log.append(repr(model.load_state_dict(dict(sd, extra=lib.zeros(1)), strict=False, assign=True)))

    # a post hook that clears the lists lets a strict load with extra keys pass
    m2 = Leaf(lib)
    m2.register_load_state_dict_post_hook(
        lambda m, inc: (inc.missing_keys.clear(), inc.unexpected_keys.clear()) and None
    )
    log.append(repr(m2.load_state_dict({"junk": lib.zeros(1)})))
    m3 = Leaf(lib)
    m3.register_load_state_dict_post_hook(lambda m, inc: 1)
    log.append(error_of(lambda: m3.load_state_dict(m3.state_dict())))
    return log


def test_load_hooks_match():
    assert load_hook_log(mt) == load_hook_log(torch)


def extra_state_log(lib):
    nn = lib.nn

    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.zeros(1))
            self.state = {"k": 1}

        def get_extra_state(self):
            return self.state

        def set_extra_state(self, s):
            self.state = s

    class GetOnly(nn.Module):
        def get_extra_state(self):
            return 5

    m = nn.Sequential(WithExtra(), GetOnly())
    sd = m.state_dict()
    out = [list(sd), sd["0._extra_state"], sd["1._extra_state"]]
    m2 = nn.Sequential(WithExtra(), GetOnly())
    out.append(error_of(lambda: m2.load_state_dict(dict(sd, **{"0._extra_state": {"k": 2}}))))
    out.append(m2[0].state)
    d = dict(sd)
    del d["0._extra_state"]
    out.append(error_of(lambda: m2.load_state_dict(d)))
    return out


def test_extra_state_match():
    assert extra_state_log(mt) == extra_state_log(torch)


# -- full backward hooks ---------------------------------------------------------------------------


def _grads(gs):
    return [None if g is None else g.tolist() for g in gs]


def backward_hook_log(lib):
    import warnings

    nn = lib.nn
    log = []

    class Mul(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.full((2,), 3.0))

        def forward(self, x, y, k=1):
            return x * self.w, y * 2

    m = Mul()
    for i in range(3):
        m.register_full_backward_hook(
            lambda mod, gi, go, i=i: log.append(("full", i, _grads(gi), _grads(go))), prepend=i == 2
        )
    m.register_full_backward_pre_hook(
        lambda mod, go: log.append(("pre", _grads(go))) or (go[0] * 10, go[1])
    )
    g = nn.modules.module.register_module_full_backward_hook(
        lambda mod, gi, go: log.append(("global", _grads(gi)))
    )
    try:
        x = lib.ones(2, requires_grad=True)
        a, b = m(x, lib.ones(2))
        (a.sum() + b.sum()).backward()
    finally:
        g.remove()
    log.append(("grads", x.grad.tolist(), m.w.grad.tolist()))

    m2 = Mul()
    m2.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0 + 7, None))
    x2 = lib.ones(2, requires_grad=True)
    m2(x2, lib.ones(2))[0].sum().backward()
    log.append(("replaced", x2.grad.tolist()))

    m3 = Mul()
    m3.register_full_backward_hook(lambda mod, gi, go: ())
    x3 = lib.ones(2, requires_grad=True)
    log.append(error_of(lambda: m3(x3, lib.ones(2))[0].sum().backward()))

    m4 = Mul()
    m4.register_full_backward_hook(lambda mod, gi, go: log.append(("no_input_grad", gi, len(go))))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m4(lib.ones(2), lib.ones(2))[0].sum().backward()
    log.append([str(x.message)[:60] for x in w])
    log.append(error_of(lambda: m4.register_backward_hook(lambda *a: None)))
    return log


def test_full_backward_hooks_match():
    assert backward_hook_log(mt) == backward_hook_log(torch)
