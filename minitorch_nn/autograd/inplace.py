"""In-place ops on tensors that require grad: PyTorch's refusals, rebasing history, views.

Mirrors ``variable.cpp``'s ``rebase_history`` and ``CopySlices`` (``torch/csrc/autograd/functions/
tensor.cpp``) and the checks ``VariableType`` kernels make before an in-place op
(``check_inplace``). The recorder (``recording.py``, and its compiled twin in
``_ext/twins/autograd/recording.pyx``) calls these for every in-place op it records:

* ``_check_inplace(t)`` refuses what PyTorch refuses: writing into a leaf that requires grad, into
  a view of one, into a view made under ``no_grad`` of a tensor that requires grad, into an
  output of a function that returns several views (``unbind``, ``split``...) or a view of one,
  or into a view that a custom ``autograd.Function`` returned (an input handed back as-is is
  one: the module backward hooks' ``BackwardHookFunction`` does that);
* ``_rebase_history(t, node)`` makes the op's node the new ``grad_fn`` of ``t``. When ``t`` is a
  view, its base gets a ``CopySlices`` node (its gradient flows through the op's node for the part
  the view covers) and ``t`` becomes a strided window of the base (``AsStridedBackward0``);
* ``regenerate_view_node(impl)`` gives a view whose version counter moved on since its node was
  made (its base, or another view of it, was written in place) a fresh ``AsStridedBackward0``
  (``graph.current_grad_fn`` calls it), or raises PyTorch's error for a view that cannot have one.

Which mode a view was made in is kept on its payload (``creation_meta``, set by ``_C.mark_view``
when the view is made), as PyTorch's ``CreationMeta``; ``Function.apply`` marks its view outputs
``VIEW_MADE_IN_CUSTOM_FUNCTION`` (views of them inherit the mark). An output of a function
returning several views is recognised by walking its view nodes instead.
"""

from __future__ import annotations

import re

from minitorch_nn._C import VIEW_MADE_IN_INFERENCE, VIEW_MADE_IN_NO_GRAD
from minitorch_nn._C_torch_function import DisableTorchFunction
from minitorch_nn._ops import aten
from minitorch_nn.autograd import graph as _graph
from minitorch_nn.autograd.graph import Node, gradient_edge

_NO_GRAD_VIEW_MESSAGE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use "
    "case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if "
    "you want the inplace to be tracked)."
)
_STALE_NO_GRAD_VIEW_MESSAGE = (
    "A view was created in no_grad mode and its base or another view of its base has been modified inplace with "
    "grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the no_grad block (if you don't want the "
    "inplace to be tracked) or both outside (if you want the inplace to be tracked)."
)
_INFERENCE_VIEW_MESSAGE = (
    "A view was created in inference mode and is being modified inplace in normal mode. Given that this use case "
    "is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the inference_mode block (if you don't want the inplace to be tracked) or both "
    "outside (if you want the inplace to be tracked)."
)
_STALE_INFERENCE_VIEW_MESSAGE = (
    "A view was created in inference mode and its base or another view of its base has been modified inplace in "
    "normal mode. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
    "by moving both the view and the inplace either both inside the inference_mode block (if you don't want the "
    "inplace to be tracked) or both outside (if you want the inplace to be tracked)."
)

# A view returned by a custom Function (PyTorch's CreationMeta::IN_CUSTOM_FUNCTION). The C code
# that makes views copies a view's mark to views of it, so the value only has to differ from
# the others kept in ``creation_meta``.
VIEW_MADE_IN_CUSTOM_FUNCTION = 3

_CUSTOM_FUNCTION_VIEW_REASON = (
    " This view was created inside a custom Function (or because an input was returned as-is) and the autograd "
    "logic to handle view+inplace would override the custom backward associated with the custom Function, leading "
    "to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the custom "
    "Function."
)
_CUSTOM_FUNCTION_VIEW_MESSAGE = "Output {nr} of {name} is a view and is being modified inplace." + (
    _CUSTOM_FUNCTION_VIEW_REASON
)
_STALE_CUSTOM_FUNCTION_VIEW_MESSAGE = (
    "Output {nr} of {name} is a view and its base or another view of its base has been modified inplace."
    + _CUSTOM_FUNCTION_VIEW_REASON
)

_MULTI_OUTPUT_VIEW_MESSAGE = (
    "Output {nr} of {name} is a view and is being modified inplace. This view is the output of a function that "
    "returns multiple views. Such functions do not allow the output views to be modified inplace. You should "
    "replace the inplace operation by an out-of-place one."
)
_STALE_MULTI_OUTPUT_VIEW_MESSAGE = (
    "Output {nr} of {name} is a view and its base or another view of its base has been modified inplace. This view "
    "is the output of a function that returns multiple views. Such functions do not allow the output views to be "
    "modified inplace. You should replace the inplace operation by an out-of-place one."
)


