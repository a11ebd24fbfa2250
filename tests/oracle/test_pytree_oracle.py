"""Oracle: ``minitorch_nn.utils._pytree`` against ``torch.utils._pytree``, and a two-tensor wrapper
subclass written PyTorch's way (``__tensor_flatten__``/``__tensor_unflatten__``, ``tree_map`` in
``__torch_dispatch__``) used unchanged as a parameter: forward and backward, ``swap_tensors``,
conversion with the swap flag, ``load_state_dict`` every way, ``state_dict`` and parametrize.
"""

import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import torch.utils._pytree as tpt  # noqa: E402

import minitorch_nn as mt  # noqa: E402
import minitorch_nn.utils._pytree as mpt  # noqa: E402
from tests.oracle._module_helpers import error_of  # noqa: E402

Point = namedtuple("Point", "x y")


def spec_facts(pt, tree, **kw):
    leaves, spec = pt.tree_flatten(tree, **kw)
    return (leaves, repr(spec), str(spec), spec.num_leaves, spec.num_nodes, spec.num_children,
            getattr(spec.type, "__name__", None), spec.context if hasattr(spec, "context") else None)


def torch_spec_facts(tree, **kw):
    leaves, spec = tpt.tree_flatten(tree, **kw)
    return (leaves, repr(spec), str(spec), spec.num_leaves, spec.num_nodes, spec.num_children,
            getattr(spec.type, "__name__", None), spec._context)


TREES = {
    "leaf": 1,
    "none": None,
    "tuple": (1, 2),
    "nested_list": [1, [2, 3]],
    "dict_insertion_order": {"b": 1, "a": 2},
    "mixed_keys": {1: "a", "z": "b"},
    "ordered_dict": OrderedDict(b=1, a=2),
    "namedtuple": Point(1, (2,)),
    "defaultdict": defaultdict(list, {"k": 1}),
    "deque": deque([1, 2], maxlen=3),
    "empty_tuple": (),
    "empty_dict": {},
    "none_leaves": [None, {"a": None}],
    "deep": {"x": [(1, {"y": deque([2])}), OrderedDict(z=[3, (4,)])]},
    "slice_is_leaf": [slice(1, 2)],
}


@pytest.mark.parametrize("name", list(TREES))
def test_flatten_matches(name):
    tree = TREES[name]
    assert spec_facts(mpt, tree) == torch_spec_facts(tree)
    leaves, spec = mpt.tree_flatten(tree)
    rebuilt = mpt.tree_unflatten(leaves, spec)
    assert rebuilt == tree and type(rebuilt) is type(tree)


def test_return_types_flatten_by_their_class():
    ours = mpt.tree_flatten(mt.max(mt.ones(2, 2), 0))
    theirs = tpt.tree_flatten(torch.max(torch.ones(2, 2), 0))
    assert repr(ours[1]) == repr(theirs[1]) == "TreeSpec(max, None, [*,\n  *])"
    back = mpt.tree_unflatten(ours[0], ours[1])
    assert type(back) is type(mt.max(mt.ones(2, 2), 0))


def test_is_leaf_stops_the_walk():
    def stop(x):
        return isinstance(x, list) and x[:1] == [2]

    assert spec_facts(mpt, [1, [2, 3]], is_leaf=stop) == torch_spec_facts([1, [2, 3]], is_leaf=stop)


def test_leaf_spec():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)   # PyTorch deprecates isinstance(spec, LeafSpec)
        theirs = (repr(tpt.LeafSpec()), tpt.LeafSpec() == tpt.tree_flatten(1)[1], isinstance(tpt.LeafSpec(), tpt.TreeSpec))
    ours = (repr(mpt.LeafSpec()), mpt.LeafSpec() == mpt.tree_flatten(1)[1], isinstance(mpt.LeafSpec(), mpt.TreeSpec))
    assert ours == theirs == ("*", True, True)
    assert mpt.tree_flatten(1)[1].is_leaf() and not mpt.tree_flatten([1])[1].is_leaf()


