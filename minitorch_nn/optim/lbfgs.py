"""L-BFGS (mirrors ``torch/optim/lbfgs.py``), with an optional strong-Wolfe line search.

L-BFGS is a quasi-Newton method: it approximates the inverse Hessian from the last
``history_size`` pairs of parameter steps ``s = x_{k+1} - x_k`` and gradient changes
``y = g_{k+1} - g_k``, and turns the gradient into a search direction with the *two-loop
recursion*::

    q = -g
    for i from newest to oldest:   a_i = rho_i * s_i . q;   q -= a_i * y_i
    r = H0 * q                     (H0 = s.y / y.y of the newest pair: a scalar guess of the scale)
    for i from oldest to newest:   b_i = rho_i * y_i . r;   r += (a_i - b_i) * s_i
    direction = r                  (rho_i = 1 / (y_i . s_i))

A pair enters the history only when ``y . s > 1e-10`` (the curvature condition that keeps the
approximation positive definite). The step length is ``lr`` (the first iteration scales it by
``min(1, 1 / |g|_1)``), or whatever the strong-Wolfe line search finds.

``step(closure)`` runs up to ``max_iter`` iterations and ``max_eval`` evaluations of ``closure``
(which must recompute the loss and the gradients), and stops early when the gradient, the step
or the change in loss falls under the tolerances. All parameters are handled as one flat vector.
The numbers are PyTorch's: the same operations in the same order, including where scalars are
0-d tensors and where they are Python floats.
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn.autograd.grad_mode import no_grad
from minitorch_nn.optim import _single_tensor as _st
from minitorch_nn.optim.optimizer import Optimizer

__all__ = ["LBFGS"]


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clamped to
    ``bounds`` (default: the interval between x1 and x2); the interval's middle when the cubic
    has no minimum."""
    if bounds is not None:
        low, high = bounds
    else:
        low, high = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt()
        if x1 <= x2:
            at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(at, low), high)
    return (low + high) / 2.0


class _Bracket:
    """An interval of step lengths known to hold a point that satisfies the Wolfe conditions, with
    the loss, gradient and directional derivative at each end."""

    def __init__(self, ts, fs, gs, gtds):
        self.t, self.f, self.g, self.gtd = ts, fs, gs, gtds

    def order(self):
        """(index of the end with the lower loss, index of the other)."""
        return (0, 1) if self.f[0] <= self.f[-1] else (1, 0)

    def set(self, i, t, f, g, gtd):
        self.t[i], self.f[i], self.g[i], self.gtd[i] = t, f, g, gtd


def _strong_wolfe(evaluate, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search along ``d`` from the point ``x`` (loss ``f``, gradient ``g``, slope ``gtd``).

    Phase 1 grows the step until an interval is bracketed (or a point already satisfies the
    strong Wolfe conditions: enough decrease, ``f_t <= f + c1 t gtd``, and a flat enough slope,
    ``|gtd_t| <= -c2 gtd``); phase 2 shrinks the bracket by cubic interpolation ("zoom").
    ``evaluate(x, t, d)`` gives the loss and flat gradient at ``x + t d``. Returns
    ``(loss, gradient, t, evaluations)``."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = evaluate(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    found = False
    ls_iter = 0
    bracket = None
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = _Bracket([t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()], [gtd_prev, gtd_new])
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = _Bracket([t], [f_new], [g_new], [None])
            found = True
            break
        if gtd_new >= 0:
            bracket = _Bracket([t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()], [gtd_prev, gtd_new])
            break
        # extrapolate: the next step lies between 1.01x and 10x the current one
        low, high = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = t, _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(low, high))
        f_prev, g_prev, gtd_prev = f_new, g_new.clone(), gtd_new
        f_new, g_new = evaluate(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = _Bracket([0, t], [f, f_new], [g, g_new], [None, None])

    # zoom
    stalled = False
    low_i, high_i = bracket.order()
    while not found and ls_iter < max_ls:
        if abs(bracket.t[1] - bracket.t[0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(bracket.t[0], bracket.f[0], bracket.gtd[0], bracket.t[1], bracket.f[1], bracket.gtd[1])
        # keep away from the ends: a point too close to one makes no progress
        top, bottom = max(bracket.t), min(bracket.t)
        margin = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < margin:
            if stalled or t >= top or t <= bottom:
                t = top - margin if abs(t - top) < abs(t - bottom) else bottom + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        f_new, g_new = evaluate(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket.f[low_i]:
            bracket.set(high_i, t, f_new, g_new.clone(), gtd_new)
            low_i, high_i = bracket.order()
        else:
            if abs(gtd_new) <= -c2 * gtd:
                found = True
            elif gtd_new * (bracket.t[high_i] - bracket.t[low_i]) >= 0:
                bracket.set(high_i, bracket.t[low_i], bracket.f[low_i], bracket.g[low_i], bracket.gtd[low_i])
            bracket.set(low_i, t, f_new, g_new.clone(), gtd_new)
    return bracket.f[low_i], bracket.g[low_i], bracket.t[low_i], evals


class LBFGS(Optimizer):
    """L-BFGS over all parameters as one vector; ``step`` needs a closure. One parameter group only."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        _st.check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
                    "tolerance_change": tolerance_change, "history_size": history_size,
                    "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    # -- the parameters as one flat vector -------------------------------------------------------
    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _flat_grad(self):
        parts = [p.new_zeros(p.numel()) if p.grad is None else p.grad.view(-1) for p in self._params]
        return _t.cat(parts, 0)

    def _move(self, step_size, direction):
        """Parameters += step_size * direction (each parameter gets its slice of the vector)."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(direction[offset:offset + n].view_as(p), alpha=step_size)
            offset += n
        if offset != self._numel():
            raise AssertionError(f"Expected offset {offset} to equal {self._numel()}")

    def _evaluate_along(self, closure, x, t, d):
        """Loss and flat gradient at x + t d; the parameters are put back to ``x`` afterwards."""
        self._move(t, d)
        loss = float(closure())
        grad = self._flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, grad

    # -- one call -------------------------------------------------------------------------------
    @no_grad()
    def step(self, closure):
        """Up to ``max_iter`` L-BFGS iterations; returns the loss from the first ``closure()`` call."""
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(self.param_groups)}")
        from minitorch_nn.autograd import enable_grad

        closure = enable_grad()(closure)
        group = self.param_groups[0]
        lr = _st.as_float(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # everything L-BFGS remembers between calls lives in the first parameter's state
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss   # already at a stationary point

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # the search direction
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=-al[i])
                d = r = _t.mul(q, H_diag)
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i], alpha=al[i] - be_i)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # the step length
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break   # not a descent direction (any more)

            ls_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p.clone() for p in self._params]
                loss, flat_grad, t, ls_evals = _strong_wolfe(
                    lambda x, t_, d_: self._evaluate_along(closure, x, t_, d_),
                    x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - evals)
                self._move(t, d)
                converged = flat_grad.abs().max() <= tolerance_grad
            else:
                self._move(t, d)
                converged = False
                if n_iter != max_iter:
                    # re-evaluate, except on the last iteration, whose loss nobody reads
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._flat_grad()
                    converged = flat_grad.abs().max() <= tolerance_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals

            if n_iter == max_iter or evals >= max_eval or converged:
                break
            if d.mul(t).abs().max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break   # no more progress

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss
