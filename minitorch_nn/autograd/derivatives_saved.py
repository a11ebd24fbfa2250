"""What PyTorch's nodes save beyond what our formulas read (``grad_fn._saved_*``).

Mirrors the saved fields of the node classes PyTorch generates from ``derivatives.yaml``, for
the ops whose formulas here read other values than PyTorch's do: ``squeeze.dim`` reshapes back to
the input's sizes without ``dim``, but PyTorch's ``SqueezeBackward1`` keeps ``dim`` and shows it
as ``_saved_dim``. Each entry says, by PyTorch's names, what the node saves too (``also``),
which formula parameters PyTorch's node does not show (``hidden``) and what PyTorch calls an
output that the schema leaves unnamed (``outputs``). The backward formulas do not change; only
what the recorder keeps and what ``saved_attributes.py`` shows.

Values PyTorch computes from an input's sizes (``self_sym_numel``, ``weight_sym_argsize_0``...)
are kept as the sizes (already saved, or one payload field read) and computed when read, so
recording costs no more for them. A tensor input listed in ``also`` is saved, as in PyTorch,
only when that input needs a gradient (``index_add``'s ``source``).

Where we differ from PyTorch: ``linalg.solve`` and ``linalg.det`` keep no LU factorization
(``_saved_LU``, ``_saved_pivots``), ``linalg.svdvals`` keeps its input, not ``U``, ``S``,
``Vh``; their formulas need no more.
"""

from __future__ import annotations

from minitorch_nn._ops import aten
from minitorch_nn.autograd.derivatives import _op

# op -> what PyTorch's node saves besides what the formulas read
SAVED_AS_IN_TORCH = {
    "mean": dict(also=("self_sym_numel",)),
    "mean.dim": dict(also=("self_sym_numel",)),
    "squeeze.dim": dict(also=("dim",)),
    "squeeze.dims": dict(also=("dim",)),
    "split.Tensor": dict(also=("self_sym_sizes", "split_size")),
    "split_with_sizes": dict(also=("self_sym_sizes", "split_sizes")),
    # PyTorch keeps as_strided's input geometry in a TensorGeometry field, which has no getter
    "as_strided": dict(hidden=("self_sizes", "self_strides", "self_offset")),
    "mm": dict(also=("self_sym_sizes", "self_sym_strides")),
    "addmm": dict(also=("mat1_sym_sizes", "mat1_sym_strides")),
    "gather": dict(also=("self", "sparse_grad"), hidden=("self_sizes",)),
    "masked_select": dict(also=("self",), hidden=("self_sizes",)),
    "index_add": dict(also=("source", "source_dim")),
    # index_put keeps only the values' type and size (TypeAndSize, no getter)
    "index_put": dict(hidden=("values",)),
    "index_put_": dict(hidden=("values",)),
    "embedding": dict(also=("weight_sym_argsize_0", "scale_grad_by_freq", "sparse"), hidden=("weight_sizes",)),
    "erfinv": dict(also=("self",), hidden=("result",)),
    "pow.Scalar": dict(also=("exponent",)),
    "copysign.Tensor": dict(hidden=("other_sizes",)),
    "linalg_qr": dict(hidden=("A",)),
    "linalg_svd": dict(also=("S_sym_argsize_minus_1",), hidden=("A",)),
    "linalg_inv": dict(outputs={"result": "inverse"}),
    "convolution": dict(also=("bias_sym_sizes_opt",)),
    "native_layer_norm": dict(hidden=("eps", "input_sizes")),
    "native_dropout_backward": dict(also=("grad_output",)),
}


def saves_as_torch(op_name, also=(), hidden=(), outputs=None):
    """Make ``op_name``'s node (and its in-place twin's) save and show what PyTorch's does:
    ``also`` by PyTorch's names, ``hidden`` formula parameters, ``outputs`` names of outputs."""
    op = _op(op_name)
    targets = [op.derivative]
    packet, _, overload = op_name.partition(".")
    twin = getattr(aten, packet + "_", None)
    if twin is not None and (overload or "default") in twin._overloads:
        inplace = twin._overloads[overload or "default"].derivative
        if getattr(inplace, "node_cls", None) is op.derivative.node_cls:
            targets.append(inplace)
    for d in targets:
        if d._plans or d._wanted_cache:
            raise RuntimeError(f"{op_name}: set what its node saves before the op is first recorded")
        d.also_saved = tuple(also)
        d.hidden = frozenset(hidden)
        if outputs:
            d.output_names = dict(outputs)


for _name, _spec in SAVED_AS_IN_TORCH.items():
    saves_as_torch(_name, **_spec)
