"""``torch.nn.utils.stateless`` (deprecated in PyTorch 2.0): its ``functional_call`` warns and
then does what :func:`minitorch_nn.func.functional_call` does."""

from __future__ import annotations

from minitorch_nn._warnings import warn_user

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    warn_user(
        "`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in a future "
        "version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in replacement.",
        FutureWarning,
    )
    from minitorch_nn.func import functional_call as call

    return call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
