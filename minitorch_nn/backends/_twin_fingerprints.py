"""Fingerprints of the readable originals that the compiled twins mirror.

A compiled twin (``_ext/``) is built from its own source, so after a learner edits the Python
function it mirrors and restarts, the twin would still do what the old function did. To catch
that, the build records a *fingerprint* of each original, and at import each twin compares the
fingerprint of the function it finds with the recorded one: on a mismatch the twin turns itself
off (``backends.compiled._disable_twin``: one warning, listed by ``compiled.disabled()``) and the
readable code runs. A rebuild (``make build``) records the new fingerprints and brings the twin
back, once the twin's source has been brought in line by hand.

A fingerprint is a hash of what a function's code object does: its bytecode, constants, names,
argument counts and flags, and the same for the functions and comprehensions nested in it. Line
numbers, the file name and the docstring are left out, so moving a function, editing a comment or
rewording a docstring changes nothing.

This module is read twice: by ``setup.py``, which loads it by path before the package can be
imported (hence only the standard library here) and calls :func:`write_record`; and by the twins
at import, through :func:`check`.

``ORIGINALS`` lists, for each twin, the originals it mirrors as ``(file, qualified name)``. A twin
mirrors a function when it does that function's work in its own code (not when it merely calls
it: a function that the twin calls runs as written either way).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import types

ORIGINALS: dict[str, tuple[tuple[str, str], ...]] = {
    # _ext/_engine_fast.pyx: run_backward, its _send, _add_to_buffer and ReadyQueue, and the
    # OpNode / SavedTensor methods it runs in C
    "autograd.engine": (
        ("minitorch_nn/autograd/engine.py", "run_backward"),
        ("minitorch_nn/autograd/engine.py", "_send"),
        ("minitorch_nn/autograd/engine.py", "_add_to_buffer"),
        ("minitorch_nn/autograd/engine.py", "_call_tensor_hooks"),   # skipped for a leaf without hooks
        ("minitorch_nn/autograd/engine.py", "_run_tensor_hooks"),
        ("minitorch_nn/autograd/ready_queue.py", "ReadyQueue.push"),
        ("minitorch_nn/autograd/ready_queue.py", "ReadyQueue.pop"),
        ("minitorch_nn/autograd/recording.py", "OpNode.apply"),
        ("minitorch_nn/autograd/recording.py", "OpNode._apply"),
        ("minitorch_nn/autograd/recording.py", "OpNode.release_variables"),
        ("minitorch_nn/autograd/graph.py", "SavedTensor.unpack"),
        ("minitorch_nn/autograd/graph.py", "SavedTensor.release"),
    ),
    # _ext/_autograd_fast.pxi: the autograd layer and the recorders of recording.py, and the
    # constructors of graph.py's objects, which it fills in C
    "autograd.recording": (
        ("minitorch_nn/autograd/recording.py", "autograd_layer"),
        ("minitorch_nn/autograd/recording.py", "_any_requires_grad"),
        ("minitorch_nn/autograd/recording.py", "_record_simple"),
        ("minitorch_nn/autograd/recording.py", "_record_computed"),
        ("minitorch_nn/autograd/recording.py", "_start_simple"),
        ("minitorch_nn/autograd/recording.py", "_finish_simple"),
        ("minitorch_nn/autograd/recording.py", "_record"),
        ("minitorch_nn/autograd/recording.py", "_edge"),
        ("minitorch_nn/autograd/recording.py", "_wire_output"),
        ("minitorch_nn/autograd/recording.py", "_saved_value"),
        ("minitorch_nn/autograd/recording.py", "_run_below"),
        ("minitorch_nn/autograd/recording.py", "OpNode.__init__"),
        ("minitorch_nn/autograd/graph.py", "SavedTensor.__init__"),
        ("minitorch_nn/autograd/graph.py", "AccumulateGrad.__init__"),
        ("minitorch_nn/autograd/graph.py", "grad_accumulator"),
        ("minitorch_nn/autograd/graph.py", "_alias"),
    ),
}

# Where the build writes the record, next to the package's compiled modules.
RECORD_NAME = "_twin_fingerprints.json"


def code_fingerprint(code: types.CodeType) -> str:
    """A hex digest of what ``code`` does (see the module docstring for what is left out)."""
    digest = hashlib.sha256()
    _feed(digest, code)
    return digest.hexdigest()


def _feed(digest, code: types.CodeType) -> None:
    consts = code.co_consts
    if (code.co_flags & _FUNCTION_LIKE and code.co_name not in _COMPREHENSIONS and consts
            and (consts[0] is None or isinstance(consts[0], str))):
        # a function's first constant is its docstring (or None when it has none)
        consts = consts[1:]
    fields = (code.co_code, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars,
              code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags,
              code.co_exceptiontable if hasattr(code, "co_exceptiontable") else b"")
    digest.update(repr(fields).encode())
    for c in consts:
        if isinstance(c, types.CodeType):
            digest.update(b"<code>")
            _feed(digest, c)
        else:
            digest.update(repr((type(c).__name__, c)).encode())


# CO_NEWLOCALS | CO_OPTIMIZED: set on functions and lambdas (whose first constant is the
# docstring slot), not on a module's or a class body's code
_FUNCTION_LIKE = 0x0001 | 0x0002
_COMPREHENSIONS = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"})


def _qualified_codes(code: types.CodeType, out: dict) -> dict:
    """Every function code object inside ``code``, by qualified name (``OpNode.apply``)."""
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out.setdefault(c.co_qualname, c)
            _qualified_codes(c, out)
    return out


def fingerprints_of_source(path: str) -> dict[str, str]:
    """Compile the file at ``path`` as an import would and fingerprint each function in it."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    module_code = compile(source, path, "exec", dont_inherit=True)
    return {name: code_fingerprint(c) for name, c in _qualified_codes(module_code, {}).items()}


