"""Oracle: ``nn.Module`` state dicts against PyTorch 2.13.

Random module trees round-trip through ``state_dict``/``load_state_dict``; load errors (missing,
unexpected, size mismatch, not a tensor) match in type and text; loading with ``assign=`` and
the swap flag keeps or replaces the same tensors; the positional-argument warning, edge cases,
custom ``_save_to_state_dict``/``_load_from_state_dict`` and randomly damaged checkpoints.
"""

import random

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import minitorch_nn as mt  # noqa: E402
from tests.oracle._module_helpers import (  # noqa: F401, E402  (keep_global_rng_state: autouse fixture)
    LIBS,
    Leaf,
    assert_same_error,
    build,
    error_of,
    keep_global_rng_state,
    net,
    random_spec,
    sd_variants,
    structure,
)


@pytest.mark.parametrize("seed", range(40))
def test_random_tree_structure(seed):
    spec = random_spec(random.Random(seed))
    assert structure(build(mt, spec, seed)) == structure(build(torch, spec, seed))


@pytest.mark.parametrize("seed", range(15))
def test_random_tree_state_dict_values_roundtrip(seed):
    spec = random_spec(random.Random(seed))
    ours, theirs = build(mt, spec, seed), build(torch, spec, seed)
    for (k1, v1), (k2, v2) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert k1 == k2
        np.testing.assert_array_equal(v1.numpy(), v2.numpy())
        assert v1.requires_grad is False
    # loading torch's values into ours (as numpy -> tensor) matches.
    other = build(torch, spec, seed + 1000)
    sd = {k: mt.tensor(v.numpy()) for k, v in other.state_dict().items()}
    assert repr(ours.load_state_dict(sd)) == repr(theirs.load_state_dict(other.state_dict()))
    for (_, v1), (_, v2) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        np.testing.assert_array_equal(v1.numpy(), v2.numpy())



@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("case", [name for name, _ in sd_variants(torch)])
def test_load_errors_match(case, strict):
    ours_sd = dict(sd_variants(mt))[case]
    theirs_sd = dict(sd_variants(torch))[case]
    ours = error_of(lambda: net(mt).load_state_dict(ours_sd, strict=strict))
    theirs = error_of(lambda: net(torch).load_state_dict(theirs_sd, strict=strict))
    assert_same_error(ours, theirs)


def test_load_type_errors_and_incompatible_keys_repr():
    for bad in ([], "", 2):
        assert_same_error(
            error_of(lambda: net(mt).load_state_dict(bad)),  # noqa: B023  (called at once)
            error_of(lambda: net(torch).load_state_dict(bad)),  # noqa: B023
        )
    for lib_pair in ((["a"], []), ([], ["b"]), ([], [])):
        from torch.nn.modules.module import _IncompatibleKeys as TK

        from minitorch_nn.nn.modules.module import _IncompatibleKeys as MK

        assert repr(MK(*lib_pair)) == repr(TK(*lib_pair))
        assert str(MK(*lib_pair)) == str(TK(*lib_pair))


# -- load with assign / swap ------------------------------------------------------------------------
def load_identity(lib, swap, assign, keep_vars, meta):
    lib.__future__.set_swap_module_params_on_conversion(swap)
    try:
        if meta:
            with lib.device("meta"):
                m = Leaf(lib)
                m.register_buffer("buf", lib.zeros(2))
        else:
            m = Leaf(lib)
            m.register_buffer("buf", lib.zeros(2))
        m.bias.requires_grad_(False)
        src = Leaf(lib).double()
        src.register_buffer("buf", lib.ones(2, dtype=lib.float64))
        src.weight.requires_grad_(True)
        sd = src.state_dict(keep_vars=keep_vars)
        before = {**dict(m.named_parameters()), **dict(m.named_buffers())}
        import warnings

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            result = repr(m.load_state_dict(sd, assign=assign))
        res = {"result": result, "warnings": sorted(str(x.message)[:60] for x in w)}
        for n, t in [*m.named_parameters(), *m.named_buffers()]:
            res[n] = (
                t is before[n],
                t is sd[n],
                type(t).__name__,
                str(t.dtype),
                t.device.type,
                t.requires_grad,
                t.is_meta or bool((t.detach() == sd[n].detach().to(t.dtype)).all()),
            )
        res["order"] = (list(m._parameters), list(m._buffers))
        return res
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)


@pytest.mark.parametrize("meta", [False, True])
@pytest.mark.parametrize("keep_vars", [False, True])
@pytest.mark.parametrize("assign", [False, True])
@pytest.mark.parametrize("swap", [False, True])
def test_load_identity_match(swap, assign, keep_vars, meta):
    assert load_identity(mt, swap, assign, keep_vars, meta) == load_identity(
        torch, swap, assign, keep_vars, meta
    )