def _check_multi_output_view(impl, message=_MULTI_OUTPUT_VIEW_MESSAGE):
    """Refuse writing into an output of ``unbind``/``split``/... (or a view of one), like PyTorch:
    the op's one node could not be rebased for a single output. Walks the view nodes between
    ``impl`` and its base (in PyTorch the mark is carried by each view's ``creation_meta``)."""
    node = impl.grad_fn
    while node is not None:
        d = getattr(node, "_derivative", None)
        if d is None:
            return
        if d.multi_output and "Tensor(a -> *)" in d.op._schema.text:   # views of self, several outputs
            fn = impl.grad_fn
            name = re.sub(r"Backward\d*$", "", type(fn).__name__)
            raise RuntimeError(message.format(nr=impl.output_nr, name=name))
        if not d.op.is_view:
            return
        node = node.next_functions[0][0] if node.next_functions else None


def _check_custom_function_view(impl, message=_CUSTOM_FUNCTION_VIEW_MESSAGE):
    """Refuse writing into a view made by a custom Function, or a view of one: rebasing its
    history would bypass the Function's own backward, so the gradients would be silently wrong.

    The Function's own outputs carry the mark in ``creation_meta``; for views taken of them
    later (PyTorch propagates the mark) the view nodes are walked back to the Function's node,
    which lists the outputs that were views (``_custom_view_outputs``)."""
    fn = impl.grad_fn
    if fn is None:
        return
    marked = impl.creation_meta == VIEW_MADE_IN_CUSTOM_FUNCTION
    node = fn
    while not marked:
        d = getattr(node, "_derivative", None)
        if d is None or not d.op.is_view or not node.next_functions:
            return
        node, nr = node.next_functions[0]
        if node is None:
            return
        marked = nr in node.__dict__.get("_custom_view_outputs", ()) if hasattr(node, "__dict__") else False
    name = re.sub(r"Backward\d*$", "", type(fn).__name__)
    raise RuntimeError(message.format(nr=impl.output_nr, name=name))


def _check_inplace(t):
    """PyTorch's refusals before an in-place op is recorded."""
    impl = t._impl
    base = impl.base
    if base is not None and impl.grad_fn is not None:
        _check_custom_function_view(impl)
        _check_multi_output_view(impl)
    if base is not None and base.requires_grad and impl.creation_meta and impl.grad_fn is None:
        # made under no_grad (or inference_mode) of a tensor that requires grad: recording the
        # in-place op now could not update the base's history
        if impl.creation_meta == VIEW_MADE_IN_INFERENCE:
            raise RuntimeError(_INFERENCE_VIEW_MESSAGE)
        raise RuntimeError(_NO_GRAD_VIEW_MESSAGE)
    if impl.requires_grad and impl.grad_fn is None:
        if impl.base is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if base is not None and base.requires_grad and base.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")




def _rebase_history(t, node):
    impl = t._impl
    base = impl.base
    old = impl.grad_fn
    if old is not None and old._retains_grad and old._retains_grad.get(impl.output_nr) is impl:
        # retain_grad() follows the tensor to its new node (hooks stay where they were, as in PyTorch)
        del old._retains_grad[impl.output_nr]
        node._retains_grad = {0: impl}
    if base is None:
        impl.grad_fn, impl.requires_grad, impl.output_nr = node, True, 0
        return
    # t is a view: the base's history now goes through CopySlices, and t becomes a strided
    # window of the base.
    from minitorch_nn.autograd.graph import tensor_for

    base_t = tensor_for(base)
    copy_slices = CopySlices(base_t, impl, node)
    base.grad_fn, base.requires_grad, base.output_nr = copy_slices, True, 0
    impl.requires_grad = True
    regenerate_view_node(impl)


def regenerate_view_node(impl):
    """Make ``impl`` (a view) a strided window of its base's *current* history.

    Called when the view's node is out of date (the shared version counter moved on since it was
    made) and after an in-place op through the view itself. A view made under no_grad or
    inference_mode, or an output of unbind/split/..., cannot be given a new history: PyTorch
    refuses, even when the write happened with grad mode off.
    """
    if impl.grad_fn is None:
        if impl.creation_meta == VIEW_MADE_IN_NO_GRAD:
            raise RuntimeError(_STALE_NO_GRAD_VIEW_MESSAGE)
        if impl.creation_meta == VIEW_MADE_IN_INFERENCE:
            raise RuntimeError(_STALE_INFERENCE_VIEW_MESSAGE)
    _check_custom_function_view(impl, _STALE_CUSTOM_FUNCTION_VIEW_MESSAGE)
    _check_multi_output_view(impl, _STALE_MULTI_OUTPUT_VIEW_MESSAGE)
    base = impl.base
    node = AsStridedBackward0(base.sizes, base.strides, impl.sizes, impl.strides, impl.offset - base.offset)
    if base.grad_fn is not None:
        edge = (base.grad_fn, base.output_nr)
    elif base.requires_grad:   # a leaf changed under no_grad: the window leads to its AccumulateGrad
        edge = (_graph.grad_accumulator(base), 0)
    else:
        edge = (None, 0)
    node.next_functions = (edge,)
    node._input_metadata = ((base.sizes, base.dtype, base.device),)
    impl.grad_fn, impl.output_nr, impl.requires_grad = node, 0, True
    impl.view_version = impl.version.value   # up to date at this version of the counter
    return node


