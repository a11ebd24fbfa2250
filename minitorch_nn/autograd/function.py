"""``autograd.Function``: write an op's forward and backward yourself (mirrors ``torch/autograd/function.py``).

::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)        # y.grad_fn is an ExpBackward node

``apply`` runs ``forward`` with grad mode off (so the ops inside are not recorded), then makes
one graph node for the whole call, exactly like the nodes ``recording.py`` makes for aten ops.
As in PyTorch, the ``ctx`` object *is* that node: attributes you set on it live until backward.
The node class is ``<YourClass>Backward``, made once per Function subclass.

Also supported: the ``setup_context`` style (``forward`` without ``ctx``), ``needs_input_grad``,
``mark_dirty`` (in-place functions), ``mark_non_differentiable``, ``set_materialize_grads`` and
``once_differentiable``. Not supported: ``jvp``/forward mode, ``vmap``, ``_SingleLevelFunction``.
"""

from __future__ import annotations

import functools

from minitorch_nn import _dispatch
from minitorch_nn._C import TensorBase
from minitorch_nn._warnings import warn_user
from minitorch_nn.autograd import forward_ad
from minitorch_nn.autograd import grad_mode as _gm
from minitorch_nn.autograd.graph import Node, SavedTensor, gradient_edge


class FunctionCtx:
    """What ``forward``/``setup_context`` can call on ``ctx``."""

    def save_for_backward(self, *tensors):
        """Keep tensors for ``backward`` (read them back with ``ctx.saved_tensors``)."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, TensorBase):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Say that ``forward`` modified these inputs in place."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Say that these outputs have no gradient (indices, masks...)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool):
        """With ``False``, ``backward`` receives ``None`` for outputs that got no gradient."""
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node (and ``ctx``) of one ``Function.apply`` call."""

    _forward_cls = None
    materialize_grads = True
    to_save = ()
    dirty_tensors = ()
    non_differentiable = ()

    def __init__(self):
        Node.__init__(self)
        self._saved = None
        self._output_meta = ()
        self.needs_input_grad = ()

    @property
    def saved_tensors(self):
        if self._saved is None:
            return tuple(self.to_save)
        return tuple(s.unpack(self) if isinstance(s, SavedTensor) else s for s in self._saved)

    saved_variables = saved_tensors
    saved_for_forward = None   # (set by ctx.save_for_forward)

    @property
    def _raw_saved_tensors(self):
        """The ``SavedTensor`` objects behind ``saved_tensors`` (``register_hooks`` on them), as
        PyTorch's ``grad_fn._raw_saved_tensors``; after backward freed them, PyTorch's error."""
        if self._saved is None:
            return ()
        from minitorch_nn.autograd import saved_attributes

        raw = tuple(s if isinstance(s, SavedTensor) else saved_attributes.empty_saved_tensor() for s in self._saved)
        for s in raw:
            if s.released:
                s.unpack(self)   # raises "Trying to backward through the graph a second time..."
        return raw

    def apply(self, grad_outputs):
        cls = self._forward_cls
        grads = list(grad_outputs)
        if self.materialize_grads:
            from minitorch_nn._ops import aten

            for i, (g, meta) in enumerate(zip(grads, self._output_meta)):
                if g is None and meta is not None:
                    grads[i] = aten.zeros.default(tuple(meta[0]), dtype=meta[1], device=meta[2], pin_memory=False)
        result = cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_inputs = len(self._is_tensor_input)
        if len(result) < n_inputs:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected {n_inputs}, got {len(result)})"
            )
        for g in result[n_inputs:]:
            if g is not None:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients (expected {n_inputs}, "
                    f"got {len(result)})"
                )
        # One gradient per tensor input, in the order of next_functions.
        out = []
        for i, is_tensor in enumerate(self._is_tensor_input):
            g = result[i]
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at position {i + 1}, "
                        "but the corresponding forward input was not a Variable"
                    )
                continue
            if g is not None and not isinstance(g, TensorBase):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            out.append(g)
        return tuple(out)

    def release_variables(self):
        if self._saved is not None:
            for s in self._saved:
                if isinstance(s, SavedTensor):
                    s.release()


class FunctionMeta(type):
    """Gives each Function subclass its own node class, ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        backward_cls.__module__ = cls.__module__
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class for custom differentiable operations (see the module docstring)."""

    def __init__(self, *args, **kwargs):
        warn_user(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, so you "
            "should invoke them on the class itself. Instantiating an autograd function will raise an error in a "
            "future version of PyTorch.",
            DeprecationWarning,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
            "function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function to use it "
            "with backward mode AD."
        )

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        node = cls._backward_cls()
        is_tensor = tuple(isinstance(a, TensorBase) for a in args)
        node._is_tensor_input = is_tensor
        node.needs_input_grad = tuple(isinstance(a, TensorBase) and a.requires_grad for a in args)
        # (grad mode alone decides, even inside inference_mode, as in PyTorch)
        record = _gm._enabled and any(node.needs_input_grad)
        uses_setup_context = cls.setup_context is not Function.setup_context

        # Forward AD: forward() sees no tangents; jvp() gives the outputs theirs (forward_ad.py)
        fw_tangents = _dispatch.forward_ad_layer is not None and forward_ad.has_tangent(args)
        prev, prev_fw = _gm._enabled, _dispatch.forward_ad_layer
        _gm._enabled = False
        if fw_tangents:
            _dispatch.forward_ad_layer = None
        try:
            if uses_setup_context:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(node, args, outputs)
            else:
                outputs = cls.forward(node, *args, **kwargs)
        finally:
            _gm._enabled, _dispatch.forward_ad_layer = prev, prev_fw
        result = _wire(node, args, outputs) if record else _unrecorded(node, args, outputs)
        if fw_tangents:
            forward_ad.custom_function_tangents(cls, node, args, result)
        return result


