"""Shared pieces of the ``nn.Module`` oracle tests (``test_module_*_oracle.py``).

Each scenario there is a function of ``lib`` (``torch`` or ``minitorch_nn``) that returns plain
Python data; the test runs it on both libraries and compares. Here: the autouse fixture that
leaves the global RNGs as it found them, the random module trees (parameters, persistent and
non-persistent buffers, None entries, shared children, extra_repr text) built identically in
both libraries, and the error-comparison helpers.
"""

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import minitorch_nn as mt  # noqa: E402

LIBS = (torch, mt)


@pytest.fixture(autouse=True)
def keep_global_rng_state():
    # Layers initialise from the global generators; leave them as we found them so that other
    # test files do not depend on whether these tests ran first.
    states = torch.get_rng_state(), mt.get_rng_state()
    yield
    torch.set_rng_state(states[0])
    mt.set_rng_state(states[1])


# -- building the same random module tree in both libraries ---------------------------------------
def random_spec(rng, depth=0, n_built=None):
    """A tree description: a list of registration ops in order, plus an extra_repr string."""
    n_built = n_built if n_built is not None else [0]
    ops = []
    names = iter(f"{c}{i}" for i in range(100) for c in "abcdefgh")
    for _ in range(rng.randint(0, 4)):
        kind = rng.choice("ppbbcn" if depth < 2 else "ppbb")
        name = next(names)
        shape = tuple(rng.randint(1, 3) for _ in range(rng.randint(0, 2)))
        if kind == "p":
            ops.append(("p", name, shape, rng.random() < 0.8))
        elif kind == "b":
            ops.append(("b", name, shape, rng.random() < 0.7))
        elif kind == "n":
            ops.append((rng.choice(["pnone", "bnone", "cnone"]), name))
        elif n_built[0] and rng.random() < 0.3:
            ops.append(("shared", name, rng.randrange(n_built[0])))
        else:
            ops.append(("c", name, random_spec(rng, depth + 1, n_built)))
    n_built[0] += 1
    extra = rng.choice(["", "", "k=1", "line1\nline2", "a\n\nb"])
    return {"ops": ops, "extra": extra}


def node_class(lib):
    class Node(lib.nn.Module):
        def __init__(self, spec, built, rng):
            super().__init__()
            self.extra = spec["extra"]
            for op in spec["ops"]:
                kind, name = op[0], op[1]
                if kind == "p":
                    data = lib.tensor(rng.standard_normal(op[2]).astype(np.float32))
                    setattr(self, name, lib.nn.Parameter(data, requires_grad=op[3]))
                elif kind == "b":
                    self.register_buffer(
                        name,
                        lib.tensor(rng.standard_normal(op[2]).astype(np.float32)),
                        persistent=op[3],
                    )
                elif kind == "pnone":
                    self.register_parameter(name, None)
                elif kind == "bnone":
                    self.register_buffer(name, None)
                elif kind == "cnone":
                    self.add_module(name, None)
                elif kind == "shared":
                    setattr(self, name, built[op[2]])
                else:
                    setattr(self, name, Node(op[2], built, rng))
            built.append(self)

        def extra_repr(self):
            return self.extra

        def forward(self, x):
            return x

    return Node


def build(lib, spec, seed=0):
    # Children are built before their parent appends itself, so `built` indices match random_spec's.
    return node_class(lib)(spec, [], np.random.default_rng(seed))


def structure(m):
    sd = m.state_dict()
    return {
        "sd_keys": list(sd),
        "metadata": dict(sd._metadata),
        "sd_keep_vars_types": [type(v).__name__ for v in m.state_dict(keep_vars=True).values()],
        "named_parameters": [n for n, _ in m.named_parameters()],
        "named_parameters_all": [n for n, _ in m.named_parameters(remove_duplicate=False)],
        "named_parameters_local": [n for n, _ in m.named_parameters(prefix="pre", recurse=False)],
        "named_buffers": [n for n, _ in m.named_buffers()],
        "named_buffers_all": [n for n, _ in m.named_buffers(remove_duplicate=False)],
        "named_modules": [n for n, _ in m.named_modules()],
        "named_modules_all": [n for n, _ in m.named_modules(remove_duplicate=False, prefix="root")],
        "named_children": [n for n, _ in m.named_children()],
        "n_parameters": len(list(m.parameters())),
        "n_buffers": len(list(m.buffers())),
        "repr": repr(m),
        "dir_has": [k for k in ("a0", "b0", "c0", "training", "forward") if k in dir(m)],
    }


# -- load_state_dict errors -------------------------------------------------------------------------
def error_of(fn):
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return "ok", repr(out)


def assert_same_error(ours, theirs):
    assert ours[0] == theirs[0]
    assert ours[1].startswith(theirs[1]), (ours[1], theirs[1])
    rest = ours[1][len(theirs[1]) :]
    assert rest == "" or rest.startswith("\nHint:"), rest


def net(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.p = lib.nn.Parameter(lib.zeros(2))
            self.fc = lib.nn.Sequential(Leaf(lib), lib.nn.ModuleList([Leaf(lib)]))
            self.register_buffer("buf", lib.zeros(3))
            self.register_buffer("tmp", lib.zeros(1), persistent=False)
            self.add_module("empty", None)

        def forward(self, x):
            return x

    return Net()


def Leaf(lib):  # noqa: N802
    class Leaf(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = lib.nn.Parameter(lib.ones(3, 2))
            self.bias = lib.nn.Parameter(lib.zeros(3))

    return Leaf()


def sd_variants(lib):
    base = net(lib).state_dict()
    yield "full", dict(base)
    d = dict(base)
    del d["p"], d["fc.1.0.bias"]
    yield "missing", d
    d = dict(
        base, extra=lib.zeros(1), **{"fc.extra2": lib.zeros(1), "fc.0.weight.bad": lib.zeros(1)}
    )
    yield "unexpected", d
    d = dict(base)
    del d["buf"]
    d["tmp"] = lib.zeros(1)
    d["empty.weight"] = lib.zeros(1)
    yield "nonpersistent_and_none_child", d
    d = dict(base, **{"fc.0.weight": lib.zeros(5, 5), "buf": lib.zeros(2)})
    yield "size_mismatch", d
    d = dict(base, **{"fc.0.weight": [[1.0, 2.0]]})
    yield "not_a_tensor", d
    d = dict(base, _extra_state=lib.zeros(1))
    del d["p"]
    yield "everything", dict(d, **{"fc.0.bias": lib.zeros(7), "junk": lib.zeros(1)})
    yield "module_prefix", {"module." + k: v for k, v in base.items()}
