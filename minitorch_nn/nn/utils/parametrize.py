"""Parametrizations: ``module.weight`` computed from an unconstrained tensor (mirrors ``torch.nn.utils.parametrize``).

A *parametrization* is any ``nn.Module`` whose ``forward`` maps an unconstrained tensor ``X`` to
the constrained one (``X.triu() + X.triu(1).T`` makes a symmetric matrix). After

    register_parametrization(layer, "weight", Symmetric())

reading ``layer.weight`` runs ``Symmetric()(layer.parametrizations.weight.original)`` every time,
so the optimizer trains ``original`` while the layer only ever sees symmetric weights. Read this
file top to bottom next to the parametrizations tutorial; each function is one step of it:

1. :func:`register_parametrization` moves the tensor out of ``_parameters``/``_buffers`` into a
   :class:`ParametrizationList` (``original``), swaps the module's class for a fresh subclass
   (:func:`_inject_new_class`) and puts a ``property`` on that class (:func:`_inject_property`).
2. Reading the property evaluates the chain (:meth:`ParametrizationList.forward`); assigning to it
   goes back through every ``right_inverse`` (:meth:`ParametrizationList.right_inverse`).
3. :func:`cached` keeps one value per ``(module, name)`` while it is active.
4. :func:`remove_parametrizations` undoes 1, either keeping the computed value or ``original``.

Why a new class per instance? A property lives on a class, not on an object, and a parametrized
``Linear`` must not change every other ``Linear``. So each parametrized instance gets its own
``Parametrized<Name>`` subclass. Such a class cannot be found by name when unpickling, which is why
pickling refuses (use ``state_dict()``), while ``copy.deepcopy`` gets its own ``__deepcopy__``.

Why ``set_``? ``original`` *is* the Parameter object that was in ``_parameters`` before, with its
value replaced in place, so an optimizer built earlier still holds the right object. Under the
swap flag (``minitorch_nn.__future__.set_swap_module_params_on_conversion(True)``) the payloads
are exchanged with :func:`minitorch_nn.utils.swap_tensors` instead, with the same identities.

Differences from PyTorch (PyTorch's behaviour and messages are kept; these are additions):

* ``with cached() as stats:`` gives a :class:`CacheStats` counting evaluations computed and
  saved (PyTorch's ``cached()`` yields ``None``; ``with cached():`` works the same).
* :func:`describe_parametrizations` renders each chain as
  ``original -> Symmetric -> MatrixExponential -> weight`` with shapes and modes; the module repr
  stays PyTorch's (consecutive identical parametrizations collapse to ``(0-1): 2 x Id()``).
* the pickling refusal adds a ``Hint:`` line after PyTorch's message saying what to save.
* TorchScript and tracing checks are absent (there is no scripting here), and ``right_inverse``
  may return tensors only (PyTorch also accepts its opaque reference objects).
"""

from __future__ import annotations

import collections.abc
import copy
import copyreg
from contextlib import contextmanager

import minitorch_nn
from minitorch_nn._tensor import Tensor
from minitorch_nn.autograd import no_grad
from minitorch_nn.nn.modules.container import ModuleDict, ModuleList
from minitorch_nn.nn.modules.module import Module
from minitorch_nn.nn.parameter import Parameter

__all__ = [
    "cached",
    "CacheStats",
    "ParametrizationList",
    "register_parametrization",
    "is_parametrized",
    "remove_parametrizations",
    "type_before_parametrizations",
    "transfer_parametrizations_and_params",
    "describe_parametrizations",
]


# ---------------------------------------------------------------------------------------------
# Caching
# ---------------------------------------------------------------------------------------------


class CacheStats:
    """What a :func:`cached` block did: ``computed`` evaluations and ``saved`` re-evaluations.

    Not in PyTorch. ``saved`` counts reads that returned the cached tensor instead of running the
    chain again, which is the work caching spared you.
    """

    def __init__(self):
        self.computed = 0
        self.saved = 0

    def __repr__(self):
        return f"CacheStats(computed={self.computed}, saved={self.saved})"


