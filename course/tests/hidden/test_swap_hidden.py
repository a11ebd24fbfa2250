"""Hidden graded tests: swap_tensors."""

import pytest


@pytest.mark.task("swap-tensors-checks")
def test_refused_swaps_change_nothing(mt):
    class A(mt.Tensor):
        __slots__ = ("x",)

    class B(mt.Tensor):
        __slots__ = ("y",)

    a, b = mt.ones(2).as_subclass(A), mt.zeros(2).as_subclass(B)
    a.x, b.y = 1, 2
    a.note = "a"
    with pytest.raises(RuntimeError, match="Cannot swap t1 and t2 if they have different slots") as err:
        mt.utils.swap_tensors(a, b)
    assert type(err.value) is RuntimeError
    assert type(a) is A and a.x == 1 and a.note == "a" and a.tolist() == [1.0, 1.0]
    assert type(b) is B and b.y == 2


@pytest.mark.task("swap-tensors-checks")
def test_swap_with_grad_leaf_and_self(mt):
    p = mt.nn.Parameter(mt.ones(2))
    (p * 2).sum().backward()          # p now has an AccumulateGrad node: use count 2 is allowed
    q = mt.nn.Parameter(mt.zeros(2))
    mt.utils.swap_tensors(p, q)
    assert p.tolist() == [0.0, 0.0] and q.tolist() == [1.0, 1.0]
    t = mt.ones(1)
    mt.utils.swap_tensors(t, t)
    assert t.tolist() == [1.0]


@pytest.mark.task("swap-tensors")
def test_slots_and_dicts_move(mt):
    class S(mt.Tensor):
        __slots__ = ("tag", "other")

    a, b = mt.ones(1).as_subclass(S), mt.zeros(3).as_subclass(S)
    a.tag = "A"
    b.tag, b.other = "B", 5
    a.d, b.e = 1, 2
    mt.utils.swap_tensors(a, b)
    assert a.tag == "B" and a.other == 5 and b.tag == "A" and not hasattr(b, "other")
    assert a.__dict__ == {"e": 2} and b.__dict__ == {"d": 1}
    assert tuple(a.shape) == (3,) and tuple(b.shape) == (1,)


@pytest.mark.task("swap-tensors")
def test_swap_keeps_identity_in_a_module(mt):
    layer = mt.nn.Linear(2, 2)
    w = layer.weight
    new = mt.nn.Parameter(mt.zeros(2, 2, dtype=mt.float64))
    mt.utils.swap_tensors(w, new)
    assert layer.weight is w and w.dtype == mt.float64 and w.sum().item() == 0
