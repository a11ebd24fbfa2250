"""Unit tests for ``nn.Module``: registration, containers, handles, pickling, and what we do
beyond PyTorch (atomic loads, hints). Behaviour shared with PyTorch is also checked against it in
``tests/oracle/test_module_*_oracle.py``."""

import copy
import gc
import pickle
import weakref

import pytest

import minitorch_nn as mt
from minitorch_nn import nn
from minitorch_nn.nn.modules import module as module_mod
from minitorch_nn.utils.hooks import RemovableHandle


class Leaf(nn.Module):
    """A Linear-like module (kept local so these tests do not depend on nn.Linear)."""

    def __init__(self, i=2, o=3):
        super().__init__()
        self.weight = nn.Parameter(mt.ones(o, i))
        self.bias = nn.Parameter(mt.zeros(o))
        self.register_buffer("count", mt.zeros(1))

    def forward(self, x):
        return x


def model():
    return nn.Sequential(Leaf(), nn.Sequential(Leaf(3, 4)))


@pytest.fixture(autouse=True)
def reset_flags():
    yield
    mt.__future__.set_swap_module_params_on_conversion(False)
    mt.__future__.set_overwrite_module_params_on_conversion(False)


# -- registration ------------------------------------------------------------------------------
def test_setattr_routes_to_registries_and_getattr_finds_them():
    m = nn.Module()
    p = nn.Parameter(mt.zeros(1))
    m.p = p
    m.c = nn.Module()
    m.b = nn.Buffer(mt.zeros(2), persistent=False)
    m.plain = mt.zeros(1)  # a plain tensor under a new name is not a buffer
    assert m._parameters == {"p": p} and list(m._modules) == ["c"] and list(m._buffers) == ["b"]
    assert m.p is p and m.b is m._buffers["b"] and "plain" in m.__dict__
    assert m._non_persistent_buffers_set == {"b"}
    del m.b
    assert "b" not in m._buffers and m._non_persistent_buffers_set == set()
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'b'"):
        _ = m.b


def test_reassigning_keeps_position_and_del_moves_to_end():
    m = Leaf()
    m.weight = nn.Parameter(mt.zeros(3, 2))
    assert list(m._parameters) == ["weight", "bias"]
    del m.weight
    m.weight = nn.Parameter(mt.zeros(3, 2))
    assert list(m._parameters) == ["bias", "weight"]


def test_error_messages_carry_a_hint_after_pytorchs_text():
    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(mt.zeros(1))

    with pytest.raises(AttributeError) as e:
        Early()
    first, hint = str(e.value).split("\n")
    assert first == "cannot assign parameters before Module.__init__() call"
    assert hint.startswith("Hint:") and "super().__init__()" in hint
    m = Leaf()
    with pytest.raises(TypeError) as e:
        m.weight = mt.zeros(3, 2)
    first, hint = str(e.value).split("\n")
    assert (
        first
        == "cannot assign 'torch.FloatTensor' as parameter 'weight' (torch.nn.Parameter or None expected)"
    )
    assert "copy_" in hint and "nn.Parameter" in hint


def test_registration_hooks_can_replace_values():
    seen = []
    replacement = nn.Parameter(mt.ones(1))
    h1 = module_mod.register_module_parameter_registration_hook(
        lambda m, n, p: seen.append(("p", n)) or replacement
    )
    h2 = module_mod.register_module_buffer_registration_hook(lambda m, n, b: seen.append(("b", n)))
    h3 = module_mod.register_module_module_registration_hook(lambda m, n, c: seen.append(("m", n)))
    try:
        m = nn.Module()
        m.w = nn.Parameter(mt.zeros(1))
        m.register_buffer("b", mt.zeros(1))
        m.c = nn.Module()
    finally:
        for h in (h1, h2, h3):
            h.remove()
    assert seen == [("p", "w"), ("b", "b"), ("m", "c")]
    assert m.w is replacement


