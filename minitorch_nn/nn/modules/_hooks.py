"""Module hooks and the module call (mirrors the hook parts of ``torch/nn/modules/module.py``).

Every kind of hook lives in an ordered dict on the module, keyed by the id of the
:class:`~minitorch_nn.utils.hooks.RemovableHandle` that registration returns:

==========================  =========================================  ============================
dict                        registered by                              called as
==========================  =========================================  ============================
``_forward_pre_hooks``      ``register_forward_pre_hook``              ``hook(m, args)`` or
                                                                       ``hook(m, args, kwargs)``
``_forward_hooks``          ``register_forward_hook``                  ``hook(m, args, out)`` or
                                                                       ``hook(m, args, kwargs, out)``
``_backward_pre_hooks``     ``register_full_backward_pre_hook``        ``hook(m, grad_output)``
``_backward_hooks``         ``register_full_backward_hook``            ``hook(m, grad_in, grad_out)``
``_state_dict_pre_hooks``   ``register_state_dict_pre_hook``           ``hook(m, prefix, keep_vars)``
``_state_dict_hooks``       ``register_state_dict_post_hook``          ``hook(m, sd, prefix, meta)``
``_load_state_dict_pre_``   ``register_load_state_dict_pre_hook``      ``hook(m, sd, prefix, meta,
``hooks``                                                              strict, missing, unexpected,
                                                                       errors)``
``_load_state_dict_post_``  ``register_load_state_dict_post_hook``     ``hook(m, incompatible)``
``hooks``
==========================  =========================================  ============================

Flags that only some hooks have (``with_kwargs``, ``always_call``) are kept in side dicts keyed
by the same id; the handle removes the id from those too. ``prepend=True`` moves the new id to
the front of its dict. Global hooks (``register_module_forward_hook`` and friends) sit in module
level dicts and run before every module's own hooks. As in PyTorch, those dicts are globals of
``minitorch_nn.nn.modules.module`` and are looked up there at every call and registration, so
code that resets them by rebinding (``module._global_forward_hooks = OrderedDict()``, as
PyTorch's own tests do) is obeyed; they are created below and ``module.py`` takes them over.

The state-dict hooks are *called* from ``_state_dict.py``; the forward hooks from
:meth:`_HooksMixin._call_impl` below, which is ``Module.__call__``.

Full backward hooks are wired into the autograd graph by ``_backward_hooks.py``. The deprecated
non-full ``register_backward_hook`` attaches to the ``grad_fn`` of the (first) output tensor, as
PyTorch's does, with PyTorch's FutureWarnings for the cases where that node does not see the
whole module (see :func:`_warn_if_non_full_hook_misleads`).
"""

from __future__ import annotations

import functools
import sys
import weakref
from collections import OrderedDict

from minitorch_nn._tensor import Tensor
from minitorch_nn._warnings import warn_user
from minitorch_nn.utils.hooks import RemovableHandle

# Hooks that apply to every module (``torch.nn.modules.module.register_module_*``).
_global_forward_pre_hooks: dict = OrderedDict()
_global_forward_hooks: dict = OrderedDict()
_global_forward_hooks_with_kwargs: dict = OrderedDict()
_global_forward_hooks_always_called: dict = OrderedDict()
_global_backward_pre_hooks: dict = OrderedDict()
_global_backward_hooks: dict = OrderedDict()
# None: no global backward hooks yet; True: full ones; False: old-style ones (they cannot mix).
_global_is_full_backward_hook = None
_global_buffer_registration_hooks: dict = OrderedDict()
_global_module_registration_hooks: dict = OrderedDict()
_global_parameter_registration_hooks: dict = OrderedDict()

# Where the global hook dicts are read: this file until ``module.py`` is imported, then
# ``minitorch_nn.nn.modules.module`` (which sets ``_home`` to itself), PyTorch's place for them.
_home = sys.modules[__name__]


def _add_hook(hooks: dict, hook, *, extra=None, prepend=False) -> RemovableHandle:
    handle = RemovableHandle(hooks, extra_dict=extra)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """Run ``hook(module, args)`` before the forward of every module."""
    return _add_hook(_home._global_forward_pre_hooks, hook)


