"""Oracle: the parametrization tutorial and docstring scripts print what PyTorch 2.13 prints.

Each script is run with ``torch`` and with ``minitorch_nn`` and the printed output compared.
"""

import contextlib
import io

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)


import minitorch_nn as mt  # noqa: E402

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
