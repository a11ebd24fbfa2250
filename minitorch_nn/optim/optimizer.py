"""``Optimizer``: the base class of every optimizer (mirrors ``torch/optim/optimizer.py``).

An optimizer holds

* ``param_groups``: a list of dicts, each with its ``"params"`` (a list of tensors) and its
  hyperparameters (``"lr"``, ``"momentum"``...), filled from ``defaults`` where a group does not
  set them;
* ``state``: a dict from parameter to that parameter's state (``"momentum_buffer"``,
  ``"exp_avg"``, ``"step"``...), created lazily on the first ``step()``.

``state_dict()`` replaces each parameter by its index (counted across groups in order), so a
checkpoint does not depend on object identity; ``load_state_dict()`` maps the indices back onto
this optimizer's parameters and casts floating state to each parameter's dtype and device
(``"step"`` is kept as it is), as PyTorch does.

``step()`` of every subclass is wrapped (in ``__init_subclass__``) to run the step hooks:
global ones (``register_optimizer_step_pre_hook``) and this optimizer's
(``register_step_pre_hook``/``register_step_post_hook``), in PyTorch's order.

Differences from PyTorch: the two errors learners meet most (an empty parameter list, a non-leaf
tensor) add a ``Hint:`` line after PyTorch's message; no state-dict hooks; no
``foreach``/``fused`` implementations (each optimizer runs PyTorch's single-tensor algorithm,
op for op, so results match ``foreach=False``), no sparse gradients. Beyond PyTorch, ``step()``
warns once per parameter when the model has replaced a parameter this optimizer still holds
(a conversion under the overwrite flag, ``module.weight = nn.Parameter(...)``,
``load_state_dict(assign=True)``); PyTorch silently updates the orphan. The check may also fire
for a tied parameter that one module replaced while another still uses it.
"""

from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

import minitorch_nn as _t
from minitorch_nn._tensor import Tensor
from minitorch_nn._warnings import warn_user
from minitorch_nn.nn.modules import _conversion

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

# Hooks that run around every optimizer's step() (torch.optim.optimizer's global hooks).
_global_optimizer_pre_hooks: OrderedDict = OrderedDict()
_global_optimizer_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Run ``hook(optimizer, args, kwargs)`` before every optimizer's ``step()``; returns a handle."""
    from minitorch_nn.utils.hooks import RemovableHandle

    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Run ``hook(optimizer, args, kwargs)`` after every optimizer's ``step()``; returns a handle."""
    from minitorch_nn.utils.hooks import RemovableHandle

    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _warn_replaced_params(optimizer):
    """Beyond PyTorch: warn (once per parameter) about parameters the model has replaced.

    A module marks a Parameter it dropped for another object (``_replaced_by`` in its
    ``__dict__``, see ``nn/modules/_conversion.py``); updating such an orphan trains nothing, a
    silent failure in PyTorch. This only runs when some parameter was marked since this
    optimizer's last step, so the usual step pays a single integer compare.
    """
    optimizer._replaced_seen = _conversion.replaced_count
    warned = optimizer._replaced_warned
    for g, group in enumerate(optimizer.param_groups):
        names = group.get("param_names")
        for i, p in enumerate(group["params"]):
            where = p.__dict__.get("_replaced_by")
            if where is None or id(p) in warned:
                continue
            warned.add(id(p))  # (ids are stable: the group keeps p alive)
            label = f"parameter {i} ({names[i]!r})" if names else f"parameter {i}"
            warn_user(
                f"optimizer.step(): {label} of param group {g} was replaced in the model ({where}) by a "
                "new Parameter object; the optimizer is updating the old tensor, so the model will not "
                "train.\nHint: build the optimizer after converting or replacing parameters (model.to(...) "
                "first), or turn on minitorch_nn.__future__.set_swap_module_params_on_conversion(True) so "
                "conversions keep parameter identity.",
                UserWarning,
            )


