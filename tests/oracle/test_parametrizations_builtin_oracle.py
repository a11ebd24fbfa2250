"""Oracle: the built-in parametrizations (``orthogonal``, ``weight_norm``, ``spectral_norm``)
and training through them, against PyTorch 2.13 (torch_behaviours.md items 196-199).

Values, gradients reaching the originals, and optimizer trajectories are compared.
"""

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import numpy as np  # noqa: E402

from tests.oracle._parametrize_helpers import PZ, P, arr, assert_same, both, kit, linear, outcome  # noqa: E402

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
