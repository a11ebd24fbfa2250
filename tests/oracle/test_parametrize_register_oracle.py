"""Oracle: ``register_parametrization``, assignment through ``right_inverse`` and caching,
against PyTorch 2.13 (torch_behaviours.md items 164-182).

Error types and messages, identities, key orders and values are compared.
"""

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)


import minitorch_nn as mt  # noqa: E402
from tests.oracle._parametrize_helpers import P, arr, assert_same, both, kit, linear, outcome  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Registration (items 164-179)
# ---------------------------------------------------------------------------------------------


def test_registration_structure_and_identity():
    def scenario(lib):
        m = linear(lib)
        w = m.weight
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        P(lib).register_parametrization(m, "weight", kit(lib)["Skew"]())
        other = P(lib).register_parametrization(linear(lib), "weight", kit(lib)["Skew"]())
        return [
            type(m).__name__,
            [c.__name__ for c in type(m).__mro__[1:3]],
            type(m) is type(other),
            type(m).__module__.split(".", 1)[1],
            m.parametrizations.weight.original is w,
            opt.param_groups[0]["params"][0] is m.parametrizations.weight.original,
            "weight" in m._parameters,
            type(m.parametrizations).__name__,
            type(m.parametrizations.weight).__name__,
            [n for n, _ in m.named_parameters()],
            list(m.state_dict()),
            [n for n, _ in m.named_modules()],
            repr(m),
            type(m.weight).__name__,
            m.weight.grad_fn is not None,
            arr(m.weight),
            arr(m.parametrizations.weight.original),
            sorted(k for k in m.state_dict()._metadata if k),
        ]

    assert_same(*both(scenario))


def test_chain_repr_collapses_like_module_list():
    def scenario(lib):
        k = kit(lib)
        m = linear(lib)
        for p in (k["Double"](), k["Double"](), lib.nn.Identity(), k["Skew"]()):
            P(lib).register_parametrization(m, "weight", p)
        return [repr(m), arr(m.weight), arr(m.parametrizations.weight.original)]

    assert_same(*both(scenario))


@pytest.mark.parametrize(
    "case",
    [
        "Resize",
        "ToBool",
        "ReturnsInt",
        "RightInvNone",
        "RightInvBool",
        "SeqWithNone",
        "RightInvTuple",
        "missing",
        "meta",
    ],
)
def test_first_registration_errors_leave_module_unchanged(case):
    def scenario(lib):
        m = linear(lib)
        w = m.weight
        k = kit(lib)
        if case == "missing":
            res = outcome(lambda: P(lib).register_parametrization(m, "foo", k["Skew"]()))
        elif case == "meta":

            class ToMeta(lib.nn.Module):
                def forward(self, X):
                    return X

                def right_inverse(self, X):
                    return lib.empty(X.shape, device="meta")

            res = outcome(lambda: P(lib).register_parametrization(m, "weight", ToMeta()))
        else:
            res = outcome(lambda: P(lib).register_parametrization(m, "weight", k[case]()))
        return [
            res[0],
            res[1] if res[0] != "TypeError" else "positional argument" in res[1],
            type(m).__name__,
            m.weight is w,
            P(lib).is_parametrized(m),
        ]

    assert_same(*both(scenario))


@pytest.mark.parametrize(
    "case", ["Resize", "ToBool", "ReturnsInt", "RightInvTuple", "RightInvBool"]
)
def test_errors_on_an_already_parametrized_tensor(case):
    def scenario(lib):
        m = linear(lib)
        k = kit(lib)
        P(lib).register_parametrization(m, "weight", lib.nn.Identity())
        res = outcome(lambda: P(lib).register_parametrization(m, "weight", k[case]()))
        return [res, len(m.parametrizations.weight)]

    assert_same(*both(scenario))


def test_unsafe_and_notimplemented_right_inverse_and_training_mode():
    def scenario(lib):
        k = kit(lib)
        m = linear(lib)
        P(lib).register_parametrization(m, "weight", k["Resize"](), unsafe=True)
        shape = list(m.weight.shape)
        P(lib).register_parametrization(m, "weight", k["Double"]())
        unsafe = m.parametrizations.weight.unsafe
        m2 = linear(lib)
        P(lib).register_parametrization(m2, "weight", k["RightInvNotImpl"]())
        m3 = linear(lib).eval()
        p = k["Double"]()
        P(lib).register_parametrization(m3, "weight", p)
        m4 = linear(lib)
        q = k["Double"]().eval()
        P(lib).register_parametrization(m4, "weight", q)
        return [shape, unsafe, arr(m.weight), arr(m2.weight), p.training, q.training]

    assert_same(*both(scenario))


