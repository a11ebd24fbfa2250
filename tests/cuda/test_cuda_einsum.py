"""einsum.py on cuda against the cpu backend."""

import pytest

import minitorch_nn as mt
from tests.cuda._helpers import assert_same, on_gpu_only
from tests.cuda._helpers import grads_match as _grads_match


@pytest.mark.parametrize("eq, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]), ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]), ("i,i->", [(4,), (4,)]), ("i,j->ij", [(2,), (3,)]), ("ij,ij->i", [(2, 3), (2, 3)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 2), (1, 2, 4, 2)]), ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
    ("ijk,ik", [(2, 3, 2), (2, 2)]), ("abc,cd->da", [(2, 2, 3), (3, 2)]),
])
def test_einsum_matches_cpu(eq, shapes):
    xs = [mt.randn(*s) for s in shapes]
    with on_gpu_only():
        got = mt.einsum(eq, *[x.cuda() for x in xs])
    assert_same(got, mt.einsum(eq, *xs), atol=1e-5)


def test_einsum_gradient_and_host_cases():
    _grads_match(lambda a, b: mt.einsum("bij,bjk->bik", a, b), mt.randn(2, 2, 3), mt.randn(2, 3, 2))
    x = mt.randn(3, 3)
    assert_same(mt.einsum("ii->i", x.cuda()), mt.einsum("ii->i", x))  # a diagonal: the host path
    assert_same(mt.einsum("...ij->...ji", x.cuda()), mt.einsum("...ij->...ji", x))
    i = mt.tensor([[1, 2], [3, 4]])
    assert_same(mt.einsum("ij,jk->ik", i.cuda(), i.cuda()), mt.einsum("ij,jk->ik", i, i))
