"""What ``Tensor`` offers to its subclasses: the default handlers and the subclass constructors.

Mirrors the subclass half of ``torch/_tensor.py`` (``Tensor.__torch_function__``, ``_convert``,
``__torch_dispatch__``) and the C++ constructors ``Tensor.as_subclass``, ``Tensor._make_subclass``
and ``Tensor._make_wrapper_subclass`` (``torch/csrc/autograd/python_variable.cpp``):

* ``Tensor.__torch_function__`` (default): runs ``func`` with subclass handlers disabled and
  re-wraps tensor results in the subclass (``t + 1`` on a subclass gives the subclass back).
* ``Tensor.__torch_dispatch__ = _C._disabled_torch_dispatch_impl``: "no override"; a subclass
  that calls ``super().__torch_dispatch__`` runs the backend kernel.
* ``t.as_subclass(C)``: a new object of class ``C`` over the same data (an alias).
* ``Tensor._make_subclass(C, data, require_grad)``: like ``as_subclass`` on ``data.detach()``.
* ``Tensor._make_wrapper_subclass(C, shape, dtype=..., ...)``: a tensor with metadata and *no
  storage*. Its class's ``__torch_dispatch__`` must handle every op (kernels never see it).

**Property reads and hand-written methods.** PyTorch's C++ getters (``t.shape``) and a few
methods (``t.dim()``, ``t.item()``) run ``__torch_function__`` too, with ``func`` being
``Tensor.shape.__get__`` or ``Tensor.dim``. Here they are fast Cython/Python members that do not
dispatch. We make them dispatch only where it matters, so plain tensors pay nothing:

* when a subclass with a live ``__torch_function__`` is created, the members are overridden *on
  that subclass* by small wrappers (:func:`_install_members`);
* while a ``TorchFunctionMode`` is active they are overridden on ``Tensor`` itself, and restored
  when the last mode exits. Meanwhile kernels run under ``DisableTorchFunction`` so that their
  own ``.shape`` reads stay invisible, as C++ kernels are in PyTorch.

The ``func`` a handler receives is always the original member (``Tensor.dim``, or
``Tensor.shape.__get__`` of the original descriptor), so ``func is Tensor.dim`` and
``func == Tensor.shape.__get__`` hold as in PyTorch -- except inside a mode, where ``Tensor.dim``
is temporarily the wrapper.

Class creation also copies one PyTorch rule (``torch._C._TensorMeta``): a subclass with a
``__torch_dispatch__`` of its own or inherited, whose ``__torch_function__`` is still Tensor's
default, gets ``__torch_function__ = _C._disabled_torch_function_impl``, so its results are not
re-wrapped twice. A ``__torch_function__`` inherited from a parent subclass is kept.
"""

from __future__ import annotations

from minitorch_nn import _C, _dispatch, _tensor, overrides
from minitorch_nn import _C_torch_function as _tfc
from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase, TensorImpl
from minitorch_nn._device import canonical, get_default_device
from minitorch_nn._dispatch import python_dispatch
from minitorch_nn._tensor import Tensor, contiguous_strides

_state = _tfc.state
_DISABLED_TF = _tfc._disabled_torch_function_impl
_DISABLED_TD = _tfc._disabled_torch_dispatch_impl


# ---------------------------------------------------------------------------------------------
# The default handlers
# ---------------------------------------------------------------------------------------------


