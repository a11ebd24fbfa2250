"""``make cuda-check``: compile every cuda kernel for real GPUs, on a machine without one.

numba's CUDA simulator runs kernels as Python, so it cannot see what only the GPU compiler sees:
a kernel numba cannot *type* for the GPU (an atomic add on an 8-bit array, a device function
calling a plain Python helper...) passes every simulator test and fails on the first real launch.
This check asks numba to compile each kernel the backend registers, with the argument types its
launchers pass (``tests/cuda/kernel_signatures.py``), to PTX for compute capabilities 8.0 (A100)
and 9.0 (H100/H200). No GPU or driver is needed, only NVIDIA's compiler libraries:

1. NVVM (the compiler) and NVRTC come from NVIDIA's pip wheels, installed once into
   ``.cache/cuda-check/toolkit-cu<major>-<hash>/`` and reused by later runs (the CUDA major version
   is that of the ``cuda-bindings`` numba-cuda runs on; ``$CUDA_CHECK_CACHE`` moves the cache);
2. the signatures are compiled by a pool of worker processes (``-j``, default 2); each is typed and
   lowered to NVVM IR once, and NVVM makes PTX from it for each compute capability;
3. a signature that compiled is remembered in ``.cache/cuda-check/passed.txt`` under a hash of the
   source files it depends on (its kernel's module and the modules of the device functions it
   calls), the kernel, device function and argument types, the compute capability and the
   compiler versions, so a re-run compiles only what changed.

The first signature that does not compile stops the check with its kernel, argument types,
compute capability and numba's message, and a non-zero exit status.

    python tools/cuda_check.py [-j N] [--no-cache] [--keep-going] [--list]
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import os
import subprocess
import sys
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (CUDA_CHECK_CACHE moves it, e.g. outside a checkout that CI clones afresh)
CACHE = os.environ.get("CUDA_CHECK_CACHE") or os.path.join(ROOT, ".cache", "cuda-check")
COMPUTE_CAPABILITIES = ((8, 0), (9, 0))

# NVVM (with libdevice) and NVRTC, per CUDA major version: the wheels numba-cuda's own extras
# (``numba-cuda[cu12]`` / ``[cu13]``) install, without the runtime pieces a compile does not use.
# ``lib``: where the shared libraries land under the install folder; ``home``: the folder that
# plays CUDA_HOME (numba finds ``nvvm/libdevice`` under it).
TOOLKITS = {
    13: {"requirements": ["nvidia-nvvm==13.*", "nvidia-cuda-nvrtc==13.*"],
         "lib": ["nvidia/cu13/lib"], "home": "nvidia/cu13"},
    12: {"requirements": ["nvidia-cuda-nvcc-cu12==12.*", "nvidia-cuda-nvrtc-cu12==12.*"],
         "lib": ["nvidia/cuda_nvcc/nvvm/lib64", "nvidia/cuda_nvrtc/lib"], "home": "nvidia/cuda_nvcc"},
}


def _bindings_major() -> int:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return int(version("cuda-bindings").split(".")[0])
    except PackageNotFoundError:
        sys.exit('cuda-check: numba-cuda is not installed (pip install "minitorch-nn[cuda]")')


def ensure_toolkit() -> tuple[str, dict]:
    """Install NVVM and NVRTC into the cache (once per requirement set); return (folder, layout)."""
    major = _bindings_major()
    if major not in TOOLKITS:
        sys.exit(f"cuda-check: no NVVM/NVRTC wheels known for cuda-bindings {major}.x (known: {sorted(TOOLKITS)})")
    kit = TOOLKITS[major]
    key = hashlib.sha256(" ".join(kit["requirements"]).encode()).hexdigest()[:10]
    target = os.path.join(CACHE, f"toolkit-cu{major}-{key}")
    stamp = os.path.join(target, ".complete")
    if not os.path.exists(stamp):
        print(f"cuda-check: installing {' '.join(kit['requirements'])} into {os.path.relpath(target, ROOT)}", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--upgrade", "--target", target,
                        *kit["requirements"]], check=True)
        with open(stamp, "w") as f:
            f.write(" ".join(kit["requirements"]) + "\n")
    return target, kit


def use_toolkit(target: str, kit: dict) -> None:
    """Point numba at the cached libraries. The workers are fresh processes (``spawn``), so the
    dynamic loader sees this LD_LIBRARY_PATH; CUDA_HOME is where numba looks for libdevice."""
    libs = [os.path.join(target, d) for d in kit["lib"]]
    os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(libs + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p])
    os.environ["CUDA_HOME"] = os.path.join(target, kit["home"])
    os.environ.pop("CUDA_PATH", None)
    # compile for a GPU, not the simulator (an inherited setting would make every kernel "compile")
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    os.environ.pop("MINITORCH_NN_CUDA", None)


# -- the source hash of one signature ------------------------------------------------------------------


def _source_files(fn, seen=None) -> set:
    """The files whose text decides how ``fn`` compiles: its own, and those of the functions,
    device functions and modules it names (through its globals and closure), recursively."""
    seen = set() if seen is None else seen
    fn = getattr(fn, "py_func", fn)
    if not isinstance(fn, types.FunctionType) or fn in seen:
        return set()
    seen.add(fn)
    files = {fn.__code__.co_filename}
    names = set()
    stack = [fn.__code__]
    while stack:  # nested code objects (a lambda, a generator) name things too
        code = stack.pop()
        names.update(code.co_names)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    values = [fn.__globals__[n] for n in names if n in fn.__globals__]
    values += [c.cell_contents for c in (fn.__closure__ or ()) if _has_contents(c)]
    for v in values:
        if isinstance(v, types.ModuleType):
            if getattr(v, "__file__", None) and v.__name__.startswith("minitorch_nn"):
                files.add(v.__file__)
        elif isinstance(getattr(v, "py_func", v), types.FunctionType):
            files |= _source_files(v, seen)
    return files


def _has_contents(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018  (an empty cell raises)
    except ValueError:
        return False
    return True


def _versions() -> str:
    from importlib.metadata import version

    home = os.environ.get("CUDA_HOME")
    toolkit = os.path.relpath(home, CACHE) if home else "no toolkit"  # toolkit-cu13-<hash of its wheels>/...
    return f"numba-cuda {version('numba-cuda')} numba {version('numba')} {toolkit}"


def signature_key(entry, cc, file_hashes: dict) -> str:
    h = hashlib.sha256()
    for path in sorted(_source_files(entry.kernel)):
        if path not in file_hashes:
            with open(path, "rb") as f:
                file_hashes[path] = hashlib.sha256(f.read()).hexdigest()
        h.update(f"{os.path.relpath(path, ROOT)} {file_hashes[path]}\n".encode())
    h.update(f"{entry.name} {entry.device_function} {entry.signature_text} cc{cc[0]}{cc[1]} {_versions()}".encode())
    return h.hexdigest()


# -- the workers ------------------------------------------------------------------------------------------

_ENTRIES = None


def _worker_init():
    global _ENTRIES
    sys.path.insert(0, ROOT)
    from tests.cuda import kernel_signatures

    kernel_signatures.load_backend_for_compile()
    _ENTRIES = kernel_signatures.entries()


def _compile(task):
    """Compile one signature for each compute capability asked; return (index, [(cc, error)], seconds).

    numba types and lowers a kernel to NVVM IR once, then NVVM generates PTX for each compute
    capability. (numba-cuda's lowering looks at the compute capability only to choose between
    older-GPU fallbacks, below 7.5, so one lowering serves 8.0 and 9.0 alike.)"""
    index, ccs = task
    entry = _ENTRIES[index]
    py_func = getattr(entry.kernel, "py_func", entry.kernel)
    start = time.perf_counter()
    results = []
    try:
        from numba.cuda.compiler import _compile_pyfunc_with_fixup
    except ImportError:  # another numba-cuda: the public entry point, one full compile per capability
        from numba import cuda

        for cc in ccs:
            try:
                cuda.compile_ptx(py_func, entry.signature, cc=cc)
                results.append((cc, None))
            except Exception as e:  # any error is this kernel's failure to compile: report it
                results.append((cc, f"{type(e).__name__}: {e}"))
        return index, results, time.perf_counter() - start
    try:
        library, _ = _compile_pyfunc_with_fixup(py_func, entry.signature, device=False, cc=min(ccs), abi="numba")
    except Exception as e:
        return index, [(min(ccs), f"{type(e).__name__}: {e}")], time.perf_counter() - start
    for cc in ccs:
        try:
            library.get_asm_strs(cc=cc)
            results.append((cc, None))
        except Exception as e:
            results.append((cc, f"{type(e).__name__}: {e}"))
    return index, results, time.perf_counter() - start


# -- main -------------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", "--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--no-cache", action="store_true", help="compile every signature, even unchanged ones")
    parser.add_argument("--list", action="store_true", help="print the kernels and signatures, compile nothing")
    parser.add_argument("--keep-going", action="store_true", help="report every signature that fails, not only the first")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    os.makedirs(CACHE, exist_ok=True)
    target, kit = ensure_toolkit()
    use_toolkit(target, kit)

    sys.path.insert(0, ROOT)
    from tests.cuda import kernel_signatures

    kernel_signatures.load_backend_for_compile()
    entries = kernel_signatures.entries()
    if args.list:
        for e in entries:
            print(e.name, e.signature_text)
        print(f"{len(entries)} signatures of {len({e.kernel_id for e in entries})} kernels")
        return 0

    passed_file = os.path.join(CACHE, "passed.txt")
    passed = set()
    if not args.no_cache and os.path.exists(passed_file):
        with open(passed_file) as f:
            passed = set(f.read().split())
    file_hashes: dict = {}
    tasks, keys = [], {}
    for i, e in enumerate(entries):
        for cc in COMPUTE_CAPABILITIES:
            keys[i, cc] = signature_key(e, cc, file_hashes)
        todo = tuple(cc for cc in COMPUTE_CAPABILITIES if keys[i, cc] not in passed)
        if todo:
            tasks.append((i, todo))
    total = len(entries) * len(COMPUTE_CAPABILITIES)
    to_compile = sum(len(ccs) for _, ccs in tasks)
    print(f"cuda-check: {len(entries)} signatures of {len({e.kernel_id for e in entries})} kernels x "
          f"{len(COMPUTE_CAPABILITIES)} compute capabilities; {total - to_compile} unchanged since they last "
          f"compiled, {to_compile} to compile", flush=True)

    failures = []
    if tasks:
        jobs = max(1, min(args.jobs, len(tasks)))
        # spawn, not fork: fresh processes whose loader reads the LD_LIBRARY_PATH set above
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(jobs, initializer=_worker_init) as pool, open(passed_file, "a") as out:
            done = 0
            for index, results, _ in pool.imap_unordered(_compile, tasks, chunksize=4):
                for cc, error in results:
                    if error is None:
                        out.write(keys[index, cc] + "\n")  # a run cut short still keeps what it proved
                    else:
                        failures.append((entries[index], cc, error))
                done += 1
                if failures and not args.keep_going:
                    pool.terminate()
                    break
                if done % 100 == 0:
                    out.flush()
                    print(f"  {done}/{len(tasks)} signatures compiled ({time.perf_counter() - start:.0f} s)", flush=True)
    for e, cc, error in failures:
        print(f"\ncuda-check FAILED: kernel {e.name} does not compile for compute capability {cc[0]}.{cc[1]}\n"
              f"  argument types: {e.signature_text}   (tests/cuda/kernel_signatures.txt line {e.line})\n"
              f"  device function: {e.device_function}\n  numba: {error}", file=sys.stderr)
    if failures:
        return 1
    print(f"cuda-check: all {total} kernel signatures compile for compute capabilities "
          f"{', '.join(f'{a}.{b}' for a, b in COMPUTE_CAPABILITIES)} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
