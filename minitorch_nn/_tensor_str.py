"""How a tensor prints: ``repr(t)`` and ``str(t)``.

Mirrors ``torch/_tensor_str.py`` of PyTorch 2.13 and produces the same text
for strided (dense) tensors on cpu, meta and cuda, of dtypes bool,
the integer types, float16, bfloat16, float32, float64, complex64 and complex128.

How the text is built, step by step:

1. **Options.** ``PRINT_OPTS`` holds precision, threshold, edgeitems,
   linewidth and sci_mode. ``set_printoptions`` / ``get_printoptions`` /
   ``printoptions`` change and read them exactly like ``torch.*``.
2. **Summarising.** A tensor with more than ``threshold`` elements is
   *summarised*: along every dimension only the first and last
   ``edgeitems`` entries are shown and ``...`` stands for the rest.
3. **One formatter for the whole tensor.** ``_ElementFormatter`` looks at the
   values that will be on screen and picks one style and one column width:

   - integers and bools: ``str(value)``;
   - floats whose finite non-zero values are all whole numbers
     ("int mode"): ``1.``, ``-3.``;
   - floats that span a large range (max/min > 1000, max > 1e8 or
     min < 1e-4) use scientific notation ``1.0000e+09``, unless
     ``sci_mode`` forces it on or off;
   - other floats: fixed point with ``precision`` decimals, ``1.5000``.

   nan, inf and zeros never take part in that choice.

   A complex tensor gets two such formatters, one chosen from the real parts and one from the
   imaginary parts, and each element prints as ``real`` then ``imag`` with its sign and a ``j``:
   ``1.+2.j``, ``0.5000-1.2500j`` (:class:`_ComplexFormatter`).
4. **Layout.** Rows are wrapped so a line stays within ``linewidth``;
   n-d tensors nest brackets, with one blank line fewer between slices at
   each deeper level.
5. **Suffixes.** ``device=``, ``size=``, ``dtype=``, ``grad_fn=`` or
   ``requires_grad=True`` follow the data, moving to a new line when the
   current one would pass ``linewidth``.

All the arithmetic is done in numpy on the tensor's data (``t._array``):
half and bfloat16 values are widened to float64, which is exact, and then
formatted with Python's own float formatting, as PyTorch does through
``Tensor.tolist()``. Because no tensor operation runs while printing (only
``.cpu()`` for a cuda tensor), printing a subclass never re-enters its
``__torch_function__`` / ``__torch_dispatch__``; PyTorch's printer slices and
reshapes the tensor, so a logging subclass can recurse there.

Differences from PyTorch, on purpose or because minitorch_nn lacks the
feature: no sparse, quantized, nested, functorch or fp8 printing;
forward-mode AD tangents are not shown; the deprecated
``set_default_tensor_type`` (which can make PyTorch leave out
``device='cuda:0'``) does not exist here. The entry point keeps PyTorch's name, ``_str``, so
``Tensor.__repr__`` can call it the same way.

Example::

    >>> import minitorch_nn as torch
    >>> torch.tensor([1.0, 2.0])
    tensor([1., 2.])
    >>> with torch.printoptions(precision=2):
    ...     torch.tensor([1.12345])
    tensor([1.12])
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from minitorch_nn._tensor import _has_python_dispatch

__all__ = [
    "PRINT_OPTS",
    "get_printoptions",
    "printoptions",
    "set_printoptions",
]


# ---------------------------------------------------------------------------
# 1. Options
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class _PrintOptions:
    """The knobs read by the printer; the fields keep PyTorch's names and order."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

