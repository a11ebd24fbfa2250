"""Oracle: ``nn.utils.parametrize`` and ``nn.utils.parametrizations`` against PyTorch 2.13.

Every scenario runs once with each library (``lib`` is ``torch`` or ``minitorch_nn``) and the
results are compared: printed output of the tutorial and docstring scripts, error types and
messages, identities, key orders, values, gradients and optimizer trajectories. Notes section E
(torch_behaviours.md items 164-223) lists the behaviours.
"""

import contextlib
import copy
import io
import pickle

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import numpy as np  # noqa: E402

import minitorch_nn as mt  # noqa: E402

LIBS = [mt, torch]


def P(lib):
    return lib.nn.utils.parametrize


def PZ(lib):
    return lib.nn.utils.parametrizations


def arr(t):
    return t.detach().numpy().copy()


def both(fn):
    """Run ``fn(lib)`` with each library; return (ours, torch's)."""
    return fn(mt), fn(torch)


def assert_same(a, b, atol=1e-5):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same(x, y, atol)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, atol=atol, rtol=1e-5)
    else:
        assert a == b


def outcome(fn):
    """(exception type name, message) or ("ok", result) of ``fn()``."""
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001
        return (type(e).__name__, str(e).split("\nHint:")[0])


# ---------------------------------------------------------------------------------------------
# The tutorial and docstring scripts, printed output compared
# ---------------------------------------------------------------------------------------------

HEADER = """
import {lib} as torch
import {lib}.nn as nn
import {lib}.nn.utils.parametrize as parametrize
torch.manual_seed(0)
"""

SYMMETRIC = """
def symmetric(X):
    return X.triu() + X.triu(1).transpose(-1, -2)

X = torch.rand(3, 3)
A = symmetric(X)
print(torch.allclose(A, A.T))
print(A)

class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Symmetric())
A = layer.weight
print(torch.allclose(A, A.T))
print(A)

class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)

cnn = nn.Conv2d(in_channels=5, out_channels=8, kernel_size=3)
parametrize.register_parametrization(cnn, "weight", Skew())
print(cnn.weight[0, 1])
print(cnn.weight[2, 2])

layer = nn.Linear(3, 3)
print(f"Unparametrized:\\n{layer}")
parametrize.register_parametrization(layer, "weight", Symmetric())
print(f"\\nParametrized:\\n{layer}")
print(layer.parametrizations)
print(layer.parametrizations.weight)
print(layer.parametrizations.weight[0])
print(dict(layer.named_parameters()))
print(layer.parametrizations.weight.original)
symmetric = Symmetric()
weight_orig = layer.parametrizations.weight.original
print(torch.dist(layer.weight, symmetric(weight_orig)))
"""

CACHING = """
class NoisyParametrization(nn.Module):
    def forward(self, X):
        print("Computing the Parametrization")
        return X

layer = nn.Linear(4, 4)
parametrize.register_parametrization(layer, "weight", NoisyParametrization())
print("Here, layer.weight is recomputed every time we call it")
foo = layer.weight + layer.weight.T
bar = layer.weight.sum()
with parametrize.cached():
    print("Here, it is computed just the first time layer.weight is called")
    foo = layer.weight + layer.weight.T
    bar = layer.weight.sum()
with parametrize.cached():
    with parametrize.cached():
        foo = layer.weight
    print(foo is layer.weight)
print(foo is layer.weight)
"""

CONCAT = """
class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)

class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

class CayleyMap(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("Id", torch.eye(n))

    def forward(self, X):
        return torch.linalg.solve(self.Id - X, self.Id + X)

layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Skew())
parametrize.register_parametrization(layer, "weight", CayleyMap(3))
X = layer.weight
print(torch.dist(X.T @ X, torch.eye(3)) < 1e-5)
print(layer)

class MatrixExponential(nn.Module):
    def forward(self, X):
        return torch.matrix_exp(X)

layer_orthogonal = nn.Linear(3, 3)
parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
parametrize.register_parametrization(layer_orthogonal, "weight", MatrixExponential())
X = layer_orthogonal.weight
print(torch.dist(X.T @ X, torch.eye(3)) < 1e-5)

layer_spd = nn.Linear(3, 3)
parametrize.register_parametrization(layer_spd, "weight", Symmetric())
parametrize.register_parametrization(layer_spd, "weight", MatrixExponential())
X = layer_spd.weight
print(torch.dist(X, X.T) < 1e-5)
print((torch.linalg.eigvalsh(X) > 0.).all())
print(layer_spd)
"""

