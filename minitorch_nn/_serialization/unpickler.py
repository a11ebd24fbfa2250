"""The restricted reader of ``data.pkl`` (mirrors ``torch/_weights_only_unpickler.py``).

A pickle is a small program: ``GLOBAL`` names a Python object, ``REDUCE`` calls it, ``BUILD``
sets attributes. Python's own unpickler would import and call whatever the file names, which
is how a malicious checkpoint runs ``os.system``. This reader never imports anything:
:meth:`CheckpointUnpickler.find_class` looks the name up in a fixed table (``ALLOWED_GLOBALS``)
of *our own* functions -- ``torch._utils._rebuild_tensor_v2`` maps to
:func:`rebuild_tensor_v2` below, ``torch.FloatStorage`` to a marker meaning "float32
storage", ``collections.OrderedDict`` to the real OrderedDict -- and any other name is an
``UnpicklingError`` that says what the file asked for.

The opcodes are restricted as in PyTorch: only calls of table entries (``REDUCE``/``NEWOBJ``),
``BUILD`` only on an OrderedDict (its ``_metadata``), appends only to lists, item-setting only
on dicts, and no ``INST``/``OBJ``/extension codes/out-of-band buffers. The rebuild functions
check every size, stride and offset against the storage before making a tensor.

How: PyTorch writes its own small pickle machine; we subclass pickle's pure-Python
``pickle._Unpickler`` instead and give it a ``dispatch`` table in which every opcode byte
rejects unless listed in ``_SAFE_OPCODES`` or replaced by a checked method below, so the
reading code stays Python's own and the policy fits on one screen.

Bounded work: a file of N bytes costs work proportional to N. The reader stops with an
``UnpicklingError`` that names the limit when a pickle runs more than ``MAX_OPCODES`` opcodes,
nests containers deeper than ``MAX_NESTING`` (a chain of 10**6 one-item tuples would otherwise
crash C's recursive tuple hash, in PyTorch too), or spends more than ``WORK_PER_BYTE`` units of
hashing per byte of pickle (the same big tuple used as a dict key again and again). Sizes the file
declares are never allocated before the bytes are there: ``BYTEARRAY8`` (which allocates first) is
refused, as PyTorch's weights-only reader refuses it.

``load`` wraps a refusal in PyTorch's text (:func:`weights_only_failure`). ``weights_only=False``
does not use this reader: it uses ``full_unpickler.py``, Python's own unpickling, which runs
what the file names, as in PyTorch. Quantized, sparse and nested tensors, which PyTorch's table
allows, are refused with a message saying so (complex64 and complex128 storages load, as
ComplexFloatStorage/ComplexDoubleStorage).
"""

from __future__ import annotations

import _compat_pickle
import collections
import pickle
import reprlib

from minitorch_nn import _dtype as dt
from minitorch_nn._C import Size, TensorBase, TensorImpl, _wrap, check_geometry
from minitorch_nn._device import canonical as _canonical_device
from minitorch_nn._serialization.pickler import STORAGE_CLASS_NAME
from minitorch_nn._tensor import Tensor

UnpicklingError = pickle.UnpicklingError

# The caps that keep a crafted pickle's work proportional to its size (see the module docstring).
# A real checkpoint runs a few dozen opcodes per tensor and nests containers a handful deep.
MAX_OPCODES = 1 << 24
MAX_NESTING = 1000
WORK_PER_BYTE = 64
_CONTAINERS = (tuple, list, dict, set, frozenset, collections.OrderedDict)


def _short(value, limit: int) -> str:
    """``repr(value)`` cut to ``limit`` characters, without building the whole repr first: an error
    message about a crafted object must cost little however big the object is (a tensor prints
    through the whole printing machinery; a list of a million items would print them all)."""
    return _SHORT_REPR.repr(value)[:limit]


class _ShortRepr(reprlib.Repr):
    def repr1(self, x, level):
        if isinstance(x, TensorBase):   # (anywhere inside: a tensor in a tuple too)
            return f"tensor(shape={list(x.shape)}, dtype={x.dtype})"
        return super().repr1(x, level)


_SHORT_REPR = _ShortRepr()
_SHORT_REPR.maxlevel, _SHORT_REPR.maxother, _SHORT_REPR.maxstring = 3, 60, 60


