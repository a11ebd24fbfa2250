"""Graded tests: swap_tensors (task swap-tensors)."""

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


@pytest.mark.task("swap-tensors")
def test_swap_refuses_weakref(mt):
    import weakref

    a, b = mt.ones(1), mt.zeros(1)
    r = weakref.ref(a)  # noqa: F841
    with pytest.raises(RuntimeError, match="Cannot swap t1 because it has weakref associated with it"):
        mt.utils.swap_tensors(a, b)
