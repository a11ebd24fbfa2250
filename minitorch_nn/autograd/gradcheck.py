"""``gradcheck`` and ``gradgradcheck``: check gradients against finite differences (mirrors
``torch/autograd/gradcheck.py``, slow mode).

For a function ``f`` and inputs ``x``, the *numerical* Jacobian perturbs one input element at a
time by ``±eps`` and takes the central difference ``(f(x + eps) - f(x - eps)) / (2 eps)``; the
*analytical* Jacobian asks autograd for one row per output element (a backward pass with a
one-hot ``grad_output``). They must agree within ``atol + rtol * |numerical|``. Use float64
inputs: in float32 the central difference is too noisy for the default tolerances.

``gradgradcheck`` runs the same check on the function ``(x, v) -> grad(f(x), x, v,
create_graph=True)``, which checks second derivatives (that the backward formulas are themselves
differentiable).

With ``check_forward_ad=True`` the Jacobian is also computed by forward-mode AD
(``forward_ad.py``: one dual pass per input element, its tangent one-hot) and checked the same way;
``check_backward_ad=False`` skips the reverse-mode check.

Complex inputs and outputs are checked as PyTorch checks them: as pairs of real numbers. A complex
input element is perturbed along 1 and along i (two Jacobian rows), a complex output contributes
its real and its imaginary parts (two columns), and the analytical rows come from backward passes
with grad_output 1 and i at that output element: with PyTorch's convention (the gradient is the
conjugate Wirtinger derivative), the real and imaginary parts of the gradient they give are the
derivatives along the input's real and imaginary directions.

Where we differ from PyTorch: only the slow (full Jacobian) mode; no batched or sparse checks
(their flags are accepted and ignored when False); a complex mismatch is reported with the same real Jacobians, not with PyTorch's
separate messages per grad_output.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn._C import TensorBase
from minitorch_nn._warnings import warn_user


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical gradients disagree."""


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,) if not isinstance(x, list) else tuple(x)


def _real_coordinates(t):
    """A tensor's values as float64 numbers: complex values as all real parts, then all imaginary parts."""
    values = np.asarray(t.detach()._array).reshape(-1)
    if np.iscomplexobj(values):
        return np.concatenate([values.real, values.imag]).astype(np.float64)
    return np.array(values, dtype=np.float64)


def _numerical_jacobian(fn, inputs, index, eps):
    """Columns of d(outputs)/d(inputs[index]) by central differences, one per input element (two,
    along 1 and along i, for a complex element)."""
    from minitorch_nn.autograd.grad_mode import no_grad

    x = inputs[index]
    arr = x._array
    flat_idx = list(np.ndindex(arr.shape)) if arr.ndim else [()]
    directions = (1, 1j) if x.dtype.is_complex else (1,)
    columns = []
    with no_grad():
        for idx in flat_idx:
            for direction in directions:
                orig = arr[idx].copy()
                arr[idx] = orig + eps * direction
                plus = [_real_coordinates(o) for o in _outputs(fn, inputs)]
                arr[idx] = orig - eps * direction
                minus = [_real_coordinates(o) for o in _outputs(fn, inputs)]
                arr[idx] = orig
                columns.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    # jac[out][in_elem, out_elem]
    return [np.stack([c[k] for c in columns]) if columns else np.zeros((0, 0)) for k in range(len(columns[0]) if columns else 0)]


def _outputs(fn, inputs):
    return [o for o in _as_tuple(fn(*inputs)) if isinstance(o, TensorBase)]


def _analytical_jacobian(outputs, inputs, index):
    from minitorch_nn._functions.factories import zeros_like
    from minitorch_nn.autograd.engine import grad

    x = inputs[index]
    result = []
    for out in outputs:
        n_out, n_in = out.numel(), x.numel()
        # (rows and columns in the numerical Jacobian's order: see _real_coordinates)
        in_parts = 2 if x.dtype.is_complex else 1
        out_directions = (1, 1j) if out.dtype.is_complex else (1,)
        jac = np.zeros((n_in * in_parts, n_out * len(out_directions)))
        if not out.requires_grad:
            result.append(jac)
            continue
        for p, direction in enumerate(out_directions):
            for k in range(n_out):
                onehot = zeros_like(out)
                onehot._array[np.unravel_index(k, onehot._array.shape)] = direction  # (any memory layout)
                (g,) = grad(out, x, onehot, retain_graph=True, allow_unused=True)
                if g is None:
                    continue
                values = np.asarray(g.detach()._array).reshape(-1)
                if in_parts == 2:
                    jac[0::2, p * n_out + k] = values.real
                    jac[1::2, p * n_out + k] = values.imag
                else:
                    jac[:, p * n_out + k] = np.real(values)
        result.append(jac)
    return result


