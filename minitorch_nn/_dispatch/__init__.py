"""The dispatch chain: what happens between calling an op and running its kernel.

Mirrors PyTorch's dispatcher, in the order PyTorch runs it for one ``OpOverload`` call::

    ops.aten.add.Tensor(a, b)
      -> autograd      record a graph node when an input requires grad   (autograd/ installs it)
      -> python        __torch_dispatch__ of wrapper subclasses, dispatch modes (python_dispatch.py)
      -> backend       the kernel for the inputs' device (cpu, meta, cuda)

``__torch_function__`` sits above this, in the public functions and Tensor methods, because in
PyTorch it too runs before the op is looked up.

The layers are plain functions in a list-free chain so that the fast path (no grad, no subclass,
no mode) is a few attribute checks and one call, which is what users feel on small models.
"""

from __future__ import annotations

from minitorch_nn import _ops
from minitorch_nn._C import TensorBase
from minitorch_nn._device import canonical, get_default_device

# Hooks that upper layers install (autograd, python dispatch). Each is None until installed so
# that the chain costs nothing for layers that are not loaded.
autograd_layer = None       # fn(op, args, kwargs) -> result or NotImplemented
python_layer = None         # fn(op, args, kwargs) -> result or NotImplemented
# Forward-mode AD (autograd/forward_ad.py) sets this only while a dual level is active, so
# `forward_ad_layer is None` is the cheap test a fast path must make before skipping the chain.
forward_ad_layer = None     # fn(op, args, kwargs) -> result or NotImplemented
# Autograd's refusals of an in-place write (autograd/inplace.py's ``_check_inplace``), which the
# inference-tensor check runs first; installed with the autograd layer.
check_inplace_for_autograd = None  # fn(tensor) -> None, or raises


def _first_device_type(args, kwargs):
    """The device type the op runs on: the first tensor argument's, else the ``device=`` kwarg."""
    for a in args:
        if isinstance(a, TensorBase):
            return a._impl.device.type
        if isinstance(a, (list, tuple)) and a and isinstance(a[0], TensorBase):
            return a[0]._impl.device.type
    dev = kwargs.get("device")
    if dev is not None:
        return canonical(dev).type
    for a in kwargs.values():
        if isinstance(a, TensorBase):
            return a._impl.device.type
    return get_default_device().type


# Set by backends/cuda when it loads: until a cuda tensor exists, devices cannot be mixed, so
# the cpu fast path skips the check below.
cuda_loaded = False
# copy_ copies between devices; a cuda tensor may be indexed with cpu index tensors
_CROSS_DEVICE_OK = frozenset({"copy_.default", "index.Tensor", "index_put_.default", "index_put.default"})


def _check_same_device(args):
    """PyTorch's TensorIterator check: one device per op (0-d cpu tensors count as scalars)."""
    first = None
    for a in args:
        items = a if isinstance(a, (list, tuple)) else (a,)
        for t in items:
            if not isinstance(t, TensorBase):
                continue
            impl = t._impl
            dev = impl.device
            if dev.type == "meta" or (dev.type == "cpu" and not impl.sizes):
                continue
            if first is None:
                first = dev
            elif dev != first:
                raise RuntimeError(
                    f"Expected all tensors to be on the same device, but found at least two devices, {first} and {dev}!"
                )


def backend(op, args, kwargs):
    """Run the kernel registered for the inputs' device."""
    if not cuda_loaded and args and not op.is_like_factory:
        # The common case, checked first: no cuda tensor can exist, and the first argument is
        # a tensor whose device has its own kernel.
        a = args[0]
        if isinstance(a, TensorBase):
            kernels = op._kernels
            # (views and other metadata-only ops have one kernel for every device, under "any")
            kernel = kernels.get(a._impl.device.type) or kernels.get("any")
            if kernel is not None:
                return kernel(*args, **kwargs) if kwargs else kernel(*args)
    if op.is_like_factory and kwargs.get("device") is not None:
        # empty_like(x, device="meta") makes a meta tensor whatever x's device is
        dev = canonical(kwargs["device"]).type
        if dev == "cuda" and not cuda_loaded:
            _load_cuda()
        return op.kernel_for(dev)(*args, **kwargs)
    if cuda_loaded and op.__name__ not in _CROSS_DEVICE_OK:
        _check_same_device(args)
        if "cuda" in {t._impl.device.type for t in _tensors(args)}:
            return op.kernel_for("cuda")(*args, **kwargs)  # a cuda op may take 0-d cpu tensors
    dev = _first_device_type(args, kwargs)
    if dev == "cuda" and not cuda_loaded:
        _load_cuda()
    return op.kernel_for(dev)(*args, **kwargs)


# Loads the cuda backend (numba) on first CUDA use; ``minitorch_nn.cuda`` registers it when it is
# imported, as the dispatcher sits below it.
_cuda_loader = None


def register_cuda_loader(loader):
    """Install ``loader()``, which loads the cuda backend (once) and returns its package."""
    global _cuda_loader
    _cuda_loader = loader


def _load_cuda():
    """First CUDA use: import the cuda backend, which registers its kernels; returns its package."""
    if _cuda_loader is None:
        raise RuntimeError("the cuda backend is not available: minitorch_nn.cuda was not imported")
    return _cuda_loader()


def _tensors(args):
    for a in args:
        if isinstance(a, TensorBase):
            yield a
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, TensorBase):
                    yield b


_INFERENCE_INPLACE_MESSAGE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
    "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details."
)


def _check_inference_inplace(op, args):
    """PyTorch refuses to write into an inference tensor (one made under ``inference_mode``)
    once inference mode is off, with or without grad mode. (A ``resize_`` to the shape the
    tensor already has writes nothing, and PyTorch lets it through.)"""
    if args and isinstance(args[0], TensorBase) and args[0]._impl.version.inference:
        from minitorch_nn.autograd import grad_mode   # (imported late: autograd imports this module)

        if op.__name__ == "resize_.default" and len(args) > 1 and tuple(args[1]) == args[0]._impl.sizes:
            return
        if not grad_mode._inference:
            if grad_mode._enabled and args[0]._impl.requires_grad and check_inplace_for_autograd:
                check_inplace_for_autograd(args[0])   # PyTorch's autograd layer refuses a leaf first
            raise RuntimeError(_INFERENCE_INPLACE_MESSAGE)


def dispatch(op, args, kwargs):
    """Run ``op`` through autograd, python dispatch and the backend, in that order."""
    if op.is_inplace:
        _check_inference_inplace(op, args)
    if forward_ad_layer is not None:
        # a dual level is active: the layer runs this chain itself, then adds the tangents
        out = forward_ad_layer(op, args, kwargs)
        if out is not NotImplemented:
            return out
    if autograd_layer is not None:
        out = autograd_layer(op, args, kwargs)
        if out is not NotImplemented:
            return out
    # below_autograd(op, args, kwargs), written out: one call less on every op
    if python_layer is not None:
        out = python_layer(op, args, kwargs)
        if out is not NotImplemented:
            return out
    return backend(op, args, kwargs)


def below_autograd(op, args, kwargs):
    """The part of the chain under autograd: python dispatch, then the backend kernel."""
    if python_layer is not None:
        out = python_layer(op, args, kwargs)
        if out is not NotImplemented:
            return out
    return backend(op, args, kwargs)


_ops._install_dispatcher(dispatch, backend)
