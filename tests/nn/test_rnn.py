"""Recurrent layers, sequence packing, transformer decoder, distributions and checkpoint on
their own (no torch needed): gradcheck in float64, packed input equal to running each sequence
alone, and properties the oracle tests do not cover."""

import numpy as np
import pytest
import scipy.stats

import minitorch_nn as mt
from minitorch_nn.autograd import gradcheck
from minitorch_nn.nn.utils.rnn import pack_sequence, pad_packed_sequence


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_packed_batch_equals_each_sequence_alone(mode):
    mt.manual_seed(0)
    m = getattr(mt.nn, mode)(3, 4, num_layers=2, bidirectional=True)
    seqs = [mt.randn(n, 3) for n in (2, 5, 3)]
    out, state = m(pack_sequence(seqs, enforce_sorted=False))
    padded, lengths = pad_packed_sequence(out)
    h = state[0] if mode == "LSTM" else state
    for b, seq in enumerate(seqs):
        alone, alone_state = m(seq.unsqueeze(1))
        alone_h = alone_state[0] if mode == "LSTM" else alone_state
        n = seq.size(0)
        np.testing.assert_allclose(padded[:n, b].detach().numpy(), alone[:, 0].detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(h[:, b].detach().numpy(), alone_h[:, 0].detach().numpy(), rtol=1e-5, atol=1e-6)
        assert (padded[n:, b] == 0).all()
    assert lengths.tolist() == [2, 5, 3]


@pytest.mark.parametrize("cell", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_gradcheck(cell):
    mt.manual_seed(0)
    c = getattr(mt.nn, cell)(3, 2, dtype=mt.float64)
    x = mt.randn(2, 3, dtype=mt.float64, requires_grad=True)
    assert gradcheck(lambda x: c(x), (x,))


def test_transformer_decoder_gradcheck_with_masks():
    mt.manual_seed(0)
    layer = mt.nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0, dtype=mt.float64, norm_first=True)
    tgt = mt.randn(3, 1, 4, dtype=mt.float64, requires_grad=True)
    mem = mt.randn(2, 1, 4, dtype=mt.float64, requires_grad=True)
    mask = mt.nn.Transformer.generate_square_subsequent_mask(3, dtype=mt.float64)
    assert gradcheck(lambda t, m: layer(t, m, tgt_mask=mask), (tgt, mem))


def test_distributions_match_scipy():
    x = mt.tensor([-1.0, 0.3, 2.0], dtype=mt.float64)
    d = mt.distributions.Normal(mt.tensor(0.5, dtype=mt.float64), mt.tensor(1.5, dtype=mt.float64))
    np.testing.assert_allclose(d.log_prob(x).numpy(), scipy.stats.norm(0.5, 1.5).logpdf(x.numpy()), rtol=1e-12)
    np.testing.assert_allclose(d.entropy().item(), scipy.stats.norm(0.5, 1.5).entropy(), rtol=1e-12)
    c = mt.distributions.Categorical(mt.tensor([0.2, 0.3, 0.5], dtype=mt.float64))
    np.testing.assert_allclose(c.entropy().item(), scipy.stats.entropy([0.2, 0.3, 0.5]), rtol=1e-12)
    mt.manual_seed(0)
    counts = np.bincount(c.sample((4000,)).numpy(), minlength=3) / 4000
    np.testing.assert_allclose(counts, [0.2, 0.3, 0.5], atol=0.03)


def test_checkpoint_gradients_equal_plain():
    mt.manual_seed(0)
    lin = mt.nn.Linear(3, 3, dtype=mt.float64)
    x = mt.randn(2, 3, dtype=mt.float64, requires_grad=True)

    def f(x):
        return (lin(x).tanh() * x).sum()

    f(x).backward()
    plain = (x.grad.numpy().copy(), lin.weight.grad.numpy().copy())
    x.grad = None
    lin.weight.grad = None
    mt.utils.checkpoint.checkpoint(f, x, use_reentrant=False).backward()
    np.testing.assert_allclose(x.grad.numpy(), plain[0], rtol=1e-12)
    np.testing.assert_allclose(lin.weight.grad.numpy(), plain[1], rtol=1e-12)
