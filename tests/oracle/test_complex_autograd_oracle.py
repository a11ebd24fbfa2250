"""Oracle: autograd with complex tensors against PyTorch 2.13 (the conjugate Wirtinger convention),
gradcheck/gradgradcheck and forward-mode AD with complex inputs, ``Module.to(complex64)``, the
``orthogonal``/``spectral_norm`` parametrizations and linalg with complex weights, and the optimizers
updating complex parameters. Helpers: ``_complex_helpers.py``; the other complex behaviours:
``test_complex_oracle.py``.
"""

import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
from hypothesis import given  # noqa: E402

import minitorch_nn as mt  # noqa: E402
from tests.oracle._complex_helpers import (  # noqa: E402
    COMPLEX,
    SETTINGS,
    both,
    check,
    complex_specs,
    complex_values,
    run,
    same_error,
)
from tests.strategies import LAYOUTS, build  # noqa: E402

# -- 5. autograd: PyTorch's conjugate Wirtinger convention --------------------------------------------

Z = [1 + 2j, -0.5 + 0.25j, 0.75 - 1.5j]
W = [0.5 - 1j, 2 + 0.3j, -1 + 1j]
R = [1.5, -2.0, 0.5]
POS = [1.5, 2.0, 0.5]


def _loss(y):
    return (y.abs() ** 2).sum() if y.is_complex() else (y * y).sum()


GRAD_CASES = {
    "mul": (lambda lib, a, b: a * b, (Z, W)),
    "mul_real": (lambda lib, a, b: a * b, (Z, R)),
    "div": (lambda lib, a, b: a / b, (Z, W)),
    "add_sub": (lambda lib, a, b: a + 2 * b - a * 1j, (Z, W)),
    "exp": (lambda lib, a: a.exp(), (Z,)),
    "log": (lambda lib, a: a.log(), (Z,)),
    "sqrt": (lambda lib, a: a.sqrt(), (Z,)),
    "rsqrt": (lambda lib, a: a.rsqrt(), (Z,)),
    "sin": (lambda lib, a: a.sin(), (Z,)),
    "cos": (lambda lib, a: a.cos(), (Z,)),
    "tan": (lambda lib, a: a.tan(), (Z,)),
    "tanh": (lambda lib, a: a.tanh(), (Z,)),
    "sigmoid": (lambda lib, a: a.sigmoid(), (Z,)),
    "sinh_cosh": (lambda lib, a: a.sinh() + a.cosh(), (Z,)),
    "reciprocal": (lambda lib, a: a.reciprocal(), (Z,)),
    "pow_int": (lambda lib, a: a.pow(3), (Z,)),
    "pow_complex_scalar": (lambda lib, a: a ** (0.5 + 1j), (Z,)),
    "pow_tensor": (lambda lib, a, b: a ** b, (Z, W)),
    "square": (lambda lib, a: a.square(), (Z,)),
    "neg": (lambda lib, a: -a, (Z,)),
    "abs": (lambda lib, a: a.abs(), (Z,)),
    "angle": (lambda lib, a: a.angle(), (Z,)),
    "sgn": (lambda lib, a: a.sgn() * lib.tensor([1j, 2, -1]), (Z,)),
    "real_imag": (lambda lib, a: a.real * 3 + a.imag ** 2, (Z,)),
    "conj": (lambda lib, a: a.conj() * lib.tensor([1j, 2, 1 - 1j]), (Z,)),
    "conj_physical": (lambda lib, a: lib.conj_physical(a) * 1j, (Z,)),
    "sum_mean": (lambda lib, a: a.sum() + a.mean() * 1j, (Z,)),
    "prod": (lambda lib, a: a.prod(), (Z,)),
    "cumsum_cumprod": (lambda lib, a: a.cumsum(0) + a.cumprod(0), (Z,)),
    "var_std": (lambda lib, a: a.var() + a.std(), (Z,)),
    "norm": (lambda lib, a: lib.linalg.vector_norm(a), (Z,)),
    "mm": (lambda lib, a, b: a.reshape(3, 1) @ b.reshape(1, 3), (Z, W)),
    "mm_real": (lambda lib, a, b: a.reshape(3, 1) @ b.reshape(1, 3), (Z, R)),
    "bmm": (lambda lib, a, b: lib.bmm(a.reshape(1, 3, 1), b.reshape(1, 1, 3)), (Z, W)),
    "dot_vdot": (lambda lib, a, b: lib.dot(a, b) + lib.vdot(a, b), (Z, W)),
    "mv": (lambda lib, a, b: lib.mv(a.reshape(3, 1) @ b.reshape(1, 3), b), (Z, W)),
    "linear": (lambda lib, a, b: lib.nn.functional.linear(a.reshape(1, 3), b.reshape(1, 3), a[:1]), (Z, W)),
    "lerp": (lambda lib, a, b: lib.lerp(a, b, 0.3), (Z, W)),
    "view_as_real": (lambda lib, a: lib.view_as_real(a) ** 3, (Z,)),
    "view_as_complex": (lambda lib, a: lib.view_as_complex(a.reshape(3, 1).expand(3, 2).contiguous()) * (1 + 1j), (R,)),
    "polar": (lambda lib, a, b: lib.polar(a, b) * (2 - 1j), (POS, R)),
    "complex": (lambda lib, a, b: lib.complex(a, b) ** 2, (R, POS)),
    "real_to_complex": (lambda lib, a: a * (1 + 2j), (R,)),
    "expand_views": (lambda lib, a: a.reshape(3, 1).expand(3, 2).t() * 1j, (Z,)),
    "masked_fill": (lambda lib, a: a.clone().masked_fill(lib.tensor([False, True, False]), 2j) * a, (Z,)),
    "where": (lambda lib, a, b: lib.where(lib.tensor([True, False, True]), a, b) * a, (Z, W)),
}


