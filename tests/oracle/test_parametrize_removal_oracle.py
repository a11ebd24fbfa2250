"""Oracle: removing parametrizations, serialization, and the swap flag, against PyTorch 2.13
(torch_behaviours.md items 183-195).

``remove_parametrizations``, ``type_before_parametrizations``, ``transfer_parametrizations_and_params``,
pickling, deepcopy and state dicts of parametrized modules, nesting, ``requires_grad=False``
originals, and conversions under ``set_swap_module_params_on_conversion``.
"""

import copy
import pickle

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)



from tests.oracle._parametrize_helpers import (  # noqa: E402
    LIBS,
    PZ,
    P,
    arr,
    assert_same,
    both,
    kit,
    linear,
    outcome,
)

# ---------------------------------------------------------------------------------------------
# Removal, type_before_parametrizations, transfer (items 183-192)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("leave", [True, False])
def test_remove_single_original(leave):
    def scenario(lib):
        m = linear(lib)
        w = m.weight
        P(lib).register_parametrization(m, "weight", kit(lib)["Skew"]())
        P(lib).register_parametrization(m, "bias", lib.nn.Identity())
        before = P(lib).type_before_parametrizations(m).__name__
        P(lib).remove_parametrizations(m, "weight", leave_parametrized=leave)
        mid = [type(m).__name__, P(lib).is_parametrized(m), P(lib).is_parametrized(m, "weight")]
        P(lib).remove_parametrizations(m, "bias", leave_parametrized=leave)
        return [
            before,
            mid,
            type(m).__name__,
            m.weight is w,
            w.requires_grad,
            arr(m.weight),
            list(m.state_dict()),
            hasattr(m, "parametrizations"),
            outcome(lambda: P(lib).remove_parametrizations(m, "weight"))[0],
        ]

    assert_same(*both(scenario))


def test_remove_multi_original():
    def scenario(lib):
        m = linear(lib)
        P(lib).register_parametrization(m, "weight", kit(lib)["Sum"]())
        keys = list(m.state_dict())
        err = outcome(lambda: P(lib).remove_parametrizations(m, "weight", leave_parametrized=False))
        P(lib).remove_parametrizations(m, "weight")
        return [
            keys,
            err,
            type(m).__name__,
            type(m.weight).__name__,
            m.weight.requires_grad,
            arr(m.weight),
            list(m._parameters),
        ]

    assert_same(*both(scenario))


def test_remove_error_message_names_the_module():
    def scenario(lib):
        return outcome(lambda: P(lib).remove_parametrizations(linear(lib), "weight"))

    assert_same(*both(scenario))


def test_transfer_parametrizations_and_params():
    def scenario(lib):
        k = kit(lib)
        src = linear(lib)
        P(lib).register_parametrization(src, "weight", k["Skew"]())
        P(lib).register_parametrization(src, "bias", k["Double"]())
        src.test_param = lib.nn.Parameter(lib.ones(3, 3))
        P(lib).register_parametrization(src, "test_param", k["Sum"]())
        dst = linear(lib, seed=1)
        P(lib).transfer_parametrizations_and_params(src, dst)
        shared = dst.parametrizations.weight.original is src.parametrizations.weight.original
        shared_multi = (
            dst.parametrizations.test_param.original1 is src.parametrizations.test_param.original1
        )
        values = [arr(dst.weight), arr(dst.bias), arr(dst.test_param)]
        P(lib).remove_parametrizations(dst, "weight")
        single = linear(lib, seed=2)
        P(lib).transfer_parametrizations_and_params(src, single, "weight")
        noop = P(lib).transfer_parametrizations_and_params(linear(lib), single) is single
        return [
            shared,
            shared_multi,
            values,
            P(lib).is_parametrized(src, "weight"),
            list(single.parametrizations),
            noop,
        ]

    assert_same(*both(scenario))


# ---------------------------------------------------------------------------------------------
# Serialization, deepcopy, state dicts (items 190-191)
# ---------------------------------------------------------------------------------------------


def test_pickle_refused_and_deepcopy_works():
    def scenario(lib):
        m = linear(lib)
        P(lib).register_parametrization(m, "weight", kit(lib)["Skew"]())
        P(lib).register_parametrization(m, "weight", kit(lib)["Double"]())
        err = outcome(lambda: pickle.dumps(m))
        c = copy.deepcopy(m)
        return [
            err,
            type(c).__name__,
            type(c) is type(m),
            arr(c.weight),
            c.parametrizations.weight.original is not m.parametrizations.weight.original,
            sorted(c.__dict__) == sorted(m.__dict__),
        ]

    assert_same(*both(scenario))


def test_state_dict_round_trip_and_plain_linear_mismatch():
    def scenario(lib):
        k = kit(lib)
        a, b = linear(lib, 0), linear(lib, 1)
        for m in (a, b):
            P(lib).register_parametrization(m, "weight", k["WithBuffer"]())
        sd = a.state_dict()
        b.load_state_dict(sd)
        plain = outcome(lambda: b.load_state_dict(linear(lib, 2).state_dict()))
        return [list(sd), arr(b.weight), plain]

    assert_same(*both(scenario))


