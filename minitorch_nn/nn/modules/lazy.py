"""Lazy modules: layers that learn their input size from the first batch (mirrors ``torch/nn/modules/lazy.py``).

``nn.Linear(in_features, out_features)`` needs ``in_features`` up front; ``nn.LazyLinear(out_features)``
does not. It starts with *placeholders* for its weight and bias and fills them in the first time it
is called. This file is the machinery every lazy layer shares, :class:`LazyModuleMixin`; the layers
themselves (``LazyLinear``, ``LazyConv2d``...) are in ``lazy_layers.py`` and the placeholders
(``UninitializedParameter``/``UninitializedBuffer``) in ``nn/parameter_lazy.py``.

One dry run, top to bottom
--------------------------
Follow ``m = nn.LazyLinear(10)`` and then ``m(torch.ones(5, 3))``:

1. **Construction** (:meth:`LazyModuleMixin.__init__`). ``LazyLinear`` builds a ``Linear(0, 0)``
   and then sets ``m.weight = UninitializedParameter()`` (and ``m.bias``). The mixin registers two
   hooks on the module and keeps their handles as ``m._initialize_hook`` and ``m._load_hook``.
   ``repr(m)`` is ``LazyLinear(in_features=0, out_features=10, bias=True)``.

2. *(optional)* **Conversions** such as ``m.double()`` or ``m.to("cuda")``. ``Module._apply`` casts
   each placeholder like any parameter; the placeholder's ``__torch_function__`` allows casts, so
   the empty payload becomes float64 (or moves) and the class stays ``UninitializedParameter``. The
   dtype/device are remembered for step 4.

3. **The call** ``m(x)`` runs the forward pre-hooks first (``_hooks.py``: ``_call_impl``). The first
   one is ours, :meth:`LazyModuleMixin._infer_parameters`, registered ``with_kwargs=True`` so that it
   sees keyword inputs too (``m(input=x)``, ``output_size=...``).

4. **Inference** (``initialize_parameters``, written by each layer). ``LazyLinear`` reads
   ``in_features = x.shape[-1]`` (3), calls ``weight.materialize((10, 3))`` and
   ``bias.materialize((10,))`` -- each placeholder becomes a real ``Parameter`` *in place*, on the
   dtype/device from step 2 -- and then ``reset_parameters()`` draws the initial values from the
   random generator, exactly as ``Linear(3, 10)`` would have (but later, see "RNG order" below).

5. **Check and convert** (back in ``_infer_parameters``). If any parameter or buffer is still a
   placeholder the layer's ``initialize_parameters`` is buggy: ``RuntimeError``. Otherwise both
   hooks are removed and ``m.__class__`` becomes ``cls_to_become`` (``Linear``). The same object
   is now an ordinary ``Linear``: ``repr(m)`` is ``Linear(in_features=3, out_features=10, bias=True)``
   and ``isinstance(m, nn.LazyLinear)`` is False.

6. **Forward.** The pre-hook returned nothing, so ``_call_impl`` goes on with ``Linear.forward(x)``.
   Later calls find no hook: a converted lazy module costs nothing extra.

State dicts before the dry run
------------------------------
* **Saving** (:meth:`LazyModuleMixin._save_to_state_dict`) puts the placeholder objects themselves
  in the dict (they cannot be detached: that is an op), so ``state_dict()`` shows
  ``<UninitializedParameter>`` values.
* **Loading a real checkpoint into a lazy module** works through the load pre-hook
  (:meth:`LazyModuleMixin._lazy_load_hook`): it materializes each placeholder to the shape of the
  incoming tensor, then the normal loading code copies the values. As in PyTorch 2.13 the module is
  *not* converted yet: it stays ``LazyLinear(in_features=0, ...)`` until its first forward, which
  sets ``in_features`` (LazyLinear only; lazy convs and norms keep ``in_channels``/``num_features``
  at 0, a PyTorch quirk we keep).
* **Loading a lazy state dict into a real module** fails with the placeholder's ``.shape`` error,
  because loading compares shapes.

RNG order
---------
Eager layers draw their initial values in ``__init__``; lazy ones at the dry run, after every eager
layer was built. So ``Sequential(LazyLinear(3), Linear(3, 2))`` does not get the numbers that
``Sequential(Linear(4, 3), Linear(3, 2))`` gets under the same seed. Both match PyTorch's.

Beyond PyTorch
--------------
* A ``load_state_dict`` that fails (say, on an unexpected key) leaves the module lazy: the
  placeholders it had materialized are turned back, like every other change of a failed load.
* :func:`describe_lazy` lists which submodules still wait for their dry run, and
  :func:`check_initialized` is the check ``Optimizer.step()`` runs. As in PyTorch an optimizer
  may be built over placeholders (the dry run materializes them in place, so it then holds the
  real parameters); ``step()`` before the dry run raises a ``RuntimeError`` that says to run a
  dummy forward pass first, where PyTorch silently updates nothing.

Differences from PyTorch: no TorchScript, so the ``torch.jit.script`` error is absent.
"""

