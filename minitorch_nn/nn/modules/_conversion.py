"""Converting a module's tensors: ``_apply``, ``to``, ``float``... ``to_empty`` (mirrors the
conversion parts of ``torch/nn/modules/module.py``).

Every conversion is ``module._apply(fn)`` with some ``fn(tensor) -> tensor``. ``_apply`` visits
the children first, then the module's own parameters, then its buffers. The interesting part is
what happens to a **parameter** ``p`` once ``new = fn(p)`` is computed (under ``no_grad``); there
are three paths, and which one is taken decides whether references to ``p`` held elsewhere (an
optimizer's ``param_groups``) see the conversion:

=====================  ================================================  ======================
path                   when                                              ``p`` afterwards
=====================  ================================================  ======================
**swap**               swap flag on, or ``new`` is a traceable wrapper   same object, new
                       subclass (has ``__tensor_flatten__``)             contents and class
**set .data**          default, when ``new`` can be poured into ``p``    same object, new data
                       (both on a real device, or both on meta)          (class unchanged)
**overwrite**          overwrite flag on, or ``new`` cannot be poured    a *new* Parameter;
                       into ``p`` (meta -> cpu in ``to_empty``)          old references stale
=====================  ================================================  ======================

A parameter's ``.grad`` follows its parameter with the same path (on the swap path the grad
object keeps its identity too). **Buffers** never take part: each buffer is simply replaced by
``fn(buffer)``, so it is a new object unless ``fn`` returned its input unchanged.

``float()``, ``double()``, ``half()`` and ``bfloat16()`` convert floating-point tensors only;
``type(dtype)`` converts everything; ``to(dtype)`` refuses non-floating dtypes and leaves
integer tensors' dtype alone.

Beyond PyTorch: **a conversion that fails changes nothing.** PyTorch converts tensor by tensor,
so an error halfway (a Parameter subclass whose conversion raises, a weak reference or a live view
that makes ``swap_tensors`` refuse under the swap flag) leaves a module of mixed dtypes with some
buffers already replaced. Here every step of the outermost ``_apply`` is journaled (old payload
fields for the set-.data path, the exchanged objects for the swap path, the old dict entries for
the overwrite path and buffers) and replayed backwards when anything raises, under every
``__future__`` flag setting: each parameter, buffer and grad gets back its identity, its dtype,
its values and its version counter. (What user code does inside ``fn`` or an overridden
``_apply`` beyond these steps cannot be undone.)

Differences from PyTorch: there are no FakeTensors, so the "is a FakeTensor" trigger of the
swap path is absent; ``memory_format`` is accepted and ignored (tensors here are row-major).

Beyond PyTorch: whenever a module drops a registered Parameter for a *different* object (the
overwrite path here, ``module.name = nn.Parameter(...)``, ``register_parameter`` over an existing
name, ``load_state_dict(assign=True)``), :func:`mark_replaced` writes ``_replaced_by`` (e.g.
``"Linear.weight"``) into the old object's ``__dict__`` and bumps a counter; an optimizer still
holding that old object warns once at ``step()`` (``minitorch_nn/optim/optimizer.py``). The mark
is a plain attribute, not a weak reference, because ``swap_tensors`` refuses weakly referenced
tensors.
"""

from __future__ import annotations

import threading

from minitorch_nn import __future__ as future_flags
from minitorch_nn._tensor import Tensor
from minitorch_nn._warnings import warn_user
from minitorch_nn.autograd import graph
from minitorch_nn.nn.modules._helpers import no_grad
from minitorch_nn.nn.parameter import Parameter
from minitorch_nn.utils import swap_tensors


class _ConversionLog:
    """Undo steps for the tensors one outermost ``_apply`` changed, replayed backwards on error."""

    def __init__(self):
        self.undo = []

    # (the steps keep the tensor objects, never their payloads: a reference to a payload would
    # count in the use count that swap_tensors checks)
    def set_data(self, tensor):
        """Before ``tensor.data = x``: remember the payload fields that assignment rewrites."""
        impl = tensor._impl
        fields = (impl.storage, impl.sizes, impl.strides, impl.offset, impl.dtype, impl.device, impl.array)
        del impl

        def restore():
            impl = tensor._impl
            (impl.storage, impl.sizes, impl.strides, impl.offset, impl.dtype, impl.device,
             impl.array) = fields

        self.undo.append(restore)

    def swapped(self, t1, t2, accumulator):
        def restore():
            swap_tensors(t1, t2)
            graph.unpoison_after_swap_back(t1, accumulator)   # (the swaps poisoned t1's node)

        self.undo.append(restore)

    def dict_entry(self, mapping, key):
        old = mapping[key]

        def restore():
            mapping[key] = old

        self.undo.append(restore)

    def grad(self, tensor):
        old = tensor._impl.grad

        def restore():   # (undone after any swap of ``tensor``, so its payload is its own again)
            tensor._impl.grad = old

        self.undo.append(restore)

    def rollback(self):
        undo, self.undo = self.undo, []
        for step in reversed(undo):
            step()


