"""The Mersenne Twister engine behind the CPU generator, and its saved-state format.

Mirrors PyTorch's ``at::mt19937`` (``aten/src/ATen/core/MT19937RNGEngine.h``) and the byte layout that
``CPUGeneratorImpl::get_state`` / ``set_state`` (``aten/src/ATen/CPUGeneratorImpl.cpp``) use for
``torch.get_rng_state()``.

How it works here
-----------------
The raw 32-bit stream is the textbook MT19937 (Matsumoto & Nishimura, 2002): 624 words of state,
"twisted" all at once every 624 outputs, each output "tempered" before use. numpy ships exactly that
engine as ``np.random.MT19937``; its ``random_raw(n)`` hands back ``n`` tempered words at C speed, so
we keep one numpy bit generator as the engine and only do the bookkeeping PyTorch adds on top.

Where PyTorch differs from numpy's bit generator
------------------------------------------------
* Seeding. PyTorch takes a 64-bit seed, remembers all 64 bits (``initial_seed()``) but feeds only the
  low 32 bits to the classic ``init_genrand`` recurrence. numpy's ``MT19937(seed)`` hashes the seed
  through ``SeedSequence`` instead, so we compute the 624 words ourselves and install them.
* Position. numpy keeps one index ``pos`` (twist when it reaches 624). PyTorch keeps two counters,
  ``left`` (outputs before the next twist, plus one) and ``next`` (index of the next word). After any
  draw they satisfy ``left + next == 625``, but a freshly seeded engine is ``left=1, next=0`` (twist
  on the first draw, like numpy's ``pos=624``). We store ``next`` separately for that one case so that
  the saved bytes match PyTorch's exactly.
* A hand-made state whose ``left``/``next`` break that rule is still legal for PyTorch (it only
  checks ``0 < left <= 624`` and ``next <= 624``): it then returns ``left - 1`` words starting at
  ``next`` before twisting. We reproduce that by pre-computing those words into a small queue.

Saved-state layout (5056 bytes, native byte order, zero padding)
----------------------------------------------------------------
======  =====  ===============================================================
offset  type   field
======  =====  ===============================================================
0       u64    the_initial_seed
8       i32    left
12      i32    seeded (1)
16      u64    next
24      u64    state[624]  (each 32-bit word widened to 64 bits)
5016    f64    normal_x    (unused, always 0)
5024    f64    normal_y    (the cached double normal sample)
5032    f64    normal_rho  (unused, always 0)
5040    i32    normal_is_valid
5048    f32    next_float_normal_sample
5052    u8     is_next_float_normal_sample_valid
======  =====  ===============================================================
"""

from __future__ import annotations

import numpy as np

N = 624  # words of state
STATE_SIZE = 5056  # sizeof(CPUGeneratorImplState) on every 64-bit platform PyTorch supports

# numpy structured dtype that *is* the C struct: reading/writing a field is one assignment, and
# np.zeros gives the zeroed padding bytes PyTorch's value-initialised struct has.
_STATE_FIELDS = [  # (name, numpy format, byte offset): the C struct, field by field
    ("the_initial_seed", "=u8", 0),
    ("left", "=i4", 8),
    ("seeded", "=i4", 12),
    ("next", "=u8", 16),
    ("state", ("=u8", N), 24),
    ("normal_x", "=f8", 5016),
    ("normal_y", "=f8", 5024),
    ("normal_rho", "=f8", 5032),
    ("normal_is_valid", "=i4", 5040),
    ("next_float_normal_sample", "=f4", 5048),
    ("is_next_float_normal_sample_valid", "u1", 5052),
]
STATE_DTYPE = np.dtype(
    {
        "names": [f[0] for f in _STATE_FIELDS],
        "formats": [f[1] for f in _STATE_FIELDS],
        "offsets": [f[2] for f in _STATE_FIELDS],
        "itemsize": STATE_SIZE,
    }
)

_TEMPER_B = 0x9D2C5680
_TEMPER_C = 0xEFC60000


def init_genrand(seed32: int) -> np.ndarray:
    """The 624 state words for a 32-bit seed (Knuth's multiplier 1812433253, as in mt19937ar.c)."""
    words = [0] * N
    s = seed32 & 0xFFFFFFFF
    words[0] = s
    for j in range(1, N):
        s = (1812433253 * (s ^ (s >> 30)) + j) & 0xFFFFFFFF
        words[j] = s
    return np.array(words, dtype=np.uint32)


