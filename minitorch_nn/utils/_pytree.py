"""Pytrees: nested containers flattened to a list of leaves and a spec to rebuild them
(mirrors ``torch/utils/_pytree.py``).

A *pytree* is a value built from registered container types -- ``tuple``, ``list``, ``dict``,
namedtuples, ``OrderedDict``, ``defaultdict``, ``deque`` and anything passed to
:func:`register_pytree_node` -- with anything else at the bottom as a *leaf* (tensors, numbers,
strings, ``None``...). Code that must act on every tensor inside arbitrary ``args``/``kwargs``
(a ``__torch_dispatch__`` handler, a tracer) flattens them, works on the flat list of leaves and
puts the structure back::

    leaves, spec = tree_flatten({"a": (x, 1), "b": [y]})   # [x, 1, y]
    tree_unflatten([x2, 1, y2], spec)                        # {"a": (x2, 1), "b": [y2]}
    tree_map_only(Tensor, lambda t: t * 2, args)             # the same walk, in one call

Every node type has a *flatten* function, ``node -> (children, context)``, and an *unflatten*
function, ``(children, context) -> node``; the context is what the children alone do not say
(a dict's keys, a namedtuple's class). A :class:`TreeSpec` records, for each node, its type,
context and the specs of its children; a leaf's spec is the shared :data:`LeafSpec` instance,
printed ``*``.

As in PyTorch: children come in container order (a dict's *insertion* order, not sorted keys);
every namedtuple class is a node without being registered (its spec's type is ``namedtuple``
and its context the class); ``torch.return_types`` tuples are nodes whose type is their class;
``tree_map(f, tree, *rests)`` requires the other trees to have ``tree``'s structure (a ``dict``,
``OrderedDict`` and ``defaultdict`` with the same keys count as the same). Left out: the key
paths (``tree_flatten_with_path``), spec serialization (``treespec_dumps``) and the C++
implementation; ``isinstance(spec, LeafSpec)`` works without PyTorch's deprecation warning.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = [
    "PyTree",
    "Context",
    "LeafSpec",
    "TreeSpec",
    "register_pytree_node",
    "tree_all",
    "tree_any",
    "tree_flatten",
    "tree_is_leaf",
    "tree_iter",
    "tree_leaves",
    "tree_map",
    "tree_map_",
    "tree_map_only",
    "tree_map_only_",
    "tree_structure",
    "tree_unflatten",
    "treespec_pprint",
    "is_namedtuple",
    "is_namedtuple_class",
    "is_namedtuple_instance",
]

PyTree = Any
Context = Any


class NodeDef(NamedTuple):
    """How one container type is taken apart and put back together."""

    type: type
    flatten_fn: Callable[[Any], tuple[list, Context]]
    unflatten_fn: Callable[[list, Context], Any]


SUPPORTED_NODES: dict[Any, NodeDef] = {}


def register_pytree_node(
    cls,
    flatten_fn,
    unflatten_fn,
    *,
    serialized_type_name: str | None = None,
    to_dumpable_context=None,
    from_dumpable_context=None,
    flatten_with_keys_fn=None,
) -> None:
    """Make ``cls`` a container: ``flatten_fn(node) -> (children, context)`` and
    ``unflatten_fn(children, context) -> node``.

    The serialization and key-path arguments are accepted for PyTorch's signature and not used.
    Registering a type twice is an error, as in PyTorch.
    """
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn)


# -- the built-in containers ----------------------------------------------------------------------
def is_namedtuple_class(cls) -> bool:
    """Whether ``cls`` was made by ``collections.namedtuple`` (or ``typing.NamedTuple``)."""
    return (
        isinstance(cls, type)
        and issubclass(cls, tuple)
        and isinstance(getattr(cls, "_fields", None), tuple)
        and all(type(f) is str for f in cls._fields)
        and callable(getattr(cls, "_make", None))
        and callable(getattr(cls, "_asdict", None))
    )


def is_namedtuple(obj) -> bool:
    """Whether ``obj`` is a namedtuple class or an instance of one."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj) -> bool:
    return is_namedtuple_class(type(obj))


