"""PyTorch's Python argument parser, for the shape and dim signatures whose call forms people mix up.

Mirrors ``torch/csrc/utils/python_arg_parser.cpp`` for the functions and methods that use it
here (``reshape``, ``view``, ``permute``, ``expand``, ``repeat``, ``flip``, ``sum``, ``mean``,
``transpose``, ``squeeze``, ``unsqueeze``): which forms are accepted and the exact ``TypeError``
each wrong form gets. The rules a reader needs:

* a method whose only positional parameter is a list of ints takes it spread out as well:
  ``x.reshape(2, 8)`` is ``x.reshape((2, 8))``; the function ``torch.reshape(x, 2, 8)`` is refused
  ("takes 2 positional arguments but 3 were given"), as is ``torch.reshape(x, -1)`` (an int is no
  list of ints, except for a parameter of fixed length 1 such as ``sum``'s ``dim``);
* parameters may also be passed by keyword, ``dim`` also as ``axis`` and ``keepdim`` as
  ``keepdims`` (numpy's names); a missing argument is reported before an unknown keyword;
* ``bool`` parameters take only bools and ``int`` parameters only ints (or ``__index__``
  objects, not bools for ints in lists of ints... the details live in ``_shape.normalize_size``);
* a function with several signatures (``sum``: ``(*, dtype)`` and ``(dim, keepdim, *, dtype)``)
  reports the one signature's own error when only that one takes this many arguments, else
  "received an invalid combination of arguments" and the list of signatures.

Where we differ: only the signatures listed in this module are parsed this way; the others are
plain Python functions, whose wrong calls get Python's own ``TypeError`` wording.
"""

from __future__ import annotations

import operator

from minitorch_nn._shape import _type_name, normalize_size

REQUIRED = object()   # the default of a parameter that has none
_NUMPY_NAMES = {"dim": "axis", "keepdim": "keepdims"}   # the aliases the parser accepts

# what PyTorch's messages call each kind of parameter
_KIND_NAMES = {"int[]": "tuple of ints", "int[1]": "tuple of ints", "int": "int", "bool": "bool",
               "dtype": "torch.dtype", "Tensor": "Tensor"}


class Param:
    """One parameter: ``kind`` is ``int[]`` (a list of ints), ``int[1]`` (a list of ints, or one
    int), ``int``, ``bool``, ``dtype`` or ``Tensor``; ``nullable`` accepts None; ``keyword_only``
    after ``*``."""

    __slots__ = ("name", "kind", "default", "nullable", "keyword_only")

    def __init__(self, name, kind, default=REQUIRED, *, nullable=False, keyword_only=False):
        self.name, self.kind, self.default = name, kind, default
        self.nullable, self.keyword_only = nullable, keyword_only

    def __str__(self):
        text = f"{_KIND_NAMES[self.kind]} {self.name}"
        if self.default is not REQUIRED:
            text += f" = {self.default}"
        return text


def signature_text(params) -> str:
    """How PyTorch prints a signature in "expected one of": ``tuple of ints dim, *, torch.dtype dtype = None``."""
    parts, star = [], False
    for p in params:
        if p.keyword_only and not star:
            parts.append("*")
            star = True
        parts.append(str(p))
    return ", ".join(parts)


def parse(fn_name, params, args, kwargs):
    """The values of ``params`` in this call (positional ``args`` without ``self``; ``kwargs``),
    converted (lists of ints as lists), or PyTorch's ``TypeError`` for this one signature."""
    positional = [p for p in params if not p.keyword_only]
    if len(positional) == 1 and positional[0].kind in ("int[]", "int[1]") and args and _is_int(args[0]):
        args = (tuple(args),)   # x.reshape(2, 8): the list of ints spread out
    if len(args) > len(positional):
        raise TypeError(_too_many(fn_name, positional, len(args)))
    kwargs = dict(kwargs) if kwargs else {}
    values, missing = [], []
    for i, p in enumerate(params):
        if i < len(args) and not p.keyword_only:
            values.append(_convert(fn_name, p, args[i], i + 1))
            continue
        names = (p.name, _NUMPY_NAMES[p.name]) if p.name in _NUMPY_NAMES else (p.name,)
        given = [n for n in names if n in kwargs]
        if given:
            values.append(_convert(fn_name, p, kwargs.pop(given[0]), None))
        elif p.default is REQUIRED:
            missing.append(p.name)
            values.append(None)
        else:
            values.append(p.default)
    if missing:
        # (PyTorch's wording: "arguments" for one, "argument" for several)
        raise TypeError(f"{fn_name}() missing {len(missing)} required positional argument"
                        f"{'s' if len(missing) == 1 else ''}: " + ", ".join(f'"{m}"' for m in missing))
    if kwargs:   # (checked last: a missing argument is reported first)
        name = next(iter(kwargs))
        if any(p.name == name for p in params):
            raise TypeError(f"{fn_name}() got multiple values for argument '{name}'")
        raise TypeError(f"{fn_name}() got an unexpected keyword argument '{name}'")
    return values


