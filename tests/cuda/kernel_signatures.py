"""The cuda kernels and the argument types they are launched with: what ``make cuda-check`` compiles.

numba compiles a kernel once per *signature*, the numba types of its arguments, on its first launch
with them. ``kernel_signatures.txt`` lists, one line each, every signature the backend's launchers
pass (as the simulator tests launch them, plus the other dtypes a user can reach, such as every
storage dtype of a scatter). Its three columns:

* the kernel: ``module.function`` for a module-level ``@cuda.jit`` kernel, or
  ``module.factory.kernel`` for one built by a factory (``elementwise.make_zip.flat``); a factory
  gets the device function of the second column as ``fn`` and the dtype of the first array
  argument as ``np_dtype``;
* the device function the kernel applies (``elementwise.f_add``, or a parametrized one built by a
  factory with its parameters, ``activations.make_gelu(True)``), or ``-``;
* the argument types: ``f4[]`` is a contiguous 1-d float32 device array, ``i8[A]`` a 1-d int64
  array of any layout, ``f8`` a float64 scalar (``b1 i1 i2 i4 i8 u1 u2 u4 u8 f2 f4 f8``).

Three things keep the list honest, all checked without a GPU (``test_cuda_kernel_signatures.py``):
its kernels are exactly the ``@cuda.jit`` kernels in ``minitorch_nn/backends/cuda/`` (read from the
source, so a new kernel cannot be left out); its device functions include every ``f_*`` function
and ``make_*`` device-function factory there; and every kernel launch the simulator tests make is a
line of it (``tests/cuda/conftest.py`` records the launches).

``tools/cuda_check.py`` compiles each line for real GPUs. This module only builds the list; under
the simulator it builds the same kernels as simulator kernels (nothing is compiled).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
from dataclasses import dataclass

import numpy as np

BACKEND = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "minitorch_nn", "backends", "cuda")
TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel_signatures.txt")
PACKAGE = "minitorch_nn.backends.cuda"

# short type names <-> numba type names
_SCALARS = {"b1": "boolean", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64", "u1": "uint8",
            "u2": "uint16", "u4": "uint32", "u8": "uint64", "f2": "float16", "f4": "float32", "f8": "float64"}
_SHORT = {v: k for k, v in _SCALARS.items()} | {"bool": "b1"}


def load_backend_for_compile():
    """Import the backend as for a GPU, without one: kernels are created, nothing is launched."""
    import numba.cuda.dispatcher as dispatcher
    from numba import cuda

    from minitorch_nn.backends.cuda import _numba

    class _Device:  # nested device functions ask the current device for its compute capability
        compute_capability = (8, 0)

    dispatcher.get_current_device = lambda: _Device()
    _numba._state = (cuda, False, "")
    import minitorch_nn.backends.cuda  # noqa: F401  (registers every kernel)


# -- the types ---------------------------------------------------------------------------------------


def parse_type(token: str):
    """``f4[]`` / ``i8[A]`` / ``f8`` -> the numba type."""
    from numba.core import types

    name = token.split("[")[0]
    if name not in _SCALARS:
        raise ValueError(f"unknown type {token!r} in {TABLE}: use one of {' '.join(_SCALARS)}, with [] or [A] for arrays")
    scalar = getattr(types, _SCALARS[name])
    if token.endswith("[]"):
        return types.Array(scalar, 1, "C")
    if token.endswith("[A]"):
        return types.Array(scalar, 1, "A")
    return scalar


def type_token(ty) -> str:
    """The short name of a numba type, as the table writes it."""
    from numba.core import types

    if isinstance(ty, types.Array):
        if ty.ndim != 1:
            return f"{_SHORT.get(str(ty.dtype), str(ty.dtype))}[{ty.ndim}d{ty.layout}]"
        return f"{_SHORT.get(str(ty.dtype), str(ty.dtype))}[{'' if ty.layout == 'C' else 'A'}]"
    return _SHORT.get(str(ty), str(ty))


# -- names -------------------------------------------------------------------------------------------


def function_id(fn) -> str:
    """``module.qualname`` of a kernel or device function, relative to the backend package."""
    fn = getattr(fn, "py_func", fn)
    module = fn.__module__[len(PACKAGE) + 1:] if fn.__module__.startswith(PACKAGE + ".") else fn.__module__
    return f"{module}.{fn.__qualname__}"


def device_function_ids(kernel) -> tuple:
    """The device functions a factory baked into ``kernel`` (the compiled callables in its closure)."""
    fn = getattr(kernel, "py_func", kernel)
    ids = []
    for cell in fn.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if hasattr(value, "py_func") and value is not kernel:
            ids.append(function_id(value))
    return tuple(sorted(ids))


@dataclass
class Entry:
    name: str            # the table's kernel column
    device_function: str  # the table's second column
    kernel: object       # the numba kernel (a simulator kernel under the simulator)
    tokens: tuple        # the argument types as the table writes them
    line: int

    @property
    def signature(self):
        return tuple(parse_type(t) for t in self.tokens)

    @property
    def signature_text(self) -> str:
        return " ".join(self.tokens)

    @property
    def kernel_id(self) -> str:
        return function_id(self.kernel)

    @property
    def launch_key(self) -> tuple:
        """What a launch is compared by: kernel, its device functions, argument types."""
        return self.kernel_id, device_function_ids(self.kernel), self.tokens


# -- reading the table -------------------------------------------------------------------------------


def _device_function(spec: str):
    """``module.f_name`` or ``module.make_x(params...)`` -> the Python function."""
    if "(" in spec:
        path, args = spec.split("(", 1)
        module, name = path.rsplit(".", 1)
        params = ast.literal_eval(f"({args.rstrip(')')},)") if args.rstrip(")").strip() else ()
        return getattr(importlib.import_module(f"{PACKAGE}.{module}"), name)(*params)
    module, name = spec.rsplit(".", 1)
    return getattr(importlib.import_module(f"{PACKAGE}.{module}"), name)


def _kernel(name: str, device_fn, tokens):
    import numpy as np

    parts = name.split(".")
    module = importlib.import_module(f"{PACKAGE}.{parts[0]}")
    if len(parts) == 2:
        return getattr(module, parts[1])
    factory, inner = getattr(module, parts[1]), parts[2]
    params = inspect.signature(factory).parameters
    first_array = next(t for t in tokens if t.endswith("]"))
    kwargs = {}
    if "fn" in params:
        kwargs["fn"] = device_fn
    if "np_dtype" in params:
        kwargs["np_dtype"] = np.dtype(_SCALARS[first_array.split("[")[0]].replace("boolean", "bool"))
    made = factory(**kwargs)
    for k in made if isinstance(made, tuple) else (made,):
        if getattr(k, "py_func", k).__name__ == inner:
            return k
    raise ValueError(f"{name}: {parts[1]} builds no kernel named {inner!r}")


def entries(path: str = TABLE) -> list:
    """Every line of the table as an :class:`Entry` (the backend must be loaded)."""
    out = []
    with open(path) as f:
        for number, raw in enumerate(f, 1):
            text = raw.split("#", 1)[0].strip()
            if not text:
                continue
            name, device_spec, *tokens = text.split()
            try:
                device_fn = None if device_spec == "-" else _device_function(device_spec)
                for t in tokens:
                    parse_type(t)
                kernel = _kernel(name, device_fn, tokens)
            except Exception as e:
                raise ValueError(f"{path}:{number}: {text!r}: {type(e).__name__}: {e}") from e
            out.append(Entry(name, device_spec, kernel, tuple(tokens), number))
    return out


# -- what the backend's source defines ------------------------------------------------------------------


def _jit(decorator):
    """(is a ``@cuda.jit`` decorator, with ``device=True``)."""
    call = decorator if isinstance(decorator, ast.Call) else None
    target = call.func if call else decorator
    if not (isinstance(target, ast.Attribute) and target.attr == "jit"):
        return False, False
    device = any(k.arg == "device" and isinstance(k.value, ast.Constant) and k.value.value is True
                 for k in (call.keywords if call else []))
    return True, device


def _modules():
    for file in sorted(os.listdir(BACKEND)):
        if file.endswith(".py"):
            with open(os.path.join(BACKEND, file)) as f:
                yield file[:-3], ast.parse(f.read())


def source_kernels() -> set:
    """Every ``@cuda.jit`` kernel (not device function) defined in the backend's source, as
    ``module.qualname`` (a factory's kernel: ``module.factory.<locals>.kernel``)."""
    found = set()

    def walk(node, module, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef):
                qualname = prefix + child.name
                if any(j and not d for j, d in map(_jit, child.decorator_list)):
                    found.add(f"{module}.{qualname}")
                walk(child, module, qualname + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                walk(child, module, prefix + child.name + ".")
            else:
                walk(child, module, prefix)

    for module, tree in _modules():
        walk(tree, module, "")
    return found


def source_device_functions() -> set:
    """The elementwise device functions defined in the backend's source, by its convention: every
    module-level ``f_*`` function, and every module-level ``make_*`` factory that builds one (a
    ``make_*`` that builds kernels instead, such as ``make_zip``, is not one)."""
    found = set()
    for module, tree in _modules():
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            if node.name.startswith("f_"):
                found.add(f"{module}.{node.name}")
            elif node.name.startswith("make_"):
                builds_kernel = any(isinstance(n, ast.FunctionDef) and any(j for j, _ in map(_jit, n.decorator_list))
                                    for n in ast.walk(node) if n is not node)
                if not builds_kernel:
                    found.add(f"{module}.{node.name}")
    return found


def table_device_functions(table: list) -> set:
    """The device functions the table names (a factory by its name, without parameters)."""
    return {e.device_function.split("(")[0] for e in table if e.device_function != "-"}


# -- checking the simulator's launches against the table ------------------------------------------------


def table_line(key) -> str:
    """A launch key as a line of the table (a factory-made device function's parameters are left for
    the reader to fill in: any representative values)."""
    kernel_id, device_ids, tokens = key
    # module.f_x as it is; module.make_x.<locals>.f as module.make_x(...); a factory's own helper
    # (norms' block_sum) is implied by its kernel
    named = [d.replace(".<locals>.f", "(...)") for d in device_ids if ".<locals>." not in d or d.endswith(".<locals>.f")]
    device = ",".join(named) or "-"
    return f"{kernel_id.replace('.<locals>.', '.'):<48} {device:<58} {' '.join(tokens)}"


class LaunchRecorder:
    """Records every kernel launch the simulator makes: (kernel, its device functions, argument types).

    ``install()`` wraps the simulator's kernel call once per process; :meth:`unlisted` lists the
    launches since a mark that ``kernel_signatures.txt`` lacks.
    """

    def __init__(self):
        self.launches: list = []
        self._table_keys = None

    def install(self):
        from minitorch_nn.backends.cuda import _numba

        # numba.cuda picks the simulator or a GPU when first imported: let the backend choose first
        if not _numba.simulator():
            raise RuntimeError("the launch recorder needs the simulator (MINITORCH_NN_CUDA=sim)")
        import numba
        from numba.cuda.simulator import kernel as simulator_kernel

        original = simulator_kernel.FakeCUDAKernel.__call__
        recorder = self

        def call(kernel, *args):
            # a launch from the host (a device function's call inside a kernel is not one)
            if not kernel._device and not simulator_kernel._kernel_context:
                tokens = tuple(type_token(_gpu_type(numba, a)) for a in args)
                recorder.launches.append((function_id(kernel), device_function_ids(kernel), tokens))
            return original(kernel, *args)

        simulator_kernel.FakeCUDAKernel.__call__ = call
        return self

    def table_keys(self) -> set:
        if self._table_keys is None:
            self._table_keys = {e.launch_key for e in entries()}
        return self._table_keys

    def unlisted(self, since: int = 0) -> list:
        keys = self.table_keys()
        out = []
        for key in self.launches[since:]:
            if key not in keys and key not in out:
                out.append(key)
        return out


def _gpu_type(numba, arg):
    """The type numba gives ``arg`` when launching on a GPU. The simulator types an empty device
    array as any-layout (``A``), where a GPU's device array is contiguous (``C``): use the GPU's rule."""
    ary = getattr(arg, "_ary", None)
    if isinstance(ary, np.ndarray):
        broadcast = 0 in ary.strides and ary.size != 0
        layout = "C" if ary.flags["C_CONTIGUOUS"] and not broadcast else "F" if ary.flags["F_CONTIGUOUS"] and not broadcast else "A"
        return numba.types.Array(numba.from_dtype(ary.dtype), ary.ndim, layout)
    return numba.typeof(arg)


_RECORDER = None


def launch_recorder() -> LaunchRecorder:
    """The process's recorder, installed on first use (simulator only)."""
    global _RECORDER
    if _RECORDER is None:
        _RECORDER = LaunchRecorder().install()
    return _RECORDER


if __name__ == "__main__":  # print the table as numba reads it
    load_backend_for_compile()
    table = entries()
    for e in table:
        print(e.kernel_id, e.device_function, e.signature)
    print(f"{len(table)} signatures of {len({e.kernel_id for e in table})} kernels")