_cache_enabled = 0  # nesting depth of `with cached():`
_cache: dict = {}  # (id(module), tensor_name) -> parametrized tensor
_cache_stats: list = []  # the CacheStats of every open cached() block, outermost first


@contextmanager
def cached():
    """Compute each parametrized tensor once while the block runs, then forget it.

    PyTorch recomputes ``module.weight`` on every read. Inside ``with cached():`` the first read
    of each ``(module, name)`` stores the result and later reads return that same tensor object,
    which pays off when a weight is read many times in one forward (an RNN's recurrent kernel).
    Blocks nest; the cache is emptied only when the outermost block exits, so nothing stale
    survives into the next optimizer step.

    Beyond PyTorch, the block yields a :class:`CacheStats`::

        with parametrize.cached() as stats:
            out = model(x)
        print(stats)   # CacheStats(computed=1, saved=7)
    """
    global _cache, _cache_enabled
    stats = CacheStats()
    _cache_enabled += 1
    _cache_stats.append(stats)
    try:
        yield stats
    finally:
        _cache_stats.remove(stats)
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _count(field):
    for stats in _cache_stats:
        setattr(stats, field, getattr(stats, field) + 1)


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------


def _register_parameter_or_buffer(module, name, X) -> None:
    """Parameters go back to ``_parameters``, anything else to ``_buffers``."""
    if isinstance(X, Parameter):
        module.register_parameter(name, X)
    else:
        module.register_buffer(name, X)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    """Give ``dest`` the value of ``src`` without replacing the ``dest`` object.

    ``set_`` re-points ``dest`` at ``src``'s storage; under the swap flag the two payloads are
    exchanged instead (``src`` is first wrapped as a Parameter when ``dest`` is one, so ``dest``
    stays a Parameter).
    """
    if minitorch_nn.__future__.get_swap_module_params_on_conversion():
        if isinstance(dest, Parameter) and not isinstance(src, Parameter):
            src = Parameter(src, requires_grad=dest.requires_grad)
        minitorch_nn.utils.swap_tensors(dest, src)
    else:
        dest.set_(src)


def _has_right_inverse(module) -> bool:
    return hasattr(module, "right_inverse")


# ---------------------------------------------------------------------------------------------
# ParametrizationList: the originals plus the chain
# ---------------------------------------------------------------------------------------------


