"""The one switch for the compiled twins: ``minitorch_nn.backends.compiled``.

minitorch_nn is meant to be read and changed. The code a learner reads -- ``_dispatch/``, the cpu
kernels in ``backends/cpu/``, ``autograd/recording.py``, ``autograd/engine.py``'s ``run_backward``
-- is the reference. For speed, some of it has a compiled *twin* (Cython, under ``_ext/``) that
gives the same results, errors, warnings, graphs and version counters faster. This module is the
single switch for all of them, in the place PyTorch keeps its backend flags
(``torch.backends.cudnn.enabled``, ``torch.backends.cudnn.flags(enabled=...)``):

>>> import minitorch_nn as torch
>>> torch.backends.compiled.enabled          # on by default
True
>>> with torch.backends.compiled.flags(enabled=False):
...     y = torch.ones(2) + 1                # runs only the readable Python path
>>> torch.backends.compiled.enabled
True

``MINITORCH_NN_COMPILED=0`` in the environment turns the twins off from import on.

With the switch off, nothing compiled stands in for a readable function: every op goes through the
dispatcher, the Python kernels, ``autograd/recording.py`` and ``run_backward``. With it on, a twin
still runs only while the original it mirrors is the one it was written for (its *guard*); a twin
whose original was edited in the source turns itself off at import, warns once, and is listed by
:func:`disabled`.

PyTorch has no such switch (its C++ is not meant to be edited by its users); this one exists so
that reading mode and fast mode can be compared, timed and taught.

The guards, for code that adds a twin (the small API the compiled modules and the Python speed
paths share):

* :func:`check_original` ``(twin, *functions)`` -- at import/first use: whether each function (and
  the helpers of its own module it calls) still has the fingerprint recorded in
  ``_twin_manifest.json`` when the twin was written (``backends/_fingerprint.py``); if not, the twin
  is turned off for the process (a warning, and :func:`disabled` lists it). After changing a
  mirrored function on purpose, make its twin match (``tests/twins`` compares them) and run
  ``make twins-manifest``.
* :class:`Guard` ``(twin, ops=(), functions=())`` -- for a twin written in Python (the optimizers'
  numpy path, the derivatives' direct kernel calls): ``guard.holds()`` is True while the switch is
  on, the fingerprints matched, and each op's registered cpu kernel, its derivative and the
  kernel's module attribute are still the objects they were when the guard was made (identity
  checks).
* :func:`bind` ``(owner, name, twin, readable, mirrors=(), also=())`` -- makes ``owner.name`` the
  compiled ``twin`` while the switch is on and ``readable`` while it is off, so that with the
  switch off no compiled function is even entered; ``readable`` for good if a function in
  ``mirrors`` changed. A binding someone has since replaced is left alone.

The compiled twins (``_ext/twins/``) make the same identity checks in C, per op (``_twins._gate._twin_guard``).
Every guard remembers its originals at the end of ``import minitorch_nn`` (``_remember_originals``),
before a student's code can register anything; :func:`write_manifest` (``make twins-manifest``)
records the fingerprints of everything the guards checked.

What runs with the switch off, and why: a few compiled loops are not twins but part of the
reference kernels themselves, the way numpy's ufuncs are -- they fix *which bits* a kernel gives,
and no numpy expression gives the same bits, so running something else with the switch off would
change results. They are ``_unary_kernels`` (float32 exp, log, tanh... rounded as PyTorch rounds
them: ``backends/cpu/pointwise.py``'s ``_FLOAT_UNARY``; and the C library's erf, exp and tanh,
element by element, for GELU: ``backends/cpu/libm.py``), ``_activation_kernels`` (sigmoid and
softmax with PyTorch's order of operations: ``pointwise._sigmoid``, ``reduction._softmax_impl``) and
``_fma_kernels`` (one rounding for ``a * b + c``: ``backends/cpu/_fma.py``).
Each names its readable description where the kernel calls it. Everything else compiled is a twin
(the modules under ``_ext/twins/``) or a Python speed path (the optimizers' numpy updates), and answers to
the switch.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import types

from minitorch_nn._warnings import warn_user
from minitorch_nn.backends import _fingerprint

# (``enabled`` is a property of the module's class, _CompiledModule, below)
__all__ = ["enabled", "flags", "disabled", "is_enabled", "check_original", "Guard", "bind"]  # noqa: F822

# The state lives in one place; the compiled code keeps a C-level copy that set_enabled updates.
_enabled: bool = os.environ.get("MINITORCH_NN_COMPILED", "1").strip().lower() not in ("0", "false", "off", "no")
_disabled_twins: dict[str, str] = {}   # twin name -> why it turned itself off
_listeners: list = []                  # called with the new value whenever the switch moves


def is_enabled() -> bool:
    """Whether the compiled twins may run (the value of :data:`enabled`)."""
    return _enabled


def _set_enabled(value: bool) -> None:
    global _enabled
    _enabled = bool(value)
    for listener in _listeners:
        listener(_enabled)


def on_change(listener) -> None:
    """Register ``listener(enabled)``, called now and whenever the switch moves.

    Compiled modules register a setter for their C-level copy of the flag here, so that reading
    the switch costs them one C variable read instead of a Python attribute lookup."""
    _listeners.append(listener)
    listener(_enabled)


@contextlib.contextmanager
def flags(enabled: bool = True):
    """Run a block with the compiled twins on (``enabled=True``) or off, then restore the old value.

    >>> import minitorch_nn as torch
    >>> with torch.backends.compiled.flags(enabled=False):
    ...     pass   # only the readable code runs here
    """
    # Rules: remember the current value, switch with ``_set_enabled(enabled)`` (which also tells
    # the compiled code), run the block, and restore the remembered value with ``_set_enabled``
    # when the block ends, also when it raises.
    # BEGIN SOLUTION compiled-flags
    previous = _enabled
    _set_enabled(enabled)
    try:
        yield
    finally:
        _set_enabled(previous)
    # END SOLUTION


def disabled() -> dict[str, str]:
    """The twins that turned themselves off because the original they mirror has changed.

    Maps each twin's name to the reason (which original no longer matches). Empty in an unchanged
    checkout."""
    return dict(_disabled_twins)


def _disable_twin(name: str, reason: str) -> None:
    """Turn one twin off for the rest of the process, and say so once."""
    if name in _disabled_twins:
        return
    _disabled_twins[name] = reason
    warn_user(
        f"minitorch_nn: the compiled twin {name!r} is off because {reason}; the readable code runs "
        "instead (with your change). To bring the twin back, make it match and run `make twins-manifest`.",
        RuntimeWarning,
    )


# -- fingerprints: is the original still the one the twin was built for? ---------------------------

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MANIFEST_PATH = os.path.join(_PACKAGE_DIR, "_twin_manifest.json")
_manifest_cache: dict | None = None


_seen: dict = {}   # (file under the package, qualname) -> fingerprint, of every function checked


def _manifest() -> dict | None:
    """The recorded fingerprints (``{file under the package: {qualname: [fingerprints]}}``), None
    when absent."""
    global _manifest_cache
    if _manifest_cache is None:
        try:
            with open(_MANIFEST_PATH, encoding="utf-8") as f:
                _manifest_cache = json.load(f)
        except (OSError, ValueError):
            _manifest_cache = {}
    return _manifest_cache or None


def original_changed(fn) -> str | None:
    """Why ``fn`` is no longer the function the build recorded (a sentence), or None if it is.

    Compares the fingerprints of ``fn`` and of the helpers of its module that it calls
    (``backends/_fingerprint.py``) with those in ``_twin_manifest.json``."""
    prints = _fingerprint.function_fingerprints(fn)
    if not prints:
        return f"{fn!r} is not a Python function"
    paths = {}
    for (filename, qualname), fp in prints.items():
        path = os.path.relpath(filename, _PACKAGE_DIR).replace(os.sep, "/")
        paths[(path, qualname)] = fp
        if not path.startswith(".."):
            _seen[(path, qualname)] = fp
    manifest = _manifest()
    if manifest is None:
        return "_twin_manifest.json is missing"
    for (path, qualname), fp in paths.items():
        if fp not in manifest.get(path, {}).get(qualname, ()):
            return f"{qualname} in {path} has changed since its twin was written"
    return None


def write_manifest(path: str = _MANIFEST_PATH) -> int:
    """Record, as the originals of the twins, the fingerprints of every function a twin mirrors
    (those checked so far: call it after importing ``minitorch_nn.nn`` and ``minitorch_nn.optim``,
    as ``make twins-manifest`` does). Returns how many functions it recorded."""
    global _manifest_cache
    _remember_originals()
    manifest: dict = {}
    for (file, qualname), fp in sorted(_seen.items()):
        manifest.setdefault(file, {}).setdefault(qualname, []).append(fp)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    _manifest_cache = None
    return len(_seen)


_warned_no_manifest = False


def _warn_no_manifest() -> None:
    global _warned_no_manifest
    _warned_no_manifest = True
    warn_user(
        "minitorch_nn: the compiled twins are off because minitorch_nn/_twin_manifest.json (the "
        "fingerprints of the code they mirror) is missing; the readable code runs instead. "
        "`make twins-manifest` writes it.",
        RuntimeWarning,
    )


def check_original(twin: str, *functions) -> bool:
    """True when every function in ``functions`` is unchanged since the build; else turn ``twin``
    off (warning once, listed by :func:`disabled`) and return False."""
    if twin in _disabled_twins:
        return False
    if _manifest() is None:   # (one warning for all twins, not one each)
        for fn in functions:   # (so that write_manifest knows them)
            original_changed(fn)
        _disabled_twins[twin] = "_twin_manifest.json is missing"
        if not _warned_no_manifest:
            _warn_no_manifest()
        return False
    reasons = [reason for reason in map(original_changed, functions) if reason is not None]
    if reasons:
        _disable_twin(twin, reasons[0])
        return False
    return True


_guards: list = []   # every Guard made (see _remember_originals)
_guard_makers: list = []   # functions that make the compiled twins' own guards (register_guard_maker)


def register_guard_maker(make) -> None:
    """``make(aten)`` makes the guards of compiled twins written in C (the twins' gate registers
    its ``_make_twin_guards`` when the Tensor methods are built); ``_remember_originals`` calls it."""
    _guard_makers.append(make)


def _remember_originals() -> None:
    """Make every guard known so far remember its originals now.

    Called once at the end of ``import minitorch_nn``, while every kernel, derivative and
    function is the package's own: a guard made later (at its first use) would take whatever is
    registered then -- a student's kernel, say -- for the original."""
    from minitorch_nn._ops import aten

    for make in _guard_makers:
        make(aten)
    for guard in _guards:
        if guard._checks is None:
            guard._remember()