# ---------------------------------------------------------------------------------------------
# Under the swap flag (item 195), nesting (193) and requires_grad=False originals (194)
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def swap_flag():
    for lib in LIBS:
        lib.__future__.set_swap_module_params_on_conversion(True)
    yield
    for lib in LIBS:
        lib.__future__.set_swap_module_params_on_conversion(False)


def test_identities_under_swap_flag(swap_flag):
    def scenario(lib):
        k = kit(lib)
        m = linear(lib)
        w = m.weight
        P(lib).register_parametrization(m, "weight", k["Skew"]())
        orig = m.parametrizations.weight.original
        X = lib.rand(3, 3)
        m.weight = X - X.T
        same_after_assign = m.parametrizations.weight.original is orig
        P(lib).remove_parametrizations(m, "weight")
        return [
            orig is w,
            same_after_assign,
            m.weight is w,
            type(m.weight).__name__,
            m.weight.requires_grad,
            arr(m.weight),
        ]

    assert_same(*both(scenario))


def test_nested_parametrization():
    def scenario(lib):
        k = kit(lib)
        m = linear(lib)
        P(lib).register_parametrization(m, "weight", k["Double"]())
        plist = m.parametrizations.weight
        P(lib).register_parametrization(plist, "original", k["Skew"]())
        names = [type(plist).__name__, list(m.state_dict()), arr(m.weight)]
        P(lib).remove_parametrizations(plist, "original")
        P(lib).remove_parametrizations(m, "weight")
        return names + [type(plist).__name__, type(m).__name__, arr(m.weight)]

    assert_same(*both(scenario))


def test_requires_grad_false_originals():
    def scenario(lib):
        k = kit(lib)
        m = linear(lib)
        m.weight.requires_grad_(False)
        P(lib).register_parametrization(m, "weight", k["Sum"]())
        pl = m.parametrizations.weight
        out = [
            pl.original0.requires_grad,
            pl.original1.requires_grad,
            m.weight.requires_grad,
            type(pl.original0).__name__,
        ]
        P(lib).remove_parametrizations(m, "weight")
        return out + [type(m.weight).__name__, "weight" in m._buffers]

    assert_same(*both(scenario))


def test_right_inverse_may_keep_state_and_errors_propagate():
    def scenario(lib):
        class StoresBase(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("B", lib.eye(3))

            def forward(self, X):
                return self.B @ (X + lib.eye(3))

            def right_inverse(self, X):
                self.B = X.detach().clone()  # a plain tensor: B stays a buffer
                return lib.zeros_like(X)

        class StrictSkew(lib.nn.Module):
            def forward(self, X):
                A = X.triu(1)
                return A - A.T

            def right_inverse(self, X):
                if not lib.allclose(X, -X.T):
                    raise ValueError("The matrix is not skew-symmetric.")
                return X.triu(1)

        m = linear(lib)
        P(lib).register_parametrization(m, "weight", StoresBase())
        Q = lib.linalg.qr(lib.rand(3, 3)).Q
        m.weight = Q
        m2 = linear(lib)
        with lib.no_grad():
            m2.weight.copy_(m2.weight - m2.weight.T)  # skew, so registration's right_inverse passes
        P(lib).register_parametrization(m2, "weight", StrictSkew())
        return [
            arr(m.weight),
            arr(m.parametrizations.weight.original),
            outcome(lambda: setattr(m2, "weight", lib.ones(3, 3))),
        ]

    assert_same(*both(scenario))


def test_spectral_norm_twice_diagonal_value_and_copies():
    def scenario(lib):
        m = linear(lib, n=4, m=4)
        PZ(lib).spectral_norm(m)
        PZ(lib).spectral_norm(m)
        PZ(lib).spectral_norm(m, "bias")
        twice = [arr(m.weight), arr(m.bias), repr(m)]
        d = linear(lib, n=4, m=4)
        with lib.no_grad():
            d.weight.copy_(lib.eye(4) * lib.tensor([1.0, -3.0, 2.0, 0.5]))
        PZ(lib).spectral_norm(d)
        wn = PZ(lib).weight_norm(linear(lib, n=5, m=4))
        c = copy.deepcopy(wn)
        return twice + [
            arr(d.weight),
            arr(c(lib.ones(1, 4))),
            arr(wn(lib.ones(1, 4))),
            outcome(lambda: pickle.dumps(wn))[0],
        ]

    assert_same(*both(scenario))


def test_larger_shapes_match():
    # Sizes of 16 and more take PyTorch's vectorised normal_ path; a conv weight is 4-D.
    def scenario(lib):
        lib.manual_seed(0)
        conv = PZ(lib).spectral_norm(lib.nn.Conv2d(20, 24, 3))
        lin = PZ(lib).spectral_norm(lib.nn.Linear(40, 33))
        orth = PZ(lib).orthogonal(lib.nn.Linear(40, 33))
        return [arr(conv.weight), arr(conv.parametrizations.weight[0]._v), arr(lin.weight), arr(orth.weight)]

    assert_same(*both(scenario), atol=1e-5)