class ParametrizationList(ModuleList):
    """The container at ``module.parametrizations[name]``: the chain and its original tensor(s).

    Its items are the parametrizations in registration order; it also holds the unconstrained
    tensor as ``original``, or as ``original0, original1, ...`` when the first parametrization's
    ``right_inverse`` splits the tensor into several (weight norm's magnitude and direction).
    ``original`` is a parameter of this list when the tensor was a Parameter, else a buffer, so
    it appears in ``state_dict`` as ``parametrizations.<name>.original``.

    ``register_parametrization`` builds it; you do not instantiate it yourself.
    """

    def __init__(self, modules, original, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype

        # The value to store is right_inverse(original). At registration a parametrization
        # without right_inverse (or one raising NotImplementedError) counts as the identity.
        with no_grad():
            new = original
            for module in reversed(self):
                if _has_right_inverse(module):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass

        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            self._store_single_original(original, new)
        else:
            self._store_several_originals(original, new)

        # One evaluation of the chain, to check it keeps the dtype and shape (skipped if unsafe).
        if not self.unsafe:
            Z = self()
            if not isinstance(Z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(Z).__name__}.")
            if Z.dtype != dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {dtype}\n"
                    f"parametrized dtype: {Z.dtype}"
                )
            if Z.shape != shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {shape}\n"
                    f"parametrized shape: {Z.shape}"
                )

    def _store_single_original(self, original, new) -> None:
        """Keep the *same* tensor object as ``original``, holding ``right_inverse(value)``."""
        if original.dtype != new.dtype:
            raise ValueError(
                "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                f"original.dtype: {original.dtype}\n"
                f"right_inverse(original).dtype: {new.dtype}"
            )
        if original.device != new.device:
            raise ValueError(
                "When `right_inverse` outputs one tensor, it may not change the device.\n"
                f"original.device: {original.device}\n"
                f"right_inverse(original).device: {new.device}"
            )
        # (set_ even onto itself, which bumps the version as PyTorch does; a swap with itself
        # would be a no-op, so it is skipped.)
        if (
            new is not original
            or not minitorch_nn.__future__.get_swap_module_params_on_conversion()
        ):
            with no_grad():
                _maybe_set(original, new)
        _register_parameter_or_buffer(self, "original", original)

    def _store_several_originals(self, original, tensors) -> None:
        """``original0, original1, ...``: new Parameters (or buffers); the old object is dropped."""
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise ValueError(
                    "'right_inverse' must return a Tensor or a Sequence of tensors "
                    "(list, tuple...). "
                    f"Got element {i} of the sequence with type {type(t).__name__}."
                )
            if isinstance(original, Parameter):
                t = Parameter(t, original.requires_grad)
            t.requires_grad_(original.requires_grad)
            _register_parameter_or_buffer(self, f"original{i}", t)

    def right_inverse(self, value: Tensor) -> None:
        """``module.name = value``: run every ``right_inverse`` last to first, store the result.

        Unlike at registration, a parametrization without ``right_inverse`` is an error here,
        and a ``NotImplementedError`` it raises propagates: there is no sensible identity
        fallback when the user asked for a specific value. The result is written into the
        existing original(s) in place, so their ``id`` and optimizer state are kept.
        """
        with no_grad():
            for module in reversed(self):
                if not _has_right_inverse(module):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}"
                    )
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                        f"while `original` has dtype {self.original.dtype}"
                    )
                _maybe_set(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError(
                    f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}."
                )
            if len(value) != self.ntensors:
                raise ValueError(
                    "'right_inverse' must return a sequence of tensors of length "
                    f"{self.ntensors}. Got a sequence of length {len(value)}."
                )
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors "
                        f"or reference-type opaques. Got element {i} of type {type(tensor).__name__}."
                    )
                if original_i.dtype != tensor.dtype:
                    raise ValueError(
                        f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
                        f"while `original{i}` has dtype {original_i.dtype}"
                    )
                _maybe_set(original_i, tensor)

    def forward(self) -> Tensor:
        """Evaluate the chain: the first parametrization on the original(s), then each next one."""
        # BEGIN SOLUTION parametrize-forward
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        # Walk the numbered children only: a nested parametrization adds a `parametrizations`
        # child to this list, which is not a step of the chain.
        i = 1
        while hasattr(self, str(i)):
            x = self[i](x)
            i += 1
        return x
        # END SOLUTION


# ---------------------------------------------------------------------------------------------
# Class and property injection
# ---------------------------------------------------------------------------------------------


def _refuse_pickling(self):
    raise RuntimeError(
        "Serialization of parametrized modules is only "
        "supported through state_dict(). See:\n"
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training"
        "\nHint: save `module.state_dict()` and rebuild the parametrized module before loading it; "
        "parametrized classes are created per instance and cannot be found again by name."
    )


def _deepcopy_parametrized(self, memo):
    """``copy.deepcopy`` for a parametrized module: a new object of the same class, its
    ``__dict__`` (parameters, buffers, children, parametrizations) deep-copied. Needed because
    the default deepcopy goes through ``__reduce_ex__`` and so through the refusing
    ``__getstate__``."""
    existing = memo.get(id(self))
    if existing is not None:
        return existing
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _inject_new_class(module: Module) -> None:
    """Give ``module`` its own subclass ``Parametrized<Name>`` to hang properties on.

    Only this instance changes class; ``type_before_parametrizations`` finds the old one as the
    single base. The subclass refuses pickling, and adds a ``__deepcopy__`` unless the class
    already had one.
    """
    cls = module.__class__
    namespace = {"__getstate__": _refuse_pickling}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _deepcopy_parametrized
    namespace["__module__"] = __name__
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module: Module, tensor_name: str) -> None:
    """Put ``tensor_name`` on the module's (private) class as a property.

    Getting it evaluates ``module.parametrizations[tensor_name]()`` (or reads the cache inside
    :func:`cached`); setting it calls the list's ``right_inverse``.
    """
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self) -> Tensor:
        # Outside ``cached()`` (``_cache_enabled == 0``) every read evaluates the chain. Inside,
        # the first read of ``(id(self), tensor_name)`` evaluates it, stores the tensor in
        # ``_cache`` and counts ``_count("computed")``; later reads return the same tensor object
        # and count ``_count("saved")``.
        # BEGIN SOLUTION parametrize-cached
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = parametrization()
            _cache[key] = tensor
            _count("computed")
        else:
            _count("saved")
        return tensor
        # END SOLUTION

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