def _convert(ret, cls):
    """Re-wrap tensors in ``ret`` (possibly a tuple/list/namedtuple of them) as ``cls``."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        return type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)
    return ret


def __torch_function__(cls, func, types, args=(), kwargs=None):
    """Default handler: run ``func`` without subclass handlers, give results the class ``cls``.

    Subclasses usually end their own handler with ``super().__torch_function__(...)``. It declines
    (``NotImplemented``) when another argument's type is not a parent of ``cls``, so that more
    specific handlers get their turn.
    """
    if kwargs is None:
        kwargs = {}
    for t in types:
        if not issubclass(cls, t):
            return NotImplemented
    with _tfc.DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in default_nowrap_functions:
            return ret
        return _convert(ret, cls)


Tensor.__torch_function__ = classmethod(__torch_function__)
Tensor.__torch_dispatch__ = _DISABLED_TD
overrides._TENSOR[0] = Tensor
overrides._NO_OVERRIDE.update({Tensor, _C.Size, dt.dtype, type(canonical("cpu"))})


# ---------------------------------------------------------------------------------------------
# Subclass constructors
# ---------------------------------------------------------------------------------------------


def _new_handle(cls, impl):
    # TensorBase.__new__ + _set_impl rather than _C._wrap: it accepts classes with a metaclass.
    if not _state.any_subclass:
        note_instance_class(cls)
    t = TensorBase.__new__(cls)
    _C._set_impl(t, impl)
    return t


def _check_tensor_class(cls):
    if not isinstance(cls, type) or not issubclass(cls, Tensor):
        raise TypeError(
            "Creating a Tensor subclass from a class that does not inherit from Tensor is not "
            "possible. Make sure your class inherits from Tensor."
        )


def as_subclass(self, cls):
    """This tensor's data seen as an instance of ``cls`` (shares storage and autograd history).

    Like PyTorch it neither calls ``cls.__init__`` nor runs ``__torch_function__``; attributes in
    the original's ``__dict__`` are not copied.
    """
    _check_tensor_class(cls)
    src = self._impl
    if getattr(type(self), "__torch_dispatch__", _DISABLED_TD) is not _DISABLED_TD:
        return _as_subclass_through_dispatch(self, cls)
    if not src.requires_grad:
        # No autograd history to keep: a second payload over the same storage and version
        # counter (PyTorch's alias), made directly so that no op shows in traces.
        impl = TensorImpl(
            src.storage, src.sizes, src.strides, src.offset, src.dtype, src.device, src.version
        )
        _C.mark_view(impl, src)
        return _new_handle(cls, impl)
    from minitorch_nn._ops import aten

    # An alias op keeps autograd connected (PyTorch shows AliasBackward0); no handler sees it.
    with python_dispatch.excluded(), _tfc.DisableTorchFunction():
        alias = aten.alias.default(self)
    impl = alias._impl
    del alias
    return _new_handle(cls, impl)


def _as_subclass_through_dispatch(self, cls):
    """``as_subclass`` on a tensor whose class handles ``__torch_dispatch__`` (a wrapper subclass):
    as in PyTorch, the alias is made by that handler. The object it returns *is* the result
    when it is already an instance of ``cls`` (keeping the attributes the handler gave it);
    an instance of an unrelated subclass cannot be re-classed."""
    from minitorch_nn._ops import aten

    with _tfc.DisableTorchFunction():
        alias = aten.alias.default(self)
    if type(alias) is Tensor or type(alias) is cls:
        return alias if type(alias) is cls else _new_handle(cls, alias._impl)
    if isinstance(alias, cls):
        return alias
    raise RuntimeError(
        f"Creating a new Tensor subclass {cls.__name__} but the raw Tensor object is already associated to "
        f"a python object of type {type(alias).__name__} which is not a subclass of the requested type"
    )


def _make_subclass(
    cls,
    data,
    require_grad=False,
    dispatch_strides=False,
    dispatch_device=False,
    dispatch_layout=False,
    _extra_dispatch_keys=None,
    storage_size=None,
):
    """A ``cls`` instance over ``data``'s storage, detached, with ``requires_grad=require_grad``."""
    _check_tensor_class(cls)
    src = data._impl
    impl = TensorImpl(
        src.storage, src.sizes, src.strides, src.offset, src.dtype, src.device, src.version
    )
    impl.requires_grad = bool(require_grad)
    return _new_handle(cls, impl)