def parse_overloads(fn_name, signatures, args, kwargs):
    """``(index of the signature that fits, its values)`` for a function with several signatures,
    tried in order; on failure PyTorch's error (see the module docstring)."""
    for i, params in enumerate(signatures):
        try:
            return i, parse(fn_name, params, args, kwargs)
        except TypeError:
            pass
    n = len(args) + (len(kwargs) if kwargs else 0)
    plausible = [params for params in signatures
                 if sum(p.default is REQUIRED for p in params) <= n <= len(params)]
    if len(plausible) == 1:
        parse(fn_name, plausible[0], args, kwargs)   # raises that signature's own error
    # (PyTorch lists keywords sorted, and ends with ", " when there are only keywords)
    got = [_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in sorted((kwargs or {}).items())]
    text = ", ".join(got) + (", " if kwargs and not args else "")
    lines = [f"{fn_name}() received an invalid combination of arguments - got ({text}), but expected one of:"]
    # Under each signature PyTorch says why it did not fit, except for signatures with keyword-only
    # parameters (``sum``'s): the keywords it does not know (when only keywords were given), or,
    # when it takes this many arguments (or none), which of them had the wrong type.
    explain = not any(p.keyword_only for params in signatures for p in params)
    for params in signatures:
        lines.append(f" * ({signature_text(params)})")
        if not explain:
            continue
        unknown = [k for k in (kwargs or {}) if not any(p.name == k for p in params)]
        if unknown and not args:
            lines.append(f"      didn't match because some of the keywords were incorrect: {', '.join(unknown)}")
        elif not kwargs and (len(args) == len(params) or not params):
            marked = [_type_name(a) if i < len(params) and _fits(params[i], a) else f"!{_type_name(a)}!"
                      for i, a in enumerate(args)]
            lines.append(f"      didn't match because some of the arguments have invalid types: ({', '.join(marked)})")
    raise TypeError("\n".join(lines) + "\n")


def _fits(p, value) -> bool:
    try:
        _convert("", p, value, None)
    except TypeError:
        return False
    return True


def _too_many(fn_name, positional, given):
    required = sum(p.default is REQUIRED for p in positional)
    most = len(positional)
    if required == most:
        counted = f"{most} positional argument{'s' if most != 1 else ''}"
    else:
        counted = f"from {required} to {most} positional arguments"
    return f"{fn_name}() takes {counted} but {given} were given"


def _is_int(v) -> bool:
    if isinstance(v, bool):
        return False
    try:
        operator.index(v)
    except TypeError:
        return False
    return not hasattr(v, "_impl") or v.dim() == 0


def _convert(fn_name, p, value, position):
    if value is None and p.nullable:
        return None
    where = f" (position {position})" if position is not None else ""
    kind = p.kind
    if kind == "dtype" and (value is int or value is float or value is bool):   # PyTorch reads Python types as dtypes
        from minitorch_nn import _dtype as dt

        return {int: dt.int64, float: dt.float64, bool: dt.bool}[value]
    if kind in ("int[]", "int[1]"):
        if kind == "int[1]" and _is_int(value):
            return [operator.index(value)]
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"{fn_name}(): argument '{p.name}'{where} must be tuple of ints, not {_type_name(value)}")
        return list(normalize_size((value,), fn_name, p.name, position=position))
    ok = {"int": kind == "int" and _is_int(value), "bool": isinstance(value, bool),
          "dtype": hasattr(value, "is_floating_point") and hasattr(value, "itemsize") and not hasattr(value, "_impl"),
          "Tensor": hasattr(value, "_impl")}[kind]
    if not ok:
        raise TypeError(f"{fn_name}(): argument '{p.name}'{where} must be {_KIND_NAMES[kind]}, not {_type_name(value)}")
    return operator.index(value) if kind == "int" else value