# The named presets accepted by ``set_printoptions(profile=...)``. A profile
# never touches sci_mode. An unknown profile name is ignored, as in PyTorch.
_PROFILES: dict[str, dict[str, Any]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Change how tensors print (same arguments as ``torch.set_printoptions``).

    Parameters
    ----------
    precision:
        Digits after the decimal point for floats (default 4).
    threshold:
        Tensors with more elements than this are summarised (default 1000).
    edgeitems:
        Entries kept at each end of every dimension when summarising (default 3).
    linewidth:
        Characters per line before wrapping (default 80).
    profile:
        ``"default"``, ``"short"`` or ``"full"``; applied first, so the other
        arguments override it.
    sci_mode:
        True or False forces scientific notation on or off; None lets the
        printer decide. Like PyTorch, *every* call sets this field, so leaving
        it out resets it to None.

    Example::

        >>> set_printoptions(threshold=5)
        >>> torch.arange(10)
        tensor([0, 1, 2,  ..., 7, 8, 9])
        >>> set_printoptions(profile="default")
    """
    if profile is not None:
        for name, value in _PROFILES.get(profile, {}).items():
            setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Return the current options as a dict that ``set_printoptions(**d)`` accepts."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Use other print options inside a ``with`` block, then restore the old ones.

    Takes the same keyword arguments as :func:`set_printoptions`.
    """
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# ---------------------------------------------------------------------------
# What printing needs from the rest of minitorch_nn, imported when first used (this module is
# loaded on the first print).
# ---------------------------------------------------------------------------


def _default_dtype_name() -> str:
    """``str(get_default_dtype())``, e.g. ``'torch.float32'``."""
    from minitorch_nn._dtype import get_default_dtype

    return str(get_default_dtype())


def _tensor_classes() -> tuple[type, type | None]:
    """The ``Tensor`` and ``Parameter`` classes (``None`` for Parameter while ``nn`` is not loaded).

    Parameter is looked up in ``sys.modules`` rather than imported: printing sits below ``nn``,
    and while ``nn.parameter`` is not loaded no tensor is a Parameter."""
    from minitorch_nn._tensor import Tensor

    parameter = sys.modules.get("minitorch_nn.nn.parameter")
    return Tensor, getattr(parameter, "Parameter", None)


def _numpy_data(tensor: Any) -> np.ndarray:
    """The tensor's values as a numpy array of the tensor's shape."""
    if tensor.device.type == "cpu":
        data = tensor._array
    else:
        data = tensor.cpu()._array
    data = np.asarray(data)
    shape = tuple(tensor.shape)
    if data.shape != shape:
        data = data.reshape(shape)
    return data


def _values_through_dispatch(tensor: Any) -> np.ndarray:
    """The values of a ``__torch_dispatch__`` subclass, read the way PyTorch's printer reads them.

    Such a tensor may have no storage (a ``_make_wrapper_subclass`` wrapper), so its values can
    only come from its handler. PyTorch's printer runs ops on it (``reshape``, ``masked_select``
    of the finite nonzero values, then formats each of those), and takes the numbers with
    ``item()`` (0-d) or ``tolist()``. Doing the same gives PyTorch's outcome: a 0-d tensor prints
    its value; an n-d one fails in ``tolist()`` ("not supported for tensor subclasses"), or
    earlier, when the handler returns subclass elements that cannot be formatted.
    """
    from minitorch_nn.autograd import grad_mode

    if tensor.dtype.is_floating_point:
        with grad_mode.no_grad():
            flat = tensor.reshape(-1)
        shown = flat.masked_select(flat.isfinite() & flat.ne(0))
        for value in shown:
            format(value, ".0f")
    if tensor.dim() == 0:
        return np.asarray(tensor.item())
    return np.asarray(tensor.tolist())


def _as_python(values: np.ndarray, is_floating: bool) -> list | int | float | bool:
    """numpy values -> Python numbers, as ``Tensor.tolist()`` would give them.

    Floats of every width are widened to float64 first; that is exact, and it
    is the value PyTorch formats too.
    """
    if is_floating:
        values = values.astype(np.float64)
    return values.tolist()


# ---------------------------------------------------------------------------
# 2. Summarising
# ---------------------------------------------------------------------------


def _kept_indices(length: int, summarize: bool) -> tuple[list[int], bool]:
    """Which entries of a dimension are printed, and whether a ``...`` goes between.

    Without summarising, all of them. With it, and when the dimension is
    longer than ``2 * edgeitems``, the first and last ``edgeitems``.
    """
    edge = PRINT_OPTS.edgeitems
    if summarize and length > 2 * edge:
        return list(range(edge)) + list(range(length - edge, length)), True
    return list(range(length)), False


def _values_on_screen(data: np.ndarray) -> np.ndarray:
    """The (flattened) values a summarised print shows; the formatter sees only these."""
    if data.ndim == 0:
        return data.reshape(1)
    if data.ndim >= 2 and not PRINT_OPTS.edgeitems:
        # Prints as "[...]": no values at all.
        return np.empty(0, dtype=data.dtype)
    kept, _ = _kept_indices(data.shape[0], summarize=True)
    if data.ndim == 1:
        return data[kept]
    return np.concatenate([_values_on_screen(data[i]) for i in kept])


# ---------------------------------------------------------------------------
# 3. One formatter for the whole tensor
# ---------------------------------------------------------------------------


class _ElementFormatter:
    """Chooses a style and a width from the values, then pads every element to it.

    Attributes
    ----------
    int_mode:
        Floats only: every finite non-zero value is a whole number, so print
        ``3.`` rather than ``3.0000``.
    sci_mode:
        Floats only: use ``{:.{precision}e}``.
    width:
        Column width; every element is right-aligned to it.
    """

    def __init__(self, values: np.ndarray, is_floating: bool) -> None:
        self.is_floating = is_floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        flat = values.reshape(-1)

        if not is_floating:
            for value in _as_python(flat, False):
                self.width = max(self.width, len(f"{value}"))
            return

        flat = flat.astype(np.float64)
        # nan, inf and zeros say nothing about the scale of the data.
        telling = flat[np.isfinite(flat) & (flat != 0)]
        if telling.size == 0:
            return  # keep int mode, no sci mode, width 1

        self.int_mode = bool(np.all(telling == np.ceil(telling)))

        smallest = float(np.abs(telling).min())
        largest = float(np.abs(telling).max())
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        precision = PRINT_OPTS.precision
        for value in telling.tolist():
            if self.sci_mode:
                shown = len(f"{value:.{precision}e}")
            elif self.int_mode:
                shown = len(f"{value:.0f}") + 1  # room for the trailing "."
            else:
                shown = len(f"{value:.{precision}f}")
            self.width = max(self.width, shown)

    def format(self, value: int | float | bool) -> str:
        """One element as text, right-aligned to ``self.width``."""
        if not self.is_floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."  # marks the tensor as floating point: "2."
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return text.rjust(self.width)


class _ComplexFormatter:
    """Formats complex elements with one :class:`_ElementFormatter` for the real parts and one for
    the imaginary parts, as PyTorch does.

    The real part is right-aligned to its formatter's width; the imaginary part is formatted to
    its own width, then left-stripped and joined with its sign (a ``+`` is added when the text has
    none), so ``-0.`` keeps its minus: ``1.-0.j``. ``width`` is what one element takes on a line
    (real width + imaginary width + the ``j``) and decides wrapping.
    """

    # elements reach ``format`` as Python complex numbers, never widened to float
    is_floating = False

    def __init__(self, values: np.ndarray) -> None:
        self.real = _ElementFormatter(values.real, True)
        self.imag = _ElementFormatter(values.imag, True)
        self.width = self.real.width + self.imag.width + 1

    def format(self, value: complex) -> str:
        real_text = self.real.format(value.real)
        imag_text = (self.imag.format(value.imag) + "j").lstrip()
        if imag_text[0] in "+-":
            return real_text + imag_text
        return real_text + "+" + imag_text


# ---------------------------------------------------------------------------
# 4. Layout
# ---------------------------------------------------------------------------


def _row_str(data: np.ndarray, indent: int, summarize: bool, formatter: _ElementFormatter | _ComplexFormatter) -> str:
    """A 1-d slice: ``[a, b, c]``, wrapped to fit the line width."""
    if summarize and not PRINT_OPTS.edgeitems:
        cells = ["..."]
    else:
        kept, gap = _kept_indices(data.shape[0], summarize)
        cells = [formatter.format(v) for v in _as_python(data[kept], formatter.is_floating)]
        if gap:
            cells.insert(PRINT_OPTS.edgeitems, " ...")

    # Every cell is followed by ", " (2 characters) on its line.
    cell_width = formatter.width + 2
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / cell_width))
    lines = [", ".join(cells[i : i + per_line]) for i in range(0, len(cells), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(
    data: np.ndarray, indent: int, summarize: bool, formatter: _ElementFormatter | _ComplexFormatter
) -> str:
    """Any-rank data as nested brackets; ``indent`` is the column of the first ``[``."""
    if data.ndim == 0:
        return formatter.format(_as_python(data, formatter.is_floating))
    if data.ndim == 1:
        return _row_str(data, indent, summarize, formatter)

    kept, gap = _kept_indices(data.shape[0], summarize)
    parts = [_nested_str(data[i], indent + 1, summarize, formatter) for i in kept]
    if gap:
        parts.insert(PRINT_OPTS.edgeitems, "...")
    # Slices of a 2-d tensor are on consecutive lines; each extra dimension
    # adds one blank line between slices.
    separator = "," + "\n" * (data.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


def _data_str(data: np.ndarray, indent: int, is_floating: bool) -> str:
    """The bracketed values of a non-empty tensor (no ``tensor(`` prefix or suffixes)."""
    if data.size == 0:
        return "[]"
    summarize = data.size > PRINT_OPTS.threshold
    shown = _values_on_screen(data) if summarize else data
    if np.iscomplexobj(data):
        formatter = _ComplexFormatter(shown)
    else:
        formatter = _ElementFormatter(shown, is_floating)
    return _nested_str(data, indent, summarize, formatter)


# ---------------------------------------------------------------------------
# 5. Suffixes and the entry point
# ---------------------------------------------------------------------------


def _join_suffixes(body: str, suffixes: list[str], indent: int) -> str:
    """Append ``, suffix`` items and the closing ``)``, wrapping past ``linewidth``."""
    pieces = [body]
    # PyTorch counts the current line one character long (two when ``body`` is
    # a single line); we keep that so the wrapping point is identical.
    line_length = len(body) - body.rfind("\n") + 1
    for suffix in suffixes:
        if line_length + len(suffix) + 2 > PRINT_OPTS.linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            line_length = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            line_length += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


def _forward_ad_tangent(tensor: Any) -> Any:
    """The tensor's forward-AD tangent when a dual level is active (``autograd/forward_ad.py``).

    Looked up in ``sys.modules`` rather than imported: printing sits below autograd, and
    without forward AD loaded there is no tangent to show."""
    forward_ad = sys.modules.get("minitorch_nn.autograd.forward_ad")
    if forward_ad is None or forward_ad._current_level < 0 or not hasattr(tensor, "_impl"):
        return None
    return forward_ad.get_tangent(tensor)


def _grad_suffix(tensor: Any) -> str | None:
    """``grad_fn=<Name>`` for a non-leaf, ``requires_grad=True`` for a leaf that needs grad."""
    try:
        grad_fn = tensor.grad_fn
    except RuntimeError:
        # PyTorch prints this when reading grad_fn itself fails.
        return "grad_fn=<Invalid>"
    if grad_fn is not None:
        name_method = getattr(grad_fn, "name", None)
        name = name_method() if callable(name_method) else type(grad_fn).__name__
        return f"grad_fn=<{name.rsplit('::', 1)[-1]}>"
    if tensor.requires_grad:
        return "requires_grad=True"
    return None


def _str(self: Any, *, tensor_contents: str | None = None) -> str:
    """The text of ``repr(tensor)``; ``Tensor.__repr__`` calls this.

    Works for subclasses: a plain ``Tensor`` or ``Parameter`` prints as
    ``tensor(...)``, any other class as ``ClassName(...)``, and a Parameter
    subclass is further wrapped in ``Parameter(...)``. (``Parameter``'s own
    ``__repr__`` adds the ``Parameter containing:`` line.)

    ``tensor_contents``, when given, replaces the printed data.
    """
    tensor_cls, parameter_cls = _tensor_classes()
    cls = type(self)
    is_plain = cls in (tensor_cls, parameter_cls) and cls is not None
    prefix = "tensor(" if is_plain else f"{cls.__name__}("
    indent = len(prefix)
    suffixes: list[str] = []

    # PyTorch compares with the default *tensor type*'s device, which is cpu
    # (set_default_device and ``with device(...)`` do not change it), so every
    # non-cpu tensor names its device.
    device = self.device
    if device.type != "cpu":
        suffixes.append(f"device='{device}'")

    dtype_name = str(self.dtype)
    default_dtype = _default_dtype_name()
    # dtypes a reader can infer from the printed values: the default float
    # dtype (values with a "."), its complex twin (values with a "j"), int64
    # (plain integers) and bool.
    default_complex = "torch.complex128" if default_dtype == "torch.float64" else "torch.complex64"
    dtype_is_implied = dtype_name in (default_dtype, default_complex, "torch.int64", "torch.bool")
    size_str = "size=" + str(tuple(self.shape))

    if device.type == "meta":
        # No data to show.
        suffixes.append(size_str)
        if dtype_name != default_dtype:
            suffixes.append(f"dtype={dtype_name}")
        body = "..."
    elif self.numel() == 0:
        # Empty: the shape is shown unless it is (0,), and the dtype unless it
        # is the default float dtype (there are no values to hint at it).
        if self.dim() != 1:
            suffixes.append(size_str)
        if dtype_name != default_dtype:
            suffixes.append(f"dtype={dtype_name}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(size_str)
        if not dtype_is_implied:
            suffixes.append(f"dtype={dtype_name}")
        body = None
        if tensor_contents is None:
            is_floating = bool(self.dtype.is_floating_point)
            if _has_python_dispatch(self):
                data = _values_through_dispatch(self)
            else:
                data = _numpy_data(self)
            body = _data_str(data, indent, is_floating)

    if tensor_contents is not None:
        body = tensor_contents

    grad_suffix = _grad_suffix(self)
    if grad_suffix is not None:
        suffixes.append(grad_suffix)
    tangent = _forward_ad_tangent(self)
    if tangent is not None:
        # PyTorch formats it with f"{tangent}", which shows a 0-d tangent as a bare number
        suffixes.append(f"tangent={tangent.item() if tangent.dim() == 0 else repr(tangent)}")

    text = _join_suffixes(prefix + body, suffixes, indent)

    if parameter_cls is not None and isinstance(self, parameter_cls) and not is_plain:
        text = f"Parameter({text})"
    return text