# ---------------------------------------------------------------------------------------------
# Registering
# ---------------------------------------------------------------------------------------------


def _check_added_parametrization(module, tensor_name, parametrization) -> None:
    """Checks for a parametrization appended to an existing chain (not unsafe).

    ``Y = module.<name>`` is the current value; the new forward must map Y to a tensor of the
    same dtype and shape, and its right_inverse (if it has a working one) must map back to one.
    """
    Y = getattr(module, tensor_name)
    X = parametrization(Y)
    if not isinstance(X, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(X).__name__}.")
    if X.dtype != Y.dtype:
        raise ValueError(
            "Registering a parametrization may not change the dtype of the tensor, unless the `unsafe` flag is enabled.\n"
            f"module.{tensor_name}.dtype: {Y.dtype}\n"
            f"parametrization(module.{tensor_name}).dtype: {X.dtype}"
        )
    if X.shape != Y.shape:
        raise ValueError(
            "Registering a parametrization may not change the shape of the tensor, unless the `unsafe` flag is enabled.\n"
            f"module.{tensor_name}.shape: {Y.shape}\n"
            f"parametrization(module.{tensor_name}).shape: {X.shape}"
        )
    if not _has_right_inverse(parametrization):
        return  # taken to be the identity
    try:
        Z = parametrization.right_inverse(X)
    except NotImplementedError:
        return
    if not isinstance(Z, Tensor):
        raise ValueError(
            f"parametrization.right_inverse must return a tensor. Got: {type(Z).__name__}"
        )
    if Z.dtype != Y.dtype:
        raise ValueError(
            "The tensor returned by parametrization.right_inverse must have the same dtype "
            f"as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
            f"module.{tensor_name}.dtype: {Y.dtype}\n"
            f"returned dtype: {Z.dtype}"
        )
    if Z.shape != Y.shape:
        raise ValueError(
            "The tensor returned by parametrization.right_inverse must have the same shape "
            f"as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
            f"module.{tensor_name}.shape: {Y.shape}\n"
            f"returned shape: {Z.shape}"
        )


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make ``module.<tensor_name>`` read as ``parametrization(original)``; returns ``module``.

    First registration on a tensor: the ParametrizationList is built (and checked) *before*
    anything on the module changes, so a failing check leaves the module untouched. Then the
    tensor leaves ``_parameters``/``_buffers``, the class is swapped (first parametrized tensor
    of this module only), ``module.parametrizations`` (a ModuleDict) is created and the property
    installed. ``original`` starts as ``right_inverse(value)``.

    Registering again on the same name appends to the chain; ``original`` is not touched, and
    the new parametrization is checked against the current value. ``unsafe=True`` skips the
    forward checks (shape or dtype may then change) and stays on for the whole list.

    The parametrization's ``training`` flag is set to the module's.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_added_parametrization(module, tensor_name, parametrization)
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a "
            f"parametrized element with name '{tensor_name}'"
        )
    return module


