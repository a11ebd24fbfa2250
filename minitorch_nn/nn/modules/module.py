"""``nn.Module``: the base class of every layer and model (mirrors ``torch/nn/modules/module.py``).

A module is an ordinary Python object with three ordered dicts that ``Module.__init__`` creates:

* ``_parameters``: name -> :class:`~minitorch_nn.nn.Parameter` (or None), the trainable tensors;
* ``_buffers``: name -> tensor (or None), state that is not trained (running statistics);
  names in ``_non_persistent_buffers_set`` are left out of ``state_dict``;
* ``_modules``: name -> child ``Module`` (or None).

``module.weight = Parameter(...)`` lands in ``_parameters`` because :meth:`Module.__setattr__`
looks at the value's type; ``module.weight`` finds it again through :meth:`Module.__getattr__`,
which Python only calls when normal lookup fails. Everything else -- iteration
(``named_parameters``...), ``state_dict``, conversions (``.to``), ``repr`` -- is a walk over these
dicts, children in insertion order.

This file holds registration, lookup, iteration, train/eval and printing. The rest of
``Module`` is split by concept into mixins next to it:

* ``_hooks.py``: every ``register_*_hook`` and the module call (``__call__``: pre-hooks,
  ``forward``, hooks), with ``_backward_hooks.py`` wiring full backward hooks into autograd;
* ``_state_dict.py``: ``state_dict``, ``load_state_dict`` and the per-module steps they call;
* ``_conversion.py``: ``_apply`` and ``to``/``float``/``cpu``/``to_empty``..., and how the
  ``__future__`` flags decide whether parameters keep their identity.

Differences from PyTorch (each keeps PyTorch's behaviour and text first):

* errors that learners commonly hit carry a ``Hint:`` line (assigning before
  ``super().__init__()``, a plain tensor over a parameter);
* an ``AttributeError`` raised *inside* a ``@property`` is reported with the attribute that is
  really missing (PyTorch reports the property itself as missing);
* storing a plain list/tuple/dict of modules or parameters warns that nothing is registered;
* a failed ``load_state_dict`` leaves the module unchanged (see ``_state_dict.py``).

TorchScript, ``DataParallel`` replication and ``torch.compile`` support are absent.
"""

from __future__ import annotations

import itertools
import sys
from collections import OrderedDict
from typing import Any, TypeVar

import minitorch_nn.__future__  # noqa: F401  (makes ``minitorch_nn.__future__`` importable as an attribute)
from minitorch_nn import _tensor_module_load  # noqa: F401  (attaches Tensor.module_load)
from minitorch_nn._tensor import Tensor
from minitorch_nn._warnings import warn_user
from minitorch_nn.nn.modules import _hooks
from minitorch_nn.nn.modules._conversion import _ConversionMixin, mark_replaced
from minitorch_nn.nn.modules._helpers import addindent, typename
from minitorch_nn.nn.modules._hooks import (  # noqa: F401  (re-exported, as torch.nn.modules.module has them)
    _global_backward_hooks,
    _global_backward_pre_hooks,
    _global_buffer_registration_hooks,
    _global_forward_hooks,
    _global_forward_hooks_always_called,
    _global_forward_hooks_with_kwargs,
    _global_forward_pre_hooks,
    _global_module_registration_hooks,
    _global_parameter_registration_hooks,
    _HooksMixin,
    _WrappedHook,
    register_module_backward_hook,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
from minitorch_nn.nn.modules._state_dict import _IncompatibleKeys, _StateDictMixin  # noqa: F401
from minitorch_nn.nn.parameter import Buffer, Parameter

# The global hook dicts above (and which kind of global backward hook is in use) are globals of
# this module, as in PyTorch: the hooks code reads them here at every call, so rebinding one
# (``module._global_forward_hooks = OrderedDict()``) takes effect at once.
_global_is_full_backward_hook = _hooks._global_is_full_backward_hook
_hooks._home = sys.modules[__name__]

_addindent = addindent  # PyTorch's name, used by some third-party reprs


def _forward_unimplemented(self, *input):
    """Subclasses define ``forward``; calling a module without one is an error."""
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function'
    )


def _init_hint(module, name) -> str:
    """The line after "cannot assign ... before Module.__init__() call": who did what, and the fix."""
    cls = type(module).__name__
    return (
        f"\nHint: {cls}.__init__ assigned `self.{name}` before super().__init__() ran; call "
        "super().__init__() as the first line of __init__."
    )


