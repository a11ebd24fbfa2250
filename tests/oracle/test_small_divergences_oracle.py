"""Oracle: small divergences from PyTorch found by a sweep, each now checked against PyTorch.

* ``reshape`` that has to copy (and ``matmul``'s folded product) returns a tensor that is no view
  (``_base`` None): ``_unsafe_view``'s result shares the temporary's storage but not its identity;
* ``amax``/``amin`` over a dim of size 0 and ``softmax``/``log_softmax`` of an empty tensor (any
  dtype) answer as PyTorch: the same exception type and message, or the same empty result;
* ``nll_loss`` names the first target (in order) that is out of bounds;
* ``expand`` with a size below -1;
* the argument parser's messages for sizes that are not ints (``x.view(2.0, 8)``, ``zeros(True)``);
* ``number ** tensor`` is laid out contiguously, whatever the exponent's layout.

Errors compare the exception type and the whole message.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402
from tests.strategies import build, tensor_specs  # noqa: E402

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _outcome(fn, lib):
    """("ok", value) or (exception type name, message)."""
    try:
        return "ok", fn(lib)
    except Exception as e:  # noqa: BLE001 -- the point is to compare whatever is raised
        return type(e).__name__, str(e)


def _same_error(fn):
    theirs, ours = _outcome(fn, torch), _outcome(fn, mt)
    assert theirs[0] != "ok", "the case should raise in PyTorch"
    assert ours == theirs


# -- reshape's copy is no view ------------------------------------------------------------------


@SETTINGS
@given(st.lists(st.integers(1, 3), min_size=2, max_size=4), st.data())
def test_reshape_is_a_view_exactly_when_torch_s_is(shape, data):
    perm = data.draw(st.permutations(range(len(shape))))
    grad = data.draw(st.booleans())
    base = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    results = {}
    for lib in (torch, mt):
        x = lib.from_numpy(base.copy()).requires_grad_(grad)
        v = x.permute(*perm)
        r = v.reshape(-1)
        y = r * 1 if grad else r
        y.add_(1)  # (in place on a copy: no CopySlices; on a view of a leaf that needs grad: refused)
        results[lib] = (r._is_view(), r._base is None, r.grad_fn.name() if grad else None, y.tolist())
        if grad:
            y.sum().backward()
            results[lib] += (x.grad.tolist(),)
    assert results[mt] == results[torch]


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("other_shape", [(3, 5), (3,)])
def test_folded_matmul_result_is_no_view(grad, other_shape):
    got = {}
    for lib in (torch, mt):
        a = lib.ones(2, 4, 3, requires_grad=grad)
        out = a @ lib.ones(*other_shape)
        got[lib] = (tuple(out.shape), out._is_view(), out._base is None, out.grad_fn.name() if grad else None)
    assert got[mt] == got[torch]


# -- empty reductions ---------------------------------------------------------------------------

EMPTY_AMAX = {
    "dim0": lambda L: L.empty(0, 3).amax(0),
    "amin_dim0": lambda L: L.empty(0, 3).amin(0),
    "negative_dim": lambda L: L.empty(2, 0, 0).amax((-1,)),
    "list_order": lambda L: L.empty(2, 0, 0).amin((2, 1)),
    "all_dims": lambda L: L.empty(0, 3).amax(),
    "empty_list": lambda L: L.empty(0, 3).amin([]),
    "repeated_empty_dim": lambda L: L.empty(2, 0).amax((1, 1)),
    "repeated_dim": lambda L: L.empty(2, 0).amax((0, 0)),
    "out_of_range": lambda L: L.empty(2, 0).amax(5),
    "out_of_range_after_empty": lambda L: L.empty(2, 0).amax((1, 5)),
    "out_of_range_before_empty": lambda L: L.empty(2, 0).amax((5, 1)),
    "bool": lambda L: L.empty(0, 2, dtype=L.bool).amax(0),
    "int": lambda L: L.empty(0, 2, dtype=L.int64).amin(0, keepdim=True),
}


@pytest.mark.parametrize("name", sorted(EMPTY_AMAX))
def test_amax_amin_of_nothing(name):
    _same_error(EMPTY_AMAX[name])


def test_amax_over_non_empty_dims_of_an_empty_tensor():
    for dims in ((1,), (2,), (1, 2), (-1,)):
        ours, theirs = mt.empty(0, 2, 3).amax(dims), torch.empty(0, 2, 3).amax(dims)
        assert tuple(ours.shape) == tuple(theirs.shape)


@SETTINGS
@given(st.sampled_from(["bool", "uint8", "int32", "int64", "float16", "float32"]),
       st.lists(st.integers(0, 2), min_size=1, max_size=3).filter(lambda s: 0 in s), st.data(),
       st.booleans(), st.booleans())
def test_softmax_of_an_empty_tensor(dtype, shape, data, log, transposed):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))

    def run(L):
        x = L.empty(*shape, dtype=getattr(L, dtype))
        if transposed and x.dim() == 2:
            x = x.t()
        r = (L.log_softmax if log else L.softmax)(x, dim)
        return str(r.dtype).split(".")[-1], tuple(r.shape), r.stride()

    assert _outcome(run, mt) == _outcome(run, torch)


def test_softmax_of_a_non_empty_bool_tensor_still_refuses():
    _same_error(lambda L: L.softmax(L.ones(2, dtype=L.bool), 0))
    _same_error(lambda L: L.log_softmax(L.ones(2, 2, dtype=L.int64), 0))


def test_softmax_backward_of_empty_int():
    got = {}
    for lib in (torch, mt):
        e = lib.empty(0, 2, dtype=lib.int64)
        r = lib.ops.aten._softmax_backward_data(e, e, 1, lib.int64)
        got[lib] = (str(r.dtype), tuple(r.shape), r.stride())
    assert got[mt] == got[torch]


# -- nll_loss: the first bad target -------------------------------------------------------------


@SETTINGS
@given(st.lists(st.integers(-4, 6), min_size=1, max_size=6), st.sampled_from(["mean", "sum"]),
       st.sampled_from([-100, -2, 1]), st.booleans())
def test_nll_loss_names_the_first_bad_target(targets, reduction, ignore_index, cross_entropy):
    n_classes = 4

    def run(L):
        x = L.zeros(len(targets), n_classes)
        fn = L.nn.functional.cross_entropy if cross_entropy else L.nn.functional.nll_loss
        return fn(x, L.tensor(targets), reduction=reduction, ignore_index=ignore_index).item()

    theirs, ours = _outcome(run, torch), _outcome(run, mt)
    if theirs[0] == "ok":
        assert ours[0] == "ok" and (np.isnan(ours[1]) and np.isnan(theirs[1]) or ours[1] == pytest.approx(theirs[1]))
    else:
        assert ours == theirs


def test_nll_loss_2d_names_the_first_bad_target_in_row_major_order():
    _same_error(lambda L: L.nn.functional.nll_loss(L.zeros(2, 4, 2, 2), L.tensor([[[0, -2], [1, 9]], [[0, -7], [1, 1]]])))


# -- expand -------------------------------------------------------------------------------------

EXPAND = {
    "minus_one_new_dim": lambda L: L.ones(3).expand(-1, 3),
    "minus_one_second_new_dim": lambda L: L.ones(3).expand(2, -1, 3),
    "minus_two_new_dim": lambda L: L.ones(3).expand(-2, 3),
    "minus_two_size_one": lambda L: L.ones(1, 3).expand(-2, 3),
    "minus_two_size_three": lambda L: L.ones(3).expand(-2),
    "minus_one_after_minus_two": lambda L: L.ones(1).expand(-1, -2),
}


@pytest.mark.parametrize("name", sorted(EXPAND))
def test_expand_negative_sizes(name):
    _same_error(EXPAND[name])


# -- the argument parser's size messages -------------------------------------------------------

SIZE_FUNCTIONS = {
    "view": lambda L, a: L.ones(16).view(*a),
    "reshape": lambda L, a: L.ones(16).reshape(*a),
    "expand": lambda L, a: L.ones(1).expand(*a),
    "repeat": lambda L, a: L.ones(1).repeat(*a),
    "permute": lambda L, a: L.ones(1, 1).permute(*a),
    "flip": lambda L, a: L.ones(1, 1, 1).flip(*a),
    "resize_": lambda L, a: L.ones(1).resize_(*a),
    "zeros": lambda L, a: L.zeros(*a),
    "ones": lambda L, a: L.ones(*a),
    "empty": lambda L, a: L.empty(*a),
    "rand": lambda L, a: L.rand(*a),
    "randn": lambda L, a: L.randn(*a),
    "new_zeros": lambda L, a: L.ones(1).new_zeros(*a),
    "new_empty": lambda L, a: L.ones(1).new_empty(*a),
}
BAD_SIZES = [(2.0, 8), (2, 8.0), ((2.0, 8),), ([2, 8.0],), ([2.0, 8],), (True,), (True, 2), ((True, 2),), (2.5,),
             ("a",), (None,), (2, None), (2, (3,)), (np.float64(2), 8), ((np.float64(2), 8),)]


@pytest.mark.parametrize("args", BAD_SIZES, ids=repr)
@pytest.mark.parametrize("name", sorted(SIZE_FUNCTIONS))
def test_size_argument_messages(name, args):
    _same_error(lambda L: SIZE_FUNCTIONS[name](L, args))


@pytest.mark.parametrize("args", [(2, True), ((2, True),), (np.int64(2), 1), (2, np.int64(1))], ids=repr)
@pytest.mark.parametrize("name", ["zeros", "expand", "repeat", "new_zeros"])
def test_sizes_after_the_first_may_be_bools_or_index_types(name, args):
    assert tuple(SIZE_FUNCTIONS[name](mt, args).shape) == tuple(SIZE_FUNCTIONS[name](torch, args).shape)


def test_view_by_dtype_with_a_size_is_refused():
    _same_error(lambda L: L.ones(16).view(L.float32, 8))


# -- number ** tensor ---------------------------------------------------------------------------


@SETTINGS
@given(tensor_specs(dtypes=("float32", "int64"), min_dims=1, specials=False, small=True))
def test_number_to_the_power_of_a_tensor_is_contiguous(spec):
    ours, theirs = 2 ** build(mt, spec), 2 ** build(torch, spec)
    assert ours.stride() == theirs.stride()
    np.testing.assert_allclose(ours.double().numpy(), theirs.double().numpy(), rtol=1e-6)
