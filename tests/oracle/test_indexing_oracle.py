"""Oracle: odd indices, ``x[...]`` and ``x[...] = v``, against PyTorch 2.13.

A sweep of the indices people trip over (several ``...``, ``None``, Python bools, a zero or
negative step, empty lists, bool/uint8/int16 tensors, advanced and basic indices mixed, lists
read as tuples, values that broadcast or do not) and a property test over random index tuples.
Each case runs in both libraries and compares either the error (type and message) or the result
(shape, strides, dtype, values) and, for assignments, the whole tensor afterwards.
"""

import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _x(L):
    return L.arange(24.0).reshape(2, 3, 4)


def outcome(fn):
    """What running ``fn`` gives: ("ERR", type, first line of message) or ("OK", geometry and values)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001 - both libraries' errors are compared
            return ("ERR", type(e).__name__, str(e).split("\n")[0])
    # (an empty result's strides are left out: PyTorch's come from its TensorIterator's empty-shape
    # arithmetic, e.g. (0, 1, 0) for ``x[:, False]``, which nothing can observe through the values)
    strides = tuple(r.stride()) if r.numel() else None
    return ("OK", tuple(r.shape), strides, str(r.dtype).removeprefix("torch."), r.tolist())


def INDICES(L):
    T = L.tensor
    return {
        "two_ellipses": (..., ...), "three_ellipses": (..., ..., ...), "ellipsis_int_ellipsis": (..., 0, ...),
        "int_ellipsis_ellipsis": (0, ..., ...), "ellipses_around_none": (..., None, ...),
        "ellipses_around_tensor": (..., T([0, 1]), ...), "ints_between_ellipses": (0, ..., 1, ...),
        "ellipses_none_past_end": (..., ..., None), "ellipses_tensor_past_end": (..., ..., T([0])),
        "none_then_ellipses": (None, ..., ...), "ellipsis": ..., "none": None, "none_ellipsis_none": (None, ..., None),
        "true": True, "false": False, "true_int": (True, 0), "int_false": (0, False), "ellipsis_true": (..., True),
        "negative_step": slice(None, None, -1), "zero_step": slice(None, None, 0), "empty_list": [],
        "slice_empty_list": (slice(None), []), "list": [0, 1], "bool_list": [True, False],
        "bool_0d": T(True), "false_0d": T(False), "long_0d": T(1), "negative_longs": T([-1, 0]),
        "bool_1d": T([True, False]), "bool_2d": T([[True, False, True], [False, False, True]]),
        "bool_wrong_size": T([True, False, True]), "adv_slice_adv": (T([0, 1]), slice(None), T([1, 2])),
        "adv_none_adv": (T([0, 1]), None, T([1, 2])), "adv_int_adv": (T([0, 1]), 0, T([0, 1])),
        "int_adv": (0, T([0, 2])), "adv_broadcast": (T([[0], [1]]), T([0, 2])), "too_many": (0, 0, 0, 0),
        "out_of_bounds": 5, "out_of_bounds_negative": -3, "out_of_bounds_tensor": T([5]), "float": 1.5,
        "float_tensor": T([1.0]), "string": "a", "slice_past_end": slice(10, 20), "negative_slice": slice(-10, -1),
        "tuple_of_lists": ([0, 1], [1, 2]), "nested_list": [[0, 1], [1, 0]], "list_with_slice": [0, slice(None)],
        "numpy_int": np.int64(1), "numpy_array": np.array([0, 1]), "uint8_mask": T([1, 0], dtype=L.uint8),
        "int32_tensor": T([0, 1], dtype=L.int32), "int16_tensor": T([0], dtype=L.int16),
        "ellipsis_adv": (..., T([0, 3])), "none_adv": (None, T([0, 1])), "bool_adv": (True, T([0, 1])),
        "negative_list": [-1], "step_adv": (slice(None, None, 2), T([0])), "empty_long": T([], dtype=L.long),
        "empty_bool": T([], dtype=L.bool), "ellipsis_none_int": (..., None, 0), "dict": {}, "object": object(),
    }


@pytest.mark.parametrize("name", sorted(INDICES(torch)))
@pytest.mark.parametrize("action", ["get", "set_number", "set_tensor"])
def test_odd_index_matches_torch(name, action):
    def run(L):
        x = _x(L)
        index = INDICES(L)[name]
        if action == "get":
            return x[index]
        x[index] = -1.0 if action == "set_number" else L.tensor([-1.0])
        return x

    assert outcome(lambda: run(mt)) == outcome(lambda: run(torch))


def ASSIGNMENTS(L):
    T = L.tensor
    mask = _x(L) > 20
    return {
        "int_full": (0, L.ones(3, 4)), "int_leading_one": (0, L.ones(1, 3, 4)), "int_leading_ones": (0, L.ones(1, 1, 3, 4)),
        "int_too_big": (0, L.ones(2, 3, 4)), "int_row": (0, L.arange(4.0)), "int_column": (0, L.ones(3, 1)),
        "int_wrong": (0, L.ones(3)), "list_row": ([0, 1], L.arange(4.0)), "list_full": ([0, 1], L.ones(2, 3, 4)),
        "list_too_big": ([0, 1], L.ones(3, 3, 4)), "list_leading_one": ([0, 1], L.ones(1, 2, 3, 4)),
        "mask_vector": (mask, T([7.0, 8.0, 9.0])), "mask_wrong": (mask, T([7.0, 8.0])), "mask_0d": (mask, T(5.0)),
        "mask2d_row": (T([[True, False, True], [False, False, True]]), L.arange(4.0)),
        "slice_broadcast": ((slice(None), 0), L.ones(1)), "slice_wrong": ((slice(None), 0), L.ones(3)),
        "ellipsis_int": ((..., 0), L.ones(2, 1)), "none": (None, L.ones(2, 3, 4)), "int_long_value": (0, L.ones(3, 4, dtype=L.int64)),
        "bool_value": (0, True), "duplicate_rows": ([0, 0], L.ones(2, 3, 4)),
        "two_lists": (([0, 1], [1, 2]), T([5.0, 6.0]).unsqueeze(1)), "adv_slice_adv": ((T([0, 1]), slice(None), T([0, 3])), L.ones(2, 3)),
        "float_into_int": (0, 2.7), "nested_list_value": (0, [[1.0, 2.0, 3.0, 4.0]] * 3), "list_value": (0, [1.0, 2.0, 3.0, 4.0]),
        "tuple_value": (0, (1.0, 2.0)), "numpy_value": (0, np.ones(4)), "empty_list_tensor": ([], L.ones(0, 3, 4)),
        "empty_list_number": ([], 1.0), "negative_int": (-1, 5.0), "out_of_bounds": (2, 5.0),
    }


@pytest.mark.parametrize("name", sorted(ASSIGNMENTS(torch)))
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_assignment_with_broadcasting_matches_torch(name, dtype):
    def run(L):
        x = _x(L).to(getattr(L, dtype))
        index, value = ASSIGNMENTS(L)[name]
        x[index] = value
        return x

    assert outcome(lambda: run(mt)) == outcome(lambda: run(torch))


def test_non_tuple_sequence_warns_like_torch():
    texts = []
    for L in (mt, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _x(L)[[0, slice(None)]]
        texts.append([str(w.message).split(" (Triggered internally")[0] for w in caught])
    assert texts[0] == texts[1] and "non-tuple sequence" in texts[0][0]


# -- random index tuples ---------------------------------------------------------------------------------

@st.composite
def index_items(draw, n_dims):
    """A tuple of basic and advanced index items for a tensor with ``n_dims`` dims."""
    kinds = st.sampled_from(["int", "slice", "none", "ellipsis", "bool", "long", "mask", "list"])
    items = []
    for _ in range(draw(st.integers(0, n_dims + 1))):
        kind = draw(kinds)
        if kind == "int":
            items.append(("int", draw(st.integers(-4, 4))))
        elif kind == "slice":
            items.append(("slice", draw(st.sampled_from([None, -2, 0, 1, 5])), draw(st.sampled_from([None, -1, 1, 3])),
                          draw(st.sampled_from([None, 1, 2, -1, 0]))))
        elif kind in ("none", "ellipsis"):
            items.append((kind,))
        elif kind == "bool":
            items.append(("bool", draw(st.booleans())))
        elif kind == "long":
            items.append(("long", draw(st.lists(st.integers(-3, 3), min_size=0, max_size=3))))
        elif kind == "mask":
            items.append(("mask", draw(st.lists(st.booleans(), min_size=1, max_size=4))))
        else:
            items.append(("list", draw(st.lists(st.integers(-2, 2), min_size=1, max_size=2))))
    return items


def _materialize(L, items):
    out = []
    for item in items:
        kind = item[0]
        if kind == "int":
            out.append(item[1])
        elif kind == "slice":
            out.append(slice(*item[1:]))
        elif kind == "none":
            out.append(None)
        elif kind == "ellipsis":
            out.append(...)
        elif kind == "bool":
            out.append(item[1])
        elif kind == "long":
            out.append(L.tensor(item[1], dtype=L.int64))
        elif kind == "mask":
            out.append(L.tensor(item[1]))
        else:
            out.append(list(item[1]))
    return tuple(out)


def _past_the_end(items, n_dims):
    """Whether several ``...`` push an int or slice past the last dim: PyTorch then reads out of
    bounds (a slice is ignored, an int reports "size 0"), which we refuse with an IndexError."""
    if sum(1 for i in items if i[0] == "ellipsis") < 2:
        return False
    specified = sum(0 if i[0] in ("none", "ellipsis", "bool") else len(i[1]) if i[0] == "mask" else 1 for i in items)
    dim, current = 0, n_dims  # where the next index applies, and the dims of the view so far
    for item in items:
        kind = item[0]
        if kind == "ellipsis":
            dim += n_dims - specified
        elif kind in ("int", "slice") and dim >= current:
            return True
        elif kind == "int":
            current -= 1
        elif kind in ("none", "bool"):
            dim, current = dim + 1, current + 1
        else:
            dim += len(item[1]) if kind == "mask" else 1
    return False


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple), data=st.data())
def test_random_indices_get_and_set_match_torch(shape, data):
    items = data.draw(index_items(len(shape)))
    assume(not _past_the_end(items, len(shape)))
    n = int(np.prod(shape, dtype=np.int64))

    def get(L):
        return L.arange(float(n)).reshape(shape)[_materialize(L, items)]

    def put(L):
        x = L.arange(float(n)).reshape(shape)
        x[_materialize(L, items)] = -7.0
        return x

    assert outcome(lambda: get(mt)) == outcome(lambda: get(torch))
    assert outcome(lambda: put(mt)) == outcome(lambda: put(torch))


SELF_OVERLAP = {
    "slice_shifted": lambda L, x: x.__setitem__(slice(1, None), x[:-1]),
    "list_from_own_slice": lambda L, x: x.__setitem__(L.tensor([0, 1]), x[2:4]),
    "list_from_overlapping_slice": lambda L, x: x.__setitem__(L.tensor([1, 2]), x[1:3]),
    "list_from_itself": lambda L, x: x.__setitem__(L.tensor([0, 1, 2, 3, 4, 5]), x),
    "index_put_partial": lambda L, x: x.index_put_((L.tensor([0, 1]),), x[1:3]),
    "index_put_accumulate": lambda L, x: x.index_put_((L.tensor([0, 1]),), x[2:4], accumulate=True),
    "mask_from_own_slice": lambda L, x: x.__setitem__(x > 2, x[3:]),
    "mask_with_one_value_is_fine": lambda L, x: x.__setitem__(x > 2, x[0]),
    "cloned_value_is_fine": lambda L, x: x.__setitem__(L.tensor([0, 1]), x[2:4].clone()),
}


@pytest.mark.parametrize("name", sorted(SELF_OVERLAP))
def test_assigning_from_overlapping_memory_matches_torch(name):
    def run(L):
        x = L.arange(6.0)
        SELF_OVERLAP[name](L, x)
        return x

    assert outcome(lambda: run(mt)) == outcome(lambda: run(torch))