class StorageType:
    """What ``torch.FloatStorage`` & co. mean in a checkpoint: "a storage of this dtype"."""

    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def __repr__(self):
        return f"torch.{STORAGE_CLASS_NAME[self.dtype]}"


class CheckpointStorage:
    """A storage read from a checkpoint: flat data of one dtype on one device.

    ``array`` is the flat numpy array (cpu), a device array (cuda) or ``None`` (meta). Tensors
    made from the same storage share ``array``, which is what keeps views views after loading.
    A ``map_location`` callable receives one of these and the saved location string.
    """

    __slots__ = ("array", "dtype", "device", "numel", "key")

    def __init__(self, array, dtype, device, numel, key):
        self.array, self.dtype, self.device, self.numel, self.key = array, dtype, device, numel, key

    def __repr__(self):
        return f"CheckpointStorage(key={self.key!r}, dtype={self.dtype!r}, numel={self.numel}, device='{self.device}')"

    def size(self) -> int:
        return self.numel

    def nbytes(self) -> int:
        return self.numel * self.dtype.itemsize

    def to(self, device) -> CheckpointStorage:
        """This storage on ``device`` (a copy unless it is already there)."""
        from minitorch_nn._tensor import _from_array

        dev = _canonical_device(device)
        if dev == self.device:
            return self
        if dev.type == "meta":
            return CheckpointStorage(None, self.dtype, dev, self.numel, self.key)
        if self.array is None:
            raise RuntimeError(f"cannot move a meta storage to {dev}: it has no data")
        flat = (
            _from_array(self.array, self.dtype)
            if self.device.type == "cpu"
            else _wrap(
                Tensor, TensorImpl(self.array, (self.numel,), (1,), 0, self.dtype, self.device)
            )
        )
        moved = flat.to(dev)
        return CheckpointStorage(moved._impl.storage, self.dtype, dev, self.numel, self.key)

    def cpu(self) -> CheckpointStorage:
        return self.to("cpu")

    def cuda(self, device=None) -> CheckpointStorage:
        return self.to(
            "cuda"
            if device is None
            else f"cuda:{int(device)}"
            if not isinstance(device, str)
            else device
        )


# -- the functions a checkpoint may call ------------------------------------------------------


def _ints(values, what) -> tuple:
    if not isinstance(values, tuple) or not all(type(v) is int for v in values):
        raise UnpicklingError(f"tensor {what} must be a tuple of ints, got {_short(values, 200)}")
    return tuple(values)


def _check_layout(storage, offset, size, stride) -> tuple[tuple, tuple]:
    """Validate that the tensor ``(offset, size, stride)`` reads only inside ``storage`` (the one
    geometry check every path that builds a tensor uses: ``_C.check_geometry``)."""
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    if type(offset) is not int or offset < 0:
        raise UnpicklingError(
            f"tensor storage offset must be a non-negative int, got {_short(offset, 100)}"
        )
    item = storage.dtype.itemsize
    try:
        check_geometry(size, stride, offset, item, None if storage.numel is None else storage.numel * item)
    except RuntimeError as e:
        raise RuntimeError(
            f"{e}\n(storage {storage.key!r} in the checkpoint does not hold the tensor that reads it: "
            "the file is damaged or was edited.)"
        ) from None
    return size, stride


def _check_requires_grad(requires_grad):
    if type(requires_grad) is not bool:
        raise UnpicklingError(f"requires_grad must be a bool, got {_short(requires_grad, 100)}")


def rebuild_tensor_v2(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None
):
    """Our ``torch._utils._rebuild_tensor_v2``: a tensor reading ``storage``."""
    if type(storage) is not CheckpointStorage:
        raise UnpicklingError(f"_rebuild_tensor_v2 expects a storage, got {type(storage).__name__}")
    size, stride = _check_layout(storage, storage_offset, size, stride)
    _check_requires_grad(requires_grad)
    impl = TensorImpl(storage.array, size, stride, storage_offset, storage.dtype, storage.device)
    t = _wrap(Tensor, impl)
    if requires_grad:
        t.requires_grad_(True)  # raises PyTorch's error for integer dtypes
    # backward_hooks (always an empty OrderedDict from torch.save) and metadata (conj/neg bits,
    # meaningless for real dtypes) carry nothing we use.
    return t


