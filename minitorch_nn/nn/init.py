"""``nn.init``: filling parameters with initial values (mirrors ``torch/nn/init.py``).

Every function writes into its tensor in place, without recording autograd history, and draws
its random numbers with the same calls PyTorch makes (``uniform_``, ``normal_``, ...) with the
same arguments computed the same way in double precision. Because minitorch_nn's generator is
PyTorch's, ``manual_seed(s)`` followed by the same initializer gives bit-identical weights, which
is why ``manual_seed(0); nn.Linear(3, 5)`` matches PyTorch exactly.

The fan of a weight (``fan_in``, ``fan_out``) follows PyTorch's layout convention: dim 0 is the
output features/channels, dim 1 the input ones, and any further dims are the receptive field.

Differences from PyTorch: no ``sparse_``; ``orthogonal_`` uses numpy's QR (LAPACK, as PyTorch's),
whose signs we fix the same way, so results agree to rounding.
"""

from __future__ import annotations

import contextlib
import math

import minitorch_nn as _t
from minitorch_nn._ops import aten
from minitorch_nn._warnings import warn_user

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_",
    "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
]


def _no_grad():
    """``torch.no_grad()`` once autograd is loaded; before that there is no history to avoid."""
    ng = getattr(_t, "no_grad", None)
    return ng() if ng is not None else contextlib.nullcontext()


def calculate_gain(nonlinearity, param=None):
    """The recommended scale of weights for a nonlinearity (e.g. ``sqrt(2)`` for ``relu``)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with draws from U(a, b)."""
    with _no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with draws from N(mean, std^2)."""
    with _no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std^2) draws truncated to [a, b], by rejection sampling (PyTorch 2.13).

    Two regimes, chosen by the probability mass ``p`` that [a, b] holds:

    * ``p > 0.3``: draw normals and redraw the ones outside [a, b] until none is left;
    * otherwise (a narrow window or one far in a tail): draw uniformly in [a, b] and accept each
      candidate with probability ``pdf(x) / pdf(mode)``, redrawing the rejected ones.

    The calls (and so the random numbers) are PyTorch's, so a seed gives the same weights.
    """

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if tensor.device.type == "meta":
        return tensor
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warn_user(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may be incorrect.",
        )
    with _no_grad():
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            # bounds rounded to the tensor's dtype, so the test below matches what is stored
            lo = _t.tensor(a, dtype=tensor.dtype).item()
            hi = _t.tensor(b, dtype=tensor.dtype).item()
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                outside = (result < lo) | (result > hi)
                if not outside.any():
                    break
                fresh = _t.empty_like(result).normal_(mean, std, generator=generator)
                result = _t.where(outside, fresh, result)
            if result is not tensor:
                tensor.copy_(result)
            return tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        candidates = _t.empty_like(tensor)
        accept_buf = _t.empty_like(tensor)

        def log_ratio(x):
            # log(pdf(x) / pdf(mode)), computed in place in x
            return x.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)

        tensor.uniform_(a, b, generator=generator)
        candidates.copy_(tensor)
        log_ratio(candidates)
        # a candidate is rejected when log(u) > its log ratio, u ~ U(0, 1)
        pending = accept_buf.uniform_(generator=generator).log_().gt(candidates)
        if pending.any():
            result = tensor
            while True:
                candidates.uniform_(a, b, generator=generator)
                result = _t.where(pending, candidates, result)
                log_ratio(candidates)
                pending = _t.where(pending, accept_buf.uniform_(generator=generator).log_().gt(candidates), pending)
                if not pending.any():
                    break
            tensor.copy_(result)
        return tensor


def constant_(tensor, val):
    """Fill with ``val``."""
    with _no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    with _no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    with _no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fill a 2-d tensor with the identity (ones on the diagonal)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with _no_grad():
        tensor.copy_(_t.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))
    return tensor


def dirac_(tensor, groups=1):
    """Fill a 3/4/5-d conv weight so that the convolution is the identity on each group."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    with _no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                idx = (g * out_per_group + d, d) + tuple(s // 2 for s in sizes[2:])
                tensor[idx] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with ``bound = gain * sqrt(3 / fan)`` (He et al., 2015).

    ``nn.Linear`` and the conv layers call this with ``a=sqrt(5)``, which gives
    ``bound = 1 / sqrt(fan_in)``.
    """
    if 0 in tuple(tensor.shape):
        warn_user("Initializing zero-element tensors is a no-op")
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    with _no_grad():
        return tensor.uniform_(-bound, bound, generator=generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2) with ``std = gain / sqrt(fan)``."""
    if 0 in tuple(tensor.shape):
        warn_user("Initializing zero-element tensors is a no-op")
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    with _no_grad():
        return tensor.normal_(0, std, generator=generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix: QR of a normal draw, signs fixed so the result is unique."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flat = _t.empty(rows, cols, dtype=tensor.dtype, device=tensor.device).normal_(0, 1, generator=generator)
    if rows < cols:
        flat = flat.t()
    q, r = aten.linalg_qr.default(flat)
    # make Q unique: multiply each column by the sign of R's diagonal entry
    q = q * aten.diagonal.default(r).sign()
    if rows < cols:
        q = q.t()
    with _no_grad():
        tensor.view(q.shape).copy_(q)
        tensor.mul_(gain)
    return tensor


# PyTorch still ships the old names without the trailing underscore (deprecated).
def _deprecated(new):
    def old(*args, **kwargs):
        warn_user(f"`nn.init.{new.__name__[:-1]}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                  FutureWarning)
        return new(*args, **kwargs)

    old.__name__ = new.__name__[:-1]
    return old


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
