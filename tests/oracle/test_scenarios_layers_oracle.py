"""Scenario sweep: nn layers and functional calls with wrong shapes and dtypes, losses and their
options, padding/interpolation/one_hot/normalize, distances (cosine_similarity, pairwise_distance),
and the printed reprs of activations, losses, pooling, normalization and other layers.

Each scenario runs in PyTorch 2.13 and in minitorch_nn and the transcripts must be identical; see
``_scenario_helpers.py``.
"""

import pytest

from tests.oracle._scenario_helpers import assert_same_transcript, keep_global_rng_state  # noqa: F401

pytestmark = pytest.mark.oracle

CASES = {
    "conv1d_2d_input": lambda t: t.nn.Conv1d(1, 1, 2)(t.ones(2, 3, 4, 5)),
    "conv2d_2d_input": lambda t: t.nn.Conv2d(1, 1, 2)(t.ones(4, 5)),
    "conv2d_3d_unbatched": lambda t: print(t.nn.Conv2d(1, 2, 2)(t.ones(1, 4, 5)).shape),
    "maxpool_1d_input": lambda t: t.nn.MaxPool2d(2)(t.ones(4)),
    "bn2d_3d_input": lambda t: t.nn.BatchNorm2d(3)(t.ones(2, 3, 4)),
    "bn1d_4d_input": lambda t: t.nn.BatchNorm1d(3)(t.ones(2, 3, 4, 4)),
    "linear_0d": lambda t: t.nn.Linear(1, 1)(t.tensor(1.0)),
    "embedding_2d_weight": lambda t: t.nn.functional.embedding(t.tensor([0]), t.ones(3)),
    "layernorm_shape_tuple": lambda t: print(t.nn.LayerNorm((2, 3))(t.ones(4, 2, 3)).shape),
    "groupnorm_bad": lambda t: t.nn.GroupNorm(3, 4),
    "dropout_neg": lambda t: t.nn.functional.dropout(t.ones(2), -0.1),
    "softmax_dim_oob": lambda t: t.ones(2).softmax(1),
    "ce_3d": lambda t: print(t.nn.functional.cross_entropy(t.ones(2, 3, 4), t.zeros(2, 4, dtype=t.long))),
    "ce_wrong_3d": lambda t: t.nn.functional.cross_entropy(t.ones(2, 3, 4), t.zeros(2, 5, dtype=t.long)),
    "ce_ignore_index": lambda t: print(t.nn.functional.cross_entropy(t.arange(6.0).reshape(2, 3), t.tensor([0, -100]))),
    "ce_weight_wrong": lambda t: t.nn.functional.cross_entropy(t.ones(2, 3), t.tensor([0, 1]), weight=t.ones(2)),
    "mse_int": lambda t: t.nn.functional.mse_loss(t.ones(2, dtype=t.long), t.ones(2, dtype=t.long)),
    "l1_grad": lambda t: print(t.nn.functional.l1_loss(t.tensor([1.0, 2.0], requires_grad=True), t.tensor([1.0, 0.0]))),
    "bce_logits_weight": lambda t: print(
        t.nn.functional.binary_cross_entropy_with_logits(
            t.tensor([0.5, -1.0]), t.tensor([1.0, 0.0]), pos_weight=t.tensor([2.0])
        )
    ),
    "reduction_bad": lambda t: t.nn.functional.mse_loss(t.ones(2), t.ones(2), reduction="avg"),
    "reduction_bad_module": lambda t: t.nn.MSELoss(reduction="foo")(t.ones(2), t.ones(2)),
    "size_average_deprecated": lambda t: print(t.nn.MSELoss(size_average=False)(t.ones(2), t.zeros(2))),
    "nll_2d_target": lambda t: print(t.nn.functional.nll_loss(t.ones(2, 3, 2, 2), t.zeros(2, 2, 2, dtype=t.long))),
    "kl_div_warn": lambda t: print(t.nn.functional.kl_div(t.tensor([-1.0, -2.0]), t.tensor([0.3, 0.7]))),
    "huber": lambda t: print(
        t.nn.functional.huber_loss(t.tensor([0.0, 3.0]), t.tensor([0.5, 0.0]), delta=1.5),
        t.nn.functional.smooth_l1_loss(t.tensor([0.0, 3.0]), t.tensor([0.5, 0.0]), beta=0.5),
    ),
    "flatten_unflatten_errors": lambda t: t.nn.Unflatten(1, (2, 2))(t.ones(3, 5)),
    "pad_modes": lambda t: print(
        t.nn.functional.pad(t.arange(4.0).reshape(1, 1, 4), (1, 2), mode="reflect"),
        t.nn.functional.pad(t.ones(1, 2), (1, 1), value=3.0),
    ),
    "interpolate": lambda t: print(
        t.nn.functional.interpolate(t.arange(4.0).reshape(1, 1, 2, 2), scale_factor=2, mode="nearest")
    ),
    "one_hot": lambda t: print(t.nn.functional.one_hot(t.tensor([0, 2]), 3), t.nn.functional.one_hot(t.tensor([0, 2]))),
    "one_hot_err": lambda t: t.nn.functional.one_hot(t.tensor([0, 3]), 3),
    "normalize": lambda t: print(t.nn.functional.normalize(t.tensor([[3.0, 4.0], [0.0, 0.0]]))),
    "cosine_sim": lambda t: print(t.nn.functional.cosine_similarity(t.tensor([[1.0, 0.0]]), t.tensor([[1.0, 1.0]]))),
    "gelu_tanh": lambda t: print(
        t.nn.functional.gelu(t.tensor([1.0, -1.0]), approximate="tanh"), t.nn.GELU(approximate="tanh")
    ),
    "activation_reprs": lambda t: print(
        t.nn.Softplus(beta=2, threshold=10),
        t.nn.Hardtanh(-2, 2),
        t.nn.PReLU(3),
        t.nn.Threshold(0.1, 20),
        t.nn.CELU(0.5),
        t.nn.LogSoftmax(dim=-1),
        t.nn.Softmin(1),
        t.nn.ReLU6(inplace=True),
    ),
    "loss_reprs": lambda t: print(
        t.nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=3),
        t.nn.BCEWithLogitsLoss(pos_weight=t.ones(1)),
        t.nn.NLLLoss(reduction="sum"),
        t.nn.HuberLoss(delta=2.0),
        t.nn.KLDivLoss(reduction="batchmean", log_target=True),
        t.nn.SmoothL1Loss(beta=0.5),
    ),
    "pool_reprs": lambda t: print(
        t.nn.MaxPool2d(3, stride=1, padding=1, return_indices=True),
        t.nn.AvgPool1d(2),
        t.nn.AdaptiveAvgPool2d((1, 1)),
        t.nn.MaxPool1d(2, ceil_mode=True),
        t.nn.Upsample(scale_factor=2),
    ),
    "norm_reprs": lambda t: print(
        t.nn.BatchNorm2d(3, momentum=None),
        t.nn.LayerNorm(4, elementwise_affine=False),
        t.nn.InstanceNorm2d(3),
        t.nn.GroupNorm(2, 4, eps=1e-3),
        t.nn.LayerNorm([2, 3], bias=False),
    ),
    "misc_reprs": lambda t: print(
        t.nn.Embedding(10, 3, max_norm=1.0),
        t.nn.Dropout2d(0.1),
        t.nn.ConvTranspose2d(2, 3, 3, stride=2, output_padding=1),
        t.nn.Conv2d(2, 3, 3, padding="same"),
        t.nn.Bilinear(2, 3, 4),
        t.nn.Flatten(0, -1),
        t.nn.Unflatten(1, (2, 2)),
        t.nn.Identity(3, x=2),
        t.nn.TransformerEncoderLayer(4, 2) if False else "",
    ),
    "one_hot_negative": lambda t: t.nn.functional.one_hot(t.tensor([-1, 0]), 3),
    "one_hot_empty": lambda t: t.nn.functional.one_hot(t.tensor([], dtype=t.long)),
    "one_hot_empty_given": lambda t: print(t.nn.functional.one_hot(t.tensor([], dtype=t.long), 3).shape),
    "linear_0d_weight": lambda t: t.nn.functional.linear(t.ones(3), t.tensor(1.0)),
    "cosine_similarity_values_grad": lambda t: (
        lambda a: (
            print(t.nn.functional.cosine_similarity(a, t.tensor([[1.0, 1.0], [0.0, 0.0]]))),
            t.nn.functional.cosine_similarity(a, t.tensor([[1.0, 1.0], [0.0, 0.0]])).sum().backward(),
            print(a.grad),
        )
    )(t.tensor([[1.0, 0.0], [3.0, 4.0]], requires_grad=True)),
    "cosine_similarity_broadcast_dtypes": lambda t: print(
        t.nn.functional.cosine_similarity(t.ones(2, 3), t.ones(3), dim=-1),
        t.nn.functional.cosine_similarity(t.ones(2, 3), t.ones(2, 3, dtype=t.float64)),
        t.cosine_similarity(t.ones(3), t.ones(3), dim=0, eps=0.1),
    ),
    "cosine_similarity_int": lambda t: t.nn.functional.cosine_similarity(t.tensor([1, 2]), t.tensor([2, 4]), dim=0),
    "cosine_similarity_shapes": lambda t: t.nn.functional.cosine_similarity(t.ones(2, 3), t.ones(2, 4)),
    "pairwise_distance_values_grad": lambda t: (
        lambda a: (
            print(t.nn.functional.pairwise_distance(a, t.tensor([[1.0, 1.0], [0.0, 0.0]]))),
            t.nn.functional.pairwise_distance(a, t.tensor([[1.0, 1.0], [0.0, 0.0]])).sum().backward(),
            print(a.grad),
        )
    )(t.tensor([[1.0, 0.0], [3.0, 4.0]], requires_grad=True)),
    "pairwise_distance_options": lambda t: print(
        t.nn.functional.pairwise_distance(t.ones(3), t.zeros(3), p=1, keepdim=True),
        t.pairwise_distance(t.ones(2), t.zeros(2), p=float("inf")),
    ),
    "distance_modules": lambda t: print(
        t.nn.CosineSimilarity(dim=0),
        t.nn.PairwiseDistance(p=1.0),
        t.nn.CosineSimilarity(dim=0)(t.ones(2), t.ones(2)),
        t.nn.PairwiseDistance(p=1.0)(t.ones(2, 2), t.zeros(2, 2)),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_scenario_matches_torch(name):
    assert_same_transcript(CASES[name])