def _make_wrapper_subclass(
    cls,
    size,
    strides=None,
    storage_offset=None,
    memory_format=None,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    dispatch_sizes_strides_policy=None,
    dispatch_device=False,
    dispatch_layout=False,
    _extra_dispatch_keys=None,
    storage_size=None,
):
    """A ``cls`` instance with shape, strides, dtype and device but no storage.

    ``cls`` must define ``__torch_dispatch__``: every op on the result goes there, because there
    is no data for a kernel to read. The wrapper usually keeps its real data in attributes set by
    ``__init__`` (for example ``self.elem``).
    """
    _check_tensor_class(cls)
    if getattr(cls, "__torch_dispatch__", _DISABLED_TD) is _DISABLED_TD:
        raise TypeError(f"{cls.__name__} must define __torch_dispatch__")
    sizes = tuple(int(s) for s in size)
    strides = contiguous_strides(sizes) if strides is None else tuple(int(s) for s in strides)
    dtype = dtype if dtype is not None else dt.get_default_dtype()
    device = canonical(device) if device is not None else get_default_device()
    impl = TensorImpl(None, sizes, strides, int(storage_offset or 0), dtype, device)
    impl.requires_grad = bool(requires_grad)
    return _new_handle(cls, impl)


Tensor.as_subclass = as_subclass
Tensor._make_subclass = staticmethod(_make_subclass)
Tensor._make_wrapper_subclass = staticmethod(_make_wrapper_subclass)


# ---------------------------------------------------------------------------------------------
# Members that dispatch: property reads and the hand-written methods
# ---------------------------------------------------------------------------------------------

_PROPERTIES = (
    "shape",
    "dtype",
    "device",
    "grad",
    "requires_grad",
    "is_leaf",
    "grad_fn",
    "data",
    "ndim",
    "layout",
    "is_cuda",
    "is_cpu",
    "is_meta",
    "is_sparse",
    "is_quantized",
    "is_nested",
    "_base",
    "_version",
    "output_nr",
    "itemsize",
    "nbytes",
    "T",
    "mT",
    "H",
    "mH",
    "names",
    "retains_grad",
    "is_mps",
)
_METHODS = (
    "dim",
    "ndimension",
    "numel",
    "nelement",
    "size",
    "stride",
    "storage_offset",
    "element_size",
    "is_contiguous",
    "data_ptr",
    "is_floating_point",
    "is_complex",
    "item",
    "tolist",
    "numpy",
    "__repr__",
    "__len__",
    "__bool__",
    "__float__",
    "__int__",
    "__index__",
    "__format__",
    "__array__",
    "__deepcopy__",
    "__reduce_ex__",
    "requires_grad_",
    "float",
    "double",
    "half",
    "bfloat16",
    "int",
    "long",
    "short",
    "char",
    "byte",
    "bool",
    "cpu",
    "cuda",
    "type",
    "type_as",
    "new_tensor",
    "resolve_conj",
    "resolve_neg",
    "_is_view",
    "backward",
    "retain_grad",
    "register_hook",
    "get_device",
    "untyped_storage",
    "_use_count",
)


def _find_original(name):
    for klass in (Tensor, TensorBase):
        if name in klass.__dict__:
            return klass, klass.__dict__[name]
    return None, None


class _DispatchingProperty:
    """A property that runs ``__torch_function__`` with ``func = <original>.__get__``/``__set__``."""

    def __init__(self, name, original):
        self.name = name
        self.original = original
        self.getter = original.__get__  # a method-wrapper, as PyTorch's func for getters
        self.setter = original.__set__
        self.deleter = original.__delete__
        self.__doc__ = getattr(original, "__doc__", None)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self.original
        if _state.quiet or not overrides.has_torch_function_unary(obj):
            return self.getter(obj)
        return _handle_self(self.getter, obj, (obj,), None)

    def __set__(self, obj, value):
        if _state.quiet or not overrides.has_torch_function_unary(obj):
            return self.setter(obj, value)
        _handle_self(self.setter, obj, (obj, value), None)

    def __delete__(self, obj):
        if _state.quiet or not overrides.has_torch_function_unary(obj):
            return self.deleter(obj)
        _handle_self(self.deleter, obj, (obj,), None)


