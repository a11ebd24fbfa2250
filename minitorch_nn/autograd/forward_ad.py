"""Forward-mode automatic differentiation: dual tensors (mirrors ``torch.autograd.forward_ad``).

Reverse mode (the rest of this package) records a graph and walks it backwards to get
``v^T J``. Forward mode needs no graph: every tensor may carry a *tangent* ``t`` next to its
value, and each op computes the tangent of its output, ``J t``, as it runs. One forward pass
gives one Jacobian-vector product::

    with forward_ad.dual_level():
        x = forward_ad.make_dual(x0, v)          # x carries tangent v
        y = f(x)                                 # every op in f also computes its output's tangent
        value, jvp = forward_ad.unpack_dual(y)   # jvp == J_f(x0) @ v

This file holds three things:

* the public API: ``dual_level``, ``enter_dual_level``/``exit_dual_level``, ``make_dual``,
  ``unpack_dual`` and ``UnpackedDualTensor``, with PyTorch's errors;
* where tangents live: in the payload's ``autograd_meta`` dict under ``"fw_grad"``, a small dict
  ``{level: tangent}`` (PyTorch's ``ForwardGrad``). Each level keeps a weak set of those dicts
  and empties them when it exits, which is how tangents disappear after ``dual_level``;
* switching the forward-AD step of the dispatch chain on and off: ``enter_dual_level`` installs
  ``derivatives_forward.forward_ad_layer`` in ``_dispatch.forward_ad_layer`` and the last
  ``exit_dual_level`` removes it, so without a level the chain pays nothing, and
  ``_dispatch.forward_ad_layer is None`` is the test every fast path makes.

Views and in-place ops follow PyTorch: the tangent of a view is the same view of its base's
tangent (made lazily when the base gets its tangent after the view was made), and an in-place
op writes its new tangent into the existing one, so the base's tangent sees the change. An
in-place op on a tensor without a tangent gives it (or its base) a zero tangent first.

As in PyTorch, only one level can be active (entering a second raises "Nested forward mode AD is
not supported at the moment"; ``torch.func`` is out of scope), a custom ``autograd.Function``
gets its outputs' tangents from its ``jvp`` staticmethod (``custom_function_tangents``), and
``repr`` shows the tangent (``_tensor_str.py`` asks :func:`get_tangent`).

Where we differ from PyTorch: ``make_dual`` and ``unpack_dual(...).primal`` are ``alias`` views,
so their ``grad_fn`` is ``AliasBackward0`` (PyTorch shows ``ViewBackward0`` and an unnamed
C++ node); ops without a JVP formula get their tangent from the reverse-mode formula (see
``derivatives_forward.py``), which gives the same values at the cost of a small backward pass.
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

from minitorch_nn import _dispatch
from minitorch_nn._C import TensorBase

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

# The active level (-1: none). PyTorch numbers levels from 0 and, without nesting, only ever
# has level 0 active.
_current_level = -1
# Per active level, the weak set of _ForwardGrads holders that got a tangent at that level.
_level_holders: list = []


class _ForwardGrads(dict):
    """``{level: tangent}`` of one payload; weakly referenced by the levels that wrote to it."""

    __slots__ = ("__weakref__",)
    # compared by identity, so that a WeakSet can hold them
    __hash__ = object.__hash__
    __eq__ = object.__eq__


# ---------------------------------------------------------------------------------------------
# Levels
# ---------------------------------------------------------------------------------------------


def enter_dual_level():
    """Start a new forward-AD level and return its index (PyTorch's first level is 0)."""
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    from minitorch_nn.autograd.derivatives_forward import forward_ad_layer

    _current_level += 1
    _level_holders.append(weakref.WeakSet())
    _dispatch.forward_ad_layer = forward_ad_layer
    return _current_level


def exit_dual_level(*, level=None):
    """Leave the current level: every tangent made at it is deleted."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. This is not supported."
        )
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    for holder in list(_level_holders.pop()):
        holder.pop(level, None)
    _current_level = level - 1
    if _current_level < 0:
        _dispatch.forward_ad_layer = None


class dual_level:
    """Context manager (and decorator) for forward AD: enters a level, exits it at the end.

    All dual tensors must be made and used inside it; their tangents are gone afterwards::

        >>> with dual_level():
        ...     y = make_dual(x, v).sin()
        ...     jvp = unpack_dual(y).tangent     # cos(x) * v
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)

        return wrapper


