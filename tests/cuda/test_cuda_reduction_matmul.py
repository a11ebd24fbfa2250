"""Reductions (reduction.py) and matrix products (matmul.py) against the cpu backend."""

import pytest

import minitorch_nn as mt
from minitorch_nn.backends.cuda import reduction
from tests.cuda._helpers import assert_same

A = mt.randn(2, 3, 5)


@pytest.mark.parametrize("dim", [None, 0, 1, 2, -1, (0, 2), (1, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_mean_over_any_dims(dim, keepdim):
    if dim is None and not keepdim:
        assert_same(A.cuda().sum(), A.sum())
        assert_same(A.cuda().mean(), A.mean())
        return
    assert_same(A.cuda().sum(dim, keepdim=keepdim), A.sum(dim, keepdim=keepdim), rtol=1e-5, atol=1e-5)
    assert_same(A.cuda().mean(dim, keepdim=keepdim), A.mean(dim, keepdim=keepdim), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dim", [0, 1, (0, 2)])
def test_amax_amin(dim):
    assert_same(A.cuda().amax(dim), A.amax(dim))
    assert_same(A.cuda().amin(dim), A.amin(dim))


def test_max_min_all_and_dtypes():
    assert_same(A.cuda().max(), A.max())
    assert_same(A.cuda().min(), A.min())
    i = mt.tensor([[3, -1, 7], [2, 9, -4]])
    assert_same(i.cuda().sum(1), i.sum(1))  # int64
    assert_same((i > 0).cuda().sum(), (i > 0).sum())  # bool -> int64
    assert_same(i.cuda().amax(0), i.amax(0))
    h = A.half()
    assert_same(h.cuda().sum(1), h.sum(1), rtol=1e-2)
    assert_same(A.cuda().sum(1, dtype=mt.float64), A.sum(1, dtype=mt.float64))


def test_reduction_of_a_strided_view():
    v = A.transpose(0, 2)[1:]
    assert_same(A.cuda().transpose(0, 2)[1:].sum(1), v.sum(1), atol=1e-5)


def test_two_pass_reduction(monkeypatch):
    # a small chunk size makes each row take several blocks, so the second pass runs
    monkeypatch.setattr(reduction, "CHUNK", 16)
    x = mt.randn(3, 70)
    assert_same(x.cuda().sum(1), x.sum(1), atol=1e-5)
    assert_same(x.cuda().amax(1), x.amax(1))


def test_max_dim_with_indices_takes_the_host_path():
    v, i = A.cuda().max(1)
    cv, ci = A.max(1)
    assert_same(v, cv)
    assert_same(i, ci)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 5, 2), (6, 4, 7)])
def test_mm(m, k, n):
    a, b = mt.randn(m, k), mt.randn(k, n)
    assert_same(a.cuda() @ b.cuda(), a @ b, atol=1e-5)


def test_mm_reads_transposed_inputs_and_16_bit():
    a, b = mt.randn(5, 3), mt.randn(4, 5)
    assert_same(a.cuda().t() @ b.cuda().t(), a.t() @ b.t(), atol=1e-5)
    assert_same(a.half().cuda().t() @ b.half().cuda().t(), a.half().t() @ b.half().t(), rtol=1e-2, atol=1e-2)
    i, j = mt.randint(-3, 3, (2, 3)), mt.randint(-3, 3, (3, 2))
    assert_same(i.cuda() @ j.cuda(), i @ j)


def test_bmm_matmul_addmm_linear():
    a, b = mt.randn(2, 3, 4), mt.randn(2, 4, 5)
    assert_same(mt.bmm(a.cuda(), b.cuda()), mt.bmm(a, b), atol=1e-5)
    assert_same(a.cuda() @ b[0].cuda(), a @ b[0], atol=1e-5)
    bias, m1, m2 = mt.randn(5), mt.randn(3, 4), mt.randn(4, 5)
    assert_same(mt.addmm(bias.cuda(), m1.cuda(), m2.cuda()), mt.addmm(bias, m1, m2), atol=1e-5)
    assert_same(mt.addmm(bias.cuda(), m1.cuda(), m2.cuda(), beta=0.5, alpha=2), mt.addmm(bias, m1, m2, beta=0.5, alpha=2), atol=1e-5)
    w = mt.randn(5, 4)
    assert_same(mt.nn.functional.linear(m1.cuda(), w.cuda(), bias.cuda()), mt.nn.functional.linear(m1, w, bias), atol=1e-5)


def test_mm_errors_are_pytorchs():
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        mt.ones(2, 3).cuda() @ mt.ones(2, 3).cuda()


@pytest.mark.parametrize("kernel", ["tiled", "blocked"])
def test_both_matmul_kernels(kernel, monkeypatch):
    from minitorch_nn.backends.cuda import matmul

    monkeypatch.setattr(matmul, "KERNEL", kernel)
    a, b = mt.randn(2, 9, 7), mt.randn(2, 7, 10)
    assert_same(mt.bmm(a.cuda(), b.cuda()), mt.bmm(a, b), atol=1e-5)
    assert_same(a[1].cuda().t() @ a[0].cuda(), a[1].t() @ a[0], atol=1e-5)  # strided (transposed) input