def register_module_forward_hook(
    hook, *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """Run ``hook(module, args, output)`` after the forward of every module."""
    # (PyTorch's handle only cleans the always_call side dict, not with_kwargs; so does ours.)
    home = _home
    handle = _add_hook(
        home._global_forward_hooks, hook, extra=home._global_forward_hooks_always_called
    )
    if with_kwargs:
        home._global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        home._global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """Run ``hook(module, grad_output)`` before the backward of every module."""
    return _add_hook(_home._global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """Run ``hook(module, grad_input, grad_output)`` after the backward of every module."""
    if _home._global_is_full_backward_hook is False:
        raise RuntimeError(
            "Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
            "Please use only one of them."
        )
    _home._global_is_full_backward_hook = True
    return _add_hook(_home._global_backward_hooks, hook)


def register_module_backward_hook(hook) -> RemovableHandle:
    """Deprecated non-full global backward hook (use ``register_module_full_backward_hook``)."""
    if _home._global_is_full_backward_hook is True:
        raise RuntimeError(
            "Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
            "Please use only one of them."
        )
    _home._global_is_full_backward_hook = False
    return _add_hook(_home._global_backward_hooks, hook)


def register_module_buffer_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, buffer)`` runs on every ``register_buffer``; a non-None return replaces the buffer."""
    return _add_hook(_home._global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, submodule)`` runs on every child registration; may return a replacement."""
    return _add_hook(_home._global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, param)`` runs on every ``register_parameter``; may return a replacement."""
    return _add_hook(_home._global_parameter_registration_hooks, hook)


_NON_FULL_HINT = "Please use register_full_backward_hook to get the documented behavior."


def _warn_if_non_full_hook_misleads(inputs, result, grad_fn) -> None:
    """PyTorch's FutureWarnings for an old-style (non-full) backward hook.

    Such a hook sits on one autograd node, the one that made the module's (first) output; it
    only sees the module's real ``grad_input``/``grad_output`` when that node is the whole
    forward: inputs and outputs are tensors, every output comes from that node, and that
    node's inputs are exactly the module's inputs. Each way this can fail gets its warning.
    """
    if isinstance(result, Tensor):
        result = (result,)
    elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
        warn_user(
            "Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
            "Tensors is deprecated and will be removed in future versions. This hook will be missing some of "
            f"the grad_output. {_NON_FULL_HINT}",
            FutureWarning,
        )
        return
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    elif not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
        warn_user(
            "Using non-full backward hooks on a Module that does not take as input a single Tensor or a tuple "
            "of Tensors is deprecated and will be removed in future versions. This hook will be missing some "
            f"of the grad_input. {_NON_FULL_HINT}",
            FutureWarning,
        )
        return
    output_nodes = {r.grad_fn for r in result if r.grad_fn is not None}
    if not output_nodes or (len(output_nodes) == 1 and grad_fn not in output_nodes):
        warn_user(
            "Using a non-full backward hook when outputs are nested in python data structure is deprecated "
            "and will be removed in future versions. This hook will be missing some grad_output.",
            FutureWarning,
        )
    elif len(output_nodes) > 1:
        warn_user(
            "Using a non-full backward hook when outputs are generated by different autograd Nodes is "
            "deprecated and will be removed in future versions. This hook will be missing some grad_output. "
            f"{_NON_FULL_HINT}",
            FutureWarning,
        )
    else:
        # grad_output is right; grad_input is only if the node's inputs are the module's inputs
        # (a leaf input has no grad_fn, so any node reading a leaf fails this test, as in PyTorch)
        input_nodes = {i.grad_fn for i in inputs if i.grad_fn is not None}
        if input_nodes != {fn for fn, _ in grad_fn.next_functions}:
            warn_user(
                "Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated "
                "and will be removed in future versions. This hook will be missing some grad_input. "
                f"{_NON_FULL_HINT}",
                FutureWarning,
            )


class _WrappedHook:
    """A hook that is handed its module through a weak reference (so the module can be freed).

    Used for load_state_dict pre-hooks registered ``with_module=True``; picklable, which keeps
    modules that carry such hooks picklable.
    """

    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = False
        if module is not None:
            self.module = weakref.ref(module)
            self.with_module = True

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self):
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state):
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


class _HooksMixin:
    """The hook-registration methods of ``nn.Module`` and the module call itself."""

    # -- forward hooks ------------------------------------------------------------------------
    def register_forward_pre_hook(
        self, hook, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args)`` (or ``hook(module, args, kwargs)``) before ``forward``.

        A non-None return replaces the positional args (a non-tuple is wrapped in a 1-tuple);
        a ``with_kwargs`` hook must return None or ``(new_args, new_kwargs)``.
        """
        handle = _add_hook(
            self._forward_pre_hooks,
            hook,
            extra=self._forward_pre_hooks_with_kwargs,
            prepend=prepend,
        )
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(
        self, hook, *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after ``forward``; a non-None return replaces the output.

        ``always_call=True`` also runs the hook (with output None) when forward raises.
        """
        extra = [self._forward_hooks_with_kwargs, self._forward_hooks_always_called]
        handle = _add_hook(self._forward_hooks, hook, extra=extra, prepend=prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    # -- backward hooks -----------------------------------------------------------------------
    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients w.r.t. the outputs are known."""
        return _add_hook(self._backward_pre_hooks, hook, prepend=prepend)

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` once the input gradients are computed."""
        if self._is_full_backward_hook is False:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single Module. "
                "Please use only one of them."
            )
        self._is_full_backward_hook = True
        return _add_hook(self._backward_hooks, hook, prepend=prepend)

    def register_backward_hook(self, hook) -> RemovableHandle:
        """Deprecated: use :meth:`register_full_backward_hook`."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single Module. "
                "Please use only one of them."
            )
        self._is_full_backward_hook = False
        return _add_hook(self._backward_hooks, hook)

    def _get_backward_hooks(self):
        full, non_full = [], []
        home = _home
        if home._global_is_full_backward_hook is True:
            full += home._global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        if home._global_is_full_backward_hook is False:
            non_full += home._global_backward_hooks.values()
        if self._is_full_backward_hook is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _get_backward_pre_hooks(self):
        return [*_home._global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    # -- state_dict and load_state_dict hooks (called from _state_dict.py) ----------------------
    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """Call ``hook(module, prefix, keep_vars)`` before this module saves its tensors."""
        return _add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after this module and its
        children are saved; edit ``state_dict`` in place (returning a value is an error)."""
        hook._from_public_api = True
        return _add_hook(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook) -> RemovableHandle:
        # The older private form: a non-None return replaces the whole state dict (at the root).
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was "
                "previously registered via register_state_dict_post_hook"
            )
        return _add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its tensors."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(
        self, hook, with_module: bool = False
    ) -> RemovableHandle:
        # Without with_module the hook gets the same arguments minus the module.
        return _add_hook(
            self._load_state_dict_pre_hooks, _WrappedHook(hook, self if with_module else None)
        )

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """Call ``hook(module, incompatible_keys)`` after this module and its children are loaded;
        edit ``incompatible_keys.missing_keys``/``unexpected_keys`` in place."""
        return _add_hook(self._load_state_dict_post_hooks, hook)

    # -- the call ----------------------------------------------------------------------------
    def _call_impl(self, *args, **kwargs):
        """``module(*args, **kwargs)``: forward wrapped in the hooks, in PyTorch's order.

        1. global forward pre-hooks, then this module's (each may replace args/kwargs);
        2. ``forward``;
        3. global forward hooks, then this module's (each may replace the output).

        With no hook of any kind registered, ``forward`` is called directly. If forward (or a
        hook) raises, hooks registered with ``always_call=True`` that have not run yet are
        called with the output so far, their own errors turned into warnings, and the original
        exception propagates.
        """
        forward_call = self.forward
        home = _home   # the global dicts as they are bound *now* (they may have been rebound)
        if not (
            self._backward_hooks
            or self._backward_pre_hooks
            or self._forward_hooks
            or self._forward_pre_hooks
            or home._global_backward_pre_hooks
            or home._global_backward_hooks
            or home._global_forward_hooks
            or home._global_forward_pre_hooks
        ):
            return forward_call(*args, **kwargs)
        global_forward_pre_hooks = home._global_forward_pre_hooks
        global_forward_hooks = home._global_forward_hooks
        global_with_kwargs = home._global_forward_hooks_with_kwargs
        global_always_called = home._global_forward_hooks_always_called

        result = None
        called_always_hooks = set()

        def run():
            nonlocal result, args, kwargs
            full_hooks, non_full_hooks, pre_hooks = [], [], []
            if self._backward_pre_hooks or home._global_backward_pre_hooks:
                pre_hooks = self._get_backward_pre_hooks()
            if self._backward_hooks or home._global_backward_hooks:
                full_hooks, non_full_hooks = self._get_backward_hooks()

            # Iterate over snapshots: a hook may remove itself (or another hook) while running.
            for hook_id, hook in (
                *global_forward_pre_hooks.items(),
                *self._forward_pre_hooks.items(),
            ):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    out = hook(self, args, kwargs)
                    if out is not None:
                        if isinstance(out, tuple) and len(out) == 2:
                            args, kwargs = out
                        else:
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                f"but got {out}."
                            )
                else:
                    out = hook(self, args)
                    if out is not None:
                        args = out if isinstance(out, tuple) else (out,)

            bw_hook = None
            if full_hooks or pre_hooks:
                from minitorch_nn.nn.modules._backward_hooks import BackwardHook

                bw_hook = BackwardHook(self, full_hooks, pre_hooks)
                args = bw_hook.setup_input_hook(args)

            result = forward_call(*args, **kwargs)

            for hook_id, hook in (*global_forward_hooks.items(), *self._forward_hooks.items()):
                if (
                    hook_id in self._forward_hooks_always_called
                    or hook_id in global_always_called
                ):
                    called_always_hooks.add(hook_id)
                if (
                    hook_id in self._forward_hooks_with_kwargs
                    or hook_id in global_with_kwargs
                ):
                    out = hook(self, args, kwargs, result)
                else:
                    out = hook(self, args, result)
                if out is not None:
                    result = out

            if bw_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warn_user(
                        "For backward hooks to be called, module output should be a Tensor or a tuple of Tensors "
                        f"but received {type(result)}",
                    )
                result = bw_hook.setup_output_hook(result)

            if non_full_hooks:
                # Old-style hooks attach to the node that produced the (first) output tensor.
                var = result
                while not isinstance(var, Tensor):
                    var = (
                        next(v for v in var.values() if isinstance(v, Tensor))
                        if isinstance(var, dict)
                        else var[0]
                    )
                grad_fn = var.grad_fn
                if grad_fn is not None:
                    for hook in non_full_hooks:
                        grad_fn.register_hook(_WrappedHook(hook, self))
                    _warn_if_non_full_hook_misleads(args, result, grad_fn)
            return result

        try:
            return run()
        except Exception:
            for hook_id, hook in global_forward_hooks.items():
                if (
                    hook_id in global_always_called
                    and hook_id not in called_always_hooks
                ):
                    try:
                        out = hook(self, args, result)
                        if out is not None:
                            result = out
                    except Exception as e:
                        warn_user(
                            "global module forward hook with ``always_call=True`` raised an exception that was "
                            f"silenced as another error was raised in forward: {e}",
                        )
            for hook_id, hook in self._forward_hooks.items():
                if (
                    hook_id in self._forward_hooks_always_called
                    and hook_id not in called_always_hooks
                ):
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            out = hook(self, args, kwargs, result)
                        else:
                            out = hook(self, args, result)
                        if out is not None:
                            result = out
                    except Exception as e:
                        warn_user(
                            "module forward hook with ``always_call=True`` raised an exception that was "
                            f"silenced as another error was raised in forward: {e}",
                        )
            raise
