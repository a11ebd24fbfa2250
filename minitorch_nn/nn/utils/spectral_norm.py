"""The older, hook-based spectral normalization (mirrors ``torch/nn/utils/spectral_norm.py``).

``spectral_norm(module)`` makes ``module.weight`` the trained weight divided by an estimate of its
largest singular value sigma, recomputed before every forward by a forward pre-hook:

* the trained tensor moves to the parameter ``weight_orig``; ``module.weight`` becomes a plain
  tensor attribute (not a Parameter, not in the state dict);
* two buffers, ``weight_u`` and ``weight_v``, hold the power iteration's vectors, started from
  normal random values (drawn from the global generator, as PyTorch draws them);
* in training mode each forward runs ``n_power_iterations`` steps of the power iteration on
  the weight seen as a matrix (``dim`` first, the rest flattened), writing ``u`` and ``v`` in
  place, then sets ``weight = weight_orig / (u . W v)``; in eval mode ``u`` and ``v`` are kept.

The state dict records a version in its metadata (``spectral_norm``: ``weight.version = 1``);
loading a checkpoint from before that version (one that has ``weight`` and no ``weight_v``)
recomputes ``v`` from the saved weight, as PyTorch does. ``remove_spectral_norm`` folds the
current normalized weight back into a Parameter ``weight``.

PyTorch recommends ``torch.nn.utils.parametrizations.spectral_norm`` instead (the same maths as a
parametrization, ``parametrizations.py`` here); this version is kept for existing code and
checkpoints, and, like PyTorch's, it does not warn.

Difference from PyTorch: ``remove_spectral_norm`` also removes the load_state_dict pre-hook.
PyTorch's looks for it without unwrapping ``_WrappedHook`` and so leaves it behind, after which
loading a plain checkpoint into the module reports ``weight_orig`` and ``weight_u`` missing.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn.nn.modules._helpers import no_grad

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


def _normalize_into(x, out, eps):
    """``F.normalize(x, dim=0, eps=eps, out=out)``: ``x / max(||x||, eps)`` written into ``out``."""
    from minitorch_nn.nn import functional as F

    return F.normalize(x, dim=0, eps=eps, out=out)


class SpectralNorm:
    """The forward pre-hook: recomputes ``module.<name>`` from ``<name>_orig``, ``_u`` and ``_v``."""

    _version: int = 1   # the state-dict format; checkpoints without it are converted on load

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """The weight as a matrix: ``dim`` becomes the rows, every other dimension the columns."""
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(self.dim, *[d for d in range(weight_mat.dim()) if d != self.dim])
        height = weight_mat.size(0)
        return weight_mat.reshape(height, -1)

    def compute_weight(self, module, do_power_iteration: bool):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    # u and v are updated in place: they are buffers, and replicas of the module
                    # (DataParallel in PyTorch) must see the new values
                    v = _normalize_into(weight_mat.t().mv(u), v, self.eps)
                    u = _normalize_into(weight_mat.mv(v), u, self.eps)
                # clones, so that the in-place updates of the next forward do not touch what
                # this forward's backward needs
                u = u.clone()
                v = v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def remove(self, module) -> None:
        from minitorch_nn.nn.parameter import Parameter

        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        """The ``v`` with ``u = W v / ||W v||`` and ``u . W v = target_sigma`` (old checkpoints):
        ``v = (W^T W)^+ W^T u``, rescaled."""
        from minitorch_nn._tensor import _from_array

        w = weight_mat.detach().numpy().astype(np.float64)
        solved = np.linalg.pinv(w.T @ w) @ w.T @ u.detach().numpy().astype(np.float64)
        v = _from_array(solved.astype(u.detach().numpy().dtype))
        return v.mul_(target_sigma / u.dot(weight_mat.mv(v)))

    @staticmethod
    def apply(module, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        from minitorch_nn.nn.parameter_lazy import UninitializedParameter

        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `SpectralNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying spectral normalization"
            )
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            # random starting vectors (u first, then v: the draws PyTorch makes)
            u = _normalize_into(weight.new_empty(h).normal_(0, 1), None, fn.eps)
            v = _normalize_into(weight.new_empty(w).normal_(0, 1), None, fn.eps)

        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # A plain attribute: the trained tensor is weight_orig, and this one is recomputed before
        # every forward (setattr, not a buffer, so it stays out of the state dict).
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts a checkpoint saved before the version-1 format (``weight`` and ``weight_u``, no
    ``weight_v``): ``v`` is solved from the saved weights, then ``weight`` is dropped."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if version is None and all(weight_key + s in state_dict for s in ("_orig", "_u", "_v")) and (
            weight_key not in state_dict
        ):
            return   # already in the current layout, only the metadata is missing
        has_missing_keys = False
        for suffix in ("_orig", "", "_u"):
            key = weight_key + suffix
            if key not in state_dict:
                has_missing_keys = True
                if strict:
                    missing_keys.append(key)
        if has_missing_keys:
            return
        with no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + "_u"]
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records the format version in the state dict's metadata (``spectral_norm`` entry)."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        if "spectral_norm" not in local_metadata:
            local_metadata["spectral_norm"] = {}
        key = self.fn.name + ".version"
        if key in local_metadata["spectral_norm"]:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        local_metadata["spectral_norm"][key] = self.fn._version


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12, dim=None):
    """Normalize ``module.<name>`` by its spectral norm, recomputed before every forward.

    ``dim`` (the dimension that becomes the matrix's rows) defaults to 1 for the transposed
    convolutions (their weight is (C_in, C_out, ...)) and 0 otherwise. Returns ``module``.

    Example::

        >>> m = spectral_norm(nn.Linear(20, 40))
        >>> m.weight_u.shape
        torch.Size([40])
    """
    if dim is None:
        from minitorch_nn.nn.modules.conv import ConvTranspose1d, ConvTranspose2d
        from minitorch_nn.nn.modules.conv_extra import ConvTranspose3d

        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name: str = "weight"):
    """Undo :func:`spectral_norm`: ``module.<name>`` becomes a Parameter holding the current
    normalized weight (no power iteration step), and the hooks, buffers and ``<name>_orig`` go."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")

    for k, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[k]
            break
    for k, hook in module._load_state_dict_pre_hooks.items():
        inner = getattr(hook, "hook", hook)   # registered through _WrappedHook
        if isinstance(inner, SpectralNormLoadStateDictPreHook) and inner.fn.name == name:
            del module._load_state_dict_pre_hooks[k]
            break
    return module
