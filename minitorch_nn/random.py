"""Random number generation compatible with PyTorch's CPU generator, bit for bit.

Mirrors ``torch.Generator`` (CPU), ``torch.random`` (``manual_seed``, ``seed``, ``initial_seed``,
``get_rng_state``, ``set_rng_state``, ``fork_rng``) and ``torch.default_generator``; underneath,
PyTorch's ``CPUGeneratorImpl`` (``aten/src/ATen/CPUGeneratorImpl.cpp``).

After ``manual_seed(s)`` the samplers below produce the same numbers as PyTorch 2.13 on CPU for the
same sequence of calls, and ``get_state()`` returns the same 5056 bytes as ``torch.get_rng_state()``,
so a state can be moved between the two libraries in either direction.

The pieces, each in its own file under ``_random/``:

* ``engine.py``: the Mersenne Twister, PyTorch's seeding and the saved-state byte layout;
* ``distributions.py``: how raw words become uniform, normal, integer, permutation, Bernoulli and
  exponential samples, including PyTorch's size-dependent fast paths;
* ``avx2_math.py`` and ``fpmath.py``: float32 Cephes math and fused multiply-adds, so that the
  vectorised ``normal_`` path rounds exactly as PyTorch's compiled AVX2 kernel does.

The tensor layer calls the underscore methods (``_uniform``, ``_normal``, ...); they return new
C-contiguous numpy arrays, and the public tensor functions (``rand``, ``randn``, ``randint``,
``randperm``, ``bernoulli``, ``Tensor.uniform_`` ...) wrap them.

Differences from PyTorch
------------------------
* CPU only. ``Generator("cuda")`` is refused: PyTorch's CUDA generator is a Philox counter-based
  generator with a different stream.
* ``bernoulli_(p)`` with a scalar ``p`` on Intel CPUs: PyTorch switches to MKL there; we always give
  the values PyTorch gives on other CPUs (see ``_random/distributions.py``).
* The default generator is seeded from ``os.urandom`` at import, as PyTorch seeds its own from
  ``/dev/urandom``; both report that seed through ``initial_seed()``.
* The reference is PyTorch's x86-64 build (whose float kernels are compiled for AVX2 with fused
  multiply-adds). PyTorch's own numbers on ARM (e.g. Apple silicon) differ in the last bits of some
  float samples; ours are the x86 numbers on every machine.
* No lock: PyTorch serialises draws on a generator with a mutex, we rely on callers not sharing one
  generator between threads.
* ``_normal(..., contiguous=False)`` must be asked for explicitly: PyTorch picks its element-by-element
  normal path when the tensor being filled is not contiguous, which the numpy level cannot see.
"""

from __future__ import annotations

import sys

import contextlib
import os

import numpy as np

from ._random import distributions as _dist
from ._random.engine import STATE_DTYPE as _STATE_DTYPE
from ._random.engine import STATE_SIZE as _STATE_SIZE
from ._random.engine import MT19937Engine
from ._random.engine import N as _N

__all__ = [
    "Generator",
    "default_generator",
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "fork_rng",
]

# PyTorch's seed for a freshly constructed torch.Generator() (default_rng_seed_val in c10)
_DEFAULT_SEED = 67280421310721
_U64 = 1 << 64


def _nondeterministic_seed() -> int:
    """64 random bits, like c10's ``getNonDeterministicRandom`` (which reads /dev/urandom)."""
    return int.from_bytes(os.urandom(8), "little")


def _unpack_seed(seed) -> int:
    """The checks of PyTorch's ``Generator.manual_seed``: an int (not a bool, not a float) in
    ``[-2**63, 2**64)``; negative values wrap to their two's-complement uint64."""
    if isinstance(seed, bool) or not (isinstance(seed, (int, np.integer))):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(1 << 63) <= seed < _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed % _U64


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(map(int, shape))


def _np_dtype(np_dtype) -> np.dtype:
    return np.dtype(np_dtype)