def _wire(node, args, outputs):
    """Connect the outputs of ``apply`` to ``node`` (like ``_wrap_outputs`` in PyTorch)."""
    from minitorch_nn.autograd.inplace import VIEW_MADE_IN_CUSTOM_FUNCTION, _rebase_history
    from minitorch_nn.autograd.recording import _check_inplace

    tensors_in = [a for a in args if isinstance(a, TensorBase)]
    node.next_functions = tuple(gradient_edge(t) or (None, 0) for t in tensors_in)
    node._input_metadata = tuple((t._impl.sizes, t._impl.dtype, t._impl.device) for t in tensors_in)
    single = not isinstance(outputs, tuple)
    outs = list((outputs,) if single else outputs)
    dirty = {id(t) for t in node.dirty_tensors}
    non_diff = {id(t) for t in node.non_differentiable}
    metas = []
    for i, o in enumerate(outs):
        if not isinstance(o, TensorBase):
            metas.append(None)
            continue
        if id(o) in dirty:
            impl = o._impl
            if impl.requires_grad and impl.grad_fn is None and impl.base is None:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            _check_inplace(o)
            impl.version.value += 1   # PyTorch counts mark_dirty as one more write
        elif any(o is a for a in tensors_in):
            # Returning an input unchanged: hand back a view of it, with its own history.
            o = outs[i] = _view_of(o)
        impl = o._impl
        metas.append((impl.sizes, impl.dtype, impl.device))
        if id(o) in non_diff or not (o.dtype.is_floating_point or o.dtype.is_complex):
            impl.requires_grad = False
            continue
        if id(o) in dirty and impl.base is not None and i == 0 and tensors_in and tensors_in[0] is o:
            # the first input, a view, written in place and returned: as for an in-place op on a
            # view, the base's history goes through CopySlices (PyTorch's rebase_history)
            _rebase_history(o, node)
            continue
        impl.grad_fn, impl.requires_grad, impl.output_nr = node, True, i
        if impl.base is not None:
            impl.view_version = impl.version.value   # this node is current (after mark_dirty's write)
            if id(o) not in dirty:
                # a view made here (or an input handed back): writing into it in place later
                # would bypass this Function's backward, so it is refused (inplace.py); the node
                # remembers which outputs are such views, for views taken of them later
                impl.creation_meta = VIEW_MADE_IN_CUSTOM_FUNCTION
                node.__dict__.setdefault("_custom_view_outputs", set()).add(i)
    node._output_meta = tuple(metas)
    saved = []
    for t in node.to_save:
        if t is None:
            saved.append(None)
        else:
            saved.append(SavedTensor(t, is_output=any(t is o for o in outs) and t._impl.grad_fn is node))
    node._saved = saved
    node.to_save = ()
    return outs[0] if single else tuple(outs)


def _unrecorded(node, args, outputs):
    """The outputs of an ``apply`` that records nothing (grad mode off, or no input needs a
    gradient). An input handed back unchanged still comes back as a new tensor, as in PyTorch's
    ``_wrap_outputs``: a detach of it if it requires grad, else a view of it."""
    single = not isinstance(outputs, tuple)
    outs = list((outputs,) if single else outputs)
    dirty = {id(t) for t in node.dirty_tensors}
    replaced = False
    for i, o in enumerate(outs):
        if isinstance(o, TensorBase) and id(o) not in dirty and any(o is a for a in args):
            outs[i] = _detached(o) if o._impl.requires_grad else _view_of(o)
            replaced = True
    if not replaced:
        return outputs
    return outs[0] if single else tuple(outs)


def _detached(t):
    from minitorch_nn._ops import aten

    return aten.detach.default(t)


def _view_of(t):
    from minitorch_nn._ops import aten

    prev = _gm._enabled
    _gm._enabled = False
    try:
        return aten.view.default(t, list(t._impl.sizes))   # PyTorch: input.view_as(input)
    finally:
        _gm._enabled = prev


def once_differentiable(fn):
    """Decorate ``backward`` to run it with grad mode off: its result is never differentiated again."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _gm._enabled
        _gm._enabled = False
        try:
            return fn(ctx, *args)
        finally:
            _gm._enabled = prev

    return wrapper