INIT = """
class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu(1)

layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Skew())
X = torch.rand(3, 3)
X = X - X.T
layer.weight = X
print(torch.dist(layer.weight, X) < 1e-6)

class CayleyMap(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("Id", torch.eye(n))

    def forward(self, X):
        return torch.linalg.solve(self.Id - X, self.Id + X)

    def right_inverse(self, A):
        return torch.linalg.solve(A + self.Id, self.Id - A)

layer_orthogonal = nn.Linear(3, 3)
parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
parametrize.register_parametrization(layer_orthogonal, "weight", CayleyMap(3))
X = torch.empty(3, 3)
nn.init.orthogonal_(X)
if X.det() < 0.:
    X[0].neg_()
layer_orthogonal.weight = X
print(torch.dist(layer_orthogonal.weight, X) < 1e-5)
layer_orthogonal.weight = nn.init.orthogonal_(layer_orthogonal.weight)
print(torch.dist(layer_orthogonal.weight.T @ layer_orthogonal.weight, torch.eye(3)) < 1e-5)
"""

REMOVAL = """
class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu(1)

for leave in (True, False):
    layer = nn.Linear(3, 3)
    print("Before:")
    print(layer)
    print(layer.weight)
    parametrize.register_parametrization(layer, "weight", Skew())
    print("\\nParametrized:")
    print(layer)
    print(layer.weight)
    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=leave)
    print("\\nAfter:")
    print(layer)
    print(layer.weight)
"""

DOCSTRING = """
class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).T

    def right_inverse(self, A):
        return A.triu()

m = nn.Linear(5, 5)
parametrize.register_parametrization(m, "weight", Symmetric())
print(torch.allclose(m.weight, m.weight.T))
A = torch.rand(5, 5)
A = A + A.T
m.weight = A
print(torch.allclose(m.weight, A))

class RankOne(nn.Module):
    def forward(self, x, y):
        return x.unsqueeze(-1) @ y.unsqueeze(-2)

    def right_inverse(self, Z):
        U, S, Vh = torch.linalg.svd(Z, full_matrices=False)
        s0_sqrt = S[0].sqrt().unsqueeze(-1)
        return U[..., :, 0] * s0_sqrt, Vh[..., 0, :] * s0_sqrt

linear_rank_one = parametrize.register_parametrization(nn.Linear(4, 4), "weight", RankOne())
print(torch.linalg.matrix_rank(linear_rank_one.weight).item())
print(sorted(linear_rank_one.state_dict()))
print(linear_rank_one)
"""

ALL = {
    "symmetric": SYMMETRIC,
    "caching": CACHING,
    "concat": CONCAT,
    "init": INIT,
    "removal": REMOVAL,
    "docstring": DOCSTRING,
}


def _run_script(lib, name):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(HEADER.format(lib=lib.__name__) + ALL[name], {"__name__": "__scenario__"})
    return buf.getvalue()


@pytest.mark.parametrize("name", sorted(ALL))
def test_script_prints_what_pytorch_prints(name):
    ours, theirs = _run_script(mt, name), _run_script(torch, name)
    assert ours == theirs
    assert ours  # the script printed something


# ---------------------------------------------------------------------------------------------
# Parametrizations used below, built for either library
# ---------------------------------------------------------------------------------------------