class Generator:
    """A CPU random number generator with PyTorch's stream (``torch.Generator``).

    Example::

        >>> g = Generator().manual_seed(0)
        >>> g._uniform((3,), np.float32)        # what torch.rand(3, generator=g) holds
        array([0.49625659, 0.7682218 , 0.08847743], dtype=float32)
    """

    def __init__(self, device="cpu") -> None:
        dev_type = getattr(device, "type", device)
        if dev_type is None:
            dev_type = "cpu"
        if not isinstance(dev_type, str) or dev_type.split(":")[0] != "cpu":
            raise RuntimeError(
                f"Generator: only 'cpu' generators are implemented in minitorch_nn, got device={device!r}"
            )
        try:  # a real device object when the core provides one; the plain string otherwise
            from ._device import device as _device_cls

            self.device = _device_cls("cpu")
        except Exception:  # pragma: no cover - only before the core exists
            self.device = "cpu"
        self._engine = MT19937Engine(_DEFAULT_SEED)
        # Box-Muller makes values in pairs; PyTorch keeps the spare one in the generator
        self._next_double_normal: float | None = None
        self._next_float_normal: np.float32 | None = None  # kept for the saved state only

    # ------------------------------------------------------------------ seeding
    def manual_seed(self, seed) -> Generator:
        """Seed with an int in ``[-2**63, 2**64)``; returns the generator itself."""
        self._set_seed(_unpack_seed(seed))
        return self

    def _set_seed(self, seed: int) -> None:
        self._engine.manual_seed(seed)
        self._next_double_normal = None
        self._next_float_normal = None

    def seed(self) -> int:
        """Re-seed from the operating system's randomness and return that seed."""
        s = _nondeterministic_seed()
        self._set_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed last set (all 64 bits, although only the low 32 reach the Mersenne Twister)."""
        return self._engine.seed

    # ------------------------------------------------------------------ state
    def _state_array(self) -> np.ndarray:
        left, nxt, key = self._engine.counters()
        st = np.zeros((), dtype=_STATE_DTYPE)
        st["the_initial_seed"] = self._engine.seed
        st["left"] = left
        st["seeded"] = 1
        st["next"] = nxt
        st["state"] = key.astype(np.uint64)
        if self._next_double_normal is not None:
            st["normal_is_valid"] = 1
            st["normal_y"] = self._next_double_normal
        if self._next_float_normal is not None:
            st["is_next_float_normal_sample_valid"] = 1
            st["next_float_normal_sample"] = self._next_float_normal
        return np.frombuffer(st.tobytes(), dtype=np.uint8).copy()

    def get_state(self):
        """The generator state as a uint8 tensor of 5056 bytes, identical to ``torch.get_rng_state()``."""
        from minitorch_nn import _dtype
        from minitorch_nn._tensor import _from_array

        return _from_array(self._state_array(), _dtype.uint8)

    def set_state(self, new_state) -> Generator:
        """Restore a state from :meth:`get_state` (ours or PyTorch's; a uint8 tensor or numpy array)."""
        raw = _state_bytes(new_state)
        st = np.frombuffer(raw.tobytes(), dtype=_STATE_DTYPE)[0]
        left, nxt, seeded = int(st["left"]), int(st["next"]) & 0xFFFFFFFF, int(st["seeded"])
        # at::mt19937::is_valid
        if not (seeded != 0 and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        key = (st["state"] & np.uint64(0xFFFFFFFF)).astype(
            np.uint32
        )  # std::copy narrows to 32 bits
        self._engine.set_counters(int(st["the_initial_seed"]), left, nxt, key)
        self._next_double_normal = float(st["normal_y"]) if int(st["normal_is_valid"]) else None
        self._next_float_normal = (
            np.float32(st["next_float_normal_sample"])
            if int(st["is_next_float_normal_sample_valid"])
            else None
        )
        return self

    def clone_state(self) -> Generator:
        """A new generator in the same state (``torch.Generator.clone_state``)."""
        return _rebuild_generator(self._state_array())

    def get_offset(self) -> int:
        raise RuntimeError("CPU Generator does not use offset")  # offsets belong to Philox (CUDA)

    def set_offset(self, offset) -> Generator:
        raise RuntimeError("CPU Generator does not use offset")

    def graphsafe_get_state(self):
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state):
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    def __reduce__(self):  # copy.deepcopy / pickle, as torch.Generator supports
        return (_rebuild_generator, (self._state_array(),))

    def __repr__(self) -> str:
        return f"<minitorch_nn.Generator object at {hex(id(self))}>"

    # ------------------------------------------------------------------ samplers (numpy level)
    def _uniform(self, shape, np_dtype, low=0.0, high=1.0) -> np.ndarray:
        """``rand`` / ``uniform_(low, high)``: floating dtypes."""
        return _dist.uniform(
            self._engine, _shape(shape), _np_dtype(np_dtype), float(low), float(high)
        )

    def _normal(self, shape, np_dtype, mean=0.0, std=1.0, contiguous=True) -> np.ndarray:
        """``randn`` / ``normal_(mean, std)``: floating dtypes.

        ``contiguous=False`` asks for the element-by-element path PyTorch takes when the tensor being
        filled is not contiguous (the values then differ from the contiguous case of the same size).
        """
        return _dist.normal(
            self, _shape(shape), _np_dtype(np_dtype), float(mean), float(std), contiguous
        )

    def _randint(self, shape, np_dtype, low, high) -> np.ndarray:
        """``randint(low, high)`` / ``random_(from, to)``: values in ``[low, high)``.

        ``high=None`` is ``random_(from, to=None)``: up to the dtype's largest value (all of int64
        when ``low == -2**63``)."""
        return _dist.randint(self._engine, _shape(shape), _np_dtype(np_dtype), low, high)

    def _random(self, shape, np_dtype) -> np.ndarray:
        """``random_()`` with no bounds: ``[0, 2**mantissa]`` for floats, ``[0, max]`` for integers."""
        return _dist.random_(self._engine, _shape(shape), _np_dtype(np_dtype))

    def _randperm(self, n, np_dtype) -> np.ndarray:
        """``randperm(n)``: a permutation of ``0 .. n-1``."""
        return _dist.randperm(self._engine, n, _np_dtype(np_dtype))

    def _bernoulli(self, shape, np_dtype, p) -> np.ndarray:
        """``bernoulli``: ``p`` a Python float (``bernoulli_(p)``) or an array broadcastable to
        ``shape`` (``torch.bernoulli(p_tensor)``); the array's dtype picks the precision, as in PyTorch."""
        return _dist.bernoulli(self._engine, _shape(shape), _np_dtype(np_dtype), p)

    def _exponential(self, shape, np_dtype, lambd=1.0) -> np.ndarray:
        """``exponential_(lambd)``."""
        return _dist.exponential(self._engine, _shape(shape), _np_dtype(np_dtype), lambd)


def _rebuild_generator(state: np.ndarray) -> Generator:
    g = Generator()
    g.set_state(state)
    return g


def _state_bytes(new_state) -> np.ndarray:
    """The uint8 payload of a state tensor, with PyTorch's type and size errors."""
    if isinstance(new_state, np.ndarray):
        arr = new_state
    elif hasattr(new_state, "numpy") and hasattr(new_state, "dtype"):
        # a minitorch_nn tensor, or a real torch.ByteTensor (handy to move states across)
        if hasattr(new_state, "detach"):
            new_state = new_state.detach()
        if str(getattr(new_state, "device", "cpu")).split(":")[0] != "cpu":
            raise TypeError("RNG state must be a torch.ByteTensor")
        arr = np.asarray(new_state.numpy())
    else:
        raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
    if arr.dtype != np.uint8:
        raise TypeError("RNG state must be a torch.ByteTensor")
    arr = np.ascontiguousarray(arr).reshape(-1)
    if arr.size != _STATE_SIZE:
        raise RuntimeError(
            f"Expected a CPUGeneratorImplState of size {_STATE_SIZE} but found the input RNG state size to be {arr.size}"
        )
    return arr


# ---------------------------------------------------------------------- the default generator
default_generator = Generator()
default_generator.seed()  # PyTorch seeds its default CPU generator from /dev/urandom at start-up
# The seed of the last manual_seed, for the cuda generator, which may load later.
_cuda_seed = None


def manual_seed(seed) -> Generator:
    """Seed the default generator (``torch.manual_seed``); returns it.

    Like PyTorch, the value goes through ``int()`` first, so ``manual_seed(1.7)`` means seed 1.
    """
    global _cuda_seed
    seed = int(seed)
    # PyTorch's manual_seed seeds every device. The cuda generator takes the seed now if the cuda
    # backend is loaded, else when it loads (it reads _cuda_seed), so seeding never imports numba.
    _cuda_seed = seed
    cuda_random = sys.modules.get("minitorch_nn.backends.cuda.random")
    if cuda_random is not None:
        cuda_random.manual_seed(seed)
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator non-deterministically and return the seed (``torch.seed``)."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's seed (``torch.initial_seed``)."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor (``torch.get_rng_state``)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the default generator's state (``torch.set_rng_state``)."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(
    devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"
):
    """Restore the default generator's state on exit (``torch.random.fork_rng``).

    Only the CPU generator exists here, so ``devices``/``device_type`` are accepted and ignored.
    """
    if not enabled:
        yield
        return
    state = default_generator._state_array()
    try:
        yield
    finally:
        default_generator.set_state(state)