def _dispatching_method(name, original):
    def method(self, *args, **kwargs):
        if _state.quiet or not overrides.has_torch_function_unary(self):
            return original(self, *args, **kwargs)
        return _handle_self(original, self, (self, *args), kwargs or None)

    method.__name__ = getattr(original, "__name__", name)
    method.__qualname__ = "Tensor." + method.__name__
    method.__doc__ = getattr(original, "__doc__", None)
    method.__wrapped_member__ = original
    return method


def _handle_self(func, obj, args, kwargs):
    """PyTorch's ``handle_torch_function(self, name, ...)``: ``self``'s type is always in ``types``."""
    t = type(obj)
    overloaded = (
        [t]
        if (overrides._has_live_handler(t) or t is Tensor) and _tfc._is_torch_function_enabled()
        else []
    )
    return overrides._dispatch(func, overloaded, args, kwargs)


_wrappers: dict = {}  # name -> the wrapper object shared by every class it is installed on
_originals: dict = {}  # name -> (owner class, original member), taken before any patching


def _wrapper_for(name):
    w = _wrappers.get(name)
    if w is None:
        _, original = _originals[name]
        if name in _PROPERTIES:
            w = _DispatchingProperty(name, original)
        else:
            w = _dispatching_method(name, original)
        _wrappers[name] = w
    return w


def _collect_originals():
    # Idempotent: run before each install, so members attached after this module was imported
    # (autograd adds ``backward``, ``register_hook``...) are picked up too.
    for name in _PROPERTIES + _METHODS:
        if name in _originals:
            continue
        owner, original = _find_original(name)
        if original is None or hasattr(original, "__wrapped_impl__"):
            continue  # missing, or already a public function (it dispatches by itself)
        if name in _PROPERTIES and not hasattr(original, "__get__"):
            continue
        _originals[name] = (owner, original)


def _install_members(cls):
    """Give ``cls`` the dispatching members it would otherwise inherit from Tensor/TensorBase."""
    if cls.__dict__.get("_mt_members_installed"):
        return
    _collect_originals()
    for name in _originals:
        for klass in cls.__mro__:
            if name in klass.__dict__:
                break
        if klass is Tensor or klass is TensorBase:
            setattr(cls, name, _wrapper_for(name))
    cls._mt_members_installed = True


_patched_on_tensor: dict = {}
_backend_below_modes: list = []


def _patch_tensor_for_modes():
    """First mode entered: make plain tensors' members dispatch too."""
    if _patched_on_tensor:
        return
    _collect_originals()
    for name in _originals:
        _patched_on_tensor[name] = Tensor.__dict__.get(name)
        setattr(Tensor, name, _wrapper_for(name))
    # Kernels are C++ in PyTorch and never reach __torch_function__; ours read ``.shape`` and
    # friends in Python, so while a mode is active they run with the protocol switched off.
    previous = _dispatch.backend
    _backend_below_modes.append(previous)

    def backend(op, args, kwargs):
        with _tfc.DisableTorchFunction():
            return previous(op, args, kwargs)

    _dispatch.backend = backend


def _unpatch_tensor_after_modes():
    """Last mode exited: put Tensor's own members (and the plain kernel call) back."""
    if _state.modes or not _patched_on_tensor:
        return
    for name, previous in _patched_on_tensor.items():
        if previous is None:
            delattr(Tensor, name)
        else:
            setattr(Tensor, name, previous)
    _patched_on_tensor.clear()
    _dispatch.backend = _backend_below_modes.pop()


overrides._mode_hooks[0] = _patch_tensor_for_modes
overrides._mode_hooks[1] = _unpatch_tensor_after_modes


# ---------------------------------------------------------------------------------------------
# Class creation
# ---------------------------------------------------------------------------------------------