def test_state_dict_positional_args_warn_like_torch():
    import warnings

    out = []
    for lib in LIBS:
        m = Leaf(lib)
        dest = {}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = m.state_dict(dest, "x.")
        out.append(
            (
                got is dest,
                list(dest),
                hasattr(dest, "_metadata"),
                [(c.category.__name__, str(c.message)[:40]) for c in w],
            )
        )
    assert out[0] == out[1]


def load_edge_cases(lib):
    nn = lib.nn
    out = []
    # a 0-d parameter accepts a 1-element 1-d checkpoint tensor
    m = nn.Module()
    m.s = nn.Parameter(lib.tensor(1.0))
    out.append((repr(m.load_state_dict({"s": lib.tensor([5.0])})), m.s.item(), tuple(m.s.shape)))
    # assign=True with a Parameter under a buffer's key turns the buffer into a parameter
    m = nn.Module()
    m.register_buffer("b", lib.zeros(2))
    m.load_state_dict({"b": nn.Parameter(lib.ones(2))}, assign=True)
    out.append((list(m._parameters), list(m._buffers), [n for n, _ in m.named_parameters()]))
    # keys under a None child are ignored even when strict
    m = nn.Module()
    m.add_module("empty", None)
    m.register_parameter("gone", None)
    out.append(error_of(lambda: m.load_state_dict({"empty.weight": lib.zeros(1)})))
    out.append(error_of(lambda: m.load_state_dict({"gone": lib.zeros(1)})))
    # a float64 checkpoint copied into a float32 module stays float32, storage not shared
    m = Leaf(lib)
    src = {k: v.double() + 1 for k, v in m.state_dict().items()}
    m.load_state_dict(src)
    out.append(
        (str(m.weight.dtype), m.weight.data_ptr() == src["weight"].data_ptr(), m.weight.tolist())
    )
    return out


def test_load_edge_cases_match():
    assert load_edge_cases(mt) == load_edge_cases(torch)


def custom_save_load(lib):
    nn = lib.nn

    class Custom(nn.Module):
        def __init__(self):
            super().__init__()
            self.param = nn.Parameter(lib.ones(1))
            self.sub = nn.Linear(1, 1) if hasattr(nn, "Linear") else Leaf(lib)

        def _save_to_state_dict(self, destination, prefix, keep_vars):
            destination[prefix + "serialized"] = self.param.data + 10

        def _load_from_state_dict(
            self, state_dict, prefix, local_metadata, strict, missing, unexpected, errors
        ):
            key = prefix + "serialized"
            if key in state_dict:
                with lib.no_grad():
                    self.param.copy_(state_dict[key] - 10)
            else:
                missing.append(key)

    m = nn.Sequential(Custom())
    m[0].register_state_dict_pre_hook(lambda *a: None)
    sd = m.state_dict()
    out = [list(sd), sd["0.serialized"].tolist()]
    m2 = nn.Sequential(Custom())
    sd2 = dict(sd)
    sd2["0.serialized"] = lib.tensor([15.0])
    out.append(repr(m2.load_state_dict(sd2)))
    out.append(m2[0].param.tolist())
    del sd2["0.serialized"]
    out.append(error_of(lambda: m2.load_state_dict(sd2)))
    return out


def test_custom_save_and_load_overrides_match():
    assert custom_save_load(mt) == custom_save_load(torch)


def mutated_load(lib, seed):
    """Load a randomly damaged state dict into a random tree: the error (or result) must match."""
    rng = random.Random(seed)
    spec = random_spec(rng)
    m = build(lib, spec, seed)
    sd = dict(m.state_dict())
    keys = list(sd)
    for k in keys:
        r = rng.random()
        if r < 0.15:
            del sd[k]
        elif r < 0.25:
            sd[k] = lib.zeros(tuple(s + 1 for s in sd[k].shape) or (2,))
        elif r < 0.3:
            sd[k] = [1.0]
    prefixes = sorted({k.rpartition(".")[0] for k in keys})
    for i in range(rng.randint(0, 3)):
        p = rng.choice(prefixes) if prefixes else ""
        sd[(p + "." if p else "") + rng.choice(["junk", "x.y", "_extra_state"]) + str(i)] = (
            lib.zeros(1)
        )
    strict = rng.random() < 0.7
    assign = rng.random() < 0.3
    return error_of(lambda: m.load_state_dict(sd, strict=strict, assign=assign))


@pytest.mark.parametrize("seed", range(40))
def test_random_damaged_loads_match(seed):
    assert_same_error(mutated_load(mt, seed), mutated_load(torch, seed))