def build_record(root: str) -> dict[str, dict[str, str]]:
    """``{twin: {"file:qualname": fingerprint}}`` for the sources under ``root``."""
    by_file: dict[str, dict[str, str]] = {}
    record: dict[str, dict[str, str]] = {}
    for twin, originals in ORIGINALS.items():
        entry = record.setdefault(twin, {})
        for path, qualname in originals:
            if path not in by_file:
                by_file[path] = fingerprints_of_source(os.path.join(root, path))
            fingerprint = by_file[path].get(qualname)
            if fingerprint is None:
                raise LookupError(f"{path} defines no {qualname}, which the twin {twin!r} mirrors")
            entry[f"{path}:{qualname}"] = fingerprint
    return record


def write_record(root: str, package_dir: str) -> str:
    """Write the record for the sources under ``root`` into ``package_dir`` (setup.py's step)."""
    target = os.path.join(package_dir, RECORD_NAME)
    with open(target, "w", encoding="utf-8") as f:
        json.dump({"python": list(sys.version_info[:2]), "twins": build_record(root)}, f, indent=1, sort_keys=True)
    return target


def _recorded() -> dict | None:
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), RECORD_NAME)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _resolve(path: str, qualname: str):
    module = sys.modules.get(path[:-3].replace("/", "."))
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj


def mismatches(twin: str) -> list[str]:
    """The originals of ``twin`` whose code differs from what the build recorded (each as
    ``file:qualname``, or one line saying why nothing could be compared)."""
    record = _recorded()
    if record is None:
        return [f"the build recorded no fingerprints ({RECORD_NAME} is missing)"]
    if tuple(record.get("python", ())) != tuple(sys.version_info[:2]):
        return [f"the fingerprints were recorded by Python {record.get('python')}"]
    recorded = record.get("twins", {}).get(twin, {})
    changed = []
    for path, qualname in ORIGINALS[twin]:
        key = f"{path}:{qualname}"
        fn = _resolve(path, qualname)
        code = getattr(fn, "__code__", None)
        if code is None or recorded.get(key) != code_fingerprint(code):
            changed.append(key)
    return changed


def check(twin: str) -> bool:
    """True when every original of ``twin`` is the code the build saw; otherwise turn the twin
    off (a warning, and ``compiled.disabled()`` lists it) and return False. The modules holding
    the originals must be imported (the twin's loader calls this at the end of its module)."""
    changed = mismatches(twin)
    if not changed:
        return True
    from minitorch_nn.backends import compiled

    compiled._disable_twin(twin, "its original changed since the build: " + ", ".join(changed))
    return False