class _ActiveConversions(threading.local):
    def __init__(self):
        self.log = None


_active = _ActiveConversions()


# How many Parameters have been marked as replaced so far: an optimizer only looks at its
# parameters' marks when this number changed since its last step, so a step costs one compare.
replaced_count = 0


def mark_replaced(old, module, name) -> None:
    """Record on ``old`` that ``module.name`` now holds another object (see the docstring)."""
    global replaced_count
    try:
        old.__dict__["_replaced_by"] = f"{type(module).__name__}.{name}"
    except AttributeError:  # (a tensor type without a __dict__: nothing to mark)
        return
    replaced_count += 1


def _is_traceable_wrapper_subclass(t) -> bool:
    """A tensor subclass that can flatten itself into inner tensors (``__tensor_flatten__``)."""
    return (
        type(t) not in (Tensor, Parameter)
        and isinstance(t, Tensor)
        and hasattr(t, "__tensor_flatten__")
        and hasattr(t, "__tensor_unflatten__")
    )


def _has_compatible_shallow_copy_type(a, b) -> bool:
    """Whether ``a.data = b`` is allowed: PyTorch requires the same kind of TensorImpl, which
    for us means both have storage (any real device) or both are meta."""
    return a.device.type == "meta" if b.device.type == "meta" else a.device.type != "meta"


