"""``TransformerEncoderLayer`` and ``TransformerEncoder`` (mirrors ``torch/nn/modules/transformer.py``).

One encoder layer is self-attention then a two-layer feed-forward block, each wrapped in a
residual connection and a ``LayerNorm`` -- after the residual by default ("post-norm", the
original paper), or before the sublayer with ``norm_first=True`` ("pre-norm")::

    post-norm:  x = norm1(x + sa(x));      x = norm2(x + ff(x))
    pre-norm:   x = x + sa(norm1(x));      x = x + ff(norm2(x))

``TransformerEncoder`` stacks deep copies of one layer, so every layer starts with the same
weights, exactly as in PyTorch.

Differences from PyTorch: no fused inference fast path (``torch._transformer_encoder_layer_fwd``)
and no nested tensors; the plain path is always taken, so eval-mode results agree with PyTorch's
fast path to rounding. No decoder.
"""

from __future__ import annotations

import copy

import minitorch_nn as _t
from minitorch_nn._warnings import warn_user
from minitorch_nn.nn import functional as F
from minitorch_nn.nn.modules.activation import GELU, MultiheadAttention, ReLU
from minitorch_nn.nn.modules.container import ModuleList
from minitorch_nn.nn.modules.dropout import Dropout
from minitorch_nn.nn.modules.linear import Linear
from minitorch_nn.nn.modules.module import Module
from minitorch_nn.nn.modules.normalization import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerEncoder"]


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _canonical_mask(mask, dtype):
    """Boolean masks (True = masked out) become additive float masks (-inf), as PyTorch does."""
    if mask is None or mask.dtype is not _t.bool:
        return mask
    return _t.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, float("-inf"))


def generate_square_subsequent_mask(sz, device=None, dtype=None):
    """The causal mask: ``-inf`` above the diagonal, 0 elsewhere (``nn.Transformer``'s helper)."""
    return _t.full((sz, sz), float("-inf"), dtype=dtype or _t.get_default_dtype(), device=device).triu(1)


class TransformerEncoderLayer(Module):
    """Self-attention + feed-forward, each with a residual connection and layer norm."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        # Construction order is PyTorch's, so the same seed draws the same weights.
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory_kwargs)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory_kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, src.dtype)
        src_mask = _canonical_mask(src_mask, src.dtype)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` applied in turn, then an optional final ``norm``."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = self._why_not_fast_path(encoder_layer)
        if enable_nested_tensor and why_not:
            # PyTorch warns here about its fused path; we keep the warning so scripts print the same.
            warn_user(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}")
            self.use_nested_tensor = False

    @staticmethod
    def _why_not_fast_path(layer):
        name = "encoder_layer"
        if not isinstance(layer, TransformerEncoderLayer):
            return f"{name} was not TransformerEncoderLayer"
        if layer.norm_first:
            return f"{name}.norm_first was True"
        if not layer.self_attn.batch_first:
            return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
        if not layer.self_attn._qkv_same_embed_dim:
            return f"{name}.self_attn._qkv_same_embed_dim was not True"
        if layer.self_attn.in_proj_bias is None:
            return f"{name}.self_attn was passed bias=False"
        if not layer.activation_relu_or_gelu:
            return f"{name}.activation_relu_or_gelu was not True"
        if layer.norm1.eps != layer.norm2.eps:
            return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
        if layer.self_attn.num_heads % 2 == 1:
            return f"{name}.self_attn.num_heads is odd"
        return ""

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, src.dtype)
        mask = _canonical_mask(mask, src.dtype)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=bool(is_causal), src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output