# ---------------------------------------------------------------------------------------------
# Where tangents live
# ---------------------------------------------------------------------------------------------


def _own_tangent(impl, level):
    meta = impl.autograd_meta
    if meta:
        holder = meta.get("fw_grad")
        if holder:
            return holder.get(level)
    return None


def get_tangent(t, level=None):
    """The tangent of tensor ``t`` at ``level`` (default: the current one), or ``None``.

    A view without a tangent of its own whose base has one gets the matching window of the
    base's tangent (made once, then kept), unless it was made by a non-differentiable view op
    (``detach``, ``unpack_dual(...).primal``)."""
    if level is None:
        level = _current_level
    if level < 0:
        return None
    impl = t._impl
    tangent = _own_tangent(impl, level)
    if tangent is not None:
        return tangent
    base = impl.base
    if base is None or (impl.autograd_meta and impl.autograd_meta.get("fw_no_tangent")):
        return None
    base_tangent = _own_tangent(base, level)
    if base_tangent is None:
        return None
    from minitorch_nn.autograd.graph import tensor_for

    tangent = _window_of(base_tangent, tensor_for(base), t)
    set_tangent(t, tangent, level)
    return tangent


def set_tangent(t, tangent, level=None):
    """Store ``tangent`` as the tangent of ``t`` at ``level`` (no checks: see ``make_dual``)."""
    if level is None:
        level = _current_level
    impl = t._impl
    meta = impl.autograd_meta
    if meta is None:
        meta = impl.autograd_meta = {}
    holder = meta.get("fw_grad")
    if holder is None:
        holder = meta["fw_grad"] = _ForwardGrads()
    holder[level] = tangent
    _level_holders[level].add(holder)


def mark_no_tangent(t):
    """``t`` is a view that must not inherit its base's tangent (``detach``, a primal)."""
    impl = t._impl
    if impl.autograd_meta is None:
        impl.autograd_meta = {}
    impl.autograd_meta["fw_no_tangent"] = True


def _same_layout(a, b):
    return a.stride() == b.stride() and a.storage_offset() == b.storage_offset()


def in_layout_of(tangent, primal):
    """``tangent`` itself when its strides and offset are ``primal``'s, else a copy that has them
    (so that a view's geometry, which is relative to storage, applies to both alike)."""
    if _same_layout(tangent, primal):
        return tangent
    from minitorch_nn._ops import aten

    storage = primal._impl.storage
    n = int(storage.size) if storage is not None else primal.storage_offset() + primal.numel()
    flat = aten.zeros.default([n], dtype=tangent.dtype, device=tangent.device)
    out = aten.as_strided.default(flat, list(primal.shape), list(primal.stride()), primal.storage_offset())
    out.copy_(tangent)
    return out


def _window_of(base_tangent, base, view):
    """The part of ``base_tangent`` that ``view`` covers of ``base``."""
    from minitorch_nn._ops import aten

    laid_out = in_layout_of(base_tangent, base)
    if laid_out is not base_tangent:
        set_tangent(base, laid_out)   # later views share this one
    return aten.as_strided.default(laid_out, list(view.shape), list(view.stride()), view.storage_offset())


def zero_tangent_for(t, level):
    """Give ``t`` a zero tangent (through its base when ``t`` is a view) and return it."""
    base = t._impl.base
    if base is not None and not (t._impl.autograd_meta and t._impl.autograd_meta.get("fw_no_tangent")):
        from minitorch_nn.autograd.graph import tensor_for

        base_t = tensor_for(base)
        set_tangent(base_t, _zeros_in_layout(base_t), level)
        return get_tangent(t, level)
    tangent = _zeros_in_layout(t)
    set_tangent(t, tangent, level)
    return tangent


def _zeros_in_layout(t):
    from minitorch_nn._ops import aten

    return aten.empty_strided.default(list(t.shape), list(t.stride()), dtype=t.dtype, device=t.device).zero_()