def rebuild_tensor(storage, storage_offset, size, stride):
    """Our ``torch._utils._rebuild_tensor`` (older files)."""
    return rebuild_tensor_v2(storage, storage_offset, size, stride, False, None)


def rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    """Our ``torch._utils._rebuild_meta_tensor_no_storage``: sizes and strides only."""
    from minitorch_nn._device import META

    if type(dtype) is not dt.dtype:
        raise UnpicklingError(f"expected a dtype, got {_short(dtype, 100)}")
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    try:
        check_geometry(size, stride, 0, dtype.itemsize)
    except RuntimeError as e:
        raise RuntimeError(f"invalid meta tensor layout: size {list(size)}, stride {list(stride)}: {e}") from None
    _check_requires_grad(requires_grad)
    t = _wrap(Tensor, TensorImpl(None, size, stride, 0, dtype, META))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _parameter_class():
    from minitorch_nn.nn.parameter import Parameter

    return Parameter


def rebuild_parameter(data, requires_grad, backward_hooks):
    """Our ``torch._utils._rebuild_parameter``: ``nn.Parameter(data, requires_grad)`` sharing data."""
    if type(data) is not Tensor:
        raise UnpicklingError(f"_rebuild_parameter expects a tensor, got {type(data).__name__}")
    _check_requires_grad(requires_grad)
    if requires_grad and not (data.dtype.is_floating_point or data.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return _parameter_class()(data, requires_grad)


def rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """Our ``torch._utils._rebuild_parameter_with_state``: a Parameter with Python attributes."""
    p = rebuild_parameter(data, requires_grad, backward_hooks)
    apply_state(p, state)
    return p


_TENSOR_REBUILDS = (
    rebuild_tensor_v2,
    rebuild_tensor,
    rebuild_meta_tensor_no_storage,
    rebuild_parameter,
)


def rebuild_from_type_v2(func, new_type, args, state):
    """Our ``torch._tensor._rebuild_from_type_v2``: rebuild, set the class, then attributes."""
    if func not in _TENSOR_REBUILDS or type(args) is not tuple:
        raise UnpicklingError(f"_rebuild_from_type_v2 cannot call {_short(func, 100)}")
    if new_type is not Tensor and new_type is not _parameter_class():
        raise UnpicklingError(f"_rebuild_from_type_v2: unsupported tensor type {_short(new_type, 100)}")
    t = func(*args)
    if type(t) is not new_type:
        impl = t._impl
        alias = TensorImpl(
            impl.storage,
            impl.sizes,
            impl.strides,
            impl.offset,
            impl.dtype,
            impl.device,
            impl.version,
        )
        alias.requires_grad = impl.requires_grad
        t = _wrap(new_type, alias)
    apply_state(t, state)
    return t


def apply_state(obj, state) -> None:
    """Set the Python attributes saved with a tensor (``torch._utils._set_obj_state``).

    Only plain instance attributes are accepted: a name that the class defines (a property
    such as ``requires_grad`` or ``data``, a method) or a dunder name is refused, so a file
    cannot reach into the tensor's machinery.
    """
    if state is None:
        return
    if isinstance(state, tuple):
        if len(state) != 2:
            raise UnpicklingError(f"Invalid serialized state: {_short(state, 200)}")
        parts = state
    else:
        parts = (state,)
    for part in parts:
        if not part:
            continue
        if not isinstance(part, dict):
            raise UnpicklingError(f"Invalid serialized state: {_short(part, 200)}")
        for k, v in part.items():
            if type(k) is not str or k.startswith("__") or hasattr(type(obj), k):
                raise UnpicklingError(
                    f"a checkpoint may not set the attribute {_short(k, 100)} of a {type(obj).__name__}"
                )
            obj.__dict__[k] = v


# -- small constructors for plain values -------------------------------------------------------


def _codecs_encode(text, encoding="utf-8"):
    # pickle protocol 2 writes bytes as _codecs.encode(latin-1 text, 'latin1')
    if type(text) is not str or encoding not in ("latin1", "latin-1", "utf-8", "utf8", "ascii"):
        raise UnpicklingError(
            f"_codecs.encode is only allowed on text, got {type(text).__name__}, {_short(encoding, 50)}"
        )
    return text.encode(encoding)


def _bytes(*args):
    if args:  # bytes(n) would allocate n bytes on the file's say-so
        raise UnpicklingError("builtins.bytes may only be called without arguments (b'')")
    return b""


def _bytearray(*args):
    if len(args) > 1 or (args and type(args[0]) is not bytes):
        raise UnpicklingError("builtins.bytearray may only be called on bytes")
    return bytearray(*args)


def _set(*args):
    if len(args) > 1 or (args and type(args[0]) not in (list, tuple)):
        raise UnpicklingError("builtins.set may only be called on a list")
    return set(*args)


def _complex(real=0.0, imag=0.0):
    if type(real) not in (int, float) or type(imag) not in (int, float):
        raise UnpicklingError("builtins.complex may only be called on numbers")
    return complex(real, imag)


def _counter(*args):
    if len(args) > 1 or (args and type(args[0]) is not dict):
        raise UnpicklingError("collections.Counter may only be called on a dict")
    return collections.Counter(*args)


def _ordered_dict(*args):
    if len(args) > 1 or (
        args and type(args[0]) not in (list, tuple, dict, collections.OrderedDict)
    ):
        raise UnpicklingError("collections.OrderedDict may only be called on a list of pairs")
    return collections.OrderedDict(*args)


def _size(values=()):
    return Size(_ints(tuple(values) if type(values) is list else values, "Size"))


def _device(kind, index=None):
    if type(kind) is not str or (index is not None and type(index) is not int):
        raise UnpicklingError(
            f"torch.device expects a string and an optional int, got {_short(kind, 50)}, {_short(index, 50)}"
        )
    from minitorch_nn._device import device

    return device(kind) if index is None else device(kind, index)


# -- the table ----------------------------------------------------------------------------------

ALLOWED_GLOBALS: dict[str, object] = {
    "collections.OrderedDict": collections.OrderedDict,
    "collections.Counter": collections.Counter,
    "builtins.set": set,
    "builtins.bytearray": bytearray,
    "builtins.complex": complex,
    "builtins.bytes": bytes,
    "_codecs.encode": _codecs_encode,
    "torch.Size": Size,
    "torch.device": _device,
    "torch.Tensor": Tensor,
    "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
    "torch._utils._rebuild_tensor": rebuild_tensor,
    "torch._utils._rebuild_meta_tensor_no_storage": rebuild_meta_tensor_no_storage,
    "torch._utils._rebuild_parameter": rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": rebuild_parameter_with_state,
    "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
}
for _d in dt.ALL_DTYPES:
    ALLOWED_GLOBALS[f"torch.{_d.name}"] = _d
for _d, _name in STORAGE_CLASS_NAME.items():
    ALLOWED_GLOBALS[f"torch.{_name}"] = StorageType(_d)
for _alias in ("half", "float", "double", "short", "int", "long"):
    ALLOWED_GLOBALS[f"torch.{_alias}"] = getattr(dt, _alias)

# What REDUCE / NEWOBJ may call, and the checked function each call really runs.
_CALLS = {
    collections.OrderedDict: _ordered_dict,
    collections.Counter: _counter,
    set: _set,
    bytearray: _bytearray,
    complex: _complex,
    bytes: _bytes,
    _codecs_encode: _codecs_encode,
    Size: _size,
    _device: _device,
    rebuild_tensor_v2: rebuild_tensor_v2,
    rebuild_tensor: rebuild_tensor,
    rebuild_meta_tensor_no_storage: rebuild_meta_tensor_no_storage,
    rebuild_parameter: rebuild_parameter,
    rebuild_parameter_with_state: rebuild_parameter_with_state,
    rebuild_from_type_v2: rebuild_from_type_v2,
}

# Names PyTorch's weights_only reader allows that have no minitorch_nn counterpart.
_TORCH_ONLY = {
    "_rebuild_qtensor": "quantized tensors",
    "_rebuild_sparse_tensor": "sparse tensors",
    "_rebuild_nested_tensor": "nested tensors",
    "_rebuild_wrapper_subclass": "tensor subclasses",
    "_rebuild_device_tensor_from_numpy": "tensors on other devices",
    "_rebuild_device_tensor_from_cpu_tensor": "tensors on other devices",
    "_rebuild_tensor_v3": "untyped storages",
    "_get_layout": "sparse layouts",
}
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")

# User-approved globals (add_safe_globals): name -> object.
USER_GLOBALS: dict[str, object] = {}


def global_name(obj) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', getattr(obj, '__name__', '?'))}"


# PyTorch's words around a refusal (``torch.load``'s ``UNSAFE_MESSAGE`` and ``_get_wo_message``).
UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a "
    "trusted source."
)
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
    "weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)