def _is_return_type(cls) -> bool:
    # ``torch.return_types.max`` and friends are structseqs in PyTorch, namedtuple subclasses
    # here; they flatten as PyTorch's do (the node type is the class itself).
    from minitorch_nn._functions.reductions import return_types

    return cls in return_types._cache.values()


def _get_node_type(tree):
    cls = type(tree)
    if cls in SUPPORTED_NODES:
        return cls
    if is_namedtuple_class(cls):
        if _is_return_type(cls):
            _register_return_type(cls)
            return cls
        return namedtuple
    return cls


register_pytree_node(tuple, lambda t: (list(t), None), lambda children, _: tuple(children))
register_pytree_node(list, lambda t: (list(t), None), lambda children, _: list(children))
register_pytree_node(
    dict, lambda d: (list(d.values()), list(d.keys())), lambda children, keys: dict(zip(keys, children))
)
register_pytree_node(namedtuple, lambda t: (list(t), type(t)), lambda children, cls: cls(*children))
register_pytree_node(
    OrderedDict,
    lambda d: (list(d.values()), list(d.keys())),
    lambda children, keys: OrderedDict(zip(keys, children)),
)
register_pytree_node(
    defaultdict,
    lambda d: (list(d.values()), [d.default_factory, list(d.keys())]),
    lambda children, ctx: defaultdict(ctx[0], zip(ctx[1], children)),
)
register_pytree_node(
    deque, lambda d: (list(d), d.maxlen), lambda children, maxlen: deque(children, maxlen=maxlen)
)

BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})
STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})


def _register_return_type(cls):
    if cls not in SUPPORTED_NODES:
        register_pytree_node(cls, lambda t: (list(t), None), lambda children, _, cls=cls: cls(*children))


# -- the spec ----------------------------------------------------------------------------------
@dataclasses.dataclass(init=False, frozen=True, eq=False, repr=False)
class TreeSpec:
    """The structure of a pytree: the root's node ``type`` (None for a leaf), its ``context``
    and one spec per child (``children_specs``); with the counts ``num_nodes``, ``num_leaves``
    and ``num_children``."""

    type: Any
    context: Context
    children_specs: list

    def __init__(self, type, context, children_specs):
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "context", context)
        object.__setattr__(self, "children_specs", list(children_specs))
        if type is None:
            if context is not None or self.children_specs:
                raise AssertionError("a leaf spec has no context and no children")
            nodes, leaves = 1, 1
        else:
            nodes = 1 + sum(c.num_nodes for c in self.children_specs)
            leaves = sum(c.num_leaves for c in self.children_specs)
        object.__setattr__(self, "num_nodes", nodes)
        object.__setattr__(self, "num_leaves", leaves)
        object.__setattr__(self, "num_children", len(self.children_specs))

    @property
    def _context(self):   # PyTorch's attribute name
        return self.context

    @property
    def _children(self):
        return self.children_specs

    def is_leaf(self) -> bool:
        return self.type is None

    def children(self) -> list:
        return list(self.children_specs)

    def child(self, index: int) -> TreeSpec:
        return self.children_specs[index]

    def __repr__(self, indent: int = 0) -> str:
        # Children after the first go on their own lines, indented two more spaces per level.
        if self.is_leaf():
            return "*"
        inner = ""
        if self.children_specs:
            indent += 2
            parts = [c.__repr__(indent) for c in self.children_specs]
            inner = (",\n" + " " * indent).join(parts)
        return f"TreeSpec({self.type.__name__}, {self.context}, [{inner}])"

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (
            str(self.type) == str(other.type)
            and self.context == other.context
            and self.children_specs == other.children_specs
        )

    def __hash__(self):
        context = self.context
        if self.type is defaultdict:
            context = (context[0], tuple(context[1]))
        elif isinstance(context, list):
            context = tuple(context)
        return hash((self.type, context, tuple(self.children_specs)))

    def unflatten(self, leaves) -> PyTree:
        """The pytree with this structure and these leaves (in flatten order)."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to a "
                f"pytree that holds {self.num_leaves} items ({self})."
            )
        if self.is_leaf():
            return leaves[0]
        children, start = [], 0
        for spec in self.children_specs:
            children.append(spec.unflatten(leaves[start : start + spec.num_leaves]))
            start += spec.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)

    def flatten_up_to(self, tree) -> list:
        """The subtrees of ``tree`` found where this spec has its leaves; ``tree`` must have this
        spec's structure down to there (the check ``tree_map`` makes on its extra trees)."""
        out: list = []
        self._flatten_up_to(tree, out)
        return out

    def _flatten_up_to(self, node, out):
        if self.is_leaf():
            out.append(node)
            return
        node_type = _get_node_type(node)
        if self.type not in BUILTIN_TYPES:
            if node_type != self.type:
                raise ValueError(f"Type mismatch; expected {self.type!r}, but got {node_type!r}.")
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
            if context != self.context:
                raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        else:
            dicts = self.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
            if not dicts and node_type != self.type:
                raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {node_type!r}.")
            if len(node) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(node)}.")
            if dicts:
                keys = self.context[1] if self.type is defaultdict else self.context
                if set(node) != set(keys):
                    missing, extra = set(keys) - set(node), set(node) - set(keys)
                    message = ""
                    if missing:
                        message += f"; missing key(s): {missing}"
                    if extra:
                        message += f"; extra key(s): {extra}"
                    raise ValueError(f"Node keys mismatch{message}.")
                children = [node[k] for k in keys]
            else:
                children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
                if node_type is not deque and context != self.context:
                    raise ValueError(
                        f"Node context mismatch for node type {self.type!r}; expected {self.context!r}, "
                        f"but got {context!r}."
                    )
        for child, spec in zip(children, self.children_specs):
            spec._flatten_up_to(child, out)


