"""Oracle: checkpoints move between minitorch_nn and PyTorch 2.13 in both directions.

Files written by ``torch.save`` (every dtype, views sharing a storage, non-contiguous tensors,
state dicts of tutorial models, an Adam state dict, nested containers) load here with equal
bits, dtypes, strides, offsets and sharing; files written here load in
``torch.load(weights_only=True)`` the same way, and are byte-for-byte what ``torch.save``
writes (apart from the random serialization id). safetensors files cross both ways.
"""

from __future__ import annotations

import collections
import io
import pickle
import zipfile

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")  # fmt: skip

import minitorch_nn as mt  # noqa: E402
from tests.strategies import build, tensor_specs  # noqa: E402

DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
]


# -- comparing across the libraries -----------------------------------------------------------


def torch_bits(tt) -> np.ndarray:
    x = tt.detach().contiguous()
    if x.dtype == torch.bfloat16:
        return x.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return x.numpy()


def assert_same_tensor(ours, theirs):
    assert repr(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.requires_grad == theirs.requires_grad
    assert (type(ours).__name__ == "Parameter") == isinstance(theirs, torch.nn.Parameter)
    assert ours.is_meta == theirs.is_meta
    if ours.is_meta:
        assert ours.stride() == theirs.stride()
        return
    assert ours.stride() == theirs.stride() and ours.storage_offset() == theirs.storage_offset()
    a = np.ascontiguousarray(ours.detach()._array)
    b = torch_bits(theirs)
    np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


def assert_same(ours, theirs):
    """Recursive equality across the two libraries (tensors by bits, containers by type)."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, mt.Tensor), type(ours)
        assert_same_tensor(ours, theirs)
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs)
        assert getattr(ours, "_metadata", None) == getattr(theirs, "_metadata", None)
        for k in theirs:
            assert_same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)) and not isinstance(theirs, torch.Size):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
    elif isinstance(theirs, torch.dtype):
        assert repr(ours) == str(theirs)
    elif isinstance(theirs, torch.Size):
        assert type(ours) is mt.Size and tuple(ours) == tuple(theirs)
    elif isinstance(theirs, torch.device):
        assert str(ours) == str(theirs)
    else:
        assert type(ours) is type(theirs) and ours == theirs


def storages_of(values):
    """Group names by shared storage: {name: group id} (the same shape in both libraries)."""
    groups, out = {}, {}
    for name, t in values.items():
        key = t.untyped_storage().data_ptr() if isinstance(t, torch.Tensor) else id(t._storage)
        out[name] = groups.setdefault(key, len(groups))
    return out


def torch_to_ours(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return mt.load(buf)


def ours_to_torch(obj):
    buf = io.BytesIO()
    mt.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=True)


def sample(dtype_name, shape=(3, 5), seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 40
    dtype = getattr(torch, dtype_name)
    if dtype == torch.bool:
        return x > 0
    return x.to(dtype)


def ours_from_torch(tt):
    arr = torch_bits(tt)
    return mt.from_numpy(np.array(arr)).requires_grad_(tt.requires_grad)


# -- torch.save -> minitorch_nn.load -----------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_tensors_of_every_dtype_load_here(dtype):
    t = sample(dtype)
    assert_same(torch_to_ours(t), t)
    assert_same(torch_to_ours(t.t()), t.t())  # non-contiguous
    scalar = t[1, 2].clone()
    assert_same(torch_to_ours(scalar), scalar)


def _views(base):
    return {
        "base": base,
        "t": base.t(),
        "row": base[2],
        "cols": base[:, 1:4],
        "step": base.view(-1)[1::3],
        "expanded": base[0:1].expand(4, 6),
        "permuted": base.view(2, 2, 6).permute(2, 0, 1),
        "empty": base[:, 6:],
    }


def test_torch_views_keep_sharing_here():
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    views = _views(base)
    views["other"] = torch.ones(3)
    ours = torch_to_ours(views)
    assert_same(ours, views)
    assert storages_of(ours) == storages_of(views)


def tutorial_models():
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    cnn = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3),
        torch.nn.BatchNorm2d(4),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 4 * 4, 2),
    )
    cnn(torch.randn(2, 1, 6, 6))  # updates running stats and num_batches_tracked
    emb = torch.nn.ModuleDict({"emb": torch.nn.Embedding(10, 4), "norm": torch.nn.LayerNorm(4)})
    return {"mlp": mlp, "cnn": cnn, "emb": emb}


@pytest.mark.parametrize("name", ["mlp", "cnn", "emb"])
def test_torch_state_dicts_load_here(name):
    sd = tutorial_models()[name].state_dict()
    assert_same(torch_to_ours(sd), sd)
    sd_vars = tutorial_models()[name].state_dict(keep_vars=True)  # Parameters with requires_grad
    assert_same(torch_to_ours(sd_vars), sd_vars)


def adam_state():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.8, 0.9))
    for _ in range(2):
        opt.zero_grad()
        model(torch.randn(5, 3)).pow(2).mean().backward()
        opt.step()
    return {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "epoch": 2,
        "loss": 0.25,
        "tag": "run-1",
    }


def test_torch_training_checkpoint_loads_here():
    ckpt = adam_state()
    ours = torch_to_ours(ckpt)
    assert_same(ours, ckpt)
    assert ours["optimizer"]["param_groups"][0]["betas"] == (0.8, 0.9)


def test_torch_nested_plain_values_load_here():
    obj = {
        "i": 1,
        "f": 2.5,
        "s": "x",
        "b": True,
        "n": None,
        "by": b"ab",
        "set": {1, 2},
        "c": 1 + 2j,
        "ba": bytearray(b"z"),
        "nested": [(1, {"t": torch.ones(2)})],
        "dtype": torch.bfloat16,
        "size": torch.Size([1, 2]),
        "dev": torch.device("cpu"),
        "big": 2**70,
    }
    assert_same(torch_to_ours(obj), obj)


def test_torch_meta_tensors_and_tensor_attributes_load_here():
    m = torch.empty(2, 3, device="meta").t()
    t = torch.ones(2)
    t.note = "hi"
    ours = torch_to_ours({"m": m, "t": t})
    assert_same(ours, {"m": m, "t": t})
    assert ours["t"].note == "hi"


@pytest.mark.parametrize("where", ["meta", "cpu", {"cpu": "meta"}, lambda s, loc: s])
def test_map_location_like_torch(where):
    base = torch.arange(6.0)
    obj = {"a": base, "b": base[2:]}
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    ours = mt.load(buf, map_location=where)
    buf.seek(0)
    theirs = torch.load(buf, map_location=where, weights_only=True)
    assert_same(ours, theirs)


# -- minitorch_nn.save -> torch.load -----------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_our_tensors_of_every_dtype_load_in_torch(dtype):
    t = sample(dtype)
    ours = ours_from_torch(t)
    theirs = ours_to_torch(ours)
    assert_same(ours, theirs)
    assert torch.equal(theirs, t)
    assert_same(ours.t(), ours_to_torch(ours.t()))


def test_our_views_keep_sharing_in_torch():
    base = mt.arange(24, dtype=mt.float32).reshape(4, 6)
    views = {
        "base": base,
        "t": base.t(),
        "row": base[2],
        "cols": base[:, 1:4],
        "step": base.reshape(-1)[1::3],
        "expanded": base[0:1].expand(4, 6),
        "permuted": base.reshape(2, 2, 6).permute(2, 0, 1),
        "other": mt.ones(3),
    }
    theirs = ours_to_torch(views)
    assert_same(views, theirs)
    assert storages_of(views) == storages_of(theirs)


def test_our_state_dict_with_parameters_and_metadata_loads_in_torch():
    sd = collections.OrderedDict()
    sd["fc.weight"] = mt.nn.Parameter(mt.randn(3, 2))
    sd["fc.bias"] = mt.nn.Parameter(mt.zeros(3), requires_grad=False)
    sd["bn.num_batches_tracked"] = mt.tensor(5)
    sd["half"] = mt.ones(2, dtype=mt.bfloat16).requires_grad_()
    sd["meta"] = mt.empty(4, device="meta")
    sd._metadata = {"": {"version": 1}, "fc": {"version": 1}}
    theirs = ours_to_torch(sd)
    assert_same(sd, theirs)


def test_our_nested_checkpoint_loads_in_torch():
    obj = {
        "i": 1,
        "f": 2.5,
        "s": "é",
        "b": False,
        "n": None,
        "by": b"ab",
        "empty": b"",
        "set": {1, 2},
        "c": 1 - 2j,
        "ba": bytearray(b"z"),
        "nested": [(1, {"t": mt.ones(2)})],
        "dtype": mt.bfloat16,
        "size": mt.Size([1, 2]),
        "dev": mt.device("cpu"),
        "counter": collections.Counter(a=1),
    }
    theirs = ours_to_torch(obj)
    assert_same(obj, theirs)


def test_our_tensor_attributes_load_in_torch():
    t = mt.ones(2)
    t.note = "hi"
    p = mt.nn.Parameter(mt.ones(1))
    p.tag = 3
    theirs = ours_to_torch({"t": t, "p": p})
    assert (
        theirs["t"].note == "hi"
        and theirs["p"].tag == 3
        and isinstance(theirs["p"], torch.nn.Parameter)
    )


def test_round_trip_through_torch_and_back():
    ckpt = adam_state()
    ours = torch_to_ours(ckpt)
    assert_same(ours, ours_to_torch(ours))
    assert_same(torch_to_ours(ours_to_torch(ours)), ckpt)


@pytest.mark.parametrize("make", ["mlp", "cnn", "adam", "views"])
def test_our_files_are_byte_identical_to_torchs(make, tmp_path):
    obj = {
        "mlp": lambda: tutorial_models()["mlp"].state_dict(),
        "cnn": lambda: tutorial_models()["cnn"].state_dict(),
        "adam": adam_state,
        "views": lambda: _views(torch.arange(24.0).reshape(4, 6)),
    }[make]()
    (tmp_path / "t").mkdir()
    (tmp_path / "o").mkdir()
    torch.save(obj, tmp_path / "t" / "ckpt.pt")
    mt.save(mt.load(tmp_path / "t" / "ckpt.pt"), tmp_path / "o" / "ckpt.pt")
    theirs = (tmp_path / "t" / "ckpt.pt").read_bytes()
    ours = (tmp_path / "o" / "ckpt.pt").read_bytes()
    assert len(ours) == len(theirs)
    info = zipfile.ZipFile(io.BytesIO(theirs)).getinfo("ckpt/.data/serialization_id")
    # everything but the 40 random id bytes (and the CRC/descriptor/central entry that cover them)
    start = theirs.index(b"ckpt/.data/serialization_id")
    assert ours[:start] == theirs[:start]
    assert (
        zipfile.ZipFile(io.BytesIO(ours)).namelist()
        == zipfile.ZipFile(io.BytesIO(theirs)).namelist()
    )
    assert info.file_size == 40


# -- models ------------------------------------------------------------------------------------


def _our_mlp():
    return mt.nn.Sequential(mt.nn.Linear(4, 8), mt.nn.ReLU(), mt.nn.Linear(8, 3))


def test_torch_weights_drive_our_model_to_torchs_outputs():
    theirs = tutorial_models()["mlp"]
    buf = io.BytesIO()
    torch.save(theirs.state_dict(), buf)
    buf.seek(0)
    ours = _our_mlp()
    ours.load_state_dict(mt.load(buf))
    x = torch.randn(5, 4)
    with torch.no_grad():
        expected = theirs(x).numpy()
    got = ours(mt.from_numpy(x.numpy())).detach()._array
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_a_model_trained_here_gives_torchs_outputs_in_torch():
    mt.manual_seed(0)
    ours = _our_mlp()
    x, y = mt.randn(16, 4), mt.randn(16, 3)
    for _ in range(5):
        loss = ((ours(x) - y) ** 2).mean()
        for p in ours.parameters():
            p.grad = None
        loss.backward()
        with mt.no_grad():
            for p in ours.parameters():
                p.sub_(0.1 * p.grad)
    buf = io.BytesIO()
    mt.save(ours.state_dict(), buf)
    buf.seek(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    theirs.load_state_dict(torch.load(buf, weights_only=True))
    with torch.no_grad():
        expected = theirs(torch.from_numpy(np.array(x._array))).numpy()
    np.testing.assert_allclose(ours(x).detach()._array, expected, rtol=1e-5, atol=1e-6)


# -- safetensors -------------------------------------------------------------------------------


def test_safetensors_from_torch_load_here(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    tensors = {d: sample(d, (2, 3), seed=i) for i, d in enumerate(DTYPES)}
    st.save_file(tensors, tmp_path / "t.safetensors", metadata={"format": "pt"})
    ours = mt.safetensors_load(tmp_path / "t.safetensors")
    assert set(ours) == set(tensors)
    for k in tensors:
        assert_same(ours[k], tensors[k])
    assert mt.safetensors_io.load_metadata(tmp_path / "t.safetensors") == {"format": "pt"}
    data = st.save(tensors)
    for k, v in mt.safetensors_io.load(data).items():
        assert_same(v, tensors[k])


def test_our_safetensors_load_in_torch(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    ours = {d: ours_from_torch(sample(d, (2, 3), seed=i)) for i, d in enumerate(DTYPES)}
    mt.safetensors_save(ours, tmp_path / "o.safetensors", metadata={"epoch": "3"})
    theirs = st.load_file(tmp_path / "o.safetensors")
    for k in ours:
        assert_same(ours[k], theirs[k])
    for k, v in st.load(mt.safetensors_io.save(ours)).items():
        assert_same(ours[k], v)


def test_safetensors_refusals_match_the_package(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    base_t = torch.arange(6.0)
    base_o = mt.arange(6.0)
    for theirs, ours in [
        ({"a": base_t, "b": base_t[1:]}, {"a": base_o, "b": base_o[1:]}),
        ({"a": base_t.reshape(2, 3).t()}, {"a": base_o.reshape(2, 3).t()}),
    ]:
        with pytest.raises(Exception) as expected:
            st.save_file(theirs, tmp_path / "x.safetensors")
        with pytest.raises(type(expected.value)) as got:
            mt.safetensors_save(ours, tmp_path / "y.safetensors")
        assert str(expected.value).strip().splitlines()[0].split(":")[0] in str(got.value)


def test_torch_pickle_protocols_and_no_byteorder_record():
    obj = {"w": torch.arange(6.0).reshape(2, 3), "v": None}
    obj["t"] = obj["w"].t()
    for kwargs in (
        {"pickle_protocol": 4},
        {"pickle_protocol": 5},
        {"_disable_byteorder_record": True},
    ):
        buf = io.BytesIO()
        torch.save(obj, buf, **kwargs)
        buf.seek(0)
        ours = mt.load(buf)
        assert_same(ours, obj)
        assert ours["t"]._storage is ours["w"]._storage


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: torch.zeros(2, dtype=torch.uint16), "PyTorch feature minitorch_nn does not have"),
        (lambda: torch.zeros(2).to_sparse(), "sparse"),
        (
            lambda: torch.nn.Linear(2, 2),
            r"GLOBAL torch.nn.modules.linear.Linear was not an allowed global by default",
        ),
    ],
    ids=["uint16", "sparse", "whole-module"],  # (complex tensors load: test_complex_oracle.py)
)
def test_torch_files_we_cannot_represent_are_named(make, match):
    buf = io.BytesIO()
    torch.save(make(), buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match=match):
        mt.load(buf)


# -- PyTorch's legacy (pre-1.6) format ---------------------------------------------------------


def torch_legacy_to_ours(obj, **kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    return mt.load(buf, **kwargs)


def test_torch_legacy_files_load_here():
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    views = _views(base)
    ours = torch_legacy_to_ours(views)
    assert_same(ours, views)
    assert storages_of(ours) == storages_of(views)
    tensors = {d: sample(d, seed=i) for i, d in enumerate(DTYPES)}
    assert_same(torch_legacy_to_ours(tensors), tensors)
    ckpt = adam_state()
    assert_same(torch_legacy_to_ours(ckpt), ckpt)
    meta = torch_legacy_to_ours(views, map_location="meta")
    assert meta["cols"].is_meta and meta["cols"].stride() == views["cols"].stride()


# -- resuming training across the libraries -----------------------------------------------------


def _training_pair():
    """The same MLP and Adam in both libraries, starting from the same weights."""
    theirs = tutorial_models()["mlp"]
    ours = _our_mlp()
    ours.load_state_dict(torch_to_ours(theirs.state_dict()))
    t_opt = torch.optim.Adam(theirs.parameters(), lr=1e-2, betas=(0.8, 0.95), foreach=False)
    o_opt = mt.optim.Adam(ours.parameters(), lr=1e-2, betas=(0.8, 0.95))
    return theirs, t_opt, ours, o_opt


def _step(model, opt, x, y):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()


def test_a_checkpoint_saved_mid_training_here_resumes_in_torch():
    theirs, t_opt, ours, o_opt = _training_pair()
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(8, 4, generator=g), torch.randn(8, 3, generator=g)) for _ in range(4)]
    mine = [(mt.from_numpy(x.numpy()), mt.from_numpy(y.numpy())) for x, y in batches]
    for x, y in mine[:2]:
        _step(ours, o_opt, x, y)
    buf = io.BytesIO()
    mt.save({"model": ours.state_dict(), "optimizer": o_opt.state_dict(), "epoch": 2}, buf)
    buf.seek(0)
    ckpt = torch.load(buf, weights_only=True)
    theirs.load_state_dict(ckpt["model"])
    t_opt.load_state_dict(ckpt["optimizer"])
    for (x, y), (tx, ty) in zip(mine[2:], batches[2:]):
        _step(ours, o_opt, x, y)
        _step(theirs, t_opt, tx, ty)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(
            p.detach()._array, q.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=name
        )


def test_a_torch_checkpoint_resumes_training_here():
    theirs, t_opt, ours, o_opt = _training_pair()
    g = torch.Generator().manual_seed(2)
    batches = [(torch.randn(8, 4, generator=g), torch.randn(8, 3, generator=g)) for _ in range(4)]
    for tx, ty in batches[:2]:
        _step(theirs, t_opt, tx, ty)
    buf = io.BytesIO()
    torch.save({"model": theirs.state_dict(), "optimizer": t_opt.state_dict()}, buf)
    buf.seek(0)
    ckpt = mt.load(buf)
    ours.load_state_dict(ckpt["model"])
    o_opt.load_state_dict(ckpt["optimizer"])
    for tx, ty in batches[2:]:
        _step(theirs, t_opt, tx, ty)
        _step(ours, o_opt, mt.from_numpy(tx.numpy()), mt.from_numpy(ty.numpy()))
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(
            p.detach()._array, q.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=name
        )


# -- random memory layouts (hypothesis) ----------------------------------------------------------


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=hst.lists(tensor_specs(), min_size=1, max_size=4))
def test_random_layouts_cross_both_ways(specs):
    ours = {f"t{i}": build(mt, s) for i, s in enumerate(specs)}
    theirs = {f"t{i}": build(torch, s) for i, s in enumerate(specs)}
    for k, t in list(theirs.items()):
        if t.dim():
            ours[k + "_view"], theirs[k + "_view"] = ours[k][-1:], t[-1:]
    from_ours = ours_to_torch(ours)
    from_theirs = torch_to_ours(theirs)
    assert_same(ours, from_ours)
    assert_same(from_theirs, theirs)
    assert storages_of(from_ours) == storages_of(ours)
    assert storages_of(from_theirs) == storages_of(theirs)