@pytest.mark.parametrize("name", GRAD_CASES)
@pytest.mark.parametrize("dtype", COMPLEX)
def test_gradients_match_torch(name, dtype):
    fn, values = GRAD_CASES[name]

    def run_case(lib):
        leaves = []
        for v in values:
            d = getattr(lib, dtype) if any(isinstance(e, complex) for e in v) else getattr(lib, dtype).to_real()
            leaves.append(lib.tensor(v, dtype=d, requires_grad=True))
        out = fn(lib, *leaves)
        _loss(out).backward()
        return [x.grad for x in leaves] + [type(out.grad_fn).__name__ if name in ("exp", "angle", "sgn", "polar",
                                                                                  "complex", "view_as_real") else ""]

    t, m = run(run_case)
    if isinstance(t, Exception):
        same_error(t, m)
        return
    check(t[:-1], m[:-1], rtol=1e-4 if dtype == "complex64" else 1e-10, atol=1e-5 if dtype == "complex64" else 1e-10)
    assert m[-1] == t[-1]


def test_backward_errors_for_complex_outputs():
    same_error(*run(lambda lib: lib.tensor([1j], requires_grad=True).sum().backward()))
    same_error(*run(lambda lib: (lib.tensor([1j], requires_grad=True) * 2).backward(lib.tensor([1.0]))))
    both(lambda lib: _grad_with(lib, lib.tensor([1 - 1j])))


def _grad_with(lib, g):
    x = lib.tensor([1 + 2j], requires_grad=True)
    (x * (2 + 1j)).backward(g)
    return x.grad


GRADCHECK = {
    "mul": (lambda a, b: a * b, "zw"),
    "div": (lambda a, b: a / b, "zw"),
    "exp_log": (lambda a: a.exp() + a.log(), "z"),
    "abs": (lambda a: a.abs(), "z"),
    "angle": (lambda a: a.angle(), "z"),
    "sgn": (lambda a: a.sgn(), "z"),
    "polar": (lambda a, b: mt.polar(a, b), "pr"),
    "complex": (lambda a, b: mt.complex(a, b), "rr"),
    "real_imag": (lambda a: a.real * 2 + a.imag, "z"),
    "var": (lambda a: a.var(), "z"),
    "mm": (lambda a, b: a.reshape(3, 1) @ b.reshape(1, 3), "zw"),
    "real_times_complex": (lambda a, b: a * b, "rz"),
    "conj": (lambda a: a.conj() * 2j, "z"),
    "pow": (lambda a: a ** (1.5 - 0.5j), "z"),
    "tanh_sigmoid": (lambda a: a.tanh() + a.sigmoid(), "z"),
    "view_as_real": (lambda a: mt.view_as_real(a), "z"),
    "prod_cumprod": (lambda a: a.prod() + a.cumprod(0).sum(), "z"),
    "norm": (lambda a: mt.linalg.vector_norm(a), "z"),
    "sqrt_sin_reciprocal": (lambda a: a.sqrt() + a.sin() + a.reciprocal(), "z"),
}