class Guard:
    """The guard of a twin written in Python: ``holds()`` while its originals are unchanged.

    ``ops`` are the OpOverloads whose cpu kernels (and derivatives) the twin computes without
    calling them; ``functions`` the readable Python functions it stands in for. At its first
    ``holds()`` (when the kernels are registered) the kernels and functions are checked against
    the build's fingerprints and the objects are remembered; afterwards ``holds()`` compares
    identities only (the registered kernel, the derivative, the kernel's module attribute), which
    costs a few dictionary reads."""

    __slots__ = ("twin", "_ops", "_functions", "_checks", "_ok")

    def __init__(self, twin: str, ops=(), functions=()):
        self.twin, self._ops, self._functions = twin, tuple(ops), tuple(functions)
        self._checks = None
        self._ok = False
        _guards.append(self)

    def _remember(self):
        self._checks = []
        kernels = []
        for op in self._ops:
            kernels_of = op._kernels
            key = "cpu" if "cpu" in kernels_of else "any"
            kernel = kernels_of.get(key)
            module = sys.modules.get(getattr(kernel, "__module__", None) or "")
            name = getattr(kernel, "__name__", None)
            attr = (vars(module), name) if module is not None and getattr(module, name, None) is kernel else None
            self._checks.append((op, kernels_of, key, kernel, op.derivative, attr))
            kernels.append(kernel)
        self._ok = None not in kernels and check_original(self.twin, *kernels, *self._functions)

    def holds(self) -> bool:
        """True while the switch is on and everything the twin mirrors is unchanged."""
        if not _enabled:
            return False
        if self._checks is None:
            self._remember()
        if not self._ok:
            return False
        for op, kernels_of, key, kernel, derivative, attr in self._checks:
            if kernels_of.get(key) is not kernel or op.derivative is not derivative:
                return False
            if key == "any" and "cpu" in kernels_of:
                return False
            if attr is not None and attr[0].get(attr[1]) is not kernel:
                return False
        return True