def _unregistered_warning(name, value):
    """Warn when a list/tuple/dict holding modules or parameters is stored as a plain attribute:
    PyTorch silently registers nothing, so they are not trained, moved or saved."""
    if name.startswith("_"):
        return  # private bookkeeping (a container renumbering its own _modules, say)
    if isinstance(value, dict):
        items = value.values()
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        return
    items = list(itertools.islice(items, 64))  # a look at the first items is enough (and cheap)
    if not any(isinstance(v, (Module, Tensor)) for v in items):
        return  # the common case, numbers or names (a conv's kernel_size): no metaclass checks
    kinds = {"nn.Module" for v in items if isinstance(v, Module)} | {
        "nn.Parameter" for v in items if isinstance(v, Parameter)
    }
    if not kinds:
        return
    fix = "nn.ModuleDict" if isinstance(value, dict) else "nn.ModuleList"
    if kinds == {"nn.Parameter"}:
        fix = "nn.ParameterDict" if isinstance(value, dict) else "nn.ParameterList"
    warn_user(
        f"`{name}` is a plain {type(value).__name__} holding {' and '.join(sorted(kinds))} objects: they are not "
        f"registered, so parameters() will not list them and .to()/state_dict() will skip them. Use {fix} instead.",
        UserWarning,
    )