def note_instance_class(cls):
    """An instance of tensor subclass ``cls`` is about to exist: if its handler is live, wake up.

    The public calls skip the argument scan while ``_state.quiet`` is True, which holds until a
    class whose ``__torch_function__`` can actually run exists. A handler runs only on an instance
    of its class, so the classes this package defines (``nn.Buffer``, whose constructor returns a
    plain tensor, and the lazy placeholders) count only once an instance of one is made: every
    constructor that can make one (``as_subclass``, ``_make_subclass``,
    ``_make_wrapper_subclass``, ``Tensor(...)`` on a subclass, unpickling) calls this first. This
    also wakes for a class that got a live handler after it was created. (Ours: PyTorch's C++
    dispatcher needs no such flag.) Making a handle with ``TensorBase.__new__(cls)`` or
    ``_C._wrap(cls, ...)``, or assigning ``__class__``, are internal and do not call it.
    """
    if (
        not _state.any_subclass
        and cls not in overrides._NO_OVERRIDE
        and overrides._has_live_handler(cls)
    ):
        _state.any_subclass = True
        _tfc._changed()
        _install_members(cls)


_tensor.instance_class_hook = note_instance_class


def _dispatched_item(t):
    """``t.item()`` for a ``__torch_dispatch__`` subclass: ``aten._local_scalar_dense``, which its
    handler sees (as in PyTorch), instead of reading memory a wrapper does not have."""
    from minitorch_nn._ops import aten

    return aten._local_scalar_dense.default(t)


_tensor.dispatched_item_hook = _dispatched_item


def _unbound(handler):
    """A handler as the function underneath (a classmethod's ``__func__``), to compare by identity."""
    return getattr(handler, "__func__", handler)


def _register_subclass(cls):
    # PyTorch's rule (_TensorMeta): a class whose __torch_dispatch__ (own or inherited) is a real
    # one, and whose __torch_function__ is still Tensor's default, gets the disabled handler; a
    # __torch_function__ inherited from a parent subclass is kept.
    if getattr(cls, "__torch_dispatch__", _DISABLED_TD) is not _DISABLED_TD and _unbound(
        getattr(cls, "__torch_function__", None)
    ) is _unbound(Tensor.__dict__.get("__torch_function__")):
        cls.__torch_function__ = _DISABLED_TF
    if overrides._has_live_handler(cls):
        if not (cls.__module__ or "").startswith("minitorch_nn."):
            # a user's class: its instances may come from anywhere (see note_instance_class)
            _state.any_subclass = True
            _tfc._changed()
        _install_members(cls)
    if getattr(cls, "__torch_dispatch__", _DISABLED_TD) is not _DISABLED_TD:
        python_dispatch.register_dispatch_class(cls)
    if cls.__module__ == "minitorch_nn.nn.parameter" and cls.__name__ in ("Parameter", "Buffer"):
        # They never override (their handler is the disabled one): keep them on the fast path.
        # (Reassigning their __torch_function__ later is not supported.)
        overrides._NO_OVERRIDE.add(cls)


def _on_new_overloaded_type(t):
    # A class that got a live __torch_function__ after it was created (the swap_tensors recipe
    # assigns one): give it the dispatching members the first time it takes part.
    if isinstance(t, type) and issubclass(t, Tensor):
        _install_members(t)


overrides._on_new_overloaded_type = _on_new_overloaded_type


def __init_subclass__(cls, **kwargs):
    super(Tensor, cls).__init_subclass__(**kwargs)
    _register_subclass(cls)


Tensor.__init_subclass__ = classmethod(__init_subclass__)


def _walk(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _walk(sub)


for _cls in list(_walk(Tensor)):  # classes made before this module was imported
    _register_subclass(_cls)

_collect_originals()

# Results that the default handler returns as they are (PyTorch: get_default_nowrap_functions()).
default_nowrap_functions = frozenset(
    _originals[n][1].__get__ for n in ("_base", "grad") if n in _originals
)