def kit(lib):
    nn = lib.nn

    class Skew(nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu(1)

    class Double(nn.Module):
        def forward(self, X):
            return 2 * X

        def right_inverse(self, X):
            return X / 2

    class NoInverse(nn.Module):
        def forward(self, X):
            return X + 0

    class Resize(nn.Module):
        def forward(self, X):
            return X[[0]]

    class ToBool(nn.Module):
        def forward(self, X):
            return X > 0

    class ReturnsInt(nn.Module):
        def forward(self, X):
            return 1

    class RightInvNone(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return None

    class RightInvBool(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return X > 0

    class RightInvNotImpl(nn.Module):
        def forward(self, X):
            return X * 3

        def right_inverse(self, X):
            raise NotImplementedError

    class RightInvTuple(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return (X, X)

    class SeqWithNone(nn.Module):
        def forward(self, X, Y):
            return X

        def right_inverse(self, X):
            return [X, None]

    class SequenceLen1(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return (X,)

    class Sum(nn.Module):
        def forward(self, X, Y):
            return X + Y

        def right_inverse(self, Z):
            return Z, lib.zeros_like(Z)

    class Counting(nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, X):
            self.calls += 1
            return X

    class WithBuffer(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", lib.ones(1) * 3)

        def forward(self, X):
            return X * self.scale

        def right_inverse(self, X):
            return X / self.scale

    return {k: v for k, v in locals().items() if isinstance(v, type)}


def linear(lib, seed=0, n=3, m=3):
    lib.manual_seed(seed)
    return lib.nn.Linear(m, n)


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
# The built-in parametrizations (items 196-199)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("triv", [True, False])
def test_orthogonal_values_and_gradients(shape, omap, triv):
    def scenario(lib):
        m = linear(lib, seed=1, n=shape[0], m=shape[1])
        PZ(lib).orthogonal(m, orthogonal_map=omap, use_trivialization=triv)
        w = m.weight
        (w * lib.arange(w.numel()).reshape(w.shape)).sum().backward()
        out = [arr(w), arr(m.parametrizations.weight.original.grad), list(m.state_dict())]
        out.append(outcome(lambda: setattr(m, "weight", lib.zeros(5, 5)))[0])
        if triv or omap == "householder":
            with lib.no_grad():
                m.weight = m.weight * 1
            out.append(arr(m.weight))
        return out

    assert_same(*both(scenario), atol=1e-4)


def test_orthogonal_errors():
    def scenario(lib):
        m = linear(lib)
        return [
            outcome(lambda: PZ(lib).orthogonal(m, orthogonal_map="foo")),
            outcome(lambda: PZ(lib).orthogonal(m, "bias")),
            outcome(lambda: PZ(lib).orthogonal(m, "nothing")),
            outcome(
                lambda: setattr(
                    PZ(lib).orthogonal(linear(lib), use_trivialization=False), "weight", lib.eye(3)
                )
            ),
            outcome(lambda: setattr(PZ(lib).orthogonal(linear(lib, n=4)), "weight", lib.eye(5))),
        ]

    assert_same(*both(scenario))


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm(dim):
    def scenario(lib):
        m = linear(lib, n=5, m=4)
        x = lib.ones(2, 4)
        before = arr(m(x))
        PZ(lib).weight_norm(m, dim=dim)
        sd = m.state_dict()
        y = m(x)
        y.sum().backward()
        grads = [
            arr(m.parametrizations.weight.original0.grad),
            arr(m.parametrizations.weight.original1.grad),
        ]
        after = arr(m(x))
        P(lib).remove_parametrizations(m, "weight")
        return [
            before,
            after,
            [(k, list(v.shape)) for k, v in sd.items()],
            grads,
            arr(m(x)),
            repr(m),
        ]

    assert_same(*both(scenario))


def test_weight_norm_loads_old_keys():
    def scenario(lib):
        m = linear(lib, n=5, m=4)
        PZ(lib).weight_norm(m)
        old = {"weight_g": lib.ones(5, 1) * 2, "weight_v": lib.ones(5, 4), "bias": lib.zeros(5)}
        m.load_state_dict(old)
        return arr(m.weight)

    assert_same(*both(scenario))


def test_spectral_norm_train_eval_and_buffers():
    def scenario(lib):
        m = linear(lib, n=5, m=4)
        PZ(lib).spectral_norm(m)
        sn = m.parametrizations.weight[0]
        keys = sorted(m.state_dict())
        u0 = arr(sn._u)
        x = lib.ones(2, 4)
        outs = [arr(m(x)) for _ in range(3)]
        u_train = arr(sn._u)
        m.eval()
        e1, e2 = arr(m(x)), arr(m(x))
        u_eval = arr(sn._u)
        m.train()
        y = m(x).sum()
        y.backward()
        g = arr(m.parametrizations.weight.original.grad)
        m.eval()
        before = arr(m(x))
        sn_weight = arr(m.weight)
        P(lib).remove_parametrizations(m, "weight")
        sigma = float(np.linalg.svd(sn_weight, compute_uv=False)[0])  # about 1
        return [keys, u0, outs, u_train, e1, e2, u_eval, g, before, arr(m(x)), round(sigma, 3)]

    assert_same(*both(scenario))


def test_spectral_norm_conv_transpose_dim_and_errors():
    def scenario(lib):
        lib.manual_seed(0)
        c = lib.nn.ConvTranspose2d(3, 4, 2)
        PZ(lib).spectral_norm(c)
        shapes = [
            list(c.parametrizations.weight[0]._u.shape),
            list(c.parametrizations.weight[0]._v.shape),
        ]
        m = linear(lib)
        PZ(lib).spectral_norm(m, "bias")
        return [
            shapes,
            arr(c.weight),
            arr(m.bias),
            list(m.state_dict()),
            outcome(lambda: PZ(lib).spectral_norm(linear(lib), dim=3)),
            outcome(lambda: PZ(lib).spectral_norm(linear(lib), n_power_iterations=0)),
            outcome(lambda: PZ(lib).spectral_norm(linear(lib), "foo")),
        ]

    assert_same(*both(scenario))


def test_spectral_norm_state_dict_reload():
    def scenario(lib):
        a, b = linear(lib, 0, n=5, m=4), linear(lib, 1, n=5, m=4)
        PZ(lib).spectral_norm(a)
        PZ(lib).spectral_norm(b)
        a(lib.ones(1, 4))
        b.load_state_dict(a.state_dict())
        a.eval(), b.eval()
        return [
            arr(a(lib.ones(1, 4))),
            arr(b(lib.ones(1, 4))),
            outcome(lambda: b.load_state_dict({**a.state_dict(), "nonsense": lib.ones(1)}))[0],
        ]

    assert_same(*both(scenario))


# ---------------------------------------------------------------------------------------------
# Training through parametrizations (gradients reach the originals; optimizer trajectories)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("opt", ["SGD", "Adam"])
@pytest.mark.parametrize(
    "which", ["skew", "orthogonal", "weight_norm", "spectral_norm", "rank_one"]
)
def test_optimizer_trajectory(opt, which):
    def scenario(lib):
        k = kit(lib)
        m = linear(lib, seed=3, n=4, m=4)
        if which == "skew":
            P(lib).register_parametrization(m, "weight", k["Skew"]())
            P(lib).register_parametrization(m, "weight", k["Double"]())
        elif which == "orthogonal":
            PZ(lib).orthogonal(m)
        elif which == "weight_norm":
            PZ(lib).weight_norm(m)
        elif which == "spectral_norm":
            PZ(lib).spectral_norm(m)
        else:
            P(lib).register_parametrization(m, "weight", k["Sum"]())
        kw = {"lr": 0.05, "foreach": False}
        if opt == "SGD":
            kw["momentum"] = 0.9
        o = getattr(lib.optim, opt)(m.parameters(), **kw)
        rng = np.random.default_rng(0)
        xs = rng.standard_normal((20, 6, 4)).astype(np.float32)
        traj = []
        for x in xs:
            o.zero_grad()
            loss = (m(lib.tensor(x)) ** 2).mean()
            loss.backward()
            o.step()
            traj.append(float(loss.detach()))
        return [np.array(traj), [arr(p) for p in m.parameters()], arr(m.weight)]

    assert_same(*both(scenario), atol=2e-4)


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
