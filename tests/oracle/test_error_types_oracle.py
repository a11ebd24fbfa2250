"""Bad-input calls across the public API raise PyTorch 2.13's exception type, and its key words.

Three sweeps, each run in torch and in minitorch_nn side by side:

* a table of calls with wrong-type, wrong-shape, wrong-dtype and out-of-range arguments to the
  functions, methods and layers people use most (``CASES``): the exception type must match, and
  the first words of PyTorch's message must start ours (``TYPE_ONLY`` lists the few where our
  words differ, with the reason);
* every public function the two libraries share, called with a string and with a list where a
  tensor belongs: the exception type must match, except for the functions in
  ``KNOWN_DIVERGENCES`` (each with its reason; a fix must remove its entry, since the test also
  fails when a listed divergence is gone);
* every Tensor method the two share, called with a string, in the same way
  (``KNOWN_METHOD_DIVERGENCES``).

Also: a real ``torch`` function called with a minitorch_nn tensor raises a clear ``TypeError``
(instead of recursing until ``RecursionError``).
"""

from __future__ import annotations

import types
import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402


def A(lib):
    return lib.arange(6.).reshape(2, 3)


CASES = {
 "exp(str)": lambda lib: lib.exp("x"),
 "relu(list)": lambda lib: lib.relu([1, 2]),
 "abs(int)": lambda lib: lib.abs(3),
 "sum(str)": lambda lib: lib.sum("x"),
 "add(str,1)": lambda lib: lib.add("x", 1),
 "matmul(list,t)": lambda lib: lib.matmul([1.], A(lib)),
 "zeros dtype=int": lambda lib: lib.zeros(2, dtype=int).dtype,
 "zeros dtype=float": lambda lib: lib.zeros(2, dtype=float).dtype,
 "zeros dtype=bool": lambda lib: lib.zeros(2, dtype=bool).dtype,
 "zeros dtype='x'": lambda lib: lib.zeros(2, dtype="x"),
 "to(int)": lambda lib: lib.ones(2).to(int).dtype,
 "to(dtype=bool)": lambda lib: lib.ones(2).to(dtype=bool).dtype,
 "to('cpu', float)": lambda lib: lib.ones(2).to("cpu", float).dtype,
 "sum dtype=float": lambda lib: lib.ones(2, dtype=lib.int64).sum(dtype=float).dtype,
 "tensor dtype=float": lambda lib: lib.tensor([1], dtype=float).dtype,
 "zeros('a')": lambda lib: lib.zeros("a"),
 "zeros(2.5)": lambda lib: lib.zeros(2.5),
 "zeros(-1)": lambda lib: lib.zeros(-1),
 "fill_(str)": lambda lib: A(lib).fill_("x"),
 "copy_(str)": lambda lib: A(lib).copy_("x"),
 "full str": lambda lib: lib.full((2,), "x"),
 "index_select float": lambda lib: lib.index_select(A(lib), 0, lib.tensor([0.])),
 "index_select oob": lambda lib: lib.index_select(A(lib), 0, lib.tensor([5])),
 "gather oob": lambda lib: lib.gather(A(lib), 1, lib.tensor([[5]])),
 "gather float idx": lambda lib: lib.gather(A(lib), 1, lib.tensor([[0.]])),
 "masked_select nonbool": lambda lib: lib.masked_select(A(lib), lib.ones(2, 3)),
 "roll bad dim": lambda lib: lib.roll(A(lib), 1, 5),
 "norm p=x": lambda lib: lib.norm(A(lib), p="x"),
 "avg_pool2d 0": lambda lib: lib.nn.functional.avg_pool2d(lib.ones(1, 1, 4, 4), 0),
 "empty 2**70": lambda lib: lib.empty(2**70),
 "arange 1e30": lambda lib: lib.arange(1e30),
 "arange 0 step": lambda lib: lib.arange(0, 5, 0),
 "promote_types x": lambda lib: lib.promote_types(lib.float32, "x"),
 "reshape bad": lambda lib: A(lib).reshape(4, 2),
 "view bad": lambda lib: A(lib).view(-1, -1),
 "cat empty list": lambda lib: lib.cat([]),
 "cat dim mismatch": lambda lib: lib.cat([A(lib), lib.ones(2)]),
 "stack diff shapes": lambda lib: lib.stack([A(lib), lib.ones(2)]),
 "mm shapes": lambda lib: lib.mm(A(lib), A(lib)),
 "softmax bad dim": lambda lib: lib.softmax(A(lib), 5),
 "sum bad dim": lambda lib: A(lib).sum(5),
 "transpose bad": lambda lib: A(lib).transpose(0, 5),
 "tensor str": lambda lib: lib.tensor("abc"),
 "tensor ragged": lambda lib: lib.tensor([[1, 2], [3]]),
 "tensor obj": lambda lib: lib.tensor([object()]),
 "randn neg": lambda lib: lib.randn(-2),
 "linear shapes": lambda lib: lib.nn.functional.linear(A(lib), lib.ones(4, 4)),
 "conv2d shape": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 2, 4, 4), lib.ones(1, 3, 3, 3)),
 "cross_entropy target": lambda lib: lib.nn.functional.cross_entropy(A(lib), lib.tensor([0, 9])),
 "one_hot neg": lambda lib: lib.nn.functional.one_hot(lib.tensor([-1])),
 "embedding oob": lambda lib: lib.nn.functional.embedding(lib.tensor([9]), lib.ones(3, 2)),
 "Linear(-1)": lambda lib: lib.nn.Linear(-1, 2),
 "Linear('a')": lambda lib: lib.nn.Linear("a", 2),
 "item multi": lambda lib: A(lib).item(),
 "getitem oob": lambda lib: A(lib)[5],
 "getitem float": lambda lib: A(lib)[1.5],
 "getitem str": lambda lib: A(lib)["a"],
 "setitem shape": lambda lib: A(lib).__setitem__(0, lib.ones(5)),
 "bool ambiguous": lambda lib: bool(A(lib)),
 "int multi": lambda lib: int(A(lib)),
 "add shapes": lambda lib: A(lib) + lib.ones(4),
 "add_ broadcast": lambda lib: lib.ones(3).add_(A(lib)),
 "div int zero": lambda lib: lib.tensor([1]) // lib.tensor([0]),
 "pow neg int": lambda lib: lib.tensor([2]) ** -1,
 "clamp none": lambda lib: A(lib).clamp(),
 "topk too big": lambda lib: A(lib).topk(5),
 "max empty": lambda lib: lib.tensor([]).max(),
 "argmax empty": lambda lib: lib.tensor([]).argmax(),
 "permute bad": lambda lib: A(lib).permute(0, 0),
 "expand bad": lambda lib: A(lib).expand(3, 3),
 "squeeze bad dim": lambda lib: A(lib).squeeze(5),
 "unsqueeze bad dim": lambda lib: A(lib).unsqueeze(5),
 "narrow oob": lambda lib: A(lib).narrow(1, 2, 5),
 "split 0": lambda lib: A(lib).split(0),
 "chunk 0": lambda lib: A(lib).chunk(0),
 "flatten bad": lambda lib: A(lib).flatten(1, 0),
 "requires_grad int": lambda lib: lib.ones(2, dtype=lib.int64).requires_grad_(),
 "backward nonscalar": lambda lib: lib.ones(2, requires_grad=True).mul(2).backward(),
 "to bad dtype": lambda lib: A(lib).to("x"),
 "to bad device": lambda lib: A(lib).to("cuda:9x"),
 "device bad": lambda lib: lib.device("blah"),
 "manual_seed str": lambda lib: lib.manual_seed("x"),
 "where nonbool": lambda lib: lib.where(A(lib), A(lib), A(lib)),
 "scatter oob": lambda lib: lib.zeros(3).scatter_(0, lib.tensor([5]), 1.0),
 "einsum bad": lambda lib: lib.einsum("ij,jk", A(lib), A(lib)),
 "bmm 2d": lambda lib: lib.bmm(A(lib), A(lib)),
 "dot 2d": lambda lib: lib.dot(A(lib), A(lib)),
 "mse shapes": lambda lib: lib.nn.functional.mse_loss(A(lib), lib.ones(3)),
 "dropout p": lambda lib: lib.nn.functional.dropout(A(lib), p=2.0),
 "softmax no dim str": lambda lib: lib.softmax(A(lib), "x"),
 "max_pool2d 0": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 1, 4, 4), 0),
 "pad bad": lambda lib: lib.nn.functional.pad(A(lib), (1,)),
 "interpolate": lambda lib: lib.nn.functional.interpolate(A(lib), scale_factor=2),
 "sort bad dim": lambda lib: A(lib).sort(5),
 "repeat fewer": lambda lib: A(lib).repeat(2),
 "flip bad": lambda lib: A(lib).flip(5),
 "tril 1d": lambda lib: lib.tril(lib.ones(2)),
 "cumsum bad": lambda lib: A(lib).cumsum(5),
 "lerp mismatch": lambda lib: lib.lerp(A(lib), lib.ones(4), 0.5),
 "mean int": lambda lib: lib.ones(2, dtype=lib.int64).mean(),
 "var int": lambda lib: lib.ones(2, dtype=lib.int64).var(),
 "multinomial neg": lambda lib: lib.multinomial(lib.tensor([-1., 1.]), 1),
 "randint bad": lambda lib: lib.randint(5, 2, (2,)),
 "linspace neg": lambda lib: lib.linspace(0, 1, -1),
 "eye neg": lambda lib: lib.eye(-1),
}