@pytest.mark.parametrize("swap", [False, True])
def test_version_of_original_after_registration(swap):
    def scenario(lib):
        lib.__future__.set_swap_module_params_on_conversion(swap)
        try:
            out = []
            for p in (lib.nn.Identity(), kit(lib)["Double"]()):
                m = linear(lib)
                w = m.weight
                v0 = w._version
                P(lib).register_parametrization(m, "weight", p)
                out.append([w._version - v0, m.parametrizations.weight.original is w])
            return out
        finally:
            lib.__future__.set_swap_module_params_on_conversion(False)

    assert_same(*both(scenario))


def test_forward_runs_once_at_registration():
    def scenario(lib):
        m = linear(lib)
        c = kit(lib)["Counting"]()
        P(lib).register_parametrization(m, "weight", c)
        n_safe = c.calls
        m2 = linear(lib)
        c2 = kit(lib)["Counting"]()
        P(lib).register_parametrization(m2, "weight", c2, unsafe=True)
        return [n_safe, c2.calls]

    assert_same(*both(scenario))


def test_buffer_parametrization():
    def scenario(lib):
        k = kit(lib)
        m = linear(lib, n=8)
        del m.bias
        m.bias = lib.nn.Buffer(lib.ones(8))
        P(lib).register_parametrization(m, "bias", k["Double"]())
        keys = list(m.state_dict())
        n_params = len(list(m.parameters()))
        P(lib).remove_parametrizations(m, "bias")
        return [keys, n_params, "bias" in m._buffers, arr(m.bias)]

    assert_same(*both(scenario))


# ---------------------------------------------------------------------------------------------
# Assignment through right_inverse (items 180-181)
# ---------------------------------------------------------------------------------------------


def test_assignment():
    def scenario(lib):
        k = kit(lib)
        m = linear(lib)
        P(lib).register_parametrization(m, "weight", k["Skew"]())
        P(lib).register_parametrization(m, "weight", k["Double"]())
        orig = m.parametrizations.weight.original
        X = lib.rand(3, 3)
        X = X - X.T
        m.weight = X
        out = [m.parametrizations.weight.original is orig, arr(orig), arr(m.weight)]
        m2 = linear(lib)
        P(lib).register_parametrization(m2, "weight", k["NoInverse"]())
        out.append(outcome(lambda: setattr(m2, "weight", lib.zeros(3, 3))))
        m3 = linear(lib)
        P(lib).register_parametrization(m3, "weight", k["RightInvNotImpl"]())
        out.append(outcome(lambda: setattr(m3, "weight", lib.zeros(3, 3)))[0])
        m4 = linear(lib)
        P(lib).register_parametrization(m4, "weight", k["Sum"]())
        m4.weight = lib.ones(3, 3)
        out += [arr(m4.parametrizations.weight.original0), arr(m4.weight)]
        return out

    assert_same(*both(scenario))


# ---------------------------------------------------------------------------------------------
# Caching (item 182)
# ---------------------------------------------------------------------------------------------


def test_caching_counts_nesting_and_per_module_keys():
    def scenario(lib):
        m = linear(lib)
        c = kit(lib)["Counting"]()
        P(lib).register_parametrization(m, "weight", c)
        c.calls = 0
        with P(lib).cached():
            a, b = m.weight, m.weight
            with P(lib).cached():
                inner_same = m.weight is a
            still = m.weight is a
        inside = c.calls
        _ = m.weight, m.weight
        to = P(lib).transfer_parametrizations_and_params(m, linear(lib, seed=1))
        with P(lib).cached():
            distinct = to.weight is not m.weight
        return [a is b, inner_same, still, inside, c.calls, distinct]

    assert_same(*both(scenario))


def test_cached_reports_saved_evaluations():
    m = linear(mt)
    P(mt).register_parametrization(m, "weight", kit(mt)["Double"]())
    with P(mt).cached() as stats:
        for _ in range(4):
            _ = m.weight
    assert (stats.computed, stats.saved) == (1, 3)
