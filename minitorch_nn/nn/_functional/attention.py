"""``scaled_dot_product_attention`` (mirrors ``torch.nn.functional.scaled_dot_product_attention``
and its math backend, ``_scaled_dot_product_attention_math`` in
``aten/src/ATen/native/transformers/attention.cpp``).

For queries ``Q`` (..., L, E), keys ``K`` (..., S, E) and values ``V`` (..., S, Ev)::

    weights = softmax(Q K^T * scale + bias)        scale = 1/sqrt(E) unless given
    out     = dropout(weights, dropout_p) V

``bias`` combines the masks: ``is_causal`` hides key ``j > i`` from query ``i`` (top-left
aligned, as PyTorch), a boolean ``attn_mask`` hides the positions where it is ``False``, a float
``attn_mask`` is added. When both ``is_causal`` and ``attn_mask`` are given we apply both, as
PyTorch's CPU flash kernel does; PyTorch's math backend (which it picks, for example, when keys
need gradients) refuses that combination with a RuntimeError instead.

A query row whose keys are *all* hidden gets zeros, not NaN: PyTorch's math backend uses a "safe"
softmax there. We fill those rows before the softmax and zero them after, so their gradients are
zero instead of NaN.

``enable_gqa=True`` lets ``K``/``V`` have fewer heads than ``Q`` (grouped-query attention): each
key/value head serves ``Hq / Hkv`` consecutive query heads.

Differences from PyTorch: only the math backend (no flash or memory-efficient kernels), so results
agree with PyTorch's to float rounding; dropout draws its mask exactly as ``F.dropout`` (the same
bits as PyTorch's math backend under the same seed).
"""

from __future__ import annotations

import math

import minitorch_nn as _t
from minitorch_nn.overrides import public

__all__ = ["scaled_dot_product_attention"]


def _check_inputs(query, key, value, dropout_p, enable_gqa):
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead."
        )
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(
            f"Expected query, key, and value to all be at least 2 dimensional, but got query.dim: "
            f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead."
        )
    if enable_gqa and query.dim() >= 3:
        q_heads, kv_heads = query.size(-3), key.size(-3)
        if q_heads % kv_heads != 0:
            raise RuntimeError(
                f"Number of heads in key and value must divide the number of heads in query "
                f"(query heads {q_heads}, key/value heads {kv_heads})."
            )


def _causal_bias(L, S, dtype, device):
    keep = _t.ones(L, S, dtype=_t.bool, device=device).tril()
    return _t.zeros(L, S, dtype=dtype, device=device).masked_fill(keep.logical_not(), float("-inf"))


def _repeat_heads(x, groups):
    """``x.repeat_interleave(groups, dim=-3)``: each head repeated ``groups`` times in place."""
    *lead, heads, length, features = x.shape
    expanded = x.unsqueeze(-3).expand(*lead, heads, groups, length, features)
    return expanded.reshape(*lead, heads * groups, length, features)


@public
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False):
    """``softmax(Q K^T * scale + mask) V`` with optional causal masking and dropout.

    Example::

        >>> import minitorch_nn as torch
        >>> q = k = v = torch.ones(1, 2, 4)
        >>> torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).shape
        torch.Size([1, 2, 4])
    """
    _check_inputs(query, key, value, dropout_p, enable_gqa)
    L, S = query.size(-2), key.size(-2)
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale

    if enable_gqa and query.dim() >= 3 and key.size(-3) != query.size(-3):
        groups = query.size(-3) // key.size(-3)
        key, value = _repeat_heads(key, groups), _repeat_heads(value, groups)

    scores = _t.matmul(query, key.transpose(-2, -1)) * scale
    bias = _causal_bias(L, S, query.dtype, query.device) if is_causal else None
    if attn_mask is not None:
        if attn_mask.dtype is _t.bool:
            hidden = _t.zeros(attn_mask.shape, dtype=query.dtype, device=query.device).masked_fill(
                attn_mask.logical_not(), float("-inf"))
            bias = hidden if bias is None else bias + hidden
        else:
            bias = attn_mask if bias is None else bias + attn_mask
    if bias is not None:
        scores = scores + bias
        # rows with every key hidden: softmax over zeros, then zeroed (PyTorch's safe softmax)
        all_hidden = (scores == float("-inf")).all(-1, keepdim=True)
        if bool(all_hidden.any()):
            weights = _t.softmax(scores.masked_fill(all_hidden, 0.0), -1).masked_fill(all_hidden, 0.0)
        else:
            weights = _t.softmax(scores, -1)
    else:
        weights = _t.softmax(scores, -1)
    if dropout_p > 0.0:
        from minitorch_nn.nn.functional import dropout

        weights = dropout(weights, dropout_p, True)
    return _t.matmul(weights, value)