# -- bindings: the compiled function while the switch is on, the readable one while it is off -------

_bindings: list = []   # (owner, name, twin, readable, also)


def bind(owner, name: str, twin, readable, mirrors=(), also=()):
    """Bind ``owner.name`` to the compiled ``twin`` while the switch is on, to ``readable`` while it
    is off, and return what is bound now.

    ``mirrors``: the readable functions the twin stands in for (a public function's body, say);
    if one has changed since the build (:func:`check_original`), ``readable`` is bound for good.
    ``also``: names of modules that re-export ``owner.name`` (``"minitorch_nn"`` for
    ``minitorch_nn.exp``); a flip rebinds their attribute too. A flip rebinds an attribute only
    while it still holds what was bound: a method or function someone replaced stays theirs."""
    if not check_original(f"{getattr(owner, '__name__', owner)}.{name}", *mirrors):
        setattr(owner, name, readable)
        return readable
    _bindings.append((owner, name, twin, readable, tuple(also)))
    value = twin if _enabled else readable
    setattr(owner, name, value)
    return value


def _rebind(on: bool) -> None:
    for owner, name, twin, readable, also in _bindings:
        old, new = (readable, twin) if on else (twin, readable)
        for target in (owner, *(sys.modules.get(m) for m in also)):
            if target is None:
                continue
            current = target.__dict__.get(name) if isinstance(target, type) else getattr(target, name, None)
            if current is old:
                setattr(target, name, new)


_listeners.append(_rebind)


class _CompiledModule(types.ModuleType):
    """Makes ``compiled.enabled = False`` a real switch (a plain module attribute could not notify
    the compiled code), as ``torch.backends.cudnn`` does for its flags."""

    @property
    def enabled(self) -> bool:
        return _enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        _set_enabled(value)


sys.modules[__name__].__class__ = _CompiledModule


def _register_core_flag() -> None:
    from minitorch_nn import _C  # the tensor core sits below this module: no cycle

    setter = getattr(_C, "_set_compiled_enabled", None)
    if setter is not None:
        on_change(setter)


_register_core_flag()