def _gradcheck_inputs(kinds, seed):
    rng = np.random.default_rng(seed)
    out = []
    for k in kinds:
        if k in "zw":
            v = rng.uniform(0.2, 2, 3) * np.exp(1j * rng.uniform(-3, 3, 3))
            out.append(mt.tensor(v.tolist(), dtype=mt.complex128, requires_grad=True))
        else:
            v = rng.uniform(0.2, 2, 3) * (1 if k == "p" else rng.choice([-1, 1], 3))
            out.append(mt.tensor(v.tolist(), dtype=mt.float64, requires_grad=True))
    return out


@pytest.mark.parametrize("name", GRADCHECK)
@pytest.mark.parametrize("seed", [0, 1])
def test_gradcheck_complex(name, seed):
    from minitorch_nn.autograd import gradcheck

    fn, kinds = GRADCHECK[name]
    assert gradcheck(fn, tuple(_gradcheck_inputs(kinds, seed)))


def test_gradcheck_catches_a_gradient_without_the_conjugate():
    from minitorch_nn.autograd import Function, gradcheck

    class SquareWithoutConj(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x  # PyTorch's convention wants g * conj(2x)

    class SquareWithConj(SquareWithoutConj):
        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (2 * x).conj()

    (z,) = _gradcheck_inputs("z", 3)
    assert gradcheck(SquareWithoutConj.apply, (z,), raise_exception=False) is False
    assert gradcheck(SquareWithConj.apply, (z,))
    from minitorch_nn.autograd.gradcheck import GradcheckError

    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(SquareWithoutConj.apply, (z,))


def test_gradcheck_agrees_with_torch_on_negative_polar_abs():
    # polar's abs gradient assumes abs >= 0 (it uses sgn(result)) in both libraries
    from minitorch_nn.autograd import gradcheck

    r, s = [1.5, -2.0], [0.3, 2.1]
    t = torch.autograd.gradcheck(torch.polar, (torch.tensor(r, dtype=torch.float64, requires_grad=True),
                                               torch.tensor(s, dtype=torch.float64, requires_grad=True)),
                                 raise_exception=False)
    m = gradcheck(mt.polar, (mt.tensor(r, dtype=mt.float64, requires_grad=True),
                             mt.tensor(s, dtype=mt.float64, requires_grad=True)), raise_exception=False)
    assert m == t is False


@pytest.mark.parametrize("name", ["mul", "exp_log", "abs", "mm"])
def test_gradgradcheck_complex(name):
    from minitorch_nn.autograd import gradgradcheck

    fn, kinds = GRADCHECK[name]
    mt.manual_seed(0)
    assert gradgradcheck(fn, tuple(_gradcheck_inputs(kinds, 5)))


@given(spec=complex_specs(min_dims=1, max_dims=2, dtypes=("complex128",)))
@SETTINGS
def test_gradients_over_layouts(spec):
    def fn(lib):
        x = build(lib, spec).detach().requires_grad_()
        y = (x * x.conj().exp()).sum(-1) / (x.abs() + 1).sum()
        (y.abs() ** 2).sum().backward()
        return x.grad

    both(fn, rtol=1e-9, atol=1e-12)


# -- forward-mode AD -------------------------------------------------------------------------------------

JVP_CASES = {
    "mul_scalar": lambda lib, x: x * (2 - 1j),
    "exp": lambda lib, x: x.exp(),
    "abs": lambda lib, x: x.abs(),
    "conj": lambda lib, x: x.conj(),
    "real_imag": lambda lib, x: x.real + 2 * x.imag,
    "sin": lambda lib, x: x.sin(),
    "sum": lambda lib, x: x.sum(),
    "angle": lambda lib, x: x.angle(),
    "view_as_real": lambda lib, x: lib.view_as_real(x),
    "reciprocal": lambda lib, x: 1 / x,
    "sgn": lambda lib, x: x.sgn(),
    "polar": lambda lib, x: lib.polar(x.abs(), x.angle()),
    "complex": lambda lib, x: lib.complex(x.real * 2, x.imag),
    "mm": lambda lib, x: x.reshape(2, 1) @ x.reshape(1, 2),
}


@pytest.mark.parametrize("name", JVP_CASES)
def test_forward_ad_with_complex(name):
    def fn(lib):
        z = lib.tensor([1 + 2j, -0.5 + 0.25j], dtype=lib.complex128)
        v = lib.tensor([0.3 - 1j, 1 + 0j], dtype=lib.complex128)
        with lib.autograd.forward_ad.dual_level():
            out = JVP_CASES[name](lib, lib.autograd.forward_ad.make_dual(z, v))
            return lib.autograd.forward_ad.unpack_dual(out).tangent

    both(fn, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["mul", "exp_log", "abs", "angle", "sgn", "polar", "complex", "real_imag", "conj"])
def test_gradcheck_forward_ad_complex(name):
    from minitorch_nn.autograd import gradcheck

    fn, kinds = GRADCHECK[name]
    assert gradcheck(fn, tuple(_gradcheck_inputs(kinds, 2)), check_forward_ad=True)


# -- 6. modules --------------------------------------------------------------------------------------


def _module_scenario(lib, make, dtype_name):
    lib.manual_seed(0)
    module = make(lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        returned = module.to(getattr(lib, dtype_name))
    messages = [str(w.message) for w in caught]
    state = {k: str(v.dtype) for k, v in module.state_dict().items()}
    kinds = sorted({type(p).__name__ for p in module.parameters()})
    return returned is module, messages, state, kinds, [p.detach().clone() for p in module.parameters()]


@pytest.mark.parametrize("dtype_name", ["complex64", "cdouble"])
@pytest.mark.parametrize("make", [lambda lib: lib.nn.Linear(3, 2), lambda lib: lib.nn.BatchNorm1d(2),
                                  lambda lib: lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Tanh())])
def test_module_to_complex_warns_and_converts(make, dtype_name):
    t, m = run(lambda lib: _module_scenario(lib, make, dtype_name))
    assert m[:4] == t[:4]
    assert m[1] and "Complex modules are a new feature under active development" in m[1][0]
    check(t[4], m[4], exact=True)


def test_complex_linear_forward_backward():
    def fn(lib):
        lib.manual_seed(0)
        layer = lib.nn.Linear(3, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer.to(lib.complex64)
        x = lib.randn(4, 3, dtype=lib.complex64)
        y = layer(x)
        (y.abs() ** 2).sum().backward()
        return y, layer.weight.grad, layer.bias.grad, repr(layer.weight)

    t, m = run(fn)
    check(list(t[:3]), list(m[:3]), rtol=1e-5, atol=1e-5)
    assert m[3] == t[3]


def test_module_to_integer_is_still_refused():
    same_error(*run(lambda lib: lib.nn.Linear(2, 2).to(lib.int64)))


def test_complex_parameters_and_state_dict_round_trip():
    def fn(lib):
        p = lib.nn.Parameter(lib.tensor([1j, 2 - 1j]))
        layer = lib.nn.Linear(2, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer.to(lib.complex128)
            other = lib.nn.Linear(2, 1).to(lib.complex128)
        result = layer.load_state_dict(other.state_dict())
        return repr(p), str(result), layer.weight.dtype == lib.complex128, lib.equal(layer.weight, other.weight)

    t, m = run(fn)
    assert m == t


# -- 7. parametrizations with complex weights -----------------------------------------------------------


def _orthogonal_scenario(lib, orthogonal_map, shape, use_trivialization, dtype_name):
    from importlib import import_module

    parametrizations = import_module(lib.__name__ + ".nn.utils.parametrizations")
    dtype = getattr(lib, dtype_name)
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = lib.nn.Linear(shape[1], shape[0], bias=False).to(dtype)
    with lib.no_grad():
        layer.weight.copy_(lib.randn(*shape, dtype=dtype))
    parametrizations.orthogonal(layer, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    x = lib.randn(2, shape[1], dtype=dtype)
    y = layer(x)
    (y.abs() ** 2 * lib.arange(shape[0])).sum().backward()
    w = layer.weight
    gram = w.mH @ w if shape[0] >= shape[1] else w @ w.mH
    return w, layer.parametrizations.weight.original.grad, gram


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", None])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
@pytest.mark.parametrize("use_trivialization", [True, False])
@pytest.mark.parametrize("dtype_name", COMPLEX)
def test_orthogonal_with_complex_weights(orthogonal_map, shape, use_trivialization, dtype_name):
    t, m = run(lambda lib: _orthogonal_scenario(lib, orthogonal_map, shape, use_trivialization, dtype_name))
    tol = 1e-4 if dtype_name == "complex64" else 1e-9
    check(list(t), list(m), rtol=tol, atol=tol)
    eye = np.eye(m[2].shape[0])
    np.testing.assert_allclose(m[2].detach().numpy(), eye, atol=tol)  # unitary


def test_orthogonal_householder_refuses_complex():
    t, m = run(lambda lib: _orthogonal_scenario(lib, "householder", (3, 3), True, "complex64"))
    same_error(t, m)


@pytest.mark.parametrize("dtype_name", COMPLEX)
def test_spectral_norm_with_complex_weights(dtype_name):
    def fn(lib):
        from importlib import import_module

        parametrizations = import_module(lib.__name__ + ".nn.utils.parametrizations")
        dtype = getattr(lib, dtype_name)
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer = lib.nn.Linear(3, 2).to(dtype)
        with lib.no_grad():
            layer.weight.copy_(lib.randn(2, 3, dtype=dtype))
        parametrizations.spectral_norm(layer)
        x = lib.randn(4, 3, dtype=dtype)
        (layer(x).abs() ** 2).sum().backward()
        layer.eval()
        sn = layer.parametrizations.weight[0]
        return layer.weight, layer.parametrizations.weight.original.grad, sn._u, sn._v, lib.linalg.svdvals(layer.weight)

    t, m = run(fn)
    tol = 1e-4 if dtype_name == "complex64" else 1e-9
    check(list(t), list(m), rtol=tol, atol=tol)


LINALG = {
    "matrix_exp": lambda lib, a: lib.linalg.matrix_exp(a),
    "qr": lambda lib, a: lib.linalg.qr(a),
    "solve": lambda lib, a: lib.linalg.solve(a, a[:, :1] * 1j),
    "inv": lambda lib, a: lib.linalg.inv(a),
    "det": lambda lib, a: lib.linalg.det(a),
    "svdvals": lambda lib, a: lib.linalg.svdvals(a),
    "mH_tril": lambda lib, a: a.mH.tril(),
    "householder_product": lambda lib, a: lib.linalg.householder_product(a, a[0, :2]),
}


@pytest.mark.parametrize("name", LINALG)
@given(spec=complex_specs(shape=(3, 3), dtypes=("complex128",),
                          layouts=tuple(x for x in LAYOUTS if x != "expanded")))  # (expanded: singular)
@SETTINGS
def test_linalg_with_complex(name, spec):
    both(lambda lib: LINALG[name](lib, build(lib, spec)), rtol=1e-8, atol=1e-10)


LINALG_GRADS = {
    "matrix_exp": lambda lib, a, b: lib.linalg.matrix_exp(a * 0.3),
    "solve_left": lambda lib, a, b: lib.linalg.solve(a, b),
    "solve_right": lambda lib, a, b: lib.linalg.solve(a, b, left=False),
    "solve_vector": lambda lib, a, b: lib.linalg.solve(a, b[:, 0]),
    "inv": lambda lib, a, b: lib.linalg.inv(a) @ b,
    "det": lambda lib, a, b: lib.linalg.det(a) * b,
}


@pytest.mark.parametrize("name", LINALG_GRADS)
def test_linalg_gradients_with_complex(name):
    rng = np.random.default_rng(11)
    a = complex_values(rng, (3, 3), "complex128") + 3 * np.eye(3)
    b = complex_values(rng, (3, 3), "complex128")

    def fn(lib):
        x = lib.from_numpy(a.copy()).requires_grad_()
        y = lib.from_numpy(b.copy()).requires_grad_()
        _loss(LINALG_GRADS[name](lib, x, y)).backward()
        return x.grad, y.grad

    both(fn, rtol=1e-9, atol=1e-10)
    from minitorch_nn.autograd import gradcheck

    x = mt.from_numpy(a.copy()).requires_grad_()
    y = mt.from_numpy(b.copy()).requires_grad_()
    assert gradcheck(lambda p, q: LINALG_GRADS[name](mt, p, q), (x, y))


# -- optimizers with complex parameters ------------------------------------------------------------------

OPTIMIZERS = {
    "SGD": ("SGD", dict(lr=0.1)),
    "SGD_nesterov": ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    "Adam": ("Adam", dict(lr=0.1)),
    "Adam_amsgrad": ("Adam", dict(lr=0.1, amsgrad=True, weight_decay=0.1, maximize=True)),
    "AdamW": ("AdamW", dict(lr=0.1, weight_decay=0.1)),
    "RMSprop": ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
    "RMSprop_plain": ("RMSprop", dict(lr=0.01)),
    "Adagrad": ("Adagrad", dict(lr=0.1, weight_decay=0.1)),
    "Adadelta": ("Adadelta", dict(lr=0.5, weight_decay=0.1)),
    "Adamax": ("Adamax", dict(lr=0.1)),
    "ASGD": ("ASGD", dict(lr=0.1, t0=1)),
    "NAdam": ("NAdam", dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)),
    "RAdam": ("RAdam", dict(lr=0.1)),
    "Rprop": ("Rprop", dict(lr=0.1)),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
@pytest.mark.parametrize("dtype", COMPLEX)
def test_optimizers_update_complex_parameters_as_torch(name, dtype):
    cls_name, kwargs = OPTIMIZERS[name]

    def fn(lib):
        d = getattr(lib, dtype)
        p = lib.nn.Parameter(lib.tensor([[1 + 2j, -0.5 + 0.3j], [0.25j, 2]], dtype=d))
        opt = getattr(lib.optim, cls_name)([p], **kwargs)
        history = []
        for i in range(4):
            p.grad = lib.tensor([[0.3 - 1j, 2 + 0.5j], [-1j, 0.5]], dtype=d) * (i + 1)
            opt.step()
            history.append(p.detach().clone())
        return history

    t, m = run(fn)
    tol = 1e-5 if dtype == "complex64" else 1e-12
    check(t, m, rtol=tol, atol=tol)


NN_CASES = {
    "conv1d": lambda lib, x, w: lib.nn.functional.conv1d(x, w),
    "conv2d": lambda lib, x, w: lib.nn.functional.conv2d(x.unsqueeze(-1), w.unsqueeze(-1), padding=(1, 0)),
    "l1_loss": lambda lib, x, w: lib.nn.functional.l1_loss(x, x * 2),
    "flatten_tanh": lambda lib, x, w: lib.nn.Tanh()(lib.nn.Flatten()(x)),
    "mse_refused": lambda lib, x, w: lib.nn.functional.mse_loss(x, x * 2),
    "layer_norm_refused": lambda lib, x, w: lib.nn.functional.layer_norm(x, (5,)),
    "batch_norm_refused": lambda lib, x, w: lib.nn.functional.batch_norm(x, None, None, training=True),
    "avg_pool_refused": lambda lib, x, w: lib.nn.functional.avg_pool2d(x.unsqueeze(-1), (2, 1)),
    "max_pool_refused": lambda lib, x, w: lib.nn.functional.max_pool2d(x.unsqueeze(-1), (2, 1)),
    "dropout_refused": lambda lib, x, w: lib.nn.functional.dropout(x, 0.5),
}


# (not here: embedding, whose complex gradient PyTorch refuses from its list of ops with complex
# autograd support; minitorch_nn has no such list and differentiates it)
@pytest.mark.parametrize("name", NN_CASES)
def test_nn_functional_with_complex(name):
    def fn(lib):
        lib.manual_seed(0)
        x = lib.randn(1, 2, 5, dtype=lib.complex64, requires_grad=True)
        w = lib.randn(3, 2, 2, dtype=lib.complex64, requires_grad=True)
        y = NN_CASES[name](lib, x, w)
        (y.abs() ** 2).sum().backward()
        return y, x.grad, w.grad

    both(fn, rtol=1e-4, atol=1e-5)
