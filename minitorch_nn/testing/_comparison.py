"""``assert_close`` and ``make_tensor``: mirrors ``torch/testing/_comparison.py`` and
``torch/testing/_creation.py``.

``assert_close(actual, expected)`` checks shape, device, dtype (and optionally strides) first,
then the values with ``|actual - expected| <= atol + rtol * |expected|``. When ``rtol`` and
``atol`` are omitted they come from the dtype, with PyTorch's table (float32: ``rtol=1.3e-6,
atol=1e-5``; integers and bool: exact). A failure raises ``AssertionError`` with PyTorch's
message: how many elements differ and the greatest absolute and relative difference with its
index, so a student sees *where* their result first goes wrong.

Where we differ from PyTorch: the comparison works through numpy and duck typing, so it accepts
minitorch_nn tensors, torch tensors, numpy arrays, Python scalars and (nested) sequences of
them, and this file imports nothing from minitorch_nn (a grader can load it on its own, out of
reach of a student's copy). Complex values compare as PyTorch compares them, by the size of the
difference ``|actual - expected|``. No sparse or quantized tensors; ``make_tensor`` draws from
numpy's generator, not PyTorch's, so its values differ from ``torch.testing.make_tensor``'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

try:  # bfloat16 as a numpy dtype
    import ml_dtypes

    _BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    _BF16 = None

# (rtol, atol) by dtype name, PyTorch's defaults; every other dtype compares exactly.
DTYPE_PRECISIONS = {
    "float16": (0.001, 1e-5),
    "bfloat16": (0.016, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def default_tolerances(*dtypes) -> tuple[float, float]:
    """The loosest (rtol, atol) of ``dtypes`` (names or dtype objects), as PyTorch picks them."""
    pairs = [DTYPE_PRECISIONS.get(_dtype_name(d), (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "").replace("minitorch_nn.", "")


def _is_tensor_like(x) -> bool:
    return hasattr(x, "detach") and hasattr(x, "dtype") and hasattr(x, "shape")


class _Value:
    """One side of a comparison: values as numpy plus the attributes that are checked."""

    def __init__(self, x):
        self.tensor = _is_tensor_like(x)
        self.scalar = isinstance(x, (bool, int, float)) and not self.tensor
        if self.tensor:
            t = x.detach()
            self.dtype_obj = t.dtype
            self.dtype = _dtype_name(t.dtype)
            self.device = str(getattr(t, "device", "cpu"))
            self.shape = t.shape
            self.stride = t.stride() if hasattr(t, "stride") else None
            if self.device == "meta":
                raise NotImplementedError("assert_close cannot compare meta tensors: they hold no values")
            if self.device != "cpu":
                t = t.cpu()
            if self.dtype == "bfloat16":
                self.array = t.float().numpy().astype(_BF16)
            else:
                self.array = np.asarray(t.numpy())
        else:
            self.array = np.asarray(x)
            self.dtype_obj = self.array.dtype
            self.dtype = "bfloat16" if self.array.dtype == _BF16 else str(self.array.dtype)
            self.device = "cpu"
            self.shape = self.array.shape
            self.stride = None


def _raise_attr(name, actual, expected):
    raise AssertionError(f"The values for attribute '{name}' do not match: {actual} != {expected}.")


def _diff_line(kind, diff, idx, tol, equality):
    line = f"{kind.title()} difference: {diff}" if idx is None else f"Greatest {kind} difference: {diff} at index {idx}"
    return line if equality else f"{line} (up to {tol} allowed)"


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0
    lines = [f"{identifier} are not {'equal' if equality else 'close'}!", ""]
    if extra:
        lines.append(extra)
    lines.append(_diff_line("absolute", abs_diff, abs_idx, atol, equality))
    lines.append(_diff_line("relative", rel_diff, rel_idx, rtol, equality))
    return "\n".join(lines)


def _isclose(a, b, rtol, atol, equal_nan):
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        return a.astype(np.int64) == b.astype(np.int64)
    wide = np.complex128 if a.dtype.kind == "c" or b.dtype.kind == "c" else np.float64
    a64, b64 = a.astype(wide), b.astype(wide)
    with np.errstate(invalid="ignore", over="ignore"):
        close = (a64 == b64) | (np.abs(a64 - b64) <= atol + rtol * np.abs(b64))
    close &= np.isfinite(a64) | (a64 == b64)
    if equal_nan:
        close |= np.isnan(a64) & np.isnan(b64)
    return close


def _compare_values(actual, expected, rtol, atol, equal_nan, msg):
    a, b = actual.array, expected.array
    matches = _isclose(a, b, rtol, atol, equal_nan)
    if matches.all():
        return
    if msg is not None:
        raise AssertionError(msg)
    if a.ndim == 0:
        av, bv = a.item(), b.item()
        abs_diff = abs(av - bv)
        rel_diff = float("inf") if bv == 0 else abs_diff / abs(bv)
        raise AssertionError(_mismatch_msg("Scalars", f"Expected {bv} but got {av}.", abs_diff, None, atol, rel_diff, None, rtol))
    n = matches.size
    bad = n - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    af, bf, mf = a.reshape(-1), b.reshape(-1), matches.reshape(-1)
    floating = a.dtype.kind in "fc" or a.dtype == _BF16
    if not floating:  # integers and bools: differences in int64, relative ones in float32 (as PyTorch)
        af, bf = af.astype(np.int64), bf.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(af - bf)
        abs_diff[mf] = 0
        rel_diff = abs_diff / np.abs(bf) if floating else (abs_diff / np.abs(bf)).astype(np.float32)
        rel_diff[mf] = 0
    abs_i, rel_i = _argmax_nan(abs_diff), _argmax_nan(rel_diff)
    unravel = lambda i: tuple(int(k) for k in np.unravel_index(i, a.shape))
    raise AssertionError(
        _mismatch_msg("Tensor-likes", extra, abs_diff[abs_i].item(), unravel(abs_i), atol,
                      float(rel_diff[rel_i]), unravel(rel_i), rtol)
    )


def _argmax_nan(x):
    # torch.max propagates NaN and reports its index; numpy's argmax returns the first NaN too
    return int(np.argmax(x.astype(np.float64) if x.dtype == _BF16 else x))


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Assert that ``actual`` and ``expected`` are close (see the module docstring).

    ``actual`` and ``expected`` may be tensors (of minitorch_nn or PyTorch), numpy arrays, Python
    scalars, or sequences/mappings of them compared item by item. Give both ``rtol`` and ``atol``
    or neither; ``msg`` replaces the generated message.
    """
    if (rtol is None) ^ (atol is None):
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {'rtol' if rtol is None else 'atol'}."
        )
    opts = (rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg)
    _assert_close(actual, expected, "", opts)


