"""The package's layers point one way: a module imports only from its own layer or those below.

The layers, bottom to top (DESIGN.md, "Layering"):

0. ``core``: the tensor object (``_C``, ``_tensor``, with its printing, pickling and legacy
   constructors), dtype, device, shape and layout geometry, the process-wide flags (grad mode,
   the compiled-twins switch, ``__future__``), warnings.
1. ``dispatch``: the op registry (``_ops``, ``_aten``) and the dispatch chain (``_dispatch``,
   ``__torch_function__`` and ``__torch_dispatch__`` support).
2. ``kernels``: ``backends`` (cpu, meta, cuda), the compiled kernels, the random engine.
3. ``autograd``: recording, the graph, derivatives, the backward engine, ``Function``.
4. ``functions``: the public functions (``_functions``, ``linalg``, ``torch.*``), the Tensor
   method table, and the public faces of lower layers (``minitorch_nn.autograd``,
   ``minitorch_nn.cuda``).
5. ``nn``: modules, parameters, ``nn.functional``, and ``utils`` and ``func``, which ``nn`` uses
   (``swap_tensors``, hook handles, ``functional_call``).
6. ``optim_export``: what takes modules and their tensors: ``optim``, ``export``, checkpoints
   (``serialization``, ``safetensors_io``).
7. ``testing``: ``testing``, ``course`` and ``viz`` (pictures of live objects), written with
   everything above.

A lower layer that needs an upper one at run time does not import it: the upper one registers
itself when it is imported (a ``register_*`` function or a slot the lower layer reads), or the
object travels through the op registry (``ops.aten``). The few imports that still point upward
are listed in ``UPWARD_ALLOWED``, each with the reason a hook cannot do the job.

Every import counts, also one inside a function, and so does a lookup of a loaded module in
``sys.modules`` by name (it imports nothing, so it makes no cycle, but it still points somewhere).
So does a ``cimport`` of one of our compiled modules, in a ``.pyx`` file or in the module's own
``.pxd``: the cimporting module imports it when it loads. (The kernel twins reach the recorder
twin through a slot in their gate, ``_twins/_gate.pxd``, which the recorder fills.)
The graph is read from the source by ``tests/import_graph.py``; ``python -m tests.import_graph
--upward`` prints the report.
"""

from __future__ import annotations

import pytest

from tests import import_graph

# Longest prefix wins; a module is named exactly or as a package prefix ("a.b" covers "a.b.c").
# "<package>.__init__" names the package's own __init__.py only. A new module that no entry
# covers fails test_every_module_has_a_layer, so that someone decides where it sits.
LAYERS = ("core", "dispatch", "kernels", "autograd", "functions", "nn", "optim_export", "testing")
TWINS = "minitorch_nn._twins"