def test_get_and_set_submodule_parameter_buffer():
    m = model()
    assert m.get_submodule("1.0") is m[1][0]
    assert m.get_parameter("1.0.weight") is m[1][0].weight
    assert m.get_buffer("0.count") is m[0].count
    new = Leaf(3, 4)
    m.set_submodule("1.0", new)
    assert m[1][0] is new
    with pytest.raises(AttributeError, match="`count` is not an nn.Parameter"):
        m.get_parameter("0.count")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        m.get_buffer("0.weight")


def test_call_without_forward_and_dir():
    m = nn.Module()
    with pytest.raises(
        NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'
    ):
        m()
    m.w = nn.Parameter(mt.zeros(1))
    s = nn.Sequential(Leaf())
    assert "w" in dir(m) and "0" not in dir(s) and "forward" in dir(s)


# -- containers --------------------------------------------------------------------------------
def test_sequential_indexing_slicing_deleting_renumbers():
    a, b, c = Leaf(), Leaf(), Leaf()
    s = nn.Sequential(a, b, c)
    assert s[-1] is c and isinstance(s[1:], nn.Sequential) and list(s[1:]) == [b, c]
    del s[0]
    assert list(s._modules) == ["0", "1"] and s[0] is b
    with pytest.raises(IndexError, match="index 5 is out of range"):
        s[5]
    assert len(s * 2) == 4 and len(2 * s) == 4 and len(s + s) == 4
    s.insert(0, a)
    assert list(s) == [a, b, c]
    assert s.pop(1) is b and list(s) == [a, c]
    with pytest.raises(ValueError, match="Non-positive multiplication factor"):
        s * 0


def test_modulelist_and_moduledict():
    ml = nn.ModuleList([Leaf(), Leaf()])
    ml.append(Leaf())
    ml.insert(1, nn.Sequential())
    assert [type(x).__name__ for x in ml] == ["Leaf", "Sequential", "Leaf", "Leaf"]
    del ml[1]
    assert list(ml._modules) == ["0", "1", "2"]
    md = nn.ModuleDict({"b": Leaf(), "a": Leaf()})
    md.update([("c", Leaf())])
    assert list(md) == ["b", "a", "c"] and "a" in md and len(md) == 3
    assert md.pop("a") is not None and list(md.keys()) == ["b", "c"]


def test_parameterlist_and_parameterdict_wrap_tensors():
    pl = nn.ParameterList([mt.zeros(2), "not a tensor"])
    assert isinstance(pl[0], nn.Parameter) and pl[1] == "not a tensor"
    assert [n for n, _ in pl.named_parameters()] == ["0"]
    pd = nn.ParameterDict({"b": mt.zeros(1), "a": mt.zeros(2)})
    assert list(pd) == ["a", "b"]  # a plain dict is sorted, as in PyTorch
    pd["c"] = mt.ones(1)
    assert isinstance(pd["c"], nn.Parameter)
    assert pd.popitem()[0] == "c" and list(pd) == ["a", "b"]
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        pl()


# -- handles -----------------------------------------------------------------------------------
def test_removable_handle_ids_remove_twice_and_context_manager():
    m = Leaf()
    h1 = m.register_forward_hook(lambda *a: None, with_kwargs=True, always_call=True)
    h2 = m.register_forward_pre_hook(lambda *a: None)
    assert h2.id > h1.id
    assert h1.hooks_dict_ref() is m._forward_hooks
    h1.remove()
    h1.remove()
    assert (
        not m._forward_hooks
        and not m._forward_hooks_with_kwargs
        and not m._forward_hooks_always_called
    )
    with h2:
        assert m._forward_pre_hooks
    assert not m._forward_pre_hooks
    assert isinstance(h2, RemovableHandle)


def test_a_hook_may_remove_itself_during_the_call():
    m = Leaf()
    calls = []
    handles = []

    def once(mod, args):
        calls.append("once")
        handles[0].remove()

    handles.append(m.register_forward_pre_hook(once))
    m.register_forward_pre_hook(lambda mod, args: calls.append("other"))
    m(1)
    m(1)
    assert calls == ["once", "other", "other"]


