"""``Transformer`` and its encoder and decoder stacks (mirrors ``torch/nn/modules/transformer.py``).

One encoder layer is self-attention then a two-layer feed-forward block, each wrapped in a
residual connection and a ``LayerNorm`` -- after the residual by default ("post-norm", the
original paper), or before the sublayer with ``norm_first=True`` ("pre-norm")::

    post-norm:  x = norm1(x + sa(x));      x = norm2(x + ff(x))
    pre-norm:   x = x + sa(norm1(x));      x = x + ff(norm2(x))

A decoder layer adds cross-attention between the two: self-attention over the target (usually
with a causal mask), then attention from the target to the encoder's output ("memory"), then the
feed-forward block, each again with its residual connection and norm.

``TransformerEncoder``/``TransformerDecoder`` stack deep copies of one layer, so every layer starts
with the same weights, exactly as in PyTorch; ``Transformer`` joins an encoder and a decoder (each
with a final ``LayerNorm``) and re-initialises every matrix with ``xavier_uniform_``, in
parameter order, as PyTorch does (so seeded weights agree).

Masks: ``*_mask`` is an attention mask ``(L, S)`` or ``(N*nhead, L, S)``, ``*_key_padding_mask``
hides keys per batch entry ``(N, S)``; boolean masks mark hidden positions with ``True``, float
masks are added to the scores. ``*_is_causal`` is a hint that the mask is the causal one; the
stacks detect a causal mask themselves when the hint is ``None``.

Differences from PyTorch: no fused inference fast path (``torch._transformer_encoder_layer_fwd``)
and no nested tensors; the plain path is always taken, so eval-mode results agree with PyTorch's
fast path to rounding.
"""

from __future__ import annotations

import copy

import minitorch_nn as _t
from minitorch_nn._warnings import warn_user
from minitorch_nn.nn import functional as F
from minitorch_nn.nn import init
from minitorch_nn.nn.modules.activation import GELU, MultiheadAttention, ReLU
from minitorch_nn.nn.modules.container import ModuleList
from minitorch_nn.nn.modules.dropout import Dropout
from minitorch_nn.nn.modules.linear import Linear
from minitorch_nn.nn.modules.module import Module
from minitorch_nn.nn.modules.normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


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


def _get_seq_len(src, batch_first):
    if src.dim() == 2:  # unbatched: (S, E)
        return src.size(0)
    return src.size(1 if batch_first else 0)


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """The ``is_causal`` hint, or (when it is ``None``) whether ``mask`` equals the causal mask."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        # broadcasting compare, so a batched mask counts when every slice is causal
        make_causal = mask.size() == causal.size() and bool((mask == causal).all())
    return make_causal


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
        seq_len = _get_seq_len(src, self.layers[0].self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoderLayer(Module):
    """Self-attention, cross-attention to ``memory``, feed-forward; each with residual and norm."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        # Construction order is PyTorch's, so the same seed draws the same weights.
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            **factory_kwargs)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias, **factory_kwargs)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory_kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def __setstate__(self, state):
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` applied in turn, then an optional final ``norm``."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                         memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """Encoder-decoder transformer: ``Transformer(d_model=512, nhead=8, num_encoder_layers=6,
    num_decoder_layers=6, dim_feedforward=2048, dropout=0.1, activation=relu, custom_encoder=None,
    custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True)``.

    ``forward(src, tgt, ...)`` encodes ``src`` into memory and decodes ``tgt`` against it.
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, **factory_kwargs)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, **factory_kwargs)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if is_batched and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """The causal mask of size ``sz``: ``-inf`` above the diagonal, 0 elsewhere."""
        return generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