from __future__ import annotations

import itertools

from minitorch_nn.nn.modules._helpers import no_grad
from minitorch_nn.nn.parameter import is_lazy

__all__ = ["LazyModuleMixin", "describe_lazy", "check_initialized"]


class LazyModuleMixin:
    """Mix in *before* a layer class to make it infer its parameter shapes from the first input.

    A lazy layer ``class LazyFoo(LazyModuleMixin, Foo)`` sets ``cls_to_become = Foo``, creates
    :class:`~minitorch_nn.nn.UninitializedParameter` placeholders in ``__init__`` and implements
    ``initialize_parameters(*args, **kwargs)``, which receives the first call's arguments and
    materializes every placeholder. The first call then turns the object into a ``Foo``.

    Example::

        >>> class LazyScale(LazyModuleMixin, nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.s = nn.UninitializedParameter()
        ...     def initialize_parameters(self, x):
        ...         self.s.materialize(x.shape[-1:])
        ...         with torch.no_grad():
        ...             self.s.fill_(1.0)
        ...     def forward(self, x):
        ...         return x * self.s
    """

    # The class the module becomes after its dry run; None keeps the lazy class.
    cls_to_become = None

    # -- step 1: construction --------------------------------------------------------------------
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)  # the layer's own __init__ (e.g. Linear(0, 0))
        # A private load pre-hook (called without the module: it is a bound method already).
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        # Registered first, so it runs before any forward pre-hook the user adds later.
        self._initialize_hook = self.register_forward_pre_hook(
            self._infer_parameters, with_kwargs=True
        )

    # (Step 2, conversions, needs nothing here: Module._apply casts each placeholder, and the
    # placeholder's __torch_function__ lets casts through; see nn/parameter_lazy.py.)

    # -- steps 3 to 5: the first call -----------------------------------------------------------
    def _infer_parameters(self, module, args, kwargs=None):
        """The forward pre-hook: infer shapes from this call's inputs, then become ``cls_to_become``."""
        # BEGIN SOLUTION lazy-infer
        kwargs = kwargs if kwargs else {}
        # Step 4: the layer materializes its placeholders and initializes them.
        module.initialize_parameters(*args, **kwargs)
        # Step 5: every placeholder must be gone, or converting would leave a broken module.
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become  # same object, now e.g. a Linear
        # END SOLUTION
        # Returning None lets _call_impl run forward with the original inputs (step 6).

    def initialize_parameters(self, *args, **kwargs):
        """Materialize the placeholders from the first call's inputs (each lazy layer writes its own)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}"
        )

    def has_uninitialized_params(self) -> bool:
        """True while this module's *own* parameters or buffers hold placeholders (children are
        not looked at; :func:`describe_lazy` walks the whole tree)."""
        return any(
            is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values())
        )

    # -- state dicts ------------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # Like Module's, except placeholders go in as they are: detach() would be a refused op.
        # (PyTorch's version also leaves out ``_extra_state``; so does this one.)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = (
                    param if (is_lazy(param) or keep_vars) else param.detach()
                )
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if (is_lazy(buf) or keep_vars) else buf.detach()

    def _lazy_load_hook(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        """Load pre-hook: give each placeholder the shape of the real tensor about to be loaded
        into it. The normal loading code then copies the values. A placeholder in the checkpoint
        leaves ours as it is (uninitialized into uninitialized)."""
        for name, tensor in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and tensor is not None:
                incoming = state_dict[key]
                if is_lazy(tensor) and not is_lazy(incoming):
                    undo = _unmaterialize(tensor)
                    with no_grad():
                        tensor.materialize(incoming.shape)
                    _record_undo(undo)

    # -- what cannot work before the dry run ------------------------------------------------------
    def _replicate_for_data_parallel(self):
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. "
            "Run a dummy forward pass to correctly initialize the modules"
        )


def _unmaterialize(placeholder):
    """A function that turns ``placeholder`` back into itself after ``materialize`` (same object)."""
    cls, empty_data = type(placeholder), placeholder.data

    def undo():
        placeholder.data = empty_data
        placeholder.__class__ = cls

    return undo


def _record_undo(undo):
    # Beyond PyTorch: Module.load_state_dict here is atomic (a failed load changes nothing, see
    # _state_dict.py). Materializing is a change too, so the load's undo log learns how to revert it.
    from minitorch_nn.nn.modules import _state_dict

    if _state_dict._active_logs:
        _state_dict._active_logs[-1].undo.append(undo)


def describe_lazy(module) -> str:
    """Which submodules of ``module`` still hold placeholders (not in PyTorch).

    One line per such submodule: its dotted name, its class and the names still uninitialized,
    or a line saying that nothing is lazy. Example::

        >>> print(nn.modules.lazy.describe_lazy(nn.Sequential(nn.LazyLinear(4), nn.ReLU())))
        1 lazy submodule (run one forward pass with a dummy batch to initialize):
          0: LazyLinear, uninitialized weight, bias
    """
    rows = []
    for name, sub in module.named_modules():
        pending = [
            n
            for n, t in itertools.chain(sub._parameters.items(), sub._buffers.items())
            if is_lazy(t)
        ]
        if pending:
            rows.append(
                f"  {name or '(root)'}: {type(sub).__name__}, uninitialized {', '.join(pending)}"
            )
    if not rows:
        return f"{type(module).__name__}: no lazy submodules (every parameter and buffer is initialized)"
    plural = "" if len(rows) == 1 else "s"
    head = f"{len(rows)} lazy submodule{plural} (run one forward pass with a dummy batch to initialize):"
    return "\n".join([head, *rows])


def check_initialized(params, what: str = "the optimizer", error=ValueError, before=None) -> None:
    """Raise ``error`` if any tensor in ``params`` is a placeholder (not in PyTorch).

    ``Optimizer.step()`` calls this (with ``RuntimeError``) while its groups may still hold
    placeholders: an optimizer may be built before the dry run, as in PyTorch, but stepping it
    then would update nothing (PyTorch skips the placeholders silently). ``what`` names the caller
    in the message, ``before`` what to run the forward pass before (default: creating ``what``).
    """
    for i, p in enumerate(params):
        if is_lazy(p):
            raise error(
                f"{what[:1].upper()}{what[1:]} got an uninitialized parameter (index {i} in its parameter list): "
                "a lazy module (LazyLinear, LazyConv2d, ...) has not seen an input yet, so its parameters have "
                f"no shape.\nHint: run one forward pass with a dummy batch (model(example_input)) before "
                f"{before or 'creating ' + what}; minitorch_nn.nn.modules.lazy.describe_lazy(model) lists the "
                "modules still waiting for it."
            )