_LACKING = "is a PyTorch feature minitorch_nn does not have"


def weights_only_failure(message: str) -> str:
    """The text ``load`` raises when the restricted reader refuses a file: PyTorch's, which says
    whether ``weights_only=False`` could load it (it can run code) or ``add_safe_globals`` could."""
    if _LACKING in message:   # ours: no setting can load it
        return "Weights only load failed. " + message
    if "was not an allowed global by default." in message:
        text = (
            "Weights only load failed. This file can still be loaded, to do so you have two options, "
            "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
            f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
            "the recommended steps in the following error message.\n\tWeightsUnpickler error: " + message
        )
    else:
        text = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
        if "is blocked" not in message:
            text += (
                "Please file an issue with the following so that we can make "
                "`weights_only=True` compatible with your use case: WeightsUnpickler error: "
            )
        text += "\n\n" + message
    return text + _DOCS_MESSAGE


def _refuse(module: str, name: str) -> UnpicklingError:
    full = f"{module}.{name}"
    torch_feature = name in _TORCH_ONLY or (
        module == "torch" and (name.endswith("Storage") or name[:1].islower())
    )
    if module in _BLOCKED_MODULES or module.split(".")[0] in _BLOCKED_MODULES:
        detail = f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked."
    elif module.startswith("torch") and torch_feature:
        what = _TORCH_ONLY.get(name, "a dtype or storage it does not have")
        detail = (
            f"Unsupported global: GLOBAL {full} {_LACKING} ({what}). "
            "minitorch_nn loads dense tensors of dtypes bool, uint8, int8, int16, int32, int64, float16, "
            "bfloat16, float32 and float64."
        )
    else:
        short = full[len("builtins.") :] if full.startswith("builtins.") else full
        detail = (
            f"Unsupported global: GLOBAL {short} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{short}])` or the "
            f"`torch.serialization.safe_globals([{short}])` context manager to allowlist this global "
            "if you trust this class/function."
        )
    return UnpicklingError(detail)