# our words differ from PyTorch's here (the type matches):
TYPE_ONLY = {
    "fill_(str)": "PyTorch lists fill_'s overloads; we name the parameter and the type it needs",
    "copy_(str)": "our parameter is called src (PyTorch's binding calls it other)",
    "einsum bad": "numpy's broadcasting words (the same failure: operands that do not broadcast)",
}


def outcome(fn, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = fn(lib)
        except Exception as e:   # the exception is what is compared
            return type(e).__name__, (str(e).splitlines() or [""])[0]
    # a call that succeeds: compare what it returned when that is a dtype (dtype=float...)
    return "no error", str(result) if type(result).__name__ == "dtype" else ""


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_gets_pytorchs_exception(name):
    theirs, ours = outcome(CASES[name], torch), outcome(CASES[name], mt)
    assert ours[0] == theirs[0], (theirs, ours)
    if theirs[0] == "no error":
        assert ours[1] == theirs[1], (theirs, ours)
    if name not in TYPE_ONLY and theirs[0] != "no error":
        key = theirs[1][:40]
        assert ours[1].startswith(key), (theirs, ours)


_SKIP_PREFIXES = ("set_", "use_", "save", "load", "manual_seed", "seed", "initial_seed", "compile", "get_",
                  "is_", "cuda", "autocast", "enable_", "no_grad", "inference_mode", "from_", "vmap", "jit",
                  "export", "cond", "fork", "wait", "typename", "sym_", "random", "default_generator")


def shared_functions():
    names = sorted(n for n in set(dir(mt)) & set(dir(torch)) if not n.startswith("_") and not n.startswith(_SKIP_PREFIXES))
    out = []
    for n in names:
        a, b = getattr(mt, n), getattr(torch, n)
        if isinstance(a, (type, types.ModuleType)) or isinstance(b, type) or not callable(a) or not callable(b):
            continue
        out.append(n)
    return out


# (function, argument) -> why our exception type differs from PyTorch's
KNOWN_DIVERGENCES = {
    ("bernoulli", "str"): "not wrapped as a public function yet (no argument check on failure)",
    ("bernoulli", "list"): "not wrapped as a public function yet",
    ("geqrf", "str"): "not wrapped as a public function yet",
    ("geqrf", "list"): "not wrapped as a public function yet",
    ("norm_except_dim", "str"): "not wrapped as a public function yet",
    ("norm_except_dim", "list"): "not wrapped as a public function yet",
    ("normal", "str"): "not wrapped as a public function yet",
    ("normal", "list"): "not wrapped as a public function yet",
    ("numel", "str"): "not wrapped as a public function yet",
    ("numel", "list"): "not wrapped as a public function yet",
    ("squeeze", "str"): "takes *args (its own argument parser), which the check cannot read",
    ("squeeze", "list"): "takes *args (its own argument parser), which the check cannot read",
    ("broadcast_tensors", "str"): "takes *tensors, which the check cannot read",
    ("broadcast_tensors", "list"): "takes *tensors, which the check cannot read",
    ("norm", "str"): "PyTorch's norm reads input.layout first (AttributeError); ours checks the type",
    ("norm", "list"): "PyTorch's norm reads input.layout first (AttributeError); ours checks the type",
    ("scalar_tensor", "str"): "numpy's ValueError converting the string",
    ("scalar_tensor", "list"): "a list of numbers is accepted (numpy converts it)",
    ("square", "list"): "a list of numbers is accepted (numpy converts it)",
}


def test_every_shared_function_refuses_non_tensors_like_pytorch():
    found = {}
    for name in shared_functions():
        for label, arg in (("str", "x"), ("list", [1, 2])):
            theirs = outcome(lambda lib: getattr(lib, name)(arg), torch)[0]
            ours = outcome(lambda lib: getattr(lib, name)(arg), mt)[0]
            if theirs != ours:
                found[(name, label)] = (theirs, ours)
    assert len(shared_functions()) > 150
    unexpected = {k: v for k, v in found.items() if k not in KNOWN_DIVERGENCES}
    assert not unexpected, unexpected
    fixed = set(KNOWN_DIVERGENCES) - set(found)
    assert not fixed, f"these now match PyTorch: remove them from KNOWN_DIVERGENCES: {sorted(fixed)}"


@pytest.mark.parametrize("call", [
    lambda: torch.exp(mt.ones(2)),
    lambda: torch.add(mt.ones(2), 1),
    lambda: torch.nn.functional.relu(mt.ones(2)),
    lambda: torch.exp(mt.nn.Parameter(mt.ones(2))),
])
def test_a_real_torch_function_given_our_tensor_says_they_do_not_mix(call):
    with pytest.raises(TypeError, match="was called with a minitorch_nn tensor"):
        call()


_SKIP_METHOD_PREFIXES = (
    "set_", "share_memory_", "pin_memory", "cuda", "record_stream", "register_", "backward", "resize",
    "storage", "untyped_storage", "new_", "numpy", "tolist", "data_ptr", "_", "apply_", "map_", "map2_",
    "retain_grad", "requires_grad_", "to", "type", "element_size", "dim_order", "is_", "share", "detach_",
    "rename", "refine_names", "align_", "unflatten", "module_load", "as_subclass", "item", "cpu", "float",
    "double", "half", "bfloat16", "int", "long", "bool", "byte", "char", "short", "clone", "contiguous",
    "zero_", "size", "stride", "numel", "nelement", "ndimension", "dim", "get_device", "storage_offset",
    "sum_to_size",
)   # methods without a tensor-or-number argument to get wrong, or that act on the machine

KNOWN_METHOD_DIVERGENCES = {
    "bernoulli": "its parameter p takes a number or a tensor; a string fails inside numpy (ValueError)",
    "bernoulli_": "as bernoulli",
}


def test_every_shared_method_refuses_a_string_like_pytorch():
    names = sorted(n for n in set(dir(mt.Tensor)) & set(dir(torch.Tensor)) if not n.startswith(_SKIP_METHOD_PREFIXES))
    found = {}
    called = 0
    for name in names:
        if not callable(getattr(mt.Tensor, name, None)):
            continue
        called += 1
        theirs = outcome(lambda lib: getattr(lib.arange(6.).reshape(2, 3), name)("x"), torch)[0]
        ours = outcome(lambda lib: getattr(lib.arange(6.).reshape(2, 3), name)("x"), mt)[0]
        if theirs != ours:
            found[name] = (theirs, ours)
    assert called > 200
    unexpected = {k: v for k, v in found.items() if k not in KNOWN_METHOD_DIVERGENCES}
    assert not unexpected, unexpected
    fixed = set(KNOWN_METHOD_DIVERGENCES) - set(found)
    assert not fixed, f"these now match PyTorch: remove them from KNOWN_METHOD_DIVERGENCES: {sorted(fixed)}"


# -- uniform_ and normal_ take floats: what PyTorch's argument parser accepts and refuses ----------

def _float_argument_values(lib):
    import numpy as np

    return {
        "int": 1, "bool": True, "numpy float32": np.float32(0.5), "0-d tensor": lib.tensor(0.5),
        "1-element tensor": lib.tensor([0.5]), "None": None, "str": "1", "complex": 1 + 0j, "list": [1],
    }


@pytest.mark.parametrize("method", ["uniform_", "normal_"])
@pytest.mark.parametrize("case", list(_float_argument_values(mt)))
@pytest.mark.parametrize("position", [0, 1])
def test_random_fill_float_arguments_match_torch(method, case, position):
    def run(lib):
        args = [0.0, 1.0]
        args[position] = _float_argument_values(lib)[case]
        x = lib.zeros(3)
        try:
            getattr(x, method)(*args)
        except Exception as e:  # noqa: BLE001 - the error is what we compare
            return type(e).__name__, str(e), x.tolist()
        return "ok", None, None

    ours, theirs = run(mt), run(torch)
    assert ours == theirs