def temper(y: np.ndarray) -> np.ndarray:
    """MT19937's output transform, vectorised (used only for the rare hand-made states)."""
    y = y.astype(np.uint32)
    y ^= y >> np.uint32(11)
    y ^= (y << np.uint32(7)) & np.uint32(_TEMPER_B)
    y ^= (y << np.uint32(15)) & np.uint32(_TEMPER_C)
    y ^= y >> np.uint32(18)
    return y


class MT19937Engine:
    """PyTorch's ``at::mt19937`` on top of numpy's bit generator.

    ``random(n)`` / ``random64(n)`` are the vectorised forms of ``CPUGeneratorImpl::random()`` and
    ``random64()``: ``random64`` glues two consecutive words, the first one as the high half.
    """

    __slots__ = ("_bitgen", "seed", "_fresh_next", "_queue", "_queue_next")

    def __init__(self, seed: int = 5489) -> None:
        # Any seed will do here: manual_seed overwrites the whole state right after.
        self._bitgen = np.random.MT19937(0)
        self.manual_seed(seed)

    # -- seeding -----------------------------------------------------------------------------
    def manual_seed(self, seed: int) -> None:
        self.seed = seed  # the full 64-bit value, reported by initial_seed()
        self._install(init_genrand(seed & 0xFFFFFFFF), pos=N)
        self._fresh_next = 0  # PyTorch reports next=0 until the first draw after seeding
        self._queue = None
        self._queue_next = 0

    def _install(self, key: np.ndarray, pos: int) -> None:
        self._bitgen.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}

    # -- drawing -----------------------------------------------------------------------------
    def random(self, n: int) -> np.ndarray:
        """``n`` raw 32-bit outputs as a uint32 array."""
        n = int(n)
        if n <= 0:  # an empty tensor draws nothing and leaves every counter alone
            return np.empty(0, dtype=np.uint32)
        self._fresh_next = None
        if self._queue is not None:
            return self._from_queue(n)
        return self._bitgen.random_raw(n).astype(np.uint32)

    def random64(self, n: int) -> np.ndarray:
        """``n`` 64-bit values, each made of two consecutive words (first = high 32 bits)."""
        w = self.random(2 * int(n)).astype(np.uint64)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    def _from_queue(self, n: int) -> np.ndarray:
        q = self._queue
        take = q[:n]
        rest = q[n:]
        self._queue_next += len(take)
        if len(rest):
            self._queue = rest
            return take.copy()
        self._queue = None
        more = self._bitgen.random_raw(n - len(take)).astype(np.uint32)
        return np.concatenate([take, more])

    # -- state -------------------------------------------------------------------------------
    def counters(self) -> tuple[int, int, np.ndarray]:
        """(left, next, state words) exactly as PyTorch's engine would hold them now."""
        st = self._bitgen.state["state"]
        key = np.asarray(st["key"], dtype=np.uint32)
        if self._queue is not None:
            return len(self._queue) + 1, self._queue_next, key
        pos = int(st["pos"])
        if pos == N:
            return 1, (N if self._fresh_next is None else self._fresh_next), key
        return N + 1 - pos, pos, key

    def set_counters(self, seed: int, left: int, nxt: int, key: np.ndarray) -> None:
        """Install a state that PyTorch's ``is_valid`` accepts (0 < left <= 624, next <= 624)."""
        self.seed = seed
        self._queue = None
        self._queue_next = 0
        self._fresh_next = None
        key = np.ascontiguousarray(key, dtype=np.uint32)
        if left == 1:
            # the next draw twists, whatever `next` says; remember it only to save it back unchanged
            self._install(key, pos=N)
            self._fresh_next = nxt
        elif left + nxt == N + 1:
            self._install(key, pos=nxt)
        else:
            # Irregular but legal: PyTorch hands out left-1 words from key[next:] and then twists
            # the (unchanged) array. Words past the end are read out of bounds in C++; we refuse that.
            count = left - 1
            if nxt + count > N:
                raise RuntimeError("Invalid mt19937 state")
            self._install(key, pos=N)
            self._queue = temper(key[nxt : nxt + count])
            self._queue_next = nxt