def test_old_and_full_backward_hooks_cannot_be_mixed():
    m = Leaf()
    m.register_full_backward_hook(lambda *a: None)
    with pytest.raises(
        RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"
    ):
        m.register_backward_hook(lambda *a: None)


# -- pickling and copying ----------------------------------------------------------------------
def test_deepcopy_keeps_sharing_inside_the_copy():
    s = nn.Sequential(Leaf(), Leaf())
    s[1] = s[0]
    c = copy.deepcopy(s)
    assert c[0] is c[1] and c[0].weight is not s[0].weight
    assert list(c.state_dict()) == list(s.state_dict())
    assert c[0].weight.tolist() == s[0].weight.tolist()


def test_pickle_roundtrip_and_old_pickles_get_new_hook_dicts():
    m = model()
    m[0].register_buffer("tmp", mt.ones(1), persistent=False)
    r = pickle.loads(pickle.dumps(m))
    assert repr(r) == repr(m) and list(r.state_dict()) == list(m.state_dict())
    assert r[0]._non_persistent_buffers_set == {"tmp"}
    state = m[0].__getstate__()
    del state["_state_dict_pre_hooks"], state["_load_state_dict_post_hooks"]
    old = Leaf.__new__(Leaf)
    old.__setstate__(state)
    assert list(old.state_dict()) == ["weight", "bias", "count"]


def test_load_pre_hook_with_module_holds_no_strong_reference_and_pickles():
    m = Leaf()
    m.register_load_state_dict_pre_hook(_module_level_hook)
    r = pickle.loads(pickle.dumps(m))
    assert list(r._load_state_dict_pre_hooks.values())[0].module() is r
    ref = weakref.ref(m)
    del m, r
    gc.collect()
    assert ref() is None


def _module_level_hook(module, *args):
    pass


# -- beyond PyTorch: atomic loads and the prefix hint ------------------------------------------
@pytest.mark.parametrize("path", ["copy", "assign", "swap"])
def test_failed_load_changes_nothing(path):
    if path == "swap":
        mt.__future__.set_swap_module_params_on_conversion(True)
    m = model()
    before = {k: (v, v.tolist()) for k, v in m.state_dict(keep_vars=True).items()}
    sd = {k: mt.full(tuple(v.shape), 7.0) for k, v in m.state_dict().items()}
    sd["1.0.bias"] = mt.zeros(9)  # the last tensor has the wrong shape
    with pytest.raises(RuntimeError, match="size mismatch for 1.0.bias"):
        m.load_state_dict(sd, assign=path == "assign")
    after = m.state_dict(keep_vars=True)
    assert list(after) == list(before)
    for k, v in after.items():
        assert v is before[k][0] and v.tolist() == before[k][1], k


def test_failed_strict_load_with_missing_key_changes_nothing():
    m = Leaf()
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "count"'):
        m.load_state_dict({"weight": mt.full((3, 2), 5.0), "bias": mt.ones(3)})
    assert m.weight.tolist() == [[1.0, 1.0]] * 3 and m.bias.tolist() == [0.0] * 3
    # non-strict: the same dict loads what it can
    r = m.load_state_dict({"weight": mt.full((3, 2), 5.0)}, strict=False)
    assert r.missing_keys == ["bias", "count"] and m.weight.tolist() == [[5.0, 5.0]] * 3


def test_prefix_hint_for_dataparallel_checkpoints_and_for_wrapped_models():
    m = model()
    sd = {"module." + k: v for k, v in m.state_dict().items()}
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(sd)
    assert e.value.args[0].startswith(
        "Error(s) in loading state_dict for Sequential:\n\tMissing key(s)"
    )
    assert (
        '\nHint: every missing key appears in the checkpoint with the extra prefix "module."'
        in str(e.value)
    )
    wrapper = nn.Module()
    wrapper.model = model()
    with pytest.raises(RuntimeError, match='extra prefix "model." that the checkpoint lacks'):
        wrapper.load_state_dict(model().state_dict())
    # no hint when the keys are simply different
    with pytest.raises(RuntimeError) as e:
        Leaf().load_state_dict({"x": mt.zeros(1)})
    assert "Hint" not in str(e.value)