class Module(_HooksMixin, _StateDictMixin, _ConversionMixin):
    """Base class for all neural network modules.

    Subclasses call ``super().__init__()`` first, assign parameters and submodules as
    attributes, and define ``forward``. Call the module (``m(x)``), not ``m.forward(x)``, so
    that hooks run.

    Example::

        >>> class Scale(Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.s = Parameter(minitorch_nn.ones(1))
        ...     def forward(self, x):
        ...         return x * self.s
    """

    dump_patches: bool = False
    _version: int = 1  # saved in state_dict metadata; bump it when the saved format changes
    # the type of state_dict's ``destination`` (PyTorch's annotation; listed by dir() as in PyTorch)
    T_destination = TypeVar("T_destination", bound=dict[str, Any])
    training: bool
    call_super_init: bool = False

    def __init__(self, *args, **kwargs) -> None:
        if self.call_super_init is False and kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were given"
            )
        # object.__setattr__ skips our own __setattr__, which needs these dicts to exist.
        set_ = super().__setattr__
        set_("training", True)
        set_("_parameters", {})
        set_("_buffers", {})
        set_("_non_persistent_buffers_set", set())
        set_("_backward_pre_hooks", OrderedDict())
        set_("_backward_hooks", OrderedDict())
        set_("_is_full_backward_hook", None)
        set_("_forward_hooks", OrderedDict())
        set_("_forward_hooks_with_kwargs", OrderedDict())
        set_("_forward_hooks_always_called", OrderedDict())
        set_("_forward_pre_hooks", OrderedDict())
        set_("_forward_pre_hooks_with_kwargs", OrderedDict())
        set_("_state_dict_hooks", OrderedDict())
        set_("_state_dict_pre_hooks", OrderedDict())
        set_("_load_state_dict_pre_hooks", OrderedDict())
        set_("_load_state_dict_post_hooks", OrderedDict())
        set_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented

    def __call__(self, *args, **kwargs):
        return self._call_impl(*args, **kwargs)

    # -- registration -------------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Add a buffer: module state that is not a parameter (e.g. BatchNorm's running mean).

        ``persistent=False`` keeps it out of ``state_dict``. ``tensor=None`` registers the
        name with no value (it is skipped by ``buffers()`` and ``state_dict``).
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError(
                "cannot assign buffer before Module.__init__() call" + _init_hint(self, name)
            )
        self._check_new_name("buffer", name, self._buffers)
        if tensor is not None and not (
            isinstance(tensor, Tensor) or hasattr(tensor, "__torch_function__")
        ):
            raise TypeError(
                f"cannot assign '{typename(tensor)}' object to buffer '{name}' (torch Tensor or None required)"
            )
        for hook in _global_buffer_registration_hooks.values():
            output = hook(self, name, tensor)
            if output is not None:
                tensor = output
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def _check_new_name(self, kind: str, name, registry: dict) -> None:
        """PyTorch's checks on a buffer or parameter name, in PyTorch's order and words."""
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in registry:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name: str, param) -> None:
        """Add a parameter; ``param`` must be a :class:`Parameter` or None."""
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                "cannot assign parameter before Module.__init__() call" + _init_hint(self, name)
            )
        self._check_new_name("parameter", name, self._parameters)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
                "\nHint: wrap the tensor: nn.Parameter(tensor), or register_buffer() if it should not be trained."
            )
        if param.grad_fn:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        for hook in _global_parameter_registration_hooks.values():
            output = hook(self, name, param)
            if output is not None:
                param = output
        previous = self._parameters.get(name)
        if previous is not None and previous is not param:
            # Beyond PyTorch: let an optimizer still holding `previous` warn (see _conversion.py).
            mark_replaced(previous, self, name)
        if "_replaced_by" in param.__dict__:
            del param.__dict__["_replaced_by"]  # registered again: no longer stale
        self._parameters[name] = param

    def add_module(self, name: str, module) -> None:
        """Add a child module, reachable as the attribute ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _global_module_registration_hooks.values():
            output = hook(self, name, module)
            if output is not None:
                module = output
        self._modules[name] = module

    def register_module(self, name: str, module) -> None:
        """Alias for :meth:`add_module`."""
        self.add_module(name, module)

    # -- attribute access ---------------------------------------------------------------------------
    def __getattr__(self, name: str):
        # Only reached when normal lookup fails: look in the three registries.
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        message = f"'{type(self).__name__}' object has no attribute '{name}'"
        prop = getattr(type(self), name, None)
        if isinstance(prop, property) and prop.fget is not None:
            # Python calls __getattr__ when a property *raises* AttributeError, which hides the
            # real missing name. Run the getter again to report what actually went wrong.
            try:
                prop.fget(self)
            except AttributeError as inner:
                raise AttributeError(
                    f"{message}\nHint: `{name}` is a property of {type(self).__name__}; it raised "
                    f"AttributeError: {inner}"
                ) from inner
        raise AttributeError(message)

    def __setattr__(self, name: str, value) -> None:
        """Route ``self.name = value`` to the right registry:

        * a Parameter -> ``_parameters`` (removing ``name`` from every other place);
        * anything to an existing parameter name -> must be a Parameter or None;
        * a Module -> ``_modules``; anything to an existing child name -> Module or None;
        * a ``Buffer``, or any tensor to an existing buffer name -> ``_buffers``;
        * anything else -> a plain attribute (a plain tensor under a new name is *not* a buffer).
        """

        def remove_from(*containers):
            for c in containers:
                if name in c:
                    if isinstance(c, dict):
                        del c[name]
                    else:
                        c.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError(
                    "cannot assign parameters before Module.__init__() call"
                    + _init_hint(self, name)
                )
            remove_from(
                self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set
            )
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as parameter '{name}' (torch.nn.Parameter or None expected)"
                    f"\nHint: to change the values in place use `with torch.no_grad(): module.{name}.copy_(value)`; "
                    f"to replace the parameter wrap the tensor: module.{name} = nn.Parameter(value)."
                )
            self.register_parameter(name, value)
            return

        # Child modules (task module-setattr):
        # * a Module value: raise AttributeError("cannot assign module before Module.__init__()
        #   call" + _init_hint(self, name)) when ``_modules`` does not exist yet; otherwise remove
        #   ``name`` from ``self.__dict__``, ``_parameters``, ``_buffers`` and
        #   ``_non_persistent_buffers_set`` (``remove_from``), let every global module registration
        #   hook (``_hooks._global_module_registration_hooks``, in order) replace the value when it
        #   returns something other than None, and store it in ``_modules[name]``;
        # * any other value for a name already in ``_modules``: None is stored the same way (hooks
        #   included), anything else raises TypeError("cannot assign '<type>' as child module
        #   '<name>' (torch.nn.Module or None expected)") with ``typename(value)``;
        # * otherwise fall through to the buffer and plain-attribute rules below.
        # BEGIN SOLUTION module-setattr
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError(
                    "cannot assign module before Module.__init__() call" + _init_hint(self, name)
                )
            remove_from(
                self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set
            )
            for hook in _global_module_registration_hooks.values():
                output = hook(self, name, value)
                if output is not None:
                    value = output
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as child module '{name}' (torch.nn.Module or None expected)"
                )
            for hook in _global_module_registration_hooks.values():
                output = hook(self, name, value)
                if output is not None:
                    value = output
            modules[name] = value
            return
        # END SOLUTION

        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not (
                isinstance(value, Tensor) or hasattr(value, "__torch_function__")
            ):
                raise TypeError(
                    f"cannot assign '{typename(value)}' as buffer '{name}' "
                    "(torch.nn.Buffer, torch.Tensor or None expected)"
                )
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        if modules is not None:
            _unregistered_warning(name, value)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self):
        keys = [*dir(type(self)), *self.__dict__, *self._parameters, *self._modules, *self._buffers]
        return sorted(k for k in keys if not k[0].isdigit())

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
        # Modules pickled by older versions may lack the newer hook dicts.
        for name in (
            "_forward_pre_hooks",
            "_forward_pre_hooks_with_kwargs",
            "_forward_hooks_with_kwargs",
            "_forward_hooks_always_called",
            "_state_dict_hooks",
            "_state_dict_pre_hooks",
            "_load_state_dict_pre_hooks",
            "_load_state_dict_post_hooks",
            "_backward_pre_hooks",
        ):
            if name not in self.__dict__:
                self.__dict__[name] = OrderedDict()
        if "_non_persistent_buffers_set" not in self.__dict__:
            self._non_persistent_buffers_set = set()
        if "_is_full_backward_hook" not in self.__dict__:
            self._is_full_backward_hook = None

    # -- looking things up by dotted name -----------------------------------------------------------
    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path ``target`` (``""`` is self)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Replace (or, unless ``strict``, add) the submodule at the dotted path ``target``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`module` is not an nn.Module, found " + str(type(module)))
        parent = self.get_submodule(".".join(atoms[:-1])) if len(atoms) > 1 else self
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]):
            mod = getattr(parent, atoms[-1])
            if not isinstance(mod, Module):
                raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target`` (``"encoder.0.weight"``)."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str):
        """The buffer at the dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    # -- iteration ----------------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """Yield ``(dotted_name, module)`` for self and every descendant, depth-first, pre-order.

        A module reachable by several paths is yielded once (first path) unless
        ``remove_duplicate=False``. None children are skipped.
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    def modules(self, remove_duplicate: bool = True):
        """Self and every descendant module (see :meth:`named_modules`)."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_children(self):
        """Yield ``(name, child)`` for the direct children (each object once, None skipped)."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self):
        """The direct child modules."""
        for _, module in self.named_children():
            yield module

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate: bool = True):
        # The walk behind named_parameters/named_buffers: modules pre-order, then each one's own dict.
        memo = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ):
        """Yield ``(dotted_name, parameter)``; a tied parameter is yielded once unless
        ``remove_duplicate=False``; ``recurse=False`` gives only this module's own."""
        yield from self._named_members(
            lambda module: module._parameters.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def parameters(self, recurse: bool = True):
        """Every parameter (what an optimizer takes)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """Yield ``(dotted_name, buffer)``, persistent or not (see :meth:`named_parameters`)."""
        yield from self._named_members(
            lambda module: module._buffers.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def buffers(self, recurse: bool = True):
        """Every buffer."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    # -- whole-tree operations ----------------------------------------------------------------------
    def apply(self, fn):
        """Call ``fn(module)`` on every submodule (children first, post-order) and then self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def train(self, mode: bool = True):
        """Set training mode (``self.training``) here and in every descendant; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """``train(False)``: switch Dropout/BatchNorm-like layers to inference behaviour."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        """Set ``requires_grad`` on every parameter (e.g. ``False`` to freeze); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset parameter gradients: to None (default) or, with ``set_to_none=False``, to zeros."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    # -- printing -----------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """Override to describe the module's settings inside its repr, e.g. ``in_features=2``."""
        return ""

    def __repr__(self) -> str:
        # Layout: Name(extra) on one line when there is exactly one extra line and no children;
        # otherwise one indented line per extra_repr line and per child.
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            "(" + key + "): " + addindent(repr(module), 2) for key, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _adopt_mixin_methods():
    # The mixins are only a way to split Module's source by concept: give their methods the
    # names Python prints in errors ("Module.to_empty() takes 1 positional argument...").
    for mixin in (_HooksMixin, _StateDictMixin, _ConversionMixin):
        for name, fn in vars(mixin).items():
            if hasattr(fn, "__code__"):
                fn.__qualname__ = f"Module.{name}"
                fn.__code__ = fn.__code__.replace(co_qualname=f"Module.{name}")


_adopt_mixin_methods()

__all__ = [
    "Module",
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]
