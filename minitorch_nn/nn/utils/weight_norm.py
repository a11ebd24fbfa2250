"""The older, hook-based weight normalization (mirrors ``torch/nn/utils/weight_norm.py``).

``weight_norm(module)`` replaces the parameter ``weight`` by two parameters, ``weight_g`` (the
norm, one per slice along ``dim``) and ``weight_v`` (the direction), and registers a forward
pre-hook that recomputes ``module.weight = weight_v * (weight_g / ||weight_v||)`` before every
forward. ``module.weight`` is then a plain tensor attribute, not a Parameter, and the state dict
holds ``weight_g`` and ``weight_v``. ``remove_weight_norm`` folds the two back into one Parameter.

PyTorch deprecates this in favour of ``torch.nn.utils.parametrizations.weight_norm`` (same maths,
done with a parametrization; its ``load_state_dict`` still accepts ``weight_g``/``weight_v``
checkpoints), and so does this module: it warns, as PyTorch does.
"""

from __future__ import annotations

from minitorch_nn._warnings import warn_user

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook: recomputes ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        from minitorch_nn.linalg import _weight_norm

        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name, dim):
        from minitorch_nn.linalg import norm_except_dim
        from minitorch_nn.nn.parameter import Parameter
        from minitorch_nn.nn.parameter_lazy import UninitializedParameter

        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying weight normalization"
            )
        # the weight leaves _parameters; its norm and direction come in as two new parameters
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        from minitorch_nn.nn.parameter import Parameter

        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int = 0):
    """Split ``module.<name>`` into ``<name>_g`` (magnitude) and ``<name>_v`` (direction); deprecated."""
    warn_user(
        "`torch.nn.utils.weight_norm` is deprecated in favor of `torch.nn.utils.parametrizations.weight_norm`.",
        FutureWarning,
    )
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Undo :func:`weight_norm`: ``module.<name>`` becomes one Parameter again."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
