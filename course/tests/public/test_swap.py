"""Graded tests: swap_tensors (tasks swap-tensors-checks and swap-tensors)."""

import pytest


@pytest.mark.task("swap-tensors")
def test_swap_exchanges_contents(mt, assert_close):
    a, b = mt.tensor([1.0, 2.0]), mt.tensor([[3, 4, 5]])
    ida, idb = id(a), id(b)
    a.note = "a"
    mt.utils.swap_tensors(a, b)
    assert (id(a), id(b)) == (ida, idb), "the Python objects stay the same"
    assert_close(a, mt.tensor([[3, 4, 5]]))
    assert_close(b, mt.tensor([1.0, 2.0]))
    assert b.note == "a" and not hasattr(a, "note"), "__dict__ moves with the contents"


@pytest.mark.task("swap-tensors")
def test_swap_parameter_class(mt):
    p, t = mt.nn.Parameter(mt.ones(2)), mt.zeros(2)
    mt.utils.swap_tensors(p, t)
    assert type(t) is mt.nn.Parameter and type(p) is mt.Tensor
    assert t.requires_grad and not p.requires_grad


@pytest.mark.task("swap-tensors-checks")
def test_swap_refuses_weakref(mt):
    import weakref

    a, b = mt.ones(1), mt.zeros(1)
    r = weakref.ref(a)  # noqa: F841
    with pytest.raises(RuntimeError, match="Cannot swap t1 because it has weakref associated with it"):
        mt.utils.swap_tensors(a, b)
    assert a.tolist() == [1.0] and b.tolist() == [0.0], "a refused swap changes nothing"
    r2 = weakref.ref(b)  # noqa: F841
    del r
    with pytest.raises(RuntimeError, match="Cannot swap t2 because it has weakref associated with it"):
        mt.utils.swap_tensors(a, b)


@pytest.mark.task("swap-tensors-checks")
def test_swap_refuses_different_slots(mt):
    class Slotted(mt.Tensor):
        __slots__ = ("tag",)

    a = mt.ones(2).as_subclass(Slotted)
    b = mt.zeros(2)
    with pytest.raises(RuntimeError, match="Cannot swap t1 and t2 if they have different slots"):
        mt.utils.swap_tensors(a, b)
    assert type(a) is Slotted and a.tolist() == [1.0, 1.0]


@pytest.mark.task("swap-tensors-checks")
def test_swap_refuses_a_payload_in_use(mt):
    a, b = mt.ones(3), mt.zeros(3)
    views = a[1:], a[:1]  # noqa: F841  (the views keep a's payload in use)
    with pytest.raises(RuntimeError, match="use_count of t1"):
        mt.utils.swap_tensors(a, b)
    assert a.tolist() == [1.0, 1.0, 1.0] and b.tolist() == [0.0, 0.0, 0.0]
    same = mt.ones(2)
    mt.utils.swap_tensors(same, same)   # with itself: nothing happens
    assert same.tolist() == [1.0, 1.0]
