"""The aten-style op registry: ``ops.aten.<name>.<overload>``, mirroring ``torch.ops.aten``.

Every operation a tensor can do is one :class:`OpOverload` here, declared once with its schema
(the same schema string PyTorch uses, e.g. ``add.Tensor(Tensor self, Tensor other, *, Scalar
alpha=1) -> Tensor``). An op holds:

* ``_kernels``: one Python function per device type (``"cpu"``, ``"meta"``, ``"cuda"``), or one
  under ``"any"`` for ops that only compute metadata (views), registered by the backends with
  :meth:`OpOverload.impl`;
* ``derivative``: how autograd differentiates it (set by ``autograd/derivatives.py``);
* tags derived from the schema: is it a view, in-place, or a factory.

Calling an op (``ops.aten.add.Tensor(a, b)``) runs the dispatch chain in ``_dispatch/``. Public
functions and Tensor methods are thin layers over these calls, which is what lets
``__torch_dispatch__`` and ``dispatch_trace()`` see every op with PyTorch's names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# ---------------------------------------------------------------------------------------------
# Schemas
# ---------------------------------------------------------------------------------------------

_NO_DEFAULT = object()


@dataclass(frozen=True)
class Argument:
    """One argument of an op schema (``Tensor(a!) self``, ``int[1]? dim=None``, ...)."""

    name: str
    type: str
    default: object = _NO_DEFAULT
    kwarg_only: bool = False
    is_write: bool = False  # the "!" in Tensor(a!): the op writes to this tensor

    @property
    def has_default(self):
        return self.default is not _NO_DEFAULT


@dataclass(frozen=True)
class FunctionSchema:
    """A parsed schema string: name, overload, arguments and returns."""

    name: str
    overload_name: str
    arguments: tuple
    returns: tuple
    text: str = field(compare=False)

    def __str__(self):
        return "aten::" + self.text


# Alias annotations: "(a)" the result aliases this input (a view), "(a!)" the op writes to it,
# "(a -> *)" the results alias it (split/unbind).
_ALIAS = re.compile(r"\(([a-z][^)]*)\)")


def _parse_default(text: str):
    if text in ("None",):
        return None
    if text == "True":
        return True
    if text == "False":
        return False
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return [] if not inner else [_parse_default(x.strip()) for x in inner.split(",")]
    if text.startswith(("'", '"')):
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text  # e.g. "contiguous_format", "Mean": symbolic defaults


def _split_top_level(text: str):
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def parse_schema(text: str) -> FunctionSchema:
    """Parse PyTorch's schema syntax (a small subset: enough for the ops we have)."""
    head, _, ret = text.partition(") -> ")
    fullname, _, argtext = head.partition("(")
    name, _, overload = fullname.partition(".")
    args, kwarg_only = [], False
    for part in _split_top_level(argtext):
        if part == "*":
            kwarg_only = True
            continue
        decl, _, default = part.partition("=")
        typ, _, argname = decl.strip().rpartition(" ")
        alias = _ALIAS.search(typ)
        args.append(
            Argument(
                name=argname,
                type=_ALIAS.sub("", typ),
                default=_parse_default(default.strip()) if default else _NO_DEFAULT,
                kwarg_only=kwarg_only,
                is_write=bool(alias and "!" in alias.group(1)),
            )
        )
    ret = ret.strip()
    if ret.startswith("("):
        returns = tuple(_ALIAS.sub("", r).split(" ")[0] for r in _split_top_level(ret[1:-1]))
    elif ret == "()":
        returns = ()
    else:
        returns = (_ALIAS.sub("", ret).split(" ")[0],)
    return FunctionSchema(name, overload or "default", tuple(args), returns, text)


# ---------------------------------------------------------------------------------------------
# OpOverload / OpOverloadPacket / namespaces
# ---------------------------------------------------------------------------------------------