def _window(result, sizes, strides, offset):
    return aten.as_strided.default(result, list(sizes), list(strides), offset)


def _empty_like_base(grad, sizes, strides):
    return aten.empty_strided.default(list(sizes), list(strides), dtype=grad.dtype, device=grad.device)


class CopySlices(Node):
    """The base's node after an in-place op on one of its views.

    The gradient of the base is the incoming gradient, except on the window the view covers,
    where it is whatever the in-place op's node sends to its ``self``.
    """

    __slots__ = ("_base_geometry", "_view_geometry", "fn")

    def __init__(self, base_t, view_impl, fn):
        super().__init__()
        b = base_t._impl
        self._base_geometry = (b.sizes, b.strides)
        self._view_geometry = (view_impl.sizes, view_impl.strides, view_impl.offset - b.offset)
        self.fn = fn
        base_edge = gradient_edge(base_t) or (None, 0)
        self.next_functions = (base_edge,) + tuple(fn.next_functions[1:])
        self._input_metadata = ((b.sizes, b.dtype, b.device),) + tuple(fn._input_metadata[1:])

    def name(self):
        return "torch::autograd::CopySlices"

    def apply(self, grad_outputs):
        (grad,) = grad_outputs
        if grad is None:
            return (None,) * len(self.next_functions)
        with DisableTorchFunction():
            return self._apply(grad)

    def _apply(self, grad):
        sizes, strides = self._base_geometry
        result = _empty_like_base(grad, sizes, strides)
        result.copy_(grad)
        grad_slice = _window(result, *self._view_geometry)
        # fn's first edge is not ours (ours is the base's), so it must compute every gradient
        wanted, _graph.should_compute[0] = _graph.should_compute[0], None
        try:
            res = self.fn.apply((grad_slice.clone(),))
        finally:
            _graph.should_compute[0] = wanted
        if res[0] is None:
            grad_slice.zero_()
        else:
            grad_slice.copy_(res[0])
        return (result,) + tuple(res[1:])

    def release_variables(self):
        self.fn.release_variables()


def _may_overlap(sizes, strides) -> bool:
    """Whether two elements of this geometry may share a memory location (``expand``,
    ``unfold``...): walking the dims from the smallest stride, each must step past all the
    memory the ones before it span."""
    span = 0
    for stride, size in sorted((st, sz) for sz, st in zip(sizes, strides) if sz > 1):
        if stride <= span:
            return True
        span += (size - 1) * stride
    return False


def _window_gradient(grad, base_sizes, base_strides, sizes, strides, offset):
    """The base's gradient from the gradient of a window of its memory, as PyTorch's
    ``as_strided_backward`` builds it: a flat buffer of zeros as long as the memory either
    geometry spans, the window's gradient written (added, where the window reaches one
    element several times) at its memory locations, then read through the base's geometry."""
    spans = [offset + sum((n - 1) * s for n, s in zip(sizes, strides)),
             sum((n - 1) * s for n, s in zip(base_sizes, base_strides))]
    flat = aten.zeros.default([max(spans) + 1], dtype=grad.dtype, device=grad.device)
    if 0 in sizes:
        pass
    elif _may_overlap(sizes, strides):
        where = aten.arange.default(max(spans) + 1, device=grad.device)
        where = aten.as_strided.default(where, list(sizes), list(strides), offset)
        flat.index_add_(0, where.reshape(-1), grad.reshape(-1))
    else:
        aten.as_strided.default(flat, list(sizes), list(strides), offset).copy_(grad)
    return aten.as_strided.default(flat, list(base_sizes), list(base_strides), 0)


class AsStridedBackward0(Node):
    """A view's node once its base changed in place (through it, another view or the base
    itself): the view is a window of its base's storage."""

    __slots__ = ("_geometry",)

    def __init__(self, base_sizes, base_strides, sizes, strides, offset):
        super().__init__()
        self._geometry = (base_sizes, base_strides, sizes, strides, offset)

    # what PyTorch's AsStridedBackward0 shows of its saved arguments (the offset here is the
    # view's, relative to its base's)
    @property
    def _saved_size(self):
        return tuple(self._geometry[2])

    @property
    def _saved_stride(self):
        return tuple(self._geometry[3])

    @property
    def _saved_storage_offset(self):
        return self._geometry[4]

    def apply(self, grad_outputs):
        (grad,) = grad_outputs
        if grad is None:
            return (None,)
        with DisableTorchFunction():
            return (_window_gradient(grad, *self._geometry),)