# ---------------------------------------------------------------------------------------------
# Querying, removing, transferring
# ---------------------------------------------------------------------------------------------


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module.<tensor_name>`` (or, with None, any tensor of ``module``) is parametrized."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Turn ``module.<tensor_name>`` back into a plain parameter or buffer; returns ``module``.

    * ``leave_parametrized=True``: it keeps its current (parametrized) value. With a single
      ``original`` that value is written into the original object, so the Parameter you had
      before registering comes back, same ``id``. With several originals a new Parameter is
      made (add it to your optimizer).
    * ``leave_parametrized=False``: it becomes ``original`` as it is now, i.e.
      ``right_inverse(initial value)`` after training, not necessarily the initial value.
      Impossible with several originals.

    The tensor is registered again at the *end* of ``_parameters``/``_buffers`` (so
    ``state_dict`` order changes). When nothing is parametrized any more, ``parametrizations``
    goes away and the module gets its original class back.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                try:
                    _maybe_set(original, t)
                except RuntimeError as e:
                    if type(original) is Tensor:
                        raise
                    raise RuntimeError(
                        "Calling remove_parametrizations() with leave_parametrized=True "
                        "for a parameter that is an instance of a tensor subclass requires "
                        "set_() to be implemented correctly for the tensor subclass."
                        "Alternatively, one can opt into the swap_tensors path"
                        "Either set leave_parametrized=False or provide a working implementation"
                        "for set_() in the tensor subclass or set "
                        "torch.__future__.set_swap_module_params_on_conversion(True)."
                    ) from e
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                "that is parametrized in terms of a sequence of tensors."
            )
        # Not under no_grad: whether the originals require grad decides Parameter vs tensor.
        t = getattr(module, tensor_name)
        original = Parameter(t) if t.requires_grad else t

    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class as it was before any parametrization (``Linear`` for ``ParametrizedLinear``)."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    """Parametrize ``to_module`` like ``from_module``, *sharing* the parametrizations and originals.

    For each parametrized name (or only ``tensor_name``): create ``to_module.<name>`` from the
    current value if it is missing, register the same parametrization objects, then point the
    new list's ``original`` (or ``original0, ...``) at ``from_module``'s tensors. Training one
    module therefore trains the other. Does nothing when ``from_module`` is not parametrized.
    Used when swapping a layer for a similar one (quantization-aware Linear, say).
    """
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            # (an unknown name fails here, reading from_module's attribute, as in PyTorch)
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module


# ---------------------------------------------------------------------------------------------
# For learners: the chains, spelled out
# ---------------------------------------------------------------------------------------------


def _describe_tensor(t) -> str:
    kind = "Parameter" if isinstance(t, Parameter) else "buffer"
    return f"{kind} {list(t.shape)}"


def describe_parametrizations(module: Module, prefix: str = "") -> str:
    """Each parametrized tensor of ``module`` (and its submodules) as one readable chain.

    Not in PyTorch. For example::

        weight: original (Parameter [3, 3]) -> Skew -> CayleyMap -> weight [3, 3]
        parametrizations.weight.0 has buffers _u [3], _v [3] (training)

    A line per parametrization module lists its buffers and mode when it has any, since those
    are what change between train and eval (spectral norm's power iteration).
    """
    lines = []
    for name, sub in module.named_modules(prefix=prefix):
        if not is_parametrized(sub):
            continue
        for tensor_name, plist in sub.parametrizations.items():
            full = f"{name}.{tensor_name}" if name else tensor_name
            if plist.is_tensor:
                start = f"original ({_describe_tensor(plist.original)})"
            else:
                start = ", ".join(
                    f"original{i} ({_describe_tensor(getattr(plist, f'original{i}'))})"
                    for i in range(plist.ntensors)
                )
            steps = " -> ".join(type(p).__name__ for p in plist)
            with no_grad():
                value = getattr(sub, tensor_name)
            lines.append(f"{full}: {start} -> {steps} -> {tensor_name} {list(value.shape)}")
            for i, p in enumerate(plist):
                bufs = [
                    f"{b} {list(t.shape)}"
                    for b, t in p.named_buffers(recurse=False)
                    if t is not None
                ]
                if bufs:
                    mode = "training" if p.training else "eval"
                    where = f"{name}.parametrizations" if name else "parametrizations"
                    lines.append(
                        f"  {where}.{tensor_name}.{i} has buffers {', '.join(bufs)} ({mode})"
                    )
    return "\n".join(lines) if lines else f"{type(module).__name__} has no parametrized tensors"