class OpOverload:
    """One overload of an op, e.g. ``aten.add.Tensor``. Calling it dispatches it."""

    def __init__(self, packet: OpOverloadPacket, schema: FunctionSchema, tags=()):
        self.overloadpacket = packet
        self._schema = schema
        self._overloadname = schema.overload_name
        self.__name__ = f"{schema.name}.{schema.overload_name}"
        self.__qualname__ = self.__name__
        self._kernels: dict = {}
        self.derivative = None
        self.tags = frozenset(tags)
        self.is_inplace = schema.name.endswith("_") and not schema.name.startswith("_")
        # An op whose result aliases an input without writing to it is a view op.
        self.is_view = bool(re.search(r"Tensor\([a-z]( -> \*)?\)", schema.text.partition(" -> ")[0])) and not self.is_inplace and "!" not in schema.text
        self.mutated_args = tuple(a.name for a in schema.arguments if a.is_write)
        # zeros_like & co. take their device from the device= argument, not from the input
        self.is_like_factory = schema.name.endswith("_like")

    # -- identity --------------------------------------------------------------------------
    def name(self) -> str:
        return f"aten::{self.__name__}"

    @property
    def namespace(self):
        return "aten"

    def __repr__(self):
        return f"<OpOverload(op='aten.{self._schema.name}', overload='{self._overloadname}')>"

    def __str__(self):
        return f"aten.{self.__name__}"

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    # -- kernels ---------------------------------------------------------------------------
    def impl(self, *device_types):
        """Decorator: register the kernel for ``device_types`` (``"cpu"``, ``"meta"``, ``"any"``...)."""

        def register(fn):
            for d in device_types:
                self._kernels[d] = fn
            return fn

        return register

    def kernel_for(self, device_type: str):
        kernel = self._kernels.get(device_type) or self._kernels.get("any")
        if kernel is None:
            raise NotImplementedError(
                f"Could not run '{self.name()}' with arguments from the '{device_type.upper() if device_type == 'cpu' else device_type.capitalize()}' backend. "
                f"minitorch_nn has no {device_type} kernel for this op yet."
            )
        return kernel

    # -- calling -----------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        return _dispatch_fn(self, args, kwargs)

    def redispatch_to_backend(self, *args, **kwargs):
        """Run only the backend kernel (below autograd and __torch_dispatch__)."""
        return _backend_fn(self, args, kwargs)

    def decompose(self, *args, **kwargs):
        return NotImplemented


class OpOverloadPacket:
    """All overloads of one op name, e.g. ``aten.add`` (``.Tensor``, ``.Scalar``, ``.default``)."""

    def __init__(self, name: str):
        self._qualified_op_name = f"aten::{name}"
        self.__name__ = name
        self._overloads: dict[str, OpOverload] = {}

    def __getattr__(self, overload):
        try:
            return self.__dict__["_overloads"][overload]
        except KeyError:
            raise AttributeError(f"The underlying op of 'aten.{self.__name__}' has no overload name '{overload}'") from None

    def overloads(self):
        return list(self._overloads)

    def __repr__(self):
        return f"<OpOverloadPacket(op='aten.{self.__name__}')>"

    def __str__(self):
        return f"aten.{self.__name__}"

    def __call__(self, *args, **kwargs):
        # Like torch.ops.aten.add(...): pick the default overload, or the only one.
        if "default" in self._overloads:
            return self._overloads["default"](*args, **kwargs)
        if len(self._overloads) == 1:
            return next(iter(self._overloads.values()))(*args, **kwargs)
        raise RuntimeError(f"aten.{self.__name__} has several overloads; call one, e.g. aten.{self.__name__}.{next(iter(self._overloads))}")


class _Namespace:
    def __init__(self, name):
        self._name = name
        self._packets: dict[str, OpOverloadPacket] = {}

    def __getattr__(self, name):
        try:
            return self.__dict__["_packets"][name]
        except KeyError:
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute '{name}'") from None

    def __iter__(self):
        return iter(self._packets.values())


class _Ops:
    def __init__(self):
        self.aten = _Namespace("aten")


ops = _Ops()
aten = ops.aten


def define(schema_text: str, tags=()) -> OpOverload:
    """Declare an op from its PyTorch schema string and return its :class:`OpOverload`."""
    schema = parse_schema(schema_text)
    packets = aten._packets
    packet = packets.get(schema.name)
    if packet is None:
        packet = packets[schema.name] = OpOverloadPacket(schema.name)
        # Plain attributes too, so `aten.add.Tensor` is two ordinary attribute lookups on the
        # per-op hot path (the __getattr__ fallbacks then only produce the error messages).
        setattr(aten, schema.name, packet)
    if schema.overload_name in packet._overloads:
        raise RuntimeError(f"op aten::{schema.name}.{schema.overload_name} is defined twice")
    op = OpOverload(packet, schema, tags)
    packet._overloads[schema.overload_name] = op
    setattr(packet, schema.overload_name, op)
    return op


def all_ops():
    """Every registered OpOverload, in definition order."""
    return [op for packet in aten for op in packet._overloads.values()]


# The dispatch chain lives in _dispatch/; it installs itself here on import so that this
# module stays free of upward imports.
def _unset(*_):
    raise RuntimeError("minitorch_nn._dispatch was not initialised")


_dispatch_fn = _unset
_backend_fn = _unset


def _install_dispatcher(dispatch_fn, backend_fn):
    global _dispatch_fn, _backend_fn
    _dispatch_fn = dispatch_fn
    _backend_fn = backend_fn