class LeafSpec(TreeSpec):
    """The spec of a leaf (``*``). All leaves share one instance, :func:`tree_flatten` hands
    out that one; ``LeafSpec()`` builds an equal one."""

    def __init__(self):
        super().__init__(None, None, [])

    def __repr__(self, indent: int = 0) -> str:
        return "*"


_LEAF_SPEC = LeafSpec()


# -- flattening and mapping ------------------------------------------------------------------
def tree_is_leaf(tree, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """A leaf is anything that is not a registered container (or that ``is_leaf`` says is one)."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


def tree_flatten(tree, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, TreeSpec]:
    """``(leaves, spec)``: the leaves in depth-first, container order, and the structure."""
    leaves: list = []

    def walk(node):
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF_SPEC
        node_type = _get_node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [walk(c) for c in children])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec: TreeSpec) -> PyTree:
    """The inverse of :func:`tree_flatten`."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(
            f"Expected `treespec` to be an instance of PyTreeSpec but got item of type {type(treespec)}."
        )
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf: Callable[[Any], bool] | None = None):
    """The leaves of ``tree``, one at a time."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf: Callable[[Any], bool] | None = None) -> list:
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf: Callable[[Any], bool] | None = None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf: Callable[[Any], bool] | None = None) -> PyTree:
    """A tree like ``tree`` whose leaves are ``func(leaf, *corresponding leaves of rests)``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *columns))


def tree_map_(func, tree, *rests, is_leaf: Callable[[Any], bool] | None = None) -> PyTree:
    """Call ``func`` on every leaf (for its effect) and return ``tree`` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    for _ in map(func, *columns):
        pass
    return tree


def map_only(type_or_types_or_pred):
    """Decorator: apply the function only to leaves of the given type(s) (or passing the
    predicate); other leaves pass through unchanged."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):

        def pred(x):
            return isinstance(x, type_or_types_or_pred)

    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x

        return wrapped

    return wrapper


def tree_map_only(type_or_types_or_pred, func, tree, is_leaf=None) -> PyTree:
    """:func:`tree_map` that touches only leaves of the given type(s)."""
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, func, tree, is_leaf=None) -> PyTree:
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf)))


class _Asterisk(str):
    def __repr__(self):
        return "*"


def treespec_pprint(treespec: TreeSpec) -> str:
    """The structure drawn as a value: every leaf shown as ``*``."""
    return repr(treespec.unflatten([_Asterisk("*")] * treespec.num_leaves))
