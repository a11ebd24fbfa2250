"""Fingerprints of Python functions, so a compiled twin can tell whether its original was edited.

A compiled twin (``_ext/``) mirrors a readable Python function: a cpu kernel, a public function,
a derivative. When a student edits that function's source and restarts, the twin must step aside.
``minitorch_nn/_twin_manifest.json`` records the fingerprint of every function a twin mirrors, as
it was when the twin was written and tested against it (``make twins-manifest`` writes it, from
the live functions); at import :func:`function_fingerprints` computes the fingerprints of the
functions loaded now (``fn.__code__``), and :mod:`minitorch_nn.backends.compiled` compares the two.
:func:`module_fingerprints` gives the same fingerprints from a module's source text (compiled with
:func:`compile`, never run), for tools that must not import the package.

A fingerprint is a hash of what the function *does*: its bytecode, constants (nested functions and
lambdas included, recursively), the global and attribute names it uses and its argument counts.
Line numbers, the file name and local variable names are left out, so moving a function or
renaming a local keeps its fingerprint; changing an operator, a constant or a called name changes it.

The manifest is part of the source, not of the build: a rebuild after an edit must not make a
twin take the edited function for the one it was written to mirror.

This file imports nothing from the package.
"""

from __future__ import annotations

import hashlib
import types

__all__ = ["code_fingerprint", "module_fingerprints", "function_fingerprints"]


def _feed(h, code: types.CodeType) -> None:
    h.update(code.co_code)
    h.update(repr((code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
                   code.co_flags, code.co_names, code.co_nlocals)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            h.update(b"<code>")
            _feed(h, const)
        else:
            h.update(repr((type(const).__name__, const)).encode())


def code_fingerprint(code: types.CodeType) -> str:
    """The fingerprint of one code object (a function body with everything nested in it)."""
    h = hashlib.blake2b(digest_size=8)
    _feed(h, code)
    return h.hexdigest()


def module_fingerprints(source: str, filename: str = "<module>") -> dict[str, list[str]]:
    """``{qualified name: [fingerprints]}`` for every function (nested ones too) in ``source``.

    A list, because several functions may share a qualified name (two lambdas at the top of a
    module are both ``<lambda>``)."""
    out: dict[str, list[str]] = {}

    def walk(code):
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                prints = out.setdefault(const.co_qualname, [])
                fp = code_fingerprint(const)
                if fp not in prints:
                    prints.append(fp)
                walk(const)

    walk(compile(source, filename, "exec", dont_inherit=True))
    return out


def _unwrap(obj):
    seen = 0
    while getattr(obj, "__wrapped__", None) is not None and seen < 8:   # (a decorator's wrapper: its original)
        obj, seen = obj.__wrapped__, seen + 1
    return obj if isinstance(obj, types.FunctionType) else None


def _names(code: types.CodeType):
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _names(const)


def function_fingerprints(fn) -> dict[tuple[str, str], str]:
    """``{(source file, qualified name): fingerprint}`` for ``fn`` and the functions of its own
    source file that it calls by global name, directly or through each other (its helpers: an
    edit to ``binary`` changes what ``add`` computes). Files, not ``__module__``: a decorator's
    wrapper may carry the name of the module it decorates."""
    fn = _unwrap(fn)
    if fn is None:
        return {}
    out: dict[tuple[str, str], str] = {}
    todo = [fn]
    while todo:
        f = todo.pop()
        code = f.__code__
        key = (code.co_filename, code.co_qualname)
        if key in out:
            continue
        out[key] = code_fingerprint(code)
        namespace = f.__globals__
        for name in set(_names(code)):
            helper = _unwrap(namespace.get(name))
            if helper is not None and helper.__code__.co_filename == code.co_filename:
                todo.append(helper)
    return out