LAYER_OF_PREFIX = {
    # core
    "minitorch_nn._C": "core",
    "minitorch_nn._tensor": "core",
    "minitorch_nn._tensor_str": "core",  # printing
    "minitorch_nn._serialization_helpers": "core",  # deepcopy and pickle
    "minitorch_nn._legacy": "core",  # Tensor(2, 3), FloatTensor(...)
    "minitorch_nn._dtype": "core",
    "minitorch_nn._device": "core",
    "minitorch_nn._shape": "core",
    "minitorch_nn._warnings": "core",
    "minitorch_nn.__future__": "core",
    "minitorch_nn.backends.layout": "core",
    "minitorch_nn.backends.compiled": "core",
    "minitorch_nn._twins": "core",  # the twins' package: a docstring; each twin takes its original's layer
    "minitorch_nn.backends._fingerprint": "core",  # hashes code objects; imports nothing of ours
    "minitorch_nn.autograd.grad_mode": "core",
    # registry and dispatch
    "minitorch_nn._ops": "dispatch",
    "minitorch_nn._aten": "dispatch",
    "minitorch_nn._arg_parser": "dispatch",
    "minitorch_nn._argument_errors": "dispatch",  # PyTorch's TypeError for a failed call's arguments
    "minitorch_nn._dispatch": "dispatch",
    "minitorch_nn._C_torch_function": "dispatch",
    "minitorch_nn.overrides": "dispatch",
    "minitorch_nn._tensor_subclass": "dispatch",
    # kernels
    "minitorch_nn.backends": "kernels",
    "minitorch_nn._activation_kernels": "kernels",
    "minitorch_nn._unary_kernels": "kernels",
    "minitorch_nn._fma_kernels": "kernels",
    "minitorch_nn._random": "kernels",
    # the twins' shared gate: what the dispatcher would check before a kernel runs, answered in C
    # for the kernel twins, and the slot the recorder twin (autograd) fills for them (it mirrors
    # no one file, so it is named here)
    "minitorch_nn._twins._gate": "kernels",
    "minitorch_nn.random": "kernels",
    # autograd
    "minitorch_nn.autograd": "autograd",
    # public functions
    "minitorch_nn.__init__": "functions",  # the package itself (torch.*), not a prefix
    "minitorch_nn._functions": "functions",
    "minitorch_nn._tensor_methods": "functions",
    "minitorch_nn._tensor_module_load": "functions",
    "minitorch_nn.linalg": "functions",
    "minitorch_nn.cuda": "functions",
    "minitorch_nn._threads": "functions",  # set_num_threads / get_num_threads
    "minitorch_nn.autograd.__init__": "functions",
    "minitorch_nn.autograd.functional": "functions",
    "minitorch_nn.autograd.gradcheck": "functions",
    # nn, and the utilities modules are built with
    "minitorch_nn.nn": "nn",
    "minitorch_nn.utils": "nn",
    "minitorch_nn.func": "nn",
    "minitorch_nn.distributions": "nn",  # built on tensors and nn.functional
    # what takes modules and their tensors
    "minitorch_nn.optim": "optim_export",
    "minitorch_nn.export": "optim_export",
    "minitorch_nn._export": "optim_export",
    "minitorch_nn.serialization": "optim_export",
    "minitorch_nn._serialization": "optim_export",
    "minitorch_nn.safetensors_io": "optim_export",
    # checking and grading code written with all of the above
    "minitorch_nn.testing": "testing",
    "minitorch_nn.course": "testing",
    "minitorch_nn.viz": "testing",  # pictures of tensors, graphs, modules and programs
}

# (importer, imported) -> why this upward import stays. Keep it short; every entry is a debt.
UPWARD_ALLOWED: dict[tuple[str, str], str] = {
    ("minitorch_nn.backends.compiled", "minitorch_nn._ops"): (
        "compiled._remember_originals runs once, as the last line of `import minitorch_nn`, when "
        "every layer is loaded: it hands ops.aten to the twins' guard makers so the per-op guards "
        "record the kernels and derivatives registered then. The switch itself must sit in core "
        "(_C reads it), and a hook would be one more registration that exists only to deliver the "
        "same object"
    ),
    # Lookups in sys.modules import nothing: while the upper module is not loaded, no tensor can
    # have what printing asks about. A hook would make nn or forward AD load the printer (loaded
    # on the first print) when they load.
    ("minitorch_nn._tensor_str", "minitorch_nn.nn.parameter"): (
        "a lookup: a tensor prints as Parameter only if nn.parameter is loaded"
    ),
    ("minitorch_nn._tensor_str", "minitorch_nn.autograd.forward_ad"): (
        "a lookup: a tensor has a tangent to print only while forward AD is loaded and a dual "
        "level is active"
    ),
}

# The largest group of modules that import each other, directly or through others.
MAX_CYCLE = 16


def layer_of(module: str) -> str:
    """The layer a module belongs to (its longest matching prefix in ``LAYER_OF_PREFIX``)."""
    if import_graph.module_files()[module].name == "__init__.py":
        # A package's __init__ is its public face: it may sit above its own submodules.
        exact = LAYER_OF_PREFIX.get(f"{module}.__init__")
        if exact:
            return exact
    name = module
    if name.startswith(TWINS + ".") and name not in LAYER_OF_PREFIX:
        # A compiled twin sits in the layer of the file it mirrors (its path after ``_twins``).
        name = "minitorch_nn." + name[len(TWINS) + 1:]
    while name:
        if name in LAYER_OF_PREFIX:
            return LAYER_OF_PREFIX[name]
        name = name.rpartition(".")[0]
    raise KeyError(f"{module} has no layer: add it to LAYER_OF_PREFIX in tests/test_layers.py")