def _parse_to(*args, **kwargs):
    """``(device, dtype, non_blocking, memory_format)`` from ``Module.to``'s arguments, which
    follow ``Tensor.to``: ``to(device, dtype, non_blocking)``, ``to(dtype, non_blocking)`` or
    ``to(tensor, non_blocking)``, each also by keyword."""
    from minitorch_nn._device import canonical
    from minitorch_nn._dtype import dtype as dtype_cls
    from minitorch_nn._tensor import Tensor

    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    memory_format = kwargs.pop("memory_format", None)
    kwargs.pop("copy", None)
    tensor = kwargs.pop("tensor", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        tensor = rest.pop(0)
    elif rest and isinstance(rest[0], dtype_cls):
        dtype = rest.pop(0)
    elif rest and (rest[0] is None or not isinstance(rest[0], bool)):
        device = rest.pop(0)
        if rest and (rest[0] is None or isinstance(rest[0], dtype_cls)):
            dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        rest.pop(0)  # copy
    if rest:
        raise TypeError(
            f"to() received an invalid combination of arguments - got {tuple(type(a).__name__ for a in args)}, "
            "expected (device, dtype, non_blocking), (dtype, non_blocking) or (tensor, non_blocking)"
        )
    if tensor is not None:
        device, dtype = tensor.device, tensor.dtype
    if device is not None:
        device = canonical(device)
    return device, dtype, non_blocking, memory_format


class _ConversionMixin:
    """``_apply`` and the conversion methods built on it."""

    def _apply(self, fn, recurse=True):
        """Replace every tensor ``t`` of this module (and, with ``recurse``, its children) by
        ``fn(t)``, keeping parameter identity as the module docstring describes. Returns self.
        All or nothing: if any step raises, every tensor is put back as it was."""
        if _active.log is not None:
            return self._apply_steps(fn, recurse, _active.log)
        log = _active.log = _ConversionLog()
        try:
            return self._apply_steps(fn, recurse, log)
        except BaseException:
            with no_grad():
                log.rollback()
            raise
        finally:
            _active.log = None

    def _apply_steps(self, fn, recurse, log):
        if recurse:
            for module in self.children():
                module._apply(fn)

        def use_set_data(tensor, applied):
            if _has_compatible_shallow_copy_type(tensor, applied):
                return not future_flags.get_overwrite_module_params_on_conversion()
            return False

        swap_flag = future_flags.get_swap_module_params_on_conversion()

        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                param_applied = fn(param)
            p_set_data = use_set_data(param, param_applied)
            p_swap = swap_flag or _is_traceable_wrapper_subclass(param_applied)
            param_grad = param.grad

            if p_swap:
                try:
                    if param_grad is not None:
                        # The grad would keep a second reference to the payload; detach it first.
                        log.grad(param)
                        param.grad = None
                    param_applied = Parameter(param_applied, requires_grad=param.requires_grad)
                    accumulator = graph.accumulator_of(param)
                    swap_tensors(param, param_applied)
                    log.swapped(param, param_applied, accumulator)
                except Exception as e:
                    if param_grad is not None:
                        param.grad = param_grad
                    raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}") from e
                out_param = param
            elif p_set_data:
                log.set_data(param)
                param.data = param_applied
                out_param = param
            else:
                if not isinstance(param, Parameter):
                    raise AssertionError("param must be a Parameter")
                if not param.is_leaf:
                    raise AssertionError("param must be a leaf tensor")
                out_param = Parameter(param_applied, param.requires_grad)
                log.dict_entry(self._parameters, key)
                self._parameters[key] = out_param
                mark_replaced(param, self, key)  # an optimizer holding `param` is now stale
                log.undo.append(lambda param=param: param.__dict__.pop("_replaced_by", None))

            if param_grad is not None:
                with no_grad():
                    grad_applied = fn(param_grad)
                if p_swap:
                    grad_applied.requires_grad_(param_grad.requires_grad)
                    try:
                        swap_tensors(param_grad, grad_applied)
                        log.swapped(param_grad, grad_applied, None)
                    except Exception as e:
                        raise RuntimeError(
                            f"_apply(): Couldn't swap {self._get_name()}.{key}.grad"
                        ) from e
                    out_param.grad = param_grad
                elif use_set_data(param_grad, grad_applied):
                    # Write through the storage slot: the grad's dtype now matches the param's.
                    log.set_data(out_param.grad)
                    out_param.grad.data = grad_applied
                else:
                    log.grad(out_param)
                    out_param.grad = grad_applied.requires_grad_(param_grad.requires_grad)

        for key, buf in self._buffers.items():
            if buf is not None:
                new_buf = fn(buf)
                log.dict_entry(self._buffers, key)
                self._buffers[key] = new_buf
        return self

    def to(self, *args, **kwargs):
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)`` or ``to(tensor)``. Only floating tensors change dtype."""
        # BEGIN SOLUTION module-to
        device, dtype, non_blocking, memory_format = _parse_to(*args, **kwargs)
        if dtype is not None:
            if not (dtype.is_floating_point or getattr(dtype, "is_complex", False)):
                raise TypeError(
                    "nn.Module.to only accepts floating point or complex dtypes, but got desired dtype="
                    f"{dtype}"
                )
            if getattr(dtype, "is_complex", False):
                warn_user(
                    "Complex modules are a new feature under active development whose design may change, "
                    "and some modules might not work as expected when using complex tensors as parameters "
                    "or buffers. Please file an issue at "
                    "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml if a complex "
                    "module does not work as expected.",
                )

        def convert(t):
            kw = {}
            if device is not None:
                kw["device"] = device
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                kw["dtype"] = dtype
            if memory_format is not None and t.dim() in (4, 5):
                kw["memory_format"] = memory_format  # as PyTorch: only 4-d and 5-d tensors get a format
            try:
                return t.to(**kw) if kw else t
            except NotImplementedError as e:
                if str(e) == "Cannot copy out of meta tensor; no data!":
                    raise NotImplementedError(
                        f"{e} Please use torch.nn.Module.to_empty() instead of torch.nn.Module.to() "
                        "when moving module from meta to a different device."
                    ) from None
                raise

        return self._apply(convert)
        # END SOLUTION

    def to_empty(self, *, device, recurse=True):
        """Move to ``device`` without copying values (storage is uninitialised): the way to
        materialise a module built on the meta device before loading or initialising it."""
        from minitorch_nn._functions.factories import empty, empty_like

        def fresh(t):
            out = empty_like(t, device=device)
            if device is not None and out.device != _canonical(device):
                # (defensive: a like-factory that ignored the device argument)
                out = empty(tuple(t.shape), dtype=t.dtype, device=device)
            return out

        return self._apply(fresh, recurse=recurse)

    def cpu(self):
        """Move every parameter and buffer to the cpu."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Move every parameter and buffer to a cuda device."""
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type):
        """Cast every parameter and buffer, integer ones included, to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        """Cast floating-point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Cast floating-point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Cast floating-point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Cast floating-point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def share_memory(self):
        """Move storage to shared memory (a no-op here: numpy storage is already shareable)."""
        return self._apply(lambda t: t.share_memory_() if hasattr(t, "share_memory_") else t)


def _canonical(device):
    from minitorch_nn._device import canonical

    return canonical(device)
