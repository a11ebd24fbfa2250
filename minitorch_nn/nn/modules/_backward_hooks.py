"""Full backward hooks on modules (mirrors ``BackwardHook`` in ``torch/utils/hooks.py`` and
``BackwardHookFunction`` in ``torch/nn/modules/_functions.py``).

A module is not a node of the autograd graph: its forward may run many ops. To learn "the
gradient w.r.t. the module's inputs and outputs" PyTorch brackets the forward with an identity
autograd function on each side:

    inputs -> [identity A] -> forward ops ... -> [identity B] -> outputs

In backward, B is reached first: its incoming gradients are the gradients w.r.t. the module's
*outputs*. A hook on B records them as ``grad_output`` and runs the backward pre-hooks
``hook(module, grad_output)``, which may replace them. A is reached once every gradient has
flowed through the module: its outgoing gradients are the gradients w.r.t. the module's
*inputs*, and a hook on A calls ``hook(module, grad_input, grad_output)``, which may replace
``grad_input``. If no input requires grad, A never runs, so the full hooks are called from B
with ``grad_input`` all None (and PyTorch's warning).

Positions are kept: ``grad_input`` has one entry per positional argument (None for
non-tensors and for tensors that do not require grad), ``grad_output`` one per output.
"""

from __future__ import annotations

from minitorch_nn._warnings import warn_user
from minitorch_nn.autograd import Function


class BackwardHookFunction(Function):
    """Identity on tensors; its graph node is where the module's backward hooks attach."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


class BackwardHook:
    """Wires one module call's full backward hooks and pre-hooks into the graph."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = -1
        self.input_tensors_index = self.output_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for i, v in zip(indices, values):
            res[i] = v
        return tuple(res)

    def _apply_on_tensors(self, attach, args):
        """Pass the tensors among ``args`` through the identity function and give its node to
        ``attach``. Returns the new args and the positions of the tensors (None: not wired)."""
        import minitorch_nn
        from minitorch_nn._tensor import Tensor

        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in idx]
        if not (any(t.requires_grad for t in tensors) and minitorch_nn.is_grad_enabled()):
            return args, None
        new = BackwardHookFunction.apply(*tensors)
        if not isinstance(new, tuple):
            new = (new,)
        if len(new) == 0:
            raise RuntimeError(
                "Cannot set Module backward hook for a Module with no input Tensors."
            )
        grad_fns = [t.grad_fn for t in new if t.grad_fn is not None]
        if not grad_fns:
            raise RuntimeError(
                "Error while setting up backward hooks. Please open an issue with a code sample to reproduce this."
            )
        attach(grad_fns[0])
        out = list(args)
        for i, t, old in zip(idx, new, tensors):
            # A tensor that does not require grad is passed through untouched: it is not
            # differentiable, so it must not gain a grad_fn (PyTorch marks it non-differentiable).
            out[i] = t if old.requires_grad else old
        return (tuple(out) if type(args) is tuple else type(args)(*out)), idx

    def setup_input_hook(self, args):
        """Wrap the forward's positional inputs (node A); returns the args to call forward with."""

        def attach(grad_fn):
            def hook(grad_input, _grad_output):
                if self.grad_outputs is None:
                    return None
                res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
                for user_hook in self.user_hooks:
                    out = user_hook(self.module, res, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != len(res):
                        raise RuntimeError(
                            f"Backward hook returned an invalid number of grad_input, got {len(out)}, "
                            f"but expected {len(res)}"
                        )
                    res = out
                self.grad_outputs = None
                return tuple(res[i] for i in self.input_tensors_index)

            grad_fn.register_hook(hook)

        res, idx = self._apply_on_tensors(attach, args)
        self.n_inputs = len(args)
        self.input_tensors_index = idx
        return res

    def setup_output_hook(self, result):
        """Wrap the forward's output(s) (node B); returns the output to hand back to the caller."""

        def attach(grad_fn):
            def hook(_grad_input, grad_output):
                self.grad_outputs = self._pack_with_none(
                    self.output_tensors_index, grad_output, self.n_outputs
                )
                expected = len(self.grad_outputs)
                for pre_hook in self.user_pre_hooks:
                    out = pre_hook(self.module, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != expected:
                        raise RuntimeError(
                            f"Backward pre hook returned an invalid number of grad_output, got {len(out)}, "
                            f"but expected {expected}"
                        )
                    self.grad_outputs = out
                local = self.grad_outputs
                if self.input_tensors_index is None:
                    # Node A does not exist: call the full hooks now, with no input gradients.
                    warn_user(
                        "Full backward hook is firing when gradients are computed with respect to module outputs "
                        "since no inputs require gradients. See "
                        "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module."
                        "register_full_backward_hook for more details.",
                    )
                    grad_inputs = (None,) * self.n_inputs
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (
                            isinstance(res, tuple) and all(el is None for el in res)
                        ):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient should always return "
                                "None or None for all gradients."
                            )
                    self.grad_outputs = None
                if local is not None:
                    return tuple(local[i] for i in self.output_tensors_index)
                return None

            grad_fn.register_hook(hook)

        is_tuple = isinstance(result, tuple)
        outputs = result if is_tuple else (result,)
        res, idx = self._apply_on_tensors(attach, outputs)
        self.n_outputs = len(outputs)
        self.output_tensors_index = idx
        return res if is_tuple else res[0]
