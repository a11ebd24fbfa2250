"""Fingerprints of the readable originals that the compiled twins mirror.

A compiled twin (``_ext/``) is written by hand to do what a readable Python function does. After a
learner edits that function, the twin would still do what the old function did -- after a restart,
and after a rebuild too, since rebuilding recompiles the twin from its own, unchanged source. So
each twin's originals have a *fingerprint* recorded in ``twin_fingerprints.json`` (next to this
file, kept in git with the twins): the fingerprints of the originals as they were when the twin
was written to match them. At import each twin compares the fingerprints of the functions it
finds with the recorded ones; on a mismatch it turns itself off (``backends.compiled._disable_twin``:
one warning, listed by ``compiled.disabled()``) and the readable code runs, edits and all.

Whoever changes a twin and its original together brings the twin back with ``make twins-record``
(``python -m minitorch_nn.backends._twin_fingerprints``), which records the fingerprints of the
originals as they are now (run it only once the twin does what the original does: the tests that
compare each twin with its original, switch on and off, say so).

A fingerprint is a hash of what a function's code object does: its bytecode, constants, names,
argument counts and flags, and the same for the functions and comprehensions nested in it. Line
numbers, the file name and the docstring are left out, so moving a function, editing a comment or
rewording a docstring changes nothing. Bytecode differs between Python versions, so the record
keeps one set of fingerprints per ``major.minor`` version.

``ORIGINALS`` lists, for each twin, the originals it mirrors as ``(file, qualified name)``. A twin
mirrors a function when it does that function's work in its own code (not when it merely calls
it: a function that the twin calls runs as written either way).
"""

from __future__ import annotations

import hashlib
import importlib
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


RECORD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "twin_fingerprints.json")


def _python() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def _resolve(path: str, qualname: str):
    obj = importlib.import_module(path[:-3].replace("/", "."))
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj


def current(twin: str) -> dict[str, str]:
    """``{"file:qualname": fingerprint}`` of ``twin``'s originals as they are now in this process."""
    out = {}
    for path, qualname in ORIGINALS[twin]:
        code = getattr(_resolve(path, qualname), "__code__", None)
        out[f"{path}:{qualname}"] = None if code is None else code_fingerprint(code)
    return out


def _load() -> dict:
    try:
        with open(RECORD, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def mismatches(twin: str) -> list[str]:
    """The originals of ``twin`` whose code differs from the recorded fingerprints (each as
    ``file:qualname``), or one line saying why nothing could be compared."""
    recorded = _load().get(_python())
    if recorded is None:
        return [f"no fingerprints are recorded for Python {_python()} (twin_fingerprints.json)"]
    recorded = recorded.get(twin, {})
    return [key for key, fingerprint in current(twin).items() if fingerprint is None or recorded.get(key) != fingerprint]


def check(twin: str) -> bool:
    """True when every original of ``twin`` has its recorded fingerprint; otherwise turn the twin
    off (a warning, and ``compiled.disabled()`` lists it) and return False. The twin's loader calls
    this once its originals are defined (at the end of their module)."""
    changed = mismatches(twin)
    if not changed:
        return True
    from minitorch_nn.backends import compiled

    compiled._disable_twin(twin, "its original changed since the twin was written: " + ", ".join(changed))
    return False


def write_record(twins=None) -> dict:
    """Record the fingerprints of the originals of ``twins`` (default: all) as they are now, for
    this Python version, and return the record."""
    record = _load()
    entry = record.setdefault(_python(), {})
    for twin in twins or ORIGINALS:
        entry[twin] = current(twin)
    with open(RECORD, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    return record


if __name__ == "__main__":
    names = sys.argv[1:] or list(ORIGINALS)
    write_record(names)
    print(f"recorded the originals of {', '.join(names)} for Python {_python()} in {RECORD}")
