"""Saving and loading a module's state (mirrors the state-dict parts of ``torch/nn/modules/module.py``).

**Saving** (``state_dict``) walks the module tree pre-order. For each module, with the full
dotted ``prefix`` (``"encoder.0."``):

1. its ``_metadata`` entry ``{"version": cls._version}`` is recorded under ``prefix[:-1]``;
2. its state-dict pre-hooks run;
3. ``_save_to_state_dict`` adds its own parameters, then its persistent buffers, then
   ``_extra_state`` if the class overrides ``get_extra_state``;
4. each child does the same with ``prefix + name + "."``;
5. its post-hooks run (post-order: children's first).

**Loading** (``load_state_dict``) walks the same way. Each module gets the keys under its
prefix (the root gets them all, a child a filtered copy made *after* the parent's pre-hooks
ran, so a parent hook can rename child keys). ``_load_from_state_dict`` runs the module's load
pre-hooks, then for each local tensor either reports the key missing, reports an error
(not a tensor, size mismatch) or writes the value in one of three ways:

* ``param.copy_(value)`` -- the default: same objects, same dtype and device;
* ``assign=True`` -- the module attribute becomes the checkpoint tensor (wrapped in a
  ``Parameter`` for parameter slots);
* the ``__future__`` swap flag -- ``new = param.module_load(value, assign=...)`` then
  ``swap_tensors(param, new)``: same objects, new contents.

Keys under the prefix that name nothing local are "unexpected". Post-hooks see the running
``_IncompatibleKeys`` and may edit the lists in place. At the end, with ``strict=True``, missing
and unexpected keys become errors, and any error raises one ``RuntimeError`` listing them all.

Beyond PyTorch (PyTorch's text comes first in every message):

* **A failed load changes nothing.** PyTorch writes tensor by tensor and raises at the end, so a
  size mismatch in the last layer leaves the first layers already overwritten. Here, when no
  user code takes part in the load (no load hooks, no ``_load_from_state_dict`` or
  ``set_extra_state`` overrides beyond the library's own pure ones), the whole tree is first
  checked without writing (keys, shapes, values that are not tensors), and such a load raises
  before its first write. Otherwise, and for what only the copy itself can find, every write
  is logged with a way to undo it, and when the load raises the log is replayed backwards: the
  values of every tensor written in place (``Tensor``, ``Parameter`` and any subclass of them)
  come back *with their version counters as they were*, so a graph recorded before the failed
  load still runs ``backward()``; swapped tensors get their old payloads back and assigned
  attributes their old objects (identities, dtypes and versions unchanged). (``set_extra_state``
  calls and edits made by user hooks cannot be undone. The price is one temporary copy of each
  tensor loaded in place, dropped when the load returns.)
* **A hint when the keys differ only by a prefix**, e.g. a checkpoint saved from a
  ``DataParallel`` wrapper whose keys all start with ``module.``.
* **A warning when ``strict=False`` loaded nothing at all** (every key missing), the usual
  result of silencing a prefix mismatch with ``strict=False``.
* **A warning when a floating-point checkpoint value is copied into an integer tensor**, which
  truncates it.
* **Linear time.** PyTorch filters the whole key set once per child module, which is
  quadratic for a wide ``ModuleList``; here the keys are grouped by child in one pass (same
  dicts, same order, so hooks see exactly what PyTorch's would).
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from minitorch_nn import __future__ as future_flags
from minitorch_nn._tensor import Tensor
from minitorch_nn._warnings import warn_user
from minitorch_nn.autograd import graph
from minitorch_nn.nn.modules._helpers import no_grad
from minitorch_nn.nn.parameter import Parameter, is_lazy
from minitorch_nn.utils import swap_tensors

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the missing and the unexpected keys."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _LoadLog:
    """Undo information for every tensor written during one ``load_state_dict`` call.

    With ``dry_run`` the load only checks: ``_load_from_state_dict`` reports missing and unexpected
    keys and errors but writes nothing and warns nothing (the real run that follows does)."""

    def __init__(self, dry_run=False):
        self.dry_run = dry_run
        self.undo = []
        self.saved_modules = set()
        self.loaded = 0  # tensors written (for the "loaded nothing" warning)

    def before_copy(self, tensor):
        """Snapshot the values ``tensor`` holds now, whatever its class, and its version counter.

        The snapshot and the restore act on the payload through a plain ``Tensor`` alias, so a
        subclass's ``__torch_function__``, modes and hooks never see them (they are ours, not
        PyTorch's), and the restore puts the version counter back to its value before the load:
        a graph recorded before a failed load can still run ``backward()``."""
        # (a lazy placeholder holds no values to restore, and refuses detach())
        if getattr(type(tensor), "_is_uninitialized_lazy", False) or tensor.is_meta:
            return
        impl = tensor._impl
        if impl.storage is None:
            return  # a wrapper subclass: its data lives in its inner tensors, restored through them
        from minitorch_nn._C import TensorImpl, _wrap
        from minitorch_nn._C_torch_function import DisableTorchFunction
        from minitorch_nn._dispatch import python_dispatch

        alias = _wrap(Tensor, TensorImpl(impl.storage, impl.sizes, impl.strides, impl.offset,
                                         impl.dtype, impl.device, impl.version))
        counter = impl.version
        version = counter.value
        with DisableTorchFunction(), python_dispatch.excluded():
            old = alias.clone()

        def restore():
            with DisableTorchFunction(), python_dispatch.excluded():
                alias.copy_(old)
            counter.value = version

        self.undo.append(restore)

    def before_assign(self, module):
        # Assigning can move a name between _parameters and _buffers, so snapshot all three.
        if id(module) in self.saved_modules:
            return
        self.saved_modules.add(id(module))
        params, buffers = dict(module._parameters), dict(module._buffers)
        non_persistent = set(module._non_persistent_buffers_set)

        def restore():
            module._parameters.clear()
            module._parameters.update(params)
            module._buffers.clear()
            module._buffers.update(buffers)
            module._non_persistent_buffers_set.clear()
            module._non_persistent_buffers_set.update(non_persistent)

        self.undo.append(restore)

    def after_swap(self, tensor, other, accumulator):
        # After swap_tensors(tensor, other), `other` holds the old contents: swap back to undo.
        # The swaps poisoned the tensor's AccumulateGrad node; with the old payload back, that
        # node is healthy again.
        def restore():
            swap_tensors(tensor, other)
            graph.unpoison_after_swap_back(tensor, accumulator)

        self.undo.append(restore)

    def rollback(self):
        with no_grad():
            for undo in reversed(self.undo):
                undo()
        self.undo.clear()


class _ActiveLogs(threading.local):
    """The logs of the loads in progress in this thread, used as a list (a stack: a hook could
    load another module). Code that changes a module during a load in its own way (lazy modules
    materialising their parameters) appends undo steps to ``_active_logs[-1].undo``."""

    def __init__(self):
        self.stack = []

    def __len__(self):
        return len(self.stack)

    def __getitem__(self, i):
        return self.stack[i]

    def append(self, log):
        self.stack.append(log)

    def pop(self):
        return self.stack.pop()


_active_logs = _ActiveLogs()


def _prefix_hint(missing, unexpected) -> str:
    """A hint line when every missing key is an unexpected key with a prefix added or removed."""
    if not missing or not unexpected:
        return ""
    for longer, shorter, side in (
        (unexpected, missing, "checkpoint"),
        (missing, unexpected, "model"),
    ):
        m0 = shorter[0]
        for k in longer:
            if k.endswith("." + m0):
                prefix = k[: len(k) - len(m0)]
                longer_set = set(longer)
                if all(prefix + s in longer_set for s in shorter):
                    if side == "checkpoint":
                        return (
                            f'\nHint: every missing key appears in the checkpoint with the extra prefix "{prefix}" '
                            "(saved from a wrapper such as DataParallel?). Strip it first: "
                            f"{{k.removeprefix({prefix!r}): v for k, v in state_dict.items()}}"
                        )
                    return (
                        f'\nHint: the model\'s keys have the extra prefix "{prefix}" that the checkpoint lacks. '
                        f"Load into the submodule instead: model.get_submodule({prefix[:-1]!r}).load_state_dict(...), "
                        "or add the prefix to the checkpoint's keys"
                    )
    return ""


def _swap_in(param, value, assign, log):
    """The ``__future__`` swap path: ``param`` keeps its identity and takes new contents."""
    if log is not None and not assign:
        log.before_copy(param)  # the default module_load copies into param first
    new = param.module_load(value, assign=assign)
    if id(new) == id(value) or id(new) == id(param):
        raise RuntimeError(
            "module_load returned one of self or other, please .detach() the result if "
            "returning one of the inputs in module_load"
        )
    if isinstance(param, Parameter):
        if not isinstance(new, Parameter):
            new = Parameter(new, requires_grad=param.requires_grad)
        else:
            new.requires_grad_(param.requires_grad)
    accumulator = graph.accumulator_of(param)
    swap_tensors(param, new)
    if log is not None:
        log.after_swap(param, new, accumulator)


def _assign_in(module, name, param, value, log):
    """The ``assign=True`` path: the checkpoint tensor itself becomes the module attribute."""
    if isinstance(param, Parameter):
        if not isinstance(value, Parameter):
            value = Parameter(value, requires_grad=param.requires_grad)
        else:
            value.requires_grad_(param.requires_grad)
    if log is not None:
        log.before_assign(module)
    setattr(module, name, value)


def _load_tree(
    module, local_state_dict, prefix, metadata, assign, missing_keys, unexpected_keys, error_msgs
):
    """Load ``module`` and then its children (pre-order), then run its load post-hooks.

    (A module-level function rather than a closure inside ``load_state_dict``: a recursive
    closure refers to itself and would leave a reference cycle for the garbage collector.)
    """
    local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
    if assign:
        local_metadata["assign_to_params_buffers"] = assign
    # PyTorch always passes strict=True here; `strict` only matters at the end.
    module._load_from_state_dict(
        local_state_dict, prefix, local_metadata, True, missing_keys, unexpected_keys, error_msgs
    )
    # Each child gets a new dict with the keys under its prefix. Grouping the keys by their next
    # name component in one pass gives the same dicts (same order) as filtering once per child,
    # without the quadratic cost on wide modules.
    by_child = {}
    for k, v in local_state_dict.items():
        if k.startswith(prefix):
            head, dot, _ = k[len(prefix) :].partition(".")
            if dot:
                by_child.setdefault(head, {})[k] = v
    for name, child in module._modules.items():
        if child is not None:
            _load_tree(
                child,
                by_child.get(name, {}),
                prefix + name + ".",
                metadata,
                assign,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )
    incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
    for hook in module._load_state_dict_post_hooks.values():
        if hook(module, incompatible) is not None:
            raise AssertionError(
                "Hooks registered with ``register_load_state_dict_post_hook`` are not expected to return "
                "new values, if incompatible_keys need to be modified, it should be done inplace."
            )


def _writes_only_tensors(root) -> bool:
    """Whether loading into ``root`` runs no user code besides writing tensors: no load hooks, and
    no ``_load_from_state_dict``/``set_extra_state`` of the user's own. Then a dry run of the load
    (which only checks) is free of side effects, and the load can be validated before writing."""
    for m in root.modules():
        if m._load_state_dict_pre_hooks or m._load_state_dict_post_hooks:
            return False
        cls = type(m)
        # the class whose _load_from_state_dict runs must be ours, or say it only edits keys
        owner = next(k for k in cls.__mro__ if "_load_from_state_dict" in k.__dict__)
        if owner is not _StateDictMixin and not owner.__dict__.get("_load_from_state_dict_writes_nothing_else"):
            return False
        if getattr(cls, "set_extra_state", _StateDictMixin.set_extra_state) is not _StateDictMixin.set_extra_state:
            return False
    return True


class _StateDictMixin:
    """``state_dict``/``load_state_dict`` and the per-module steps they call."""

    # -- saving -----------------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """Put this module's own state (no children) into ``destination`` under ``prefix``."""
        # BEGIN SOLUTION module-state-dict
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if (
            getattr(type(self), "get_extra_state", _StateDictMixin.get_extra_state)
            is not _StateDictMixin.get_extra_state
        ):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()
        # END SOLUTION

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ordered dict of every parameter and persistent buffer, keyed by dotted name.

        Values are detached tensors sharing storage with the module's (``keep_vars=True``
        gives the Parameter objects themselves). The dict carries ``_metadata``: each module's
        ``{"version": ...}`` keyed by its prefix.
        """
        if args:
            warn_user(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
                " for details.",
                FutureWarning,
            )
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()

        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata

        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:
                # Private hooks may replace the dict; only the root's replacement is returned.
                destination = result
        return destination

    def get_extra_state(self):
        """Override (with ``set_extra_state``) to save a non-tensor object under ``_extra_state``."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
            "to report this bug."
        )

    def set_extra_state(self, state):
        """Override to restore what ``get_extra_state`` saved."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
            "to report this bug."
        )

    # -- loading ----------------------------------------------------------------------------------
    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        """Load this module's own tensors (not its children's) from ``state_dict``.

        Appends to ``missing_keys``/``unexpected_keys``/``error_msgs`` instead of raising, so
        that one call can report every problem. Override it to load a custom format; call
        ``super()._load_from_state_dict(...)`` for the standard part.
        """

        for hook in self._load_state_dict_pre_hooks.values():
            hook(
                state_dict,
                prefix,
                local_metadata,
                strict,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )

        persistent_buffers = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local_state = {
            k: v
            for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
            if v is not None
        }
        assign = local_metadata.get("assign_to_params_buffers", False)
        use_swap = future_flags.get_swap_module_params_on_conversion()
        log = _active_logs[-1] if _active_logs else None

        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not (isinstance(value, Tensor) or hasattr(type(value), "__torch_function__")):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like object '
                    f"from checkpoint but received {type(value)}"
                )
                continue
            lazy = is_lazy(param)
            # Old checkpoints stored 0-d parameters as 1-element 1-d tensors.
            if not lazy and len(param.shape) == 0 and len(value.shape) == 1 and value.shape[0] == 1:
                value = value[0]
            if not lazy and value.shape != param.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                    f"the shape in current model is {param.shape}."
                )
                continue
            if log is not None and log.dry_run:
                log.loaded += 1
                continue
            if param.is_meta and not value.is_meta and not assign:
                warn_user(
                    f"for {key}: copying from a non-meta parameter in the checkpoint to a meta parameter in the "
                    "current model, which is a no-op. (Did you mean to pass `assign=True` to assign items in the "
                    "state dictionary to their corresponding key in the module instead of copying them in place?)",
                )
            if not assign and value.dtype.is_floating_point and not param.dtype.is_floating_point:
                # Beyond PyTorch: a float checkpoint value copied into an integer tensor is truncated.
                warn_user(
                    f"for {key}: copying a {value.dtype} value from the checkpoint into a {param.dtype} "
                    "tensor of the model truncates it (PyTorch does this silently). Check that the "
                    "checkpoint matches the model, or convert the value first.",
                )
            try:
                with no_grad():
                    if use_swap:
                        _swap_in(param, value, assign, log)
                    elif assign:
                        _assign_in(self, name, param, value, log)
                    else:
                        if log is not None:
                            log.before_copy(param)
                        param.copy_(value)
                if log is not None:
                    log.loaded += 1
            except Exception as ex:
                action = "swapping" if use_swap else "copying"
                error_msgs.append(
                    f'While {action} the parameter named "{key}", whose dimensions in the model are '
                    f"{param.size()} and whose dimensions in the checkpoint are {value.size()}, "
                    f"an exception occurred : {ex.args}."
                )

        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if (
            getattr(type(self), "set_extra_state", _StateDictMixin.set_extra_state)
            is not _StateDictMixin.set_extra_state
        ):
            if extra_key in state_dict:
                if not (log is not None and log.dry_run):
                    self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)

        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    parts = key[len(prefix) :].split(".", 1)
                    if len(parts) > 1:
                        if parts[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif parts[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from ``state_dict`` into this module and its children.

        ``strict=True`` makes missing and unexpected keys errors; ``assign=True`` installs the
        checkpoint tensors themselves instead of copying into the existing ones. Returns
        ``_IncompatibleKeys(missing_keys, unexpected_keys)``. On error nothing is changed.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        metadata = getattr(state_dict, "_metadata", None)
        if _writes_only_tensors(self):
            # check everything first, writing nothing: a load that would fail raises here
            self._load_checked(state_dict, metadata, strict, assign, _LoadLog(dry_run=True))
        return self._load_checked(state_dict, metadata, strict, assign, _LoadLog())

    def _load_checked(self, state_dict, metadata, strict, assign, log):
        """One pass of ``load_state_dict`` (a dry run when ``log.dry_run``)."""
        missing_keys, unexpected_keys, error_msgs = [], [], []
        # A shallow copy: hooks may rename or pop keys without touching the caller's dict.
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        _active_logs.append(log)
        try:
            _load_tree(
                self, state_dict, "", metadata, assign, missing_keys, unexpected_keys, error_msgs
            )
        except BaseException:
            log.rollback()
            raise
        finally:
            _active_logs.pop()

        if strict:
            if unexpected_keys:
                error_msgs.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected_keys)
                    ),
                )
            if missing_keys:
                error_msgs.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing_keys)
                    ),
                )
        if error_msgs:
            log.rollback()
            hint = _prefix_hint(missing_keys, unexpected_keys) if strict else ""
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(error_msgs)
                )
                + hint
            )
        if log.dry_run:
            return None
        if not strict and log.loaded == 0 and missing_keys:
            # strict=False is often used to silence key errors; a load that matched nothing is
            # almost never intended.
            warn_user(
                f"load_state_dict(strict=False) loaded none of the {len(missing_keys)} tensors of "
                f"{type(self).__name__}: every key is missing from the checkpoint."
                + _prefix_hint(missing_keys, unexpected_keys),
                UserWarning,
            )
        return _IncompatibleKeys(missing_keys, unexpected_keys)
