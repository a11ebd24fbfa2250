"""Unit tests for ``nn.utils.parametrize``/``parametrizations`` that need no PyTorch.

The behaviours shared with PyTorch are compared against it in
``tests/oracle/test_parametriz*_oracle.py``; here: our additions (``CacheStats``,
``describe_parametrizations``, the pickling hint), the ``set_`` kernel the module relies on,
gradients of the parametrizations by finite differences, and invariants (orthogonality, spectral
norm about 1, failed registrations leave the module untouched).
"""

import copy
import pickle

import numpy as np
import pytest

import minitorch_nn as torch
import minitorch_nn.nn as nn
import minitorch_nn.nn.utils.parametrize as P
from minitorch_nn.nn.utils import parametrizations as PZ


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu(1)


class Double(nn.Module):
    def forward(self, X):
        return X * 2

    def right_inverse(self, X):
        return X / 2


def _linear(seed=0, n=3, m=3):
    torch.manual_seed(seed)
    return nn.Linear(m, n)


# -- Tensor.set_ (the kernel parametrize relies on) ---------------------------------------------


def test_set_shares_storage_keeps_object_and_bumps_version():
    p = nn.Parameter(torch.zeros(2, 2))
    src = torch.arange(6.0).reshape(2, 3)
    v = p._version
    with torch.no_grad():
        out = p.set_(src)
    assert out is p and isinstance(p, nn.Parameter)
    assert p.shape == (2, 3) and p._version == v + 1
    src.add_(1)  # a write through one is seen by the other
    assert np.array_equal(p.detach().numpy(), src.numpy())


def test_set_refuses_another_dtype():
    with pytest.raises(RuntimeError, match="Could not set tensor of type"):
        torch.zeros(2).set_(torch.zeros(2, dtype=torch.float64))


# -- registration -----------------------------------------------------------------------------


def test_registration_keeps_the_parameter_object_and_optimizer_reference():
    m = _linear()
    w = m.weight
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    P.register_parametrization(m, "weight", Skew())
    assert m.parametrizations.weight.original is w
    assert any(p is w for p in opt.param_groups[0]["params"])
    A = m.weight
    assert torch.equal(A, -A.T)
    A.sum().backward()
    opt.step()
    assert torch.equal(m.weight, -m.weight.T)


def test_failed_registration_leaves_module_untouched():
    m = _linear()
    w = m.weight

    class Resize(nn.Module):
        def forward(self, X):
            return X[[0]]

    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(m, "weight", Resize())
    assert type(m) is nn.Linear and m.weight is w and not P.is_parametrized(m)


def test_each_instance_gets_its_own_class_and_loses_it_on_removal():
    a, b = _linear(), _linear()
    P.register_parametrization(a, "weight", Skew())
    P.register_parametrization(b, "weight", Skew())
    assert type(a).__name__ == type(b).__name__ == "ParametrizedLinear"
    assert type(a) is not type(b)
    assert P.type_before_parametrizations(a) is nn.Linear
    P.remove_parametrizations(a, "weight")
    assert type(a) is nn.Linear and not hasattr(a, "parametrizations")
    assert list(dict(a.named_parameters())) == ["bias", "weight"]  # moved to the end


def test_leave_parametrized_false_gives_right_inverse_of_initial():
    m = _linear()
    w0 = m.weight.detach().clone()
    P.register_parametrization(m, "weight", Skew())
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    assert torch.equal(m.weight.detach(), w0.triu(1))


# -- caching and our counters -------------------------------------------------------------------


def test_cache_stats_count_nested_blocks_and_clear_on_exit():
    m = _linear()
    P.register_parametrization(m, "weight", Double())
    P.register_parametrization(m, "bias", Double())
    with P.cached() as outer:
        first = m.weight
        with P.cached() as inner:
            assert m.weight is first
            _ = m.bias, m.bias
        assert m.weight is first
    assert (outer.computed, outer.saved) == (2, 3)
    assert (inner.computed, inner.saved) == (1, 2)
    assert m.weight is not first  # cleared when the outermost block exits
    assert repr(outer) == "CacheStats(computed=2, saved=3)"