def upward_imports(edges=None):
    """Every import whose target sits in a higher layer than its importer."""
    if edges is None:
        edges = import_graph.collect_imports()
    found = []
    for edge in edges:
        source_layer, target_layer = layer_of(edge.source), layer_of(edge.target)
        if LAYERS.index(target_layer) > LAYERS.index(source_layer):
            found.append((edge, source_layer, target_layer))
    return found


@pytest.fixture(scope="module")
def edges():
    return import_graph.collect_imports()


def test_every_module_has_a_layer():
    missing = []
    for module in import_graph.module_files():
        try:
            layer_of(module)
        except KeyError:
            missing.append(module)
    assert not missing, f"modules without a layer in LAYER_OF_PREFIX: {missing}"


def test_no_upward_import_at_module_level(edges):
    # never allowed, not even for an allowlisted pair: a hook always can do the job at import
    offending = [
        f"{edge.where}: {edge.source} ({low}) imports {edge.target} ({high})"
        for edge, low, high in upward_imports(edges)
        if not edge.in_function
    ]
    assert not offending, "upward imports at module level:\n" + "\n".join(offending)


def test_upward_imports_in_functions_are_allowlisted(edges):
    offending = [
        f"{edge.where}: {edge.source} ({low}) imports {edge.target} ({high})"
        for edge, low, high in upward_imports(edges)
        if (edge.source, edge.target) not in UPWARD_ALLOWED
    ]
    assert not offending, (
        "upward imports inside functions; use a registration hook, or add the pair to "
        "UPWARD_ALLOWED with the reason a hook cannot do the job:\n" + "\n".join(offending)
    )


def test_allowlist_has_no_stale_entries(edges):
    used = {(edge.source, edge.target) for edge, _, _ in upward_imports(edges)}
    stale = sorted(set(UPWARD_ALLOWED) - used)
    assert not stale, f"UPWARD_ALLOWED entries that no longer occur (remove them): {stale}"
    assert all(reason.strip() for reason in UPWARD_ALLOWED.values())


def test_largest_import_cycle_is_small(edges):
    cycles = import_graph.import_cycles(import_graph.build_graph(edges))
    largest = cycles[0] if cycles else set()
    assert len(largest) <= MAX_CYCLE, (
        f"the largest import cycle has {len(largest)} modules (at most {MAX_CYCLE}): "
        f"{sorted(largest)}"
    )


# -- the measuring tool itself --------------------------------------------------------------------


def _edges_of(tmp_path, files):
    """The import edges of a made-up package: ``files`` maps paths under ``tmp_path`` to text."""
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return import_graph.collect_imports(tmp_path / "minitorch_nn")


def test_import_graph_counts_function_level_and_submodule_imports(tmp_path):
    edges = _edges_of(
        tmp_path,
        {
            "minitorch_nn/__init__.py": "",
            "minitorch_nn/a.py": "def f():\n    from minitorch_nn import b\n",
            "minitorch_nn/b.py": "from . import c\nfrom .c import name\n",
            "minitorch_nn/c.py": "import minitorch_nn.a\n",
            "minitorch_nn/pkg/__init__.py": "from .d import x\n",
            "minitorch_nn/pkg/d.py": "from .. import a\nimport os\n",
        },
    )
    pairs = {(e.source, e.target, e.in_function) for e in edges}
    assert pairs == {
        ("minitorch_nn.a", "minitorch_nn.b", True),
        ("minitorch_nn.b", "minitorch_nn.c", False),
        ("minitorch_nn.c", "minitorch_nn.a", False),
        ("minitorch_nn.pkg", "minitorch_nn.pkg.d", False),
        ("minitorch_nn.pkg.d", "minitorch_nn.a", False),
    }
    cycles = import_graph.import_cycles(import_graph.build_graph(edges))
    assert cycles == [{"minitorch_nn.a", "minitorch_nn.b", "minitorch_nn.c"}]
    # without the function-level import there is no cycle
    assert import_graph.import_cycles(import_graph.build_graph(edges, include_functions=False)) == []