# -- meta device, to_empty, assign ---------------------------------------------------------------
def test_build_on_meta_then_to_empty_or_assign():
    with mt.device("meta"):
        m = model()
    assert all(p.is_meta for p in m.parameters())
    src = model()
    with pytest.warns(
        UserWarning, match="copying from a non-meta parameter in the checkpoint to a meta parameter"
    ):
        m.load_state_dict(src.state_dict())
    assert all(p.is_meta for p in m.parameters())
    m.load_state_dict(src.state_dict(), assign=True)
    assert all(p.device.type == "cpu" and isinstance(p, nn.Parameter) for p in m.parameters())
    with mt.device("meta"):
        m2 = model()
    m2.to_empty(device="cpu")
    assert all(t.device.type == "cpu" for t in [*m2.parameters(), *m2.buffers()])
    m2.load_state_dict(src.state_dict())
    assert m2[1][0].weight.tolist() == src[1][0].weight.tolist()


def test_to_empty_recurse_false_moves_only_own_tensors():
    with mt.device("meta"):
        m = nn.Sequential(Leaf())
        m.register_buffer("own", mt.zeros(1))
    m.to_empty(device="cpu", recurse=False)
    assert m.own.device.type == "cpu" and m[0].weight.is_meta


# -- beyond PyTorch: warnings and hints for classic traps -------------------------------------
def test_plain_list_or_dict_of_modules_warns_with_the_fix():
    m = nn.Module()
    with pytest.warns(
        UserWarning, match="`layers` is a plain list holding nn.Module objects.*Use nn.ModuleList"
    ):
        m.layers = [Leaf(), Leaf()]
    with pytest.warns(UserWarning, match="Use nn.ParameterDict"):
        m.scales = {"a": nn.Parameter(mt.ones(1))}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.sizes = [1, 2, 3]  # nothing to register: no warning
        m.tensors = (mt.zeros(1),)


def test_attribute_error_inside_a_property_names_the_real_missing_attribute():
    class Net(nn.Module):
        @property
        def scale(self):
            return self.does_not_exist * 2

    with pytest.raises(AttributeError) as e:
        _ = Net().scale
    first, hint = str(e.value).split("\n")
    assert first == "'Net' object has no attribute 'scale'"
    assert "does_not_exist" in hint and isinstance(e.value.__cause__, AttributeError)


def test_init_hint_names_the_class_and_attribute():
    class Trunk(nn.Module):
        def __init__(self):
            self.blocks = nn.Module()
            super().__init__()

    with pytest.raises(
        AttributeError, match="cannot assign module before Module.__init__\\(\\) call"
    ) as e:
        Trunk()
    assert "Trunk.__init__ assigned `self.blocks` before super().__init__() ran" in str(e.value)


def test_non_strict_load_that_matches_nothing_warns():
    m = model()
    sd = {"model." + k: v for k, v in m.state_dict().items()}
    with pytest.warns(
        UserWarning, match='loaded none of the 6 tensors of Sequential(.|\\n)*extra prefix "model."'
    ):
        r = m.load_state_dict(sd, strict=False)
    assert len(r.missing_keys) == 6 and len(r.unexpected_keys) == 6
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.load_state_dict({"0.weight": mt.zeros(3, 2)}, strict=False)  # something loaded: quiet


def test_load_state_dict_leaves_no_reference_cycles():
    m = model()
    sd = m.state_dict()
    gc.collect()
    gc.disable()
    try:
        m.load_state_dict(sd)
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_float_checkpoint_into_integer_buffer_warns():
    m = nn.Module()
    m.register_buffer("steps", mt.zeros(1, dtype=mt.int64))
    with pytest.warns(
        UserWarning,
        match="for steps: copying a torch.float32 value from the checkpoint into a torch.int64",
    ):
        m.load_state_dict({"steps": mt.tensor([2.7])})
    assert m.steps.tolist() == [2]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.load_state_dict({"steps": mt.tensor([3])})
