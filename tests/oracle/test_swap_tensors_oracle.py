"""``swap_tensors`` against PyTorch 2.13 (behaviours A.1-A.17 in the team's notes)."""

import weakref

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402


def _both(fn):
    """Run ``fn(lib)`` with each library; return both results."""
    return fn(torch), fn(mt)


def test_swap_exchanges_contents_and_keeps_identity():
    def scenario(lib):
        t1, t2 = lib.arange(2), lib.arange(3)
        i1, i2 = id(t1), id(t2)
        assert lib.utils.swap_tensors(t1, t2) is None
        assert (id(t1), id(t2)) == (i1, i2)
        return repr(t1), repr(t2)

    assert _both(scenario)[0] == _both(scenario)[1]


def test_swap_exchanges_class_requires_grad_and_dict():
    def scenario(lib):
        p = lib.nn.Parameter(lib.ones(2))
        t = lib.zeros(3)
        p.foo = 1
        t.bar = 2
        lib.utils.swap_tensors(p, t)
        return (type(p).__name__, p.requires_grad, type(t).__name__, t.requires_grad, p.__dict__, t.__dict__, repr(t))

    a, b = _both(scenario)
    assert a == b


def test_swap_moves_grad_and_version():
    def scenario(lib):
        a = lib.ones(2, requires_grad=True)
        b = lib.zeros(2)
        a.grad = lib.full((2,), 7.0)
        with lib.no_grad() if hasattr(lib, "no_grad") else _null():
            b.add_(1)
        lib.utils.swap_tensors(a, b)
        return a.grad, b.grad.tolist(), a._version, b._version

    (ta, tb, tv1, tv2), (ma, mb, mv1, mv2) = _both(scenario)
    assert ta is None and ma is None and tb == mb and (tv1, tv2) == (mv1, mv2)


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_slots_must_match_and_are_moved():
    def scenario(lib):
        class S(lib.Tensor):
            __slots__ = ("a",)

        class T(lib.Tensor):
            __slots__ = ("b",)

        out = []
        s1 = lib.Tensor._make_subclass(S, lib.zeros(1))
        s3 = lib.Tensor._make_subclass(S, lib.ones(1))
        s3.a = 5
        lib.utils.swap_tensors(s1, s3)
        out.append((s1.a, hasattr(s3, "a")))
        t = lib.Tensor._make_subclass(T, lib.zeros(1))
        with pytest.raises(RuntimeError) as e:
            lib.utils.swap_tensors(s1, t)
        out.append(str(e.value))
        return out

    a, b = _both(scenario)
    assert a == b


@pytest.mark.parametrize("which", ["t1", "t2"])
def test_weakref_refusal_message(which):
    def scenario(lib):
        a, b = lib.zeros(1), lib.zeros(1)
        keep = weakref.ref(a if which == "t1" else b)  # noqa: F841
        with pytest.raises(RuntimeError) as e:
            lib.utils.swap_tensors(a, b)
        return str(e.value), a.tolist(), b.tolist()

    assert _both(scenario)[0] == _both(scenario)[1]


def test_use_count_refusals():
    def scenario(lib):
        msgs = []
        a, b = lib.zeros(4), lib.zeros(4)
        v1, v2 = a[1:], a[2:]  # two live views: use count 3
        with pytest.raises(RuntimeError) as e:
            lib.utils.swap_tensors(a, b)
        msgs.append(str(e.value))
        del v2
        with pytest.raises(RuntimeError) as e:  # one view on a tensor that does not require grad
            lib.utils.swap_tensors(a, b)
        msgs.append(str(e.value))
        del v1
        lib.utils.swap_tensors(a, b)
        return msgs

    assert _both(scenario)[0] == _both(scenario)[1]


def test_use_count_values_match():
    def scenario(lib):
        x = lib.zeros(3)
        counts = [x._use_count()]
        v = x[1:]
        counts.append(x._use_count())
        w = x[2:]
        counts.append(x._use_count())
        del v, w
        counts.append(x._use_count())
        return counts

    assert _both(scenario)[0] == _both(scenario)[1]


def test_swap_same_object_and_meta_cpu():
    def scenario(lib):
        a = lib.arange(3)
        lib.utils.swap_tensors(a, a)
        m = lib.zeros(2, 3, device="meta")
        c = lib.ones(4)
        lib.utils.swap_tensors(m, c)
        return repr(a), str(m.device), str(c.device), tuple(c.shape), repr(m)

    assert _both(scenario)[0] == _both(scenario)[1]


def test_non_tensor_argument_error():
    def scenario(lib):
        with pytest.raises(Exception) as e:
            lib.utils.swap_tensors(lib.zeros(1), 3)
        return type(e.value).__name__

    assert _both(scenario)[0] == _both(scenario)[1]


def test_two_parameters_stay_parameters():
    def scenario(lib):
        p1 = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        p2 = lib.nn.Parameter(lib.tensor([3.0]))
        lib.utils.swap_tensors(p1, p2)
        return repr(p1), repr(p2)

    assert _both(scenario)[0] == _both(scenario)[1]