# -- the unpickler --------------------------------------------------------------------------------


def _rejecting(code: int):
    def reject(self):
        name = _OPCODE_NAMES.get(code, "unknown")
        raise UnpicklingError(
            f"Unsupported operand {code} ({name}): this pickle opcode is not allowed in a checkpoint"
        )

    return reject


class CheckpointUnpickler(pickle._Unpickler):
    """Reads ``data.pkl``; ``storage_loader(dtype, key, location, numel)`` supplies storages."""

    def __init__(self, file, storage_loader, size=None):
        """``size``: the pickle's length in bytes, when known (it sets the hashing budget)."""
        super().__init__(file, encoding="utf-8")
        self._storage_loader = storage_loader
        # id(container) -> (container, nesting depth, hashing weight). The container is held so
        # that its id cannot be reused by another object while the pickle is read.
        self._shape_of: dict[int, tuple] = {}
        self._work_left = WORK_PER_BYTE * (size if size is not None else 1 << 24) + (1 << 20)

    def load(self):
        """``pickle._Unpickler.load``'s loop, counting opcodes against ``MAX_OPCODES``."""
        if not hasattr(self, "_file_read"):
            raise UnpicklingError("CheckpointUnpickler.__init__() was not called")
        unframer = pickle._Unframer(self._file_read, self._file_readline)
        self.read, self.readinto, self.readline = unframer.read, unframer.readinto, unframer.readline
        self._unframer = unframer
        self.metastack = []
        self.stack = []
        self.append = self.stack.append
        self.proto = 0
        read, dispatch = self.read, self.dispatch
        try:
            for _ in range(MAX_OPCODES):
                key = read(1)
                if not key:
                    raise EOFError
                dispatch[key[0]](self)
        except pickle._Stop as stop:
            return stop.value
        finally:
            self._shape_of.clear()
        raise UnpicklingError(
            f"the checkpoint's pickle runs more than {MAX_OPCODES} opcodes, more than any checkpoint "
            "needs: the file is damaged or crafted to keep the reader busy"
        )

    # -- nesting depth and hashing cost of the containers built so far ---------------------------
    def _shape(self, obj) -> tuple[int, int]:
        entry = self._shape_of.get(id(obj))
        if entry is not None and entry[0] is obj:
            return entry[1], entry[2]
        if type(obj) is int:
            return 0, 1 + obj.bit_length() // 64   # hashing a big int reads all its digits
        if type(obj) in _CONTAINERS:
            return 1, 1 + len(obj)   # a flat, small container (those get no entry, see below)
        return 0, 1

    def _note_container(self, obj, items) -> None:
        """Record ``obj``'s depth (1 + its deepest item) and weight; refuse too deep a nesting."""
        depth, weight = 0, 1
        for item in items:
            d, w = self._shape(item)
            if d > depth:
                depth = d
            weight += w
        depth += 1
        if depth > MAX_NESTING:
            raise UnpicklingError(
                f"the checkpoint's pickle nests containers more than {MAX_NESTING} deep, deeper than "
                "any checkpoint needs: the file is damaged or crafted (such nesting crashes "
                "Python's hashing)"
            )
        old = self._shape_of.get(id(obj))
        if old is not None and old[0] is obj:   # a list or dict that grew: keep the larger
            depth, weight = max(depth, old[1]), old[2] + weight - 1
        elif depth <= 1 and weight < 16:
            return   # flat and small (most containers): not worth an entry, read as (0, 1)
        self._shape_of[id(obj)] = (obj, depth, weight)

    def _charge_hash(self, *keys) -> None:
        """Count the cost of hashing ``keys`` (dict keys, set items, callables)."""
        for key in keys:
            self._work_left -= self._shape(key)[1]
        if self._work_left < 0:
            raise UnpicklingError(
                "the checkpoint's pickle hashes more data than its size allows (the same large "
                "key used over and over): the file is damaged or crafted to keep the reader busy"
            )

    def load_tuple(self):
        items = self.pop_mark()
        self._note_container(items, items)   # (pop_mark gives a list; check before building)
        t = tuple(items)
        self._shape_of.pop(id(items), None)
        self._note_container(t, items)
        self.append(t)

    def _load_small_tuple(self, n):
        items = self.stack[-n:]
        t = tuple(items)
        self._note_container(t, items)
        self.stack[-n:] = [t]

    def load_tuple1(self):
        self._load_small_tuple(1)

    def load_tuple2(self):
        self._load_small_tuple(2)

    def load_tuple3(self):
        self._load_small_tuple(3)

    def load_list(self):
        items = self.pop_mark()
        self._note_container(items, items)
        self.append(items)

    def load_dict(self):
        items = self.pop_mark()
        if len(items) % 2:
            raise UnpicklingError("DICT needs key/value pairs")
        self._charge_hash(*items[::2])
        d = {items[i]: items[i + 1] for i in range(0, len(items), 2)}
        self._note_container(d, items)
        self.append(d)

    def load_frozenset(self):
        items = self.pop_mark()
        self._charge_hash(*items)
        f = frozenset(items)
        self._note_container(f, items)
        self.append(f)

    def find_class(self, module, name):
        """The only way a checkpoint names Python objects; everything not on the allow-list fails.

        Rules: ``module`` and ``name`` must be ``str`` (else ``UnpicklingError("GLOBAL names must
        be text")``); for pickle protocols below 3 the Python 2 names are first mapped as pickle's
        ``fix_imports`` does (``_compat_pickle.NAME_MAPPING`` for the pair, else
        ``IMPORT_MAPPING`` for the module); then ``"module.name"`` is looked up in
        ``ALLOWED_GLOBALS`` (``torch.nn.parameter.Parameter`` is resolved late, with
        ``_parameter_class()``), then in ``USER_GLOBALS`` (``add_safe_globals``); nothing is ever
        imported, and a name found in neither raises ``_refuse(module, name)``.
        """
        # BEGIN SOLUTION serialization-allowlist
        if not isinstance(module, str) or not isinstance(name, str):
            raise UnpicklingError("GLOBAL names must be text")
        if self.proto < 3:  # Python 2 names, as pickle's fix_imports does (pure lookup tables)
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            elif module in _compat_pickle.IMPORT_MAPPING:
                module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        obj = ALLOWED_GLOBALS.get(full)
        if full == "torch.nn.parameter.Parameter":
            obj = _parameter_class()  # looked up late: nn imports after this module
        if obj is None:
            obj = USER_GLOBALS.get(full)
        if obj is None:
            raise _refuse(module, name)
        return obj
        # END SOLUTION

    def persistent_load(self, pid):
        # zip format: ('storage', storage_type, key, location, numel)
        # legacy format adds view_metadata: (view_key, offset, size) or None
        if (
            type(pid) is not tuple
            or len(pid) not in (5, 6)
            or pid[0] not in ("storage", b"storage")
        ):
            raise UnpicklingError(f"unsupported persistent id encountered: {_short(pid, 200)}")
        storage_type, key, location, numel = pid[1:5]
        if type(storage_type) is not StorageType:
            raise UnpicklingError(f"persistent id names {_short(storage_type, 100)}, not a storage type")
        if type(key) is not str or type(location) is not str or type(numel) is not int or numel < 0:
            raise UnpicklingError(f"malformed storage id {_short(pid, 200)}")
        if len(pid) == 6:
            view = pid[5]
            if view is not None and not (
                type(view) is tuple
                and len(view) == 3
                and type(view[0]) is str
                and all(type(v) is int and v >= 0 for v in view[1:])
            ):
                raise UnpicklingError(f"malformed storage view {_short(view, 200)}")
            return self._storage_loader(storage_type.dtype, key, location, numel, view)
        return self._storage_loader(storage_type.dtype, key, location, numel)

    # -- restricted opcodes ---------------------------------------------------------------------
    def _call(self, func, args):
        if type(args) is not tuple:
            raise UnpicklingError("REDUCE arguments must be a tuple")
        self._charge_hash(func)
        checked = _CALLS.get(func) if _hashable(func) else None
        if checked is None:
            if _user_allowed(func):
                return func(*args)
            raise UnpicklingError(f"Trying to call reduce for unrecognized function {_short(func, 100)}")
        return checked(*args)

    def load_reduce(self):
        args = self.stack.pop()
        result = self._call(self.stack[-1], args)
        self._note_container(result, (args,))   # (an OrderedDict or set made from its items)
        self.stack[-1] = result

    def load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        if cls is _parameter_class():
            if type(args) is not tuple or not 1 <= len(args) <= 2:
                raise UnpicklingError("nn.Parameter takes (data, requires_grad)")
            self.append(rebuild_parameter(args[0], args[1] if len(args) == 2 else True, None))
        elif isinstance(cls, type) and _user_allowed(cls):
            # an allowed class (a module saved whole, say): made without __init__, as pickle
            # and PyTorch do; its state comes next through BUILD (__setstate__)
            if type(args) is not tuple:
                raise UnpicklingError("NEWOBJ arguments must be a tuple")
            self.append(cls.__new__(cls, *args))
        else:
            self.append(self._call(cls, args))

    def load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is collections.OrderedDict:
            if not isinstance(state, dict) or not all(
                type(k) is str and not k.startswith("__") for k in state
            ):
                raise UnpicklingError(
                    "an OrderedDict's saved state must be a dict of attribute names"
                )
            inst.__dict__.update(state)
        elif _user_allowed(type(inst)):
            self.stack.append(state)   # pickle's own BUILD pops it again
            super().load_build()
        else:
            raise UnpicklingError(
                "Can only build OrderedDict or types allowlisted via `add_safe_globals`, "
                f"but got {type(inst)}"
            )

    def _target(self, kinds, opcode):
        target = self.stack[-1]
        if type(target) not in kinds:
            raise UnpicklingError(
                f"Can only {opcode} on {'/'.join(k.__name__ for k in kinds)}, but got {type(target)}"
            )
        return target

    def load_append(self):
        item = self.stack.pop()
        target = self._target((list,), "APPEND")
        self._note_container(target, (item,))
        target.append(item)

    def load_appends(self):
        items = self.pop_mark()
        target = self._target((list,), "APPENDS")
        self._note_container(target, items)
        target.extend(items)

    def load_setitem(self):
        value = self.stack.pop()
        key = self.stack.pop()
        target = self._target((dict, collections.OrderedDict, collections.Counter), "SETITEM")
        self._charge_hash(key)
        self._note_container(target, (key, value))
        target[key] = value

    def load_setitems(self):
        items = self.pop_mark()
        target = self._target((dict, collections.OrderedDict, collections.Counter), "SETITEMS")
        if len(items) % 2:
            raise UnpicklingError("SETITEMS needs key/value pairs")
        self._charge_hash(*items[::2])
        self._note_container(target, items)
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def load_additems(self):
        items = self.pop_mark()
        target = self._target((set,), "ADDITEMS")
        self._charge_hash(*items)
        self._note_container(target, items)
        target.update(items)

    # The dispatch table: every opcode byte rejects unless listed here.
    dispatch = {code: _rejecting(code) for code in range(256)}