def test_map_functions():
    tree = (1, 2.0, "s", [3], {"k": 4})
    for pt in (mpt, tpt):
        assert pt.tree_map(lambda x: x * 2, tree) == (2, 4.0, "ss", [6], {"k": 8})
    assert mpt.tree_map_only(int, lambda x: -x, tree) == tpt.tree_map_only(int, lambda x: -x, tree)
    assert mpt.tree_map_only((int, str), lambda x: x * 3, tree) == tpt.tree_map_only((int, str), lambda x: x * 3, tree)
    assert mpt.tree_map_only(lambda x: x == 3, lambda x: 0, tree) == tpt.tree_map_only(lambda x: x == 3, lambda x: 0, tree)
    assert mpt.tree_leaves({"a": [1, 2], "b": (3,)}) == tpt.tree_leaves({"a": [1, 2], "b": (3,)}) == [1, 2, 3]
    assert repr(mpt.tree_structure({"a": [1, 2]})) == repr(tpt.tree_structure({"a": [1, 2]}))
    assert mpt.tree_map(lambda a, b: a + b, (1, [2]), (10, [20])) == (11, [22])
    # a dict and an OrderedDict with the same keys count as the same structure
    assert mpt.tree_map(lambda a, b: a + b, {"a": 1, "b": 2}, OrderedDict(b=20, a=10)) == {"a": 11, "b": 22}
    seen = []
    assert mpt.tree_map_(seen.append, [1, (2,)]) == [1, (2,)] and seen == [1, 2]


def both_errors(fn):
    return error_of(lambda: fn(mpt)), error_of(lambda: fn(tpt))


@pytest.mark.parametrize(
    "case",
    [
        lambda pt: pt.tree_unflatten([5], pt.tree_flatten((1, [2]))[1]),
        lambda pt: pt.tree_unflatten([5], 3),
        lambda pt: pt.tree_map(lambda a, b: a + b, (1, [2]), (10, 20)),
        lambda pt: pt.tree_map(lambda a, b: a + b, (1, [2]), (10, [20, 30])),
        lambda pt: pt.tree_map(lambda a, b: a + b, {"a": 1}, {"b": 1}),
        lambda pt: pt.tree_map(lambda a, b: a + b, Point(1, 2), (1, 2)),
        lambda pt: pt.tree_map_only(3, lambda x: x, [1]),
    ],
    ids=["too_few_leaves", "not_a_spec", "type_mismatch", "arity_mismatch", "keys_mismatch",
         "namedtuple_vs_tuple", "bad_map_only"],
)
def test_errors_match(case):
    ours, theirs = both_errors(case)
    assert ours == theirs


class Pair:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return type(other) is Pair and (self.x, self.y) == (other.x, other.y)


mpt.register_pytree_node(Pair, lambda p: ([p.x, p.y], "ctx"), lambda vals, ctx: Pair(*vals))
tpt.register_pytree_node(Pair, lambda p: ([p.x, p.y], "ctx"), lambda vals, ctx: Pair(*vals))


def test_registered_node():
    tree = [Pair(1, (2, 3))]
    assert spec_facts(mpt, tree)[:6] == torch_spec_facts(tree)[:6]
    leaves, spec = mpt.tree_flatten(tree)
    assert mpt.tree_unflatten([7, 8, 9], spec) == [Pair(7, (8, 9))]
    ours, theirs = both_errors(lambda pt: pt.register_pytree_node(Pair, lambda p: ([], None), lambda v, c: None))
    assert ours[0] == theirs[0] == "ValueError"
    assert ours[1].replace("minitorch_nn", "torch") == theirs[1].replace("minitorch_nn", "torch")


# random nested containers: the same leaves, spec text and rebuild in both libraries
leaf_values = st.one_of(st.integers(-5, 5), st.none(), st.text("ab", max_size=2))


def containers(children):
    keys = st.text("abcxyz", min_size=1, max_size=2)
    return st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(keys, children, max_size=3),
        st.dictionaries(keys, children, max_size=3).map(OrderedDict),
        st.tuples(children, children).map(lambda t: Point(*t)),
        st.lists(children, max_size=3).map(deque),
    )


@settings(max_examples=60, deadline=None)
@given(st.recursive(leaf_values, containers, max_leaves=12))
def test_random_trees_flatten_like_pytorch(tree):
    assert spec_facts(mpt, tree)[:7] == torch_spec_facts(tree)[:7]
    leaves, spec = mpt.tree_flatten(tree)
    assert mpt.tree_unflatten(leaves, spec) == tree
    assert mpt.tree_map(lambda x: x, tree) == tpt.tree_map(lambda x: x, tree)