def _is_seq(x):
    return isinstance(x, Sequence) and not isinstance(x, str) and not _is_tensor_like(x)


def _assert_close(actual, expected, path, opts):
    """Compare recursively; ``path`` (e.g. ``"[0]['w']"``) names the item in the failure message."""
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise AssertionError(
                f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                f"{sorted(map(str, set(expected) - set(actual)))}\nAdditional keys in the actual mapping: "
                f"{sorted(map(str, set(actual) - set(expected)))}"
            )
        for key in expected:
            _assert_close(actual[key], expected[key], f"{path}[{key!r}]", opts)
        return
    if _is_seq(actual) and _is_seq(expected):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _assert_close(a, e, f"{path}[{i}]", opts)
        return
    try:
        _compare_one(actual, expected, *opts)
    except AssertionError as err:
        if not path:
            raise
        raise AssertionError(f"{err}\n\nThe failure occurred for item {path}") from None


def _compare_one(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg):
    if type(actual) is not type(expected) and not (_is_tensor_like(actual) and _is_tensor_like(expected)):
        # a tensor may be compared with a numpy array (an oracle's result), numbers with numbers
        both_numbers = all(_is_tensor_like(x) or isinstance(x, (bool, int, float, np.ndarray, np.generic))
                           for x in (actual, expected))
        if not both_numbers:
            raise TypeError(
                f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}."
            )
    a, e = _Value(actual), _Value(expected)
    if a.scalar and e.scalar and type(actual) is not type(expected):
        raise AssertionError(f"The values for attribute 'type' do not match: {type(actual)} != {type(expected)}.")
    if tuple(a.shape) != tuple(e.shape):
        _raise_attr("shape", a.shape, e.shape)
    if check_device and a.device != e.device:
        _raise_attr("device", a.device, e.device)
    if check_dtype and a.dtype != e.dtype:
        _raise_attr("dtype", a.dtype_obj, e.dtype_obj)
    if check_stride and a.stride is not None and e.stride is not None and tuple(a.stride) != tuple(e.stride):
        _raise_attr("stride()", a.stride, e.stride)
    if rtol is None:
        if a.scalar:  # Python scalars compare with float64's tolerances (ints exactly)
            rtol, atol = (1e-7, 1e-7) if isinstance(actual, float) else (0.0, 0.0)
        else:
            rtol, atol = default_tolerances(a.dtype, e.dtype)
    if not check_dtype and a.array.dtype != e.array.dtype:
        common = np.promote_types(a.array.dtype.newbyteorder("="), e.array.dtype) if _BF16 not in (a.array.dtype, e.array.dtype) else np.float32
        a.array, e.array = a.array.astype(common), e.array.astype(common)
    _compare_values(a, e, rtol, atol, equal_nan, msg)