_OPCODE_NAMES = {
    getattr(pickle, n)[0]: n
    for n in dir(pickle)
    if n.isupper() and isinstance(getattr(pickle, n), bytes) and len(getattr(pickle, n)) == 1
}


def _user_allowed(obj) -> bool:
    # by identity: ``in`` would call __eq__ of whatever object the pickle put there
    return any(obj is allowed for allowed in USER_GLOBALS.values())


def _hashable(obj) -> bool:
    try:
        hash(obj)
    except TypeError:
        return False
    return True


_SAFE_OPCODES = (
    # structure
    "MARK",
    "STOP",
    "POP",
    "POP_MARK",
    "DUP",
    "PROTO",
    "FRAME",
    "MEMOIZE",
    "PUT",
    "BINPUT",
    "LONG_BINPUT",
    "GET",
    "BINGET",
    "LONG_BINGET",
    # plain values
    "NONE",
    "NEWTRUE",
    "NEWFALSE",
    "INT",
    "BININT",
    "BININT1",
    "BININT2",
    "LONG",
    "LONG1",
    "LONG4",
    "FLOAT",
    "BINFLOAT",
    "STRING",
    "BINSTRING",
    "SHORT_BINSTRING",
    "UNICODE",
    "BINUNICODE",
    "SHORT_BINUNICODE",
    "BINUNICODE8",
    "BINBYTES",
    "SHORT_BINBYTES",
    "BINBYTES8",
    "EMPTY_TUPLE",
    "EMPTY_LIST",
    "EMPTY_DICT",
    "EMPTY_SET",
    # names and storages (through find_class / persistent_load above)
    "GLOBAL",
    "STACK_GLOBAL",
    "PERSID",
    "BINPERSID",
)
for _op in _SAFE_OPCODES:
    _code = getattr(pickle, _op)[0]
    CheckpointUnpickler.dispatch[_code] = pickle._Unpickler.dispatch[_code]
for _op, _fn in (
    ("REDUCE", CheckpointUnpickler.load_reduce),
    ("NEWOBJ", CheckpointUnpickler.load_newobj),
    ("BUILD", CheckpointUnpickler.load_build),
    ("APPEND", CheckpointUnpickler.load_append),
    ("APPENDS", CheckpointUnpickler.load_appends),
    ("SETITEM", CheckpointUnpickler.load_setitem),
    ("SETITEMS", CheckpointUnpickler.load_setitems),
    ("ADDITEMS", CheckpointUnpickler.load_additems),
    ("TUPLE", CheckpointUnpickler.load_tuple),
    ("TUPLE1", CheckpointUnpickler.load_tuple1),
    ("TUPLE2", CheckpointUnpickler.load_tuple2),
    ("TUPLE3", CheckpointUnpickler.load_tuple3),
    ("LIST", CheckpointUnpickler.load_list),
    ("DICT", CheckpointUnpickler.load_dict),
    ("FROZENSET", CheckpointUnpickler.load_frozenset),
):
    CheckpointUnpickler.dispatch[getattr(pickle, _op)[0]] = _fn
