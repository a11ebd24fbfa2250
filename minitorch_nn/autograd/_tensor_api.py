"""The autograd-facing methods of ``Tensor``: ``backward``, hooks, ``retain_grad``, ``.grad``.

Mirrors the autograd half of ``torch/_tensor.py`` and the C++ ``VariableHooks``. They are
attached to :class:`minitorch_nn.Tensor` here so that ``_tensor.py`` stays about the tensor
itself and everything about gradients is read in one package.

Where hooks live: a leaf's hooks are kept in its payload's ``autograd_meta`` (so they travel
with the payload through ``swap_tensors``, as PyTorch's do); a non-leaf's hooks are kept on its
``grad_fn``, keyed by ``output_nr``, where the engine finds them.
"""

from __future__ import annotations

from minitorch_nn._tensor import Tensor
from minitorch_nn._warnings import warn_user
from minitorch_nn.autograd.graph import RemovableHandle, _add_hook, _HookDict, current_grad_fn
from minitorch_nn.autograd import grad_mode as _gm

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Compute the gradient of this tensor w.r.t. the graph leaves; it is added into their ``.grad``.

    ``gradient`` is needed unless this tensor holds a single element. The graph's saved tensors
    are freed afterwards unless ``retain_graph=True`` (or ``create_graph=True``, which also
    records the backward pass itself so that higher-order gradients can be taken).
    """
    from minitorch_nn.autograd import engine

    engine.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _meta(impl):
    if impl.autograd_meta is None:
        impl.autograd_meta = {}
    return impl.autograd_meta


def register_hook(self, hook):
    """Call ``hook(grad)`` each time this tensor's gradient is computed; it may return a new one."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    impl = self._impl
    if impl.grad_fn is None:
        hooks = _meta(impl).setdefault("hooks", _HookDict())
        return _add_hook(hooks, hook)
    return impl.grad_fn._register_tensor_hook(impl.output_nr, hook)


def register_post_accumulate_grad_hook(self, hook):
    """Call ``hook(tensor)`` after a gradient has been accumulated into this leaf's ``.grad``."""
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    hooks = _meta(self._impl).setdefault("post_accumulate_grad_hooks", _HookDict())
    return _add_hook(hooks, hook)


def retain_grad(self):
    """Also fill ``.grad`` for this non-leaf tensor during backward (leaves always get it)."""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    impl = self._impl
    if impl.grad_fn is None:
        return
    fn = impl.grad_fn
    if fn._retains_grad is None:
        fn._retains_grad = {}
    fn._retains_grad[impl.output_nr] = impl


def _retains_grad(self):
    impl = self._impl
    fn = impl.grad_fn
    return fn is not None and bool(fn._retains_grad) and fn._retains_grad.get(impl.output_nr) is impl


def _get_grad(self):
    impl = self._impl
    if impl.grad_fn is not None and impl.grad is None and not _retains_grad(self):
        warn_user(_NON_LEAF_GRAD_WARNING, UserWarning)
    return impl.grad


def detach_(self):
    """Detach this tensor from the graph in place: it becomes a leaf that does not require grad."""
    impl = self._impl
    if impl.base is not None and impl.grad_fn is not None:
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) "
            "for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
            "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
            "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
        )
    impl.grad_fn = None
    impl.requires_grad = False
    impl.output_nr = 0
    return self


def requires_grad_(self, requires_grad=True):
    """Set whether autograd records ops on this tensor (leaves only, floating dtypes only)."""
    if not isinstance(requires_grad, bool):
        raise TypeError(
            "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
            f"{_arg_type_name(requires_grad)}"
        )
    impl = self._impl
    if impl.grad_fn is not None:
        if not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        return self
    if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    if requires_grad and _gm.is_inference_counter(impl.version) and not _gm._inference:
        raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
    impl.requires_grad = bool(requires_grad)
    return self


def _arg_type_name(value):
    # PyTorch's argument parser names numpy types by module ("numpy.bool"), builtins bare
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def _grad_fn(self):
    """The node that produced this tensor (``None`` for leaves); a view whose base was changed in
    place since it was made gets a fresh node first (see ``graph.current_grad_fn``)."""
    return current_grad_fn(self._impl)


def is_inference(self):
    """True for a tensor allocated under ``inference_mode``, or a view of one (see grad_mode.py)."""
    return _gm.is_inference_counter(self._impl.version)


_old_grad = Tensor.grad
Tensor.grad = property(_get_grad, _old_grad.fset, _old_grad.fdel, "The gradient accumulated by backward().")
Tensor.backward = backward
Tensor.register_hook = register_hook
Tensor.register_post_accumulate_grad_hook = register_post_accumulate_grad_hook
Tensor.retain_grad = retain_grad
Tensor.retains_grad = property(_retains_grad)
Tensor.detach_ = detach_
Tensor.requires_grad_ = requires_grad_
Tensor.is_inference = is_inference
Tensor.grad_fn = property(_grad_fn)

__all__ = ["RemovableHandle"]