def _with_step_hooks(step):
    """Wrap a subclass's ``step`` so the pre-hooks (global, then this optimizer's) run before it
    and the post-hooks (this optimizer's, then global) after it, in PyTorch's order. A pre-hook
    may return ``(new_args, new_kwargs)`` to change what ``step`` receives."""

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        for pre_hook in (*_global_optimizer_pre_hooks.values(), *self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(
                        f"{step} must return None or a tuple of (new_args, new_kwargs), but got {result}."
                    )
        if self._replaced_seen != _conversion.replaced_count:
            _warn_replaced_params(self)
        if getattr(self, "_may_hold_placeholders", False):
            _refuse_placeholders(self)
        out = step(*args, **kwargs)
        for post_hook in (*self._optimizer_step_post_hooks.values(), *_global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    wrapper._hooked = True
    return wrapper


def _refuse_placeholders(optimizer):
    """Beyond PyTorch: ``step()`` while a lazy module's parameter is still a placeholder (no dry
    run yet) raises, where PyTorch skips it without a word (it has no gradient)."""
    from minitorch_nn.nn.modules.lazy import check_initialized

    for group in optimizer.param_groups:
        check_initialized(group["params"], f"{type(optimizer).__name__}.step()", RuntimeError,
                          "calling step()")
    optimizer._may_hold_placeholders = False   # all materialized: no need to look again


class _RequiredParameter:
    """Marks a hyperparameter that has no default (e.g. ``lr`` of old optimizers)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    if isinstance(obj, Tensor):
        return "torch.FloatTensor" if obj.dtype is _t.float32 else f"torch.{type(obj).__name__}"
    module = type(obj).__module__
    return (module + "." if module not in ("builtins", None) else "") + type(obj).__qualname__


def _use_grad_for_differentiable(step):
    """Run ``step`` with grad mode off (on only for ``differentiable=True``), like PyTorch."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        with _t.set_grad_enabled(self.defaults.get("differentiable", False)):
            return step(self, *args, **kwargs)

    return wrapper


class Optimizer:
    """Base class: owns ``param_groups`` and ``state``; subclasses implement ``step()``."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params, defaults):
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._replaced_seen = -1  # (the first step always checks; see _warn_replaced_params)
        self._replaced_warned = set()
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                + _typename(params)
            )
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError(
                "optimizer got an empty parameter list\n"
                "Hint: nothing to optimize was passed. Common causes: a parameters() generator that was already "
                "used up (pass list(model.parameters()) if you need it twice), layers kept in a plain Python list "
                "instead of nn.ModuleList (they are not registered), or `_init_` written instead of `__init__`."
            )
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())
        self.__dict__.setdefault("_replaced_seen", -1)
        self.__dict__.setdefault("_replaced_warned", set())

    def register_step_pre_hook(self, hook):
        """Run ``hook(optimizer, args, kwargs)`` before this optimizer's ``step()``."""
        from minitorch_nn.utils.hooks import RemovableHandle

        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """Run ``hook(optimizer, args, kwargs)`` after this optimizer's ``step()``."""
        from minitorch_nn.utils.hooks import RemovableHandle

        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def __repr__(self):
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            if i:
                lines.append("")  # PyTorch leaves a blank line between groups
            lines.append(f"Parameter Group {i}")
            for key in sorted(group.keys()):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"

    # -- groups ------------------------------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters, with its own hyperparameters (e.g. a new layer to train)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering of tensors in "
                "sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)

        # named_parameters() may be passed directly: (name, tensor) pairs
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError(
                    "can't optimize a non-leaf Tensor\n"
                    "Hint: this tensor was computed from another one (it has a grad_fn), so updating it would not "
                    "change what it came from; e.g. nn.Parameter(t).to(device) returns such a copy. Pass the leaf "
                    "itself, or create it where it belongs: nn.Parameter(torch.randn(3, device=device))."
                )
        # As in PyTorch, a lazy module's placeholders are accepted: its dry run materializes them
        # in place, so this optimizer then holds the real parameters. Until then step() refuses
        # (see _with_step_hooks), which is where PyTorch would silently skip them.
        from minitorch_nn.nn.parameter import is_lazy

        if any(is_lazy(p) for p in param_group["params"]):
            self._may_hold_placeholders = True

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len(set(params)):
            warn_user(
                "optimizer contains a parameter group with duplicate parameters; in future, this will cause an error; "
                "see github.com/pytorch/pytorch/issues/40967 for more information",
            )
        param_set = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {current} to the optimizer"
                )
        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- gradients ---------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients: to ``None`` (the default, which saves memory) or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad.grad_fn is not None:
                            p.grad.detach_()
                        else:
                            p.grad.requires_grad_(False)
                        p.grad.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    # -- checkpoints -------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{"state": {index: state}, "param_groups": [...]}`` with parameters as indices."""
        mapping = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups, key=None):
        # "step" keeps its own dtype/device (a cpu float32 scalar) unless capturable/fused.
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False) or False
                capturable = pg.get("capturable", False) or False
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=_t.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a ``state_dict()``: same number of groups and of parameters per group."""
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
            )
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, param_id=None, param_groups=None, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(param, value, param_id, param_groups, key)
            if isinstance(value, dict):
                return {k: cast(param, v, param_id=param_id, param_groups=param_groups, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v, param_id=param_id, param_groups=param_groups) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, param_id=k, param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