def test_cache_cleared_even_when_block_raises():
    m = _linear()
    P.register_parametrization(m, "weight", Double())
    with pytest.raises(KeyError), P.cached():
        w = m.weight
        raise KeyError
    assert P._cache == {} and P._cache_enabled == 0
    assert m.weight is not w


def test_describe_parametrizations():
    model = nn.Sequential(_linear(), nn.ReLU(), _linear(n=4, m=3))
    P.register_parametrization(model[0], "weight", Skew())
    P.register_parametrization(model[0], "weight", Double())
    PZ.spectral_norm(model[2])
    text = P.describe_parametrizations(model)
    assert "0.weight: original (Parameter [3, 3]) -> Skew -> Double -> weight [3, 3]" in text
    assert "2.weight: original (Parameter [4, 3]) -> _SpectralNorm -> weight [4, 3]" in text
    assert "2.parametrizations.weight.0 has buffers _u [4], _v [3] (training)" in text
    assert P.describe_parametrizations(nn.ReLU()) == "ReLU has no parametrized tensors"
    wn = PZ.weight_norm(_linear(n=5, m=2))
    assert (
        "original0 (Parameter [5, 1]), original1 (Parameter [5, 2]) -> _WeightNorm"
        in P.describe_parametrizations(wn)
    )


# -- serialization --------------------------------------------------------------------------


def test_pickle_refusal_has_pytorch_message_then_hint_and_deepcopy_is_independent():
    m = _linear()
    P.register_parametrization(m, "weight", Skew())
    with pytest.raises(RuntimeError) as info:
        pickle.dumps(m)
    msg = str(info.value)
    assert msg.startswith(
        "Serialization of parametrized modules is only supported through state_dict()"
    )
    assert "\nHint:" in msg
    c = copy.deepcopy(m)
    with torch.no_grad():
        c.parametrizations.weight.original.add_(1)
    assert not torch.equal(c.weight, m.weight)


def test_state_dict_keys_and_reload():
    a, b = _linear(0), _linear(1)
    for m in (a, b):
        P.register_parametrization(m, "weight", Skew())
    assert list(a.state_dict()) == ["bias", "parametrizations.weight.original"]
    b.load_state_dict(a.state_dict())
    assert torch.equal(a.weight, b.weight)


# -- the built-in parametrizations ------------------------------------------------------------


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_is_orthogonal(omap, shape):
    m = PZ.orthogonal(_linear(n=shape[0], m=shape[1]), orthogonal_map=omap)
    W = m.weight.detach().numpy().astype(np.float64)
    G = W.T @ W if shape[0] >= shape[1] else W @ W.T
    np.testing.assert_allclose(G, np.eye(min(shape)), atol=1e-5)


def test_orthogonal_gradcheck_in_double():
    for omap in ("matrix_exp", "cayley", "householder"):
        torch.manual_seed(0)
        orth = PZ._Orthogonal(torch.zeros(4, 3), PZ._OrthMaps[omap], use_trivialization=False)
        X = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(orth, (X,))


def test_householder_product_gradcheck():
    A = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    tau = torch.rand(3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(torch.linalg.householder_product, (A, tau))


def test_spectral_norm_sigma_about_one_and_eval_is_frozen():
    m = PZ.spectral_norm(_linear(n=6, m=4), n_power_iterations=5)
    for _ in range(10):
        _ = m.weight  # each read in training mode runs power iteration
    sigma = np.linalg.svd(m.weight.detach().numpy(), compute_uv=False)[0]
    assert abs(sigma - 1) < 1e-3
    m.eval()
    u = m.parametrizations.weight[0]._u.clone()
    w1, w2 = m.weight, m.weight
    assert torch.equal(w1, w2) and torch.equal(u, m.parametrizations.weight[0]._u)


def test_weight_norm_keeps_output_and_splits_magnitude():
    m = _linear(n=5, m=4)
    x = torch.randn(2, 4)
    y0 = m(x)
    PZ.weight_norm(m)
    g = m.parametrizations.weight.original0
    assert g.shape == (5, 1)
    assert torch.allclose(m(x), y0, atol=1e-6)
    with torch.no_grad():
        g.mul_(2)
    assert torch.allclose(m.weight.norm(dim=1, keepdim=True), g, atol=1e-5)