# -- make_tensor ---------------------------------------------------------------------------------

_rng = np.random.default_rng(0)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` filled with random values from ``[low, high)`` (mirrors
    ``torch.testing.make_tensor``).

    Defaults: floats in ``[-9, 9)``, signed integers in ``[-9, 10)``, ``uint8`` in ``[0, 10)``,
    bools either value. ``noncontiguous=True`` returns a strided slice of a bigger storage (same
    values, every other element), so kernels that assume contiguity are caught.
    ``exclude_zero=True`` replaces zeros by the dtype's smallest positive step (or 1).
    """
    import minitorch_nn as mt

    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    name = _dtype_name(dtype)
    if low is not None and high is not None and low > high:
        raise ValueError(f"`low` must be less than or equal to `high`, but got {low} > {high}")
    for bound, what in ((low, "low"), (high, "high")):
        if bound is not None and isinstance(bound, float) and math.isnan(bound):
            raise ValueError(f"`{what}` cannot be NaN, but got {what}={bound}")
    n = int(np.prod(shape, dtype=np.int64))
    if name == "bool":
        arr = _rng.integers(0, 2, n).astype(bool)
    elif name in ("uint8", "int8", "int16", "int32", "int64"):
        lo = (0 if name == "uint8" else -9) if low is None else math.ceil(low)
        hi = 10 if high is None else math.ceil(high) if high != low else int(high) + 1
        arr = _rng.integers(lo, max(hi, lo + 1), n)
        if exclude_zero:
            arr[arr == 0] = 1
    elif name in DTYPE_PRECISIONS:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        arr = _rng.uniform(lo, hi, n) if hi > lo else np.full(n, lo)
        if name.startswith("complex"):  # real and imaginary parts each from [low, high)
            arr = arr + 1j * (_rng.uniform(lo, hi, n) if hi > lo else np.full(n, lo))
        if exclude_zero:
            tiny = {"float16": 2**-10, "bfloat16": 2**-7}.get(name, float(np.finfo(name).eps))
            arr[arr == 0] = tiny
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor()."
                        " To request support, file an issue at: https://github.com/pytorch/pytorch/issues")
    arr = arr.reshape(shape)
    t = mt.tensor(arr.astype(np.float32 if name == "bfloat16" else name), device=device)
    if name == "bfloat16":
        t = t.to(mt.bfloat16)
    if noncontiguous and t.numel() > 1:
        # the same values at every other element of a storage twice as long
        t = t.repeat_interleave(2, dim=-1)[..., 1::2] if hasattr(t, "repeat_interleave") else _spread(mt, t)
    if memory_format is not None and hasattr(t, "contiguous"):
        t = t.contiguous(memory_format=memory_format)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _spread(mt, t):
    big = mt.empty(tuple(t.shape[:-1]) + (2 * t.shape[-1],), dtype=t.dtype, device=t.device)
    view = big[..., 1::2]
    view.copy_(t)
    return view