def _forward_ad_jacobian(fn, inputs, index, n_outputs):
    """d(outputs)/d(inputs[index]) by forward AD, laid out like :func:`_analytical_jacobian`."""
    from minitorch_nn._functions.factories import zeros_like
    from minitorch_nn.autograd import forward_ad

    x = inputs[index]
    rows = [[] for _ in range(n_outputs)]
    directions = (1, 1j) if x.dtype.is_complex else (1,)
    for k in range(x.numel()):
        for direction in directions:
            tangent = zeros_like(x)
            tangent._array[np.unravel_index(k, tangent._array.shape)] = direction
            with forward_ad.dual_level():
                args = list(inputs)
                args[index] = forward_ad.make_dual(x.detach(), tangent)
                outs = [o for o in _outputs(fn, args) if o.dtype.is_floating_point or o.dtype.is_complex]
                for j, o in enumerate(outs):
                    t = forward_ad.unpack_dual(o).tangent
                    size = o.numel() * (2 if o.dtype.is_complex else 1)
                    rows[j].append(np.zeros(size) if t is None else _real_coordinates(t))
    return [np.stack(r) if r else np.zeros((0, 0)) for r in rows]


def _as_tensor(array, dtype):
    from minitorch_nn._functions.factories import from_numpy

    return from_numpy(np.ascontiguousarray(array, dtype=dtype.numpy_dtype))


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """True when autograd's gradients of ``func`` at ``inputs`` match finite differences."""
    inputs = _as_tuple(inputs)
    for i, x in enumerate(inputs):
        if isinstance(x, TensorBase) and x.requires_grad and x.dtype.name not in ("float64", "complex128"):
            warn_user(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are not of double precision floating point or complex. ",
                UserWarning,
            )
    tensor_indices = [i for i, x in enumerate(inputs) if isinstance(x, TensorBase) and x.requires_grad]
    if not tensor_indices:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    outputs = _outputs(func, inputs)
    diff_outputs = [o for o in outputs if o.dtype.is_floating_point or o.dtype.is_complex]
    for i in tensor_indices:
        numerical = _numerical_jacobian(func, inputs, i, eps)
        checks = []
        if check_backward_ad:
            checks.append(("Jacobian mismatch", _analytical_jacobian(diff_outputs, inputs, i)))
        if check_forward_ad:
            checks.append(("Jacobian computed with forward mode mismatch",
                           _forward_ad_jacobian(func, inputs, i, len(diff_outputs))))
        for what, analytical in checks:
            for j, (a, n) in enumerate(zip(analytical, numerical)):
                if a.shape != n.shape or not np.allclose(a, n, rtol=rtol, atol=atol):
                    if not raise_exception:
                        return False
                    # printed as tensors of the input's dtype, (input numel, output numel), as torch
                    d = inputs[i].dtype.to_real()  # (complex numbers are compared as real pairs)
                    raise GradcheckError(
                        f"{what} for output {j} with respect to input {i},\n"
                        f"numerical:{_as_tensor(n, d)}\nanalytical:{_as_tensor(a, d)}\n"
                    )
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second derivatives: gradcheck of ``(inputs, v) -> grad(func(inputs), inputs, v)``."""
    from minitorch_nn._functions.factories import randn_like
    from minitorch_nn.autograd.engine import grad

    inputs = _as_tuple(inputs)
    outputs = [o for o in _outputs(func, inputs) if o.requires_grad]
    if grad_outputs is None:
        grad_outputs = tuple(randn_like(o).requires_grad_() for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, TensorBase) and x.requires_grad]

    def first_derivative(*all_inputs):
        from minitorch_nn.autograd.grad_mode import enable_grad

        xs, vs = all_inputs[:n_in], all_inputs[n_in:]
        with enable_grad():   # gradcheck's finite differences run this under no_grad
            outs = [o for o in _outputs(func, xs) if o.requires_grad]
            grads = grad(outs, [xs[i] for i in diff_idx], vs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
