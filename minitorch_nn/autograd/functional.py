"""Whole-function derivatives: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp``, ``hvp``
(mirrors ``torch/autograd/functional.py``).

All are built from reverse mode (``engine.grad``):

* ``vjp(f, x, v)`` is one backward pass: ``v^T J``;
* ``jacobian(f, x)`` stacks one backward pass per output element (a one-hot ``v``);
* ``jvp(f, x, v)`` uses the "double backward" trick: ``g(u) = u^T J`` is linear in ``u``, so
  differentiating ``g(u) . v`` with respect to ``u`` gives ``J v``;
* ``hessian(f, x)`` is the jacobian of the gradient, computed with ``create_graph=True``.

Where we differ from PyTorch: no ``vectorize`` (vmap) and no forward-mode strategy; those
arguments are accepted and ignored.
"""

from __future__ import annotations

from minitorch_nn._C import TensorBase
from minitorch_nn.autograd import grad_mode as _gm
from minitorch_nn.autograd.engine import grad as _grad


def _tuple(x):
    is_tuple = isinstance(x, (tuple, list))
    return (tuple(x) if is_tuple else (x,)), is_tuple


def _prepare(inputs, create_graph):
    # Fresh leaves that require grad, so f's graph starts here (kept connected when create_graph).
    out = []
    for x in inputs:
        if not isinstance(x, TensorBase):
            raise TypeError(f"The inputs given to the function must be either a Tensor or a tuple of Tensors but "
                            f"the given argument has type {type(x).__name__}.")
        out.append(x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(True))
    return tuple(out)


def _zeros_if_none(grads, like):
    from minitorch_nn._functions.factories import zeros_like

    return tuple(g if g is not None else zeros_like(x) for g, x in zip(grads, like))


def _finish(tensors, create_graph):
    return tuple(t if create_graph else t.detach() for t in tensors)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``."""
    inputs, in_tuple = _tuple(inputs)
    with _gm.enable_grad():
        xs = _prepare(inputs, create_graph)
        outputs, out_tuple = _tuple(func(*xs))
        vs = _tuple(v)[0] if v is not None else (None,) * len(outputs)
        needed = [(o, g) for o, g in zip(outputs, vs) if o.requires_grad]
        grads = _grad([o for o, _ in needed], xs, [g for _, g in needed], create_graph=create_graph,
                      allow_unused=True) if needed else (None,) * len(xs)
    grads = _finish(_zeros_if_none(grads, xs), create_graph)
    outputs = _finish(outputs, create_graph)
    return (outputs if out_tuple else outputs[0]), (grads if in_tuple else grads[0])


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product, by double backward."""
    from minitorch_nn._functions.factories import zeros_like

    inputs, in_tuple = _tuple(inputs)
    with _gm.enable_grad():
        xs = _prepare(inputs, True)
        outputs, out_tuple = _tuple(func(*xs))
        us = tuple(zeros_like(o).requires_grad_(True) for o in outputs)
        g = _grad(outputs, xs, us, create_graph=True, allow_unused=True)
        vs = _tuple(v)[0] if v is not None else tuple(x.new_ones(list(x.shape)) for x in xs)
        pairs = [(gi, vi) for gi, vi in zip(g, vs) if gi is not None and gi.requires_grad]
        jv = _grad([p for p, _ in pairs], us, [q for _, q in pairs], create_graph=create_graph,
                   allow_unused=True) if pairs else (None,) * len(us)
    jv = _finish(_zeros_if_none(jv, outputs), create_graph)
    outputs = _finish(outputs, create_graph)
    return (outputs if out_tuple else outputs[0]), (jv if out_tuple else jv[0])


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: shape ``output.shape + input.shape`` per pair."""
    from minitorch_nn._functions.factories import zeros_like
    from minitorch_nn._functions.shape import stack

    inputs, in_tuple = _tuple(inputs)
    with _gm.enable_grad():
        xs = _prepare(inputs, create_graph)
        outputs, out_tuple = _tuple(func(*xs))
        result = []
        for out in outputs:
            rows = [[] for _ in xs]
            flat = out.reshape(-1)
            for k in range(flat.numel()):
                if out.requires_grad:
                    gs = _grad(flat[k], xs, retain_graph=True, create_graph=create_graph, allow_unused=True)
                else:
                    gs = (None,) * len(xs)
                for i, (g, x) in enumerate(zip(gs, xs)):
                    rows[i].append(g if g is not None else zeros_like(x))
            per_input = []
            for i, x in enumerate(xs):
                jac = stack(rows[i]) if rows[i] else x.new_zeros([0] + list(x.shape))
                jac = jac.reshape(list(out.shape) + list(x.shape))
                per_input.append(jac if create_graph else jac.detach())
            result.append(tuple(per_input) if in_tuple else per_input[0])
    return tuple(result) if out_tuple else result[0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function ``func`` at ``inputs``."""
    inputs_t, in_tuple = _tuple(inputs)

    def gradient(*xs):
        out = func(*xs)
        if out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single element Tensor")
        gs = _grad(out.reshape([]), xs, create_graph=True, allow_unused=True)
        return _zeros_if_none(gs, xs) if in_tuple else _zeros_if_none(gs, xs)[0]

    return jacobian(gradient, inputs_t if in_tuple else inputs_t[0], create_graph=create_graph)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)``."""
    inputs_t, in_tuple = _tuple(inputs)
    with _gm.enable_grad():
        xs = _prepare(inputs_t, True)
        out = func(*xs)
        gs = _zeros_if_none(_grad(out, xs, create_graph=True, allow_unused=True), xs)
        vs = _tuple(v)[0]
        pairs = [(g, w) for g, w in zip(gs, vs) if g.requires_grad]
        h = _grad([g for g, _ in pairs], xs, [w for _, w in pairs], create_graph=create_graph,
                  allow_unused=True) if pairs else (None,) * len(xs)
    h = _finish(_zeros_if_none(h, xs), create_graph)
    out = out if create_graph else out.detach()
    return out, (h if in_tuple else h[0])


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)``; the Hessian is symmetric, so this equals ``vhp`` here."""
    return vhp(func, inputs, v, create_graph, strict)