def test_import_graph_follows_import_module_and_sys_modules_by_constant_name(tmp_path):
    edges = _edges_of(
        tmp_path,
        {
            "minitorch_nn/__init__.py": "",
            "minitorch_nn/a.py": (
                "import importlib, sys\n"
                "def f(name):\n"
                "    importlib.import_module('minitorch_nn.b')\n"
                "    importlib.import_module(name)\n"  # not a constant: cannot be followed
                "    return sys.modules.get('minitorch_nn.c'), sys.modules['minitorch_nn.b']\n"
            ),
            "minitorch_nn/b.py": "import minitorch_nn.a\n",
            "minitorch_nn/c.py": "from minitorch_nn import a\n",
        },
    )
    found = {(e.source, e.target, e.kind) for e in edges}
    assert found == {
        ("minitorch_nn.a", "minitorch_nn.b", "import"),
        ("minitorch_nn.a", "minitorch_nn.c", "lookup"),
        ("minitorch_nn.a", "minitorch_nn.b", "lookup"),
        ("minitorch_nn.b", "minitorch_nn.a", "import"),
        ("minitorch_nn.c", "minitorch_nn.a", "import"),
    }
    # a lookup imports nothing, so it closes no cycle
    assert import_graph.import_cycles(import_graph.build_graph(edges)) == [{"minitorch_nn.a", "minitorch_nn.b"}]


def test_import_graph_reads_compiled_modules_sources(tmp_path):
    # _ext/<name>.pyx is the module minitorch_nn.<name>; its included .pxi files count as it
    edges = _edges_of(
        tmp_path,
        {
            "minitorch_nn/__init__.py": "",
            "minitorch_nn/ops.py": "",
            "minitorch_nn/dtype.py": "",
            "_ext/_C.pyx": (
                "cimport numpy as cnp\nimport numpy as np\n"
                "from minitorch_nn import dtype\ninclude \"_fast.pxi\"\n"
            ),
            "_ext/_fast.pxi": "cdef f():\n    from minitorch_nn.ops import (\n        aten,\n    )\n",
        },
    )
    found = {(e.source, e.target, e.in_function, e.where) for e in edges}
    assert found == {
        ("minitorch_nn._C", "minitorch_nn.dtype", False, "_C.pyx:3"),
        ("minitorch_nn._C", "minitorch_nn.ops", True, "_fast.pxi:2"),
    }


def test_import_graph_counts_cimports_of_our_compiled_modules(tmp_path):
    # A module that cimports one of ours loads it at import (for its types and C functions); a
    # cimport of numpy, libc or cpython loads nothing of ours. A module's own .pxd
    # (minitorch_nn/<path>.pxd) is compiled into it, so its cimports count as the module's.
    edges = _edges_of(
        tmp_path,
        {
            "minitorch_nn/__init__.py": "",
            "minitorch_nn/_twins/__init__.py": "",
            "minitorch_nn/_twins/_gate.pxd": "from minitorch_nn._C cimport TensorImpl\n",
            "minitorch_nn/_twins/up.py": "",
            "_ext/_C.pyx": "from libc.math cimport exp\ncimport numpy as cnp\nfrom cpython.object cimport PyObject\n",
            "_ext/twins/_gate.pyx": "cimport numpy as cnp\n",
            "_ext/twins/kernel.pyx": (
                "from minitorch_nn._twins._gate cimport (_Recipe, _record,\n"
                "                                        recorder_ready)\n"
                "from minitorch_nn._twins cimport _gate\n"
                "cimport minitorch_nn._C as C\n"
            ),
            "_ext/twins/recorder.pyx": "from minitorch_nn._twins cimport up\n",
        },
    )
    found = {(e.source, e.target, e.in_function, e.where) for e in edges}
    assert found == {
        ("minitorch_nn._twins._gate", "minitorch_nn._C", False, "_gate.pxd:1"),
        ("minitorch_nn._twins.kernel", "minitorch_nn._twins._gate", False, "kernel.pyx:1"),
        ("minitorch_nn._twins.kernel", "minitorch_nn._twins._gate", False, "kernel.pyx:3"),
        ("minitorch_nn._twins.kernel", "minitorch_nn._C", False, "kernel.pyx:4"),
        ("minitorch_nn._twins.recorder", "minitorch_nn._twins.up", False, "recorder.pyx:1"),
    }


def test_upward_import_is_reported():
    edge = import_graph.Import("minitorch_nn._dispatch", "minitorch_nn.nn", "x.py:1", True)
    assert upward_imports([edge]) == [(edge, "dispatch", "nn")]
    down = import_graph.Import("minitorch_nn.nn", "minitorch_nn._dispatch", "x.py:1", False)
    assert upward_imports([down]) == []
