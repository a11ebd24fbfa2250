"""Oracle: first- and second-order gradients of single ops with their own shapes (linear
algebra, nn ops) against PyTorch 2.13, and the name of the node each op records.
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402

import minitorch_nn as mt  # noqa: E402
from tests.oracle._autograd_helpers import as_np, asym_weights, compare_second_order  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Single ops with their own shapes: linear algebra, nn ops, higher order
# ---------------------------------------------------------------------------------------------


def _la(L, name):
    if L is torch:
        return {"solve": torch.linalg.solve, "matrix_exp": torch.linalg.matrix_exp, "qr": torch.linalg.qr,
                "inv": torch.linalg.inv, "det": torch.linalg.det, "eigh": torch.linalg.eigh,
                "svdvals": torch.linalg.svdvals, "svd": torch.linalg.svd}[name]
    a = mt.ops.aten
    return {"solve": a.linalg_solve.default, "matrix_exp": a.linalg_matrix_exp.default, "qr": a.linalg_qr.default,
            "inv": a.linalg_inv.default, "det": a.linalg_det.default, "eigh": a.linalg_eigh.default,
            "svdvals": a.linalg_svdvals.default, "svd": a.linalg_svd.default}[name]


def _well_conditioned(L, a):
    return a + 4 * L.eye(a.shape[-1], dtype=L.float64)


def _qr_sum(L, a):
    q, r = _la(L, "qr")(a)
    return (q * asym_weights(L, q)).sum() + (r * asym_weights(L, r)).sum()


SINGLE = {
    "mm": (lambda L, a, b: a @ b, [(2, 3), (3, 4)]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [(2, 2, 3), (2, 3, 4)]),
    "matmul_broadcast": (lambda L, a, b: a @ b, [(2, 2, 3), (3, 4)]),
    "mv": (lambda L, a, b: a @ b, [(2, 3), (3,)]),
    "dot": (lambda L, a, b: a @ b, [(3,), (3,)]),
    "addmm": (lambda L, a, b, c: L.addmm(a, b, c, beta=0.5, alpha=2), [(4,), (2, 3), (3, 4)]),
    "baddbmm": (lambda L, a, b, c: L.baddbmm(a, b, c, beta=0.5, alpha=2), [(1, 4), (2, 2, 3), (2, 3, 4)]),
    "outer": (lambda L, a, b: L.outer(a, b), [(3,), (2,)]),
    "solve": (lambda L, a, b: _la(L, "solve")(_well_conditioned(L, a), b), [(3, 3), (3, 2)]),
    "solve_vector": (lambda L, a, b: _la(L, "solve")(_well_conditioned(L, a), b), [(3, 3), (3,)]),
    "solve_batched": (lambda L, a, b: _la(L, "solve")(_well_conditioned(L, a), b), [(2, 3, 3), (2, 3, 2)]),
    "matrix_exp": (lambda L, a: _la(L, "matrix_exp")(a), [(3, 3)]),
    "qr": (_qr_sum, [(4, 3)]),
    "qr_square": (_qr_sum, [(3, 3)]),
    "inv": (lambda L, a: _la(L, "inv")(_well_conditioned(L, a)), [(3, 3)]),
    "det": (lambda L, a: _la(L, "det")(a), [(3, 3)]),
    "softmax_dim0": (lambda L, a: L.softmax(a, 0), [(3, 4)]),
    "std": (lambda L, a: a.std(1), [(3, 4)]),
    "var_mean": (lambda L, a: L.var_mean(a, 1)[0] + L.var_mean(a, 1)[1], [(3, 4)]),
    "sort": (lambda L, a: a.sort(1)[0], [(3, 4)]),
    "topk": (lambda L, a: a.topk(2, 1)[0], [(3, 4)]),
    "diagonal": (lambda L, a: a.diagonal(1), [(3, 4)]),
    "diag_embed": (lambda L, a: L.diag_embed(a), [(2, 3)]),
    "triu": (lambda L, a: a.triu(1), [(3, 4)]),
    "lerp": (lambda L, a, b, c: L.lerp(a, b, c), [(3,), (3,), (3,)]),
    "addcmul": (lambda L, a, b, c: L.addcmul(a, b, c, value=0.5), [(3,), (2, 3), (3,)]),
    "addcdiv": (lambda L, a, b, c: L.addcdiv(a, b, c * c + 1, value=0.5), [(3,), (2, 3), (3,)]),
    "erf_atan": (lambda L, a: a.erf() + a.atan() + a.sinh() + a.cosh(), [(5,)]),
    "expm1_log1p": (lambda L, a: a.expm1() + (a * a).log1p() + a.exp2(), [(5,)]),
    "gelu_silu": (lambda L, a: L.ops.aten.gelu.default(a) + L.ops.aten.silu.default(a), [(5,)]),
    "gelu_tanh": (lambda L, a: L.ops.aten.gelu.default(a, approximate="tanh"), [(5,)]),
    "leaky_elu": (lambda L, a: L.ops.aten.leaky_relu.default(a, 0.1) + L.ops.aten.elu.default(a), [(6,)]),
    "softplus": (lambda L, a: L.ops.aten.softplus.default(a, 2, 1), [(6,)]),
    "hardtanh": (lambda L, a: L.ops.aten.hardtanh.default(a, -0.5, 0.5), [(6,)]),
    "pow_tensor": (lambda L, a, b: (a * a + 0.5).pow(b), [(4,), (4,)]),
    "rpow": (lambda L, a: 2 ** a, [(4,)]),
    "min_all": (lambda L, a: a.min() + a.max(), [(4, 3)]),
    "index_put": (lambda L, a, b: L.ops.aten.index_put.default(a, [L.tensor([0, 2])], b, False), [(3, 4), (4,)]),
    "index_put_acc": (lambda L, a, b: L.ops.aten.index_put.default(a, [L.tensor([0, 0])], b, True), [(3, 4), (4,)]),
    "scatter": (lambda L, a, b: a.scatter(1, L.tensor([[0, 2], [1, 3]]), b), [(2, 4), (2, 2)]),
    "scatter_add": (lambda L, a, b: a.scatter_add(1, L.tensor([[0, 0], [1, 3]]), b), [(2, 4), (2, 2)]),
    "index_add": (lambda L, a, b: a.index_add(0, L.tensor([1, 1]), b, alpha=2), [(3, 4), (2, 4)]),
    "masked_select": (lambda L, a: a.masked_select(a > 0), [(3, 4)]),
    "roll_pad": (lambda L, a: L.ops.aten.constant_pad_nd.default(a.roll(1, 0), [1, 2]), [(3, 4)]),
    "mse": (lambda L, a, b: L.ops.aten.mse_loss.default(a, b), [(3, 4), (3, 4)]),
    "bce_logits": (lambda L, a, b: L.ops.aten.binary_cross_entropy_with_logits.default(a, b.sigmoid()), [(3, 4), (3, 4)]),
    "as_strided": (lambda L, a: a.as_strided((2, 2), (1, 3), 1), [(3, 4)]),
    "to_float32": (lambda L, a: a.float().double() * 2, [(3,)]),
    "cumprod": (lambda L, a: (a.tanh() + 2).cumprod(1), [(3, 4)]),
    "unfold": (lambda L, a: a.unfold(1, 3, 2), [(2, 7)]),
    "eigh": (lambda L, a: _eigh(L, a), [(3, 3)]),
    "svdvals": (lambda L, a: _la(L, "svdvals")(a), [(4, 3)]),
    "svd_values_only": (lambda L, a: _la(L, "svd")(a, full_matrices=False)[1], [(3, 4)]),
    "svd_tall": (lambda L, a: _svd_invariant(L, a, False), [(4, 3)]),
    "svd_wide": (lambda L, a: _svd_invariant(L, a, False), [(3, 5)]),
    "svd_batched": (lambda L, a: _svd_invariant(L, a, False), [(2, 3, 3)]),
    "svd_full": (lambda L, a: _svd_invariant(L, a, True), [(4, 3)]),
}


def _svd_invariant(L, a, full):
    # Singular vectors are defined up to sign: squares do not depend on it.
    u, s, vh = _la(L, "svd")(a, full_matrices=full)
    return L.cat([(u * u).reshape(-1), (vh * vh).reshape(-1), s.reshape(-1)])


def _eigh(L, a):
    lam, v = _la(L, "eigh")(a + a.transpose(-1, -2))
    v = v * v[..., :1, :].sign()     # eigenvectors are defined up to sign: fix it
    return v + 0.3 * lam


def _grads(L, fn, arrays, create_graph=False):
    xs = [L.tensor(a, dtype=L.float64, requires_grad=True) for a in arrays]
    out = fn(L, *xs)
    loss = (out * asym_weights(L, out)).sum()
    grads = (L.autograd.grad(loss, xs, create_graph=create_graph, allow_unused=True))
    return xs, out, grads


@pytest.mark.parametrize("name", sorted(SINGLE))
def test_single_op_gradients_and_second_order(name):
    fn, shapes = SINGLE[name]
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    arrays = [rng.standard_normal(s) for s in shapes]
    txs, tout, tg = _grads(torch, fn, arrays, create_graph=True)
    mxs, mout, mg = _grads(mt, fn, arrays, create_graph=True)
    np.testing.assert_allclose(as_np(mout), as_np(tout), rtol=1e-7, atol=1e-9)
    assert type(mout.grad_fn).__name__ == type(tout.grad_fn).__name__ or name in _DECOMPOSED_IN_TORCH
    for a, b in zip(tg, mg):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(as_np(b), as_np(a), rtol=1e-6, atol=1e-9)
    if name in _NO_SECOND_ORDER:
        return
    compare_second_order(txs, tg, mxs, mg, name)


# torch implements these as compositions, so the last node has another name.
_DECOMPOSED_IN_TORCH = {"outer", "matmul_broadcast", "gelu_silu", "leaky_elu", "var_mean", "min_all", "mse",
                        "bce_logits", "roll_pad", "to_float32", "rpow", "lerp", "masked_select", "erf_atan",
                        "expm1_log1p", "solve", "solve_vector", "solve_batched", "inv", "qr", "qr_square", "eigh",
                        "svd_values_only", "svd_tall", "svd_wide", "svd_batched", "svd_full"}
# Ops whose second derivative is not compared (none at the moment).
_NO_SECOND_ORDER: set = set()   # every op here is differentiated twice, like torch