# -- a TwoTensor-style wrapper subclass as a parameter ---------------------------------------------
def two_tensor_scenario(lib, pytree, parametrize):
    Tensor = lib.Tensor

    class TwoTensor(Tensor):
        @staticmethod
        def __new__(cls, a, b, outer_size=None, outer_stride=None):
            outer_size = a.size() if outer_size is None else outer_size
            outer_stride = a.stride() if outer_stride is None else outer_stride
            return Tensor._make_wrapper_subclass(
                cls, outer_size, strides=outer_stride, storage_offset=a.storage_offset(),
                device=a.device, dtype=a.dtype, requires_grad=a.requires_grad,
            )

        def __init__(self, a, b, outer_size=None, outer_stride=None):
            self.a, self.b = a, b

        def __repr__(self):
            return f"TwoTensor({self.a!r}, {self.b!r})"

        def __tensor_flatten__(self):
            return ["a", "b"], None

        @staticmethod
        def __tensor_unflatten__(inner, meta, outer_size, outer_stride):
            return TwoTensor(inner["a"], inner["b"], outer_size, outer_stride)

        @classmethod
        def __torch_dispatch__(cls, func, types, args, kwargs):
            kwargs = kwargs or {}
            out_a = func(*pytree.tree_map_only(TwoTensor, lambda x: x.a, args),
                         **pytree.tree_map_only(TwoTensor, lambda x: x.a, kwargs))
            out_b = func(*pytree.tree_map_only(TwoTensor, lambda x: x.b, args),
                         **pytree.tree_map_only(TwoTensor, lambda x: x.b, kwargs))
            flat_a, spec = pytree.tree_flatten(out_a)
            flat_b = pytree.tree_leaves(out_b)
            return pytree.tree_unflatten(
                [cls(x, y) if isinstance(x, Tensor) else x for x, y in zip(flat_a, flat_b)], spec
            )

    def show(t):
        if isinstance(t, TwoTensor):
            return type(t).__name__, t.a.tolist(), t.b.tolist()
        return type(t).__name__, t.tolist()

    def two(w):
        return TwoTensor(w.detach().clone(), (w.detach() * 2).clone())

    log = []
    lib.manual_seed(0)
    m = lib.nn.Linear(2, 2, bias=False)
    m.weight = lib.nn.Parameter(two(m.weight))
    log.append((type(m.weight).__name__, isinstance(m.weight, lib.nn.Parameter), m.weight.requires_grad))
    x = lib.ones(1, 2)
    log.append(show(m(x).detach()))
    m(x).sum().backward()
    log.append(show(m.weight.grad))

    w = m.weight
    new = lib.nn.Parameter(two(lib.full((2, 2), 3.0)))
    lib.utils.swap_tensors(m.weight, new)
    log.append((show(m.weight.detach()), m.weight is w))

    lib.__future__.set_swap_module_params_on_conversion(True)
    try:
        m.double()
        log.append((show(m.weight.detach()), m.weight is w, str(m.weight.dtype).replace("torch.", "")))
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)
    log.append({k: show(v) for k, v in m.state_dict().items()})

    for assign in (False, True):
        for swap in (False, True):
            for source in ("two", "plain"):
                lib.__future__.set_swap_module_params_on_conversion(swap)
                try:
                    lib.manual_seed(1)
                    m2 = lib.nn.Linear(2, 2, bias=False)
                    m2.weight = lib.nn.Parameter(two(m2.weight))
                    value = lib.full((2, 2), 5.0)
                    m2.load_state_dict({"weight": two(value) if source == "two" else value}, assign=assign)
                    log.append((assign, swap, source, show(m2.weight.detach()),
                                isinstance(m2.weight, lib.nn.Parameter)))
                finally:
                    lib.__future__.set_swap_module_params_on_conversion(False)

    class Double(lib.nn.Module):
        def forward(self, w):
            return w * 2

    lib.manual_seed(2)
    m3 = lib.nn.Linear(2, 2, bias=False)
    m3.weight = lib.nn.Parameter(two(m3.weight))
    parametrize.register_parametrization(m3, "weight", Double())
    log.append(show(m3.weight.detach()))
    log.append(type(m3.parametrizations.weight.original).__name__)
    log.append(show(m3(lib.ones(1, 2)).detach()))
    log.append(sorted(m3.state_dict()))
    parametrize.remove_parametrizations(m3, "weight")
    log.append(show(m3.weight.detach()))
    return log


def test_two_tensor_subclass_as_a_parameter():
    from torch.nn.utils import parametrize as tparam

    from minitorch_nn.nn.utils import parametrize as mparam

    ours = two_tensor_scenario(mt, mpt, mparam)
    theirs = two_tensor_scenario(torch, tpt, tparam)
    assert ours == theirs