# ---------------------------------------------------------------------------------------------
# make_dual / unpack_dual
# ---------------------------------------------------------------------------------------------


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the ``primal`` (value) and its ``tangent`` (or ``None``)."""

    primal: TensorBase
    tangent: TensorBase | None


def _is_float(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def _sizes(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def make_dual(tensor, tangent, *, level=None):
    """A new tensor with ``tensor``'s value (an alias of it) that carries ``tangent``.

    The tangent is kept as it is when it has ``tensor``'s strides and storage offset, else it
    is copied into that layout. Reverse mode differentiates through ``make_dual`` (to
    ``tensor``; the tangent's own gradient comes from the ops that use it)."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first."
        )
    if not _is_float(tensor):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not _is_float(tangent):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if _current_level < 0:
        raise RuntimeError("Trying to access a forward AD level with an invalid index. "
                           "This index was either not created or is already deleted.")
    if level != _current_level:
        raise RuntimeError("Invalid level given to _make_dual")
    if get_tangent(tensor, level) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the "
                           f"same level {level} is not supported.")
    if get_tangent(tangent, level) is not None:
        raise RuntimeError(f"Setting a forward grad that itself has a forward gradient at the same level{level} is "
                           f"not supported.")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size {_sizes(tensor)} while the given forward gradient is of size "
            f"{_sizes(tangent)}."
        )
    from minitorch_nn._ops import aten

    with forward_ad_off():
        dual = aten.alias.default(tensor)
        set_tangent(dual, in_layout_of(tangent, tensor), level)
    return dual


def unpack_dual(tensor, *, level=None):
    """``UnpackedDualTensor(primal, tangent)`` of ``tensor`` at ``level`` (default: the current).

    ``primal`` is a view of ``tensor`` that carries no tangent; ``tangent`` is the stored tangent
    itself (``None`` when there is none, or outside every level)."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = get_tangent(tensor, level) if level == _current_level else None
    if level != _current_level and get_tangent(tensor) is not None:
        raise RuntimeError("Invalid level given to _fw_primal")
    from minitorch_nn._ops import aten

    with forward_ad_off():
        primal = aten.alias.default(tensor)
    mark_no_tangent(primal)
    return UnpackedDualTensor(primal, tangent)


# ---------------------------------------------------------------------------------------------
# The forward-AD step of the dispatch chain
# ---------------------------------------------------------------------------------------------


class forward_ad_off:
    """Run ops without tangent propagation (the layer itself, the formulas, make/unpack_dual)."""

    def __enter__(self):
        self.prev = _dispatch.forward_ad_layer
        _dispatch.forward_ad_layer = None

    def __exit__(self, *exc):
        _dispatch.forward_ad_layer = self.prev


def has_tangent(args, kwargs=None, level=None):
    """Whether any tensor in ``args`` (or ``kwargs``; lists included) has a tangent at ``level``."""
    if level is None:
        level = _current_level
    if level < 0:
        return False
    for a in args:
        if isinstance(a, TensorBase):
            if get_tangent(a, level) is not None:
                return True
        elif type(a) in (list, tuple):
            for b in a:
                if isinstance(b, TensorBase) and get_tangent(b, level) is not None:
                    return True
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, TensorBase) and get_tangent(a, level) is not None:
                return True
    return False


def custom_function_tangents(cls, ctx, args, outputs):
    """Give the outputs of ``cls.apply`` (an ``autograd.Function``) the tangents its ``jvp``
    returns. As in PyTorch, ``jvp(ctx, *tangents)`` gets one tangent per input: zeros for a
    tensor without one, ``None`` for a non-tensor; it returns one per output."""
    jvp = getattr(cls, "jvp", None)
    if jvp is None:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD.")
    from minitorch_nn._ops import aten

    level = _current_level
    with forward_ad_off():
        tangents = []
        for a in args:
            if isinstance(a, TensorBase):
                t = get_tangent(a, level)
                tangents.append(t if t is not None else aten.zeros_like.default(a))
            else:
                tangents.append(None)
        out_tangents = jvp(ctx, *tangents)
    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    out_tangents = out_tangents if isinstance(out_tangents, tuple) else (out_tangents,)
    for o, t in zip(outs, out_tangents):
        if isinstance(o, TensorBase) and t is not None and _is_float(o):
            set_tangent(o, t, level)
