"""Oracle: ``nn.RNN``/``LSTM``/``GRU``, their cells and ``nn.utils.rnn`` against PyTorch 2.13.

Under the same seed both libraries build identical weights (same names, shapes, order of init
draws), so the scenarios compare outputs, final states and parameter gradients directly (to float
rounding: PyTorch runs fused kernels), state dicts loaded across in both directions, packed
sequences (sorted and unsorted, through every module and back), printed reprs and error messages.
``gradcheck`` runs on the float64 modules, through packing too.
"""

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402
from minitorch_nn.autograd import gradcheck  # noqa: E402

LIBS = (mt, torch)
TOL = {"rtol": 1e-5, "atol": 1e-6}


def _np(x):
    return x.detach().numpy()


def _flat(out):
    """Output and state(s) of a recurrent module as a list of numpy arrays."""
    if hasattr(out, "batch_sizes"):  # PackedSequence (a namedtuple: test it first)
        return [_np(out.data), out.batch_sizes.numpy()]
    if isinstance(out, (tuple, list)):
        return [a for o in out for a in _flat(o)]
    return [_np(out)]


def _close(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, **TOL)


def _build(lib, mode, seed=0, **kwargs):
    lib.manual_seed(seed)
    return getattr(lib.nn, mode)(**kwargs)


CONFIGS = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2, "bias": False}),
    ("RNN", {"bidirectional": True, "batch_first": True}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 3, "num_layers": 2, "batch_first": True}),
    ("LSTM", {"proj_size": 2, "bidirectional": True, "bias": False}),
    ("GRU", {}),
    ("GRU", {"num_layers": 3, "bidirectional": True, "batch_first": True}),
]


def _with_state(lib, mode, kwargs, batch):
    """A random initial state of the right shape for the module (drawn after the weights)."""
    d = 2 if kwargs.get("bidirectional") else 1
    layers = kwargs.get("num_layers", 1) * d
    h_size = kwargs.get("proj_size", 0) or 6
    h = lib.randn(layers, batch, h_size)
    if mode == "LSTM":
        return (h, lib.randn(layers, batch, 6))
    return h


@pytest.mark.parametrize("mode,kwargs", CONFIGS)
def test_forward_backward_and_weights(mode, kwargs):
    results = []
    for lib in LIBS:
        m = _build(lib, mode, input_size=5, hidden_size=6, **kwargs)
        x = lib.randn(3, 4, 5, requires_grad=True)  # (B, T, F) when batch_first, (T, B, F) otherwise
        hx = _with_state(lib, mode, kwargs, 3 if kwargs.get("batch_first") else 4)
        out, state = m(x, hx)
        loss = out.pow(2).sum() + sum(s.sum() for s in (state if isinstance(state, tuple) else (state,)))
        loss.backward()
        params = [(name, _np(p), _np(p.grad)) for name, p in m.named_parameters()]
        results.append((_flat((out, state)), params, _np(x.grad), repr(m)))
    (o1, p1, g1, r1), (o2, p2, g2, r2) = results
    _close(o1, o2)
    assert [n for n, _, _ in p1] == [n for n, _, _ in p2]
    for (_, w1, gw1), (_, w2, gw2) in zip(p1, p2):
        np.testing.assert_array_equal(w1, w2)  # seeded initial weights: identical
        np.testing.assert_allclose(gw1, gw2, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g1, g2, rtol=1e-4, atol=1e-5)
    assert r1 == r2


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_unbatched_default_state_and_all_weights(mode):
    outs = []
    for lib in LIBS:
        m = _build(lib, mode, input_size=3, hidden_size=4, num_layers=2)
        x = lib.randn(5, 3)
        outs.append((_flat(m(x)), [[n for n in names] for names in m._all_weights]))
    _close(outs[0][0], outs[1][0])
    assert outs[0][1] == outs[1][1]


@pytest.mark.parametrize("mode,kwargs", CONFIGS[::2])
def test_state_dict_loads_both_ways(mode, kwargs):
    for src, dst in ((mt, torch), (torch, mt)):
        a = _build(src, mode, seed=1, input_size=5, hidden_size=6, **kwargs)
        b = _build(dst, mode, seed=2, input_size=5, hidden_size=6, **kwargs)
        state = {k: dst.tensor(_np(v)) for k, v in a.state_dict().items()}
        b.load_state_dict(state)
        x = np.random.default_rng(0).standard_normal((2, 3, 5)).astype(np.float32)
        _close(_flat(a(src.tensor(x))), _flat(b(dst.tensor(x))))


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequences_through_modules(mode, enforce_sorted):
    lengths = [4, 3, 3, 1] if enforce_sorted else [2, 4, 1, 3]
    results = []
    for lib in LIBS:
        m = _build(lib, mode, input_size=3, hidden_size=4, num_layers=2, bidirectional=True)
        seqs = [lib.randn(n, 3, requires_grad=True) for n in lengths]
        padded = lib.nn.utils.rnn.pad_sequence(seqs, batch_first=True)
        packed = lib.nn.utils.rnn.pack_padded_sequence(padded, lengths, batch_first=True,
                                                       enforce_sorted=enforce_sorted)
        packed_out, state = m(packed)
        out, out_lengths = lib.nn.utils.rnn.pad_packed_sequence(packed_out, batch_first=True, total_length=5)
        (out.sum() + (state[0] if mode == "LSTM" else state).sum()).backward()
        results.append((_flat((packed_out, state)), _np(out), out_lengths.tolist(),
                        [_np(s.grad) for s in seqs], _flat(packed.sorted_indices) if not enforce_sorted else None))
    _close(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1], **TOL)
    assert results[0][2] == results[1][2] == lengths
    _close(results[0][3], results[1][3])
    if not enforce_sorted:
        np.testing.assert_array_equal(results[0][4][0], results[1][4][0])


def test_rnn_utils_functions():
    outs = []
    for lib in LIBS:
        lib.manual_seed(0)
        u = lib.nn.utils.rnn
        seqs = [lib.randn(n, 2) for n in (3, 5, 2)]
        left = u.pad_sequence(seqs, batch_first=True, padding_value=-1.0, padding_side="left")
        packed = u.pack_sequence(seqs, enforce_sorted=False)
        unpacked = u.unpack_sequence(packed)
        padded, lengths = u.pad_packed_sequence(packed)
        outs.append([_np(left), _np(packed.data), packed.batch_sizes.tolist(), packed.sorted_indices.tolist(),
                     packed.unsorted_indices.tolist(), [_np(s) for s in unpacked], _np(padded), lengths.tolist(),
                     [_np(s) for s in u.unpad_sequence(padded, lengths)]])
    for a, b in zip(*outs):
        if isinstance(a, list) and a and isinstance(a[0], np.ndarray):
            _close(a, b)
        elif isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b


@pytest.mark.parametrize("cell,kwargs", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu", "bias": False}),
                                         ("LSTMCell", {}), ("GRUCell", {})])
def test_cells(cell, kwargs):
    results = []
    for lib in LIBS:
        c = _build(lib, cell, input_size=3, hidden_size=4, **kwargs)
        x = lib.randn(2, 3, requires_grad=True)
        out = c(x)
        out1 = c(x[0])  # unbatched
        out2 = c(x, out)  # with a state
        total = sum(o.sum() for o in _iter(out2))
        total.backward()
        results.append((_flat((out, out1, out2)), [_np(p.grad) for p in c.parameters()], repr(c),
                        [n for n, _ in c.named_parameters()]))
    _close(results[0][0], results[1][0])
    _close(results[0][1], results[1][1])
    assert results[0][2:] == results[1][2:]


def _iter(out):
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("mode,kwargs", [("RNN", {"num_layers": 2, "bidirectional": True}),
                                         ("LSTM", {"proj_size": 2, "bidirectional": True}),
                                         ("GRU", {"num_layers": 2})])
def test_gradcheck_float64(mode, kwargs):
    mt.manual_seed(0)
    m = getattr(mt.nn, mode)(3, 4, dtype=mt.float64, **kwargs)
    x = mt.randn(3, 2, 3, dtype=mt.float64, requires_grad=True)

    def f(x, *params):
        out, state = mt.func.functional_call(m, dict(zip(names, params)), (x,))
        return out, *(state if isinstance(state, tuple) else (state,))

    names = [n for n, _ in m.named_parameters()]
    params = [p.detach().clone().requires_grad_() for p in m.parameters()]
    assert gradcheck(f, (x, *params))


def test_gradcheck_through_packing():
    mt.manual_seed(0)
    m = mt.nn.GRU(2, 3, dtype=mt.float64, bidirectional=True)
    seqs = [mt.randn(n, 2, dtype=mt.float64, requires_grad=True) for n in (2, 3, 1)]

    def f(*seqs):
        packed = mt.nn.utils.rnn.pack_sequence(list(seqs), enforce_sorted=False)
        out, h = m(packed)
        return mt.nn.utils.rnn.pad_packed_sequence(out)[0], h

    assert gradcheck(f, tuple(seqs))


def test_dropout_between_layers_draws_pytorch_masks():
    outs = []
    for lib in LIBS:
        m = _build(lib, "LSTM", input_size=3, hidden_size=4, num_layers=3, dropout=0.3, bidirectional=True)
        outs.append(_flat(m(lib.randn(5, 2, 3))))
    _close(outs[0], outs[1])


def test_eval_dropout_is_identity_and_training_dropout_changes_output():
    for lib in LIBS:
        m = _build(lib, "LSTM", input_size=3, hidden_size=4, num_layers=2, dropout=0.5)
        x = lib.randn(4, 2, 3)
        m.eval()
        a, _ = m(x)
        b, _ = m(x)
        assert (a == b).all()
        m.train()
        c, _ = m(x)
        assert not np.allclose(_np(a), _np(c))


def _err(fn):
    out = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            fn(lib)
        out.append((info.type.__name__, str(info.value).split("\n")[0]))
    assert out[0] == out[1]


@pytest.mark.parametrize("ctor", [
    lambda lib: lib.nn.RNN(3, 4, nonlinearity="sigmoid"),
    lambda lib: lib.nn.RNN(3, 4, proj_size=2),
    lambda lib: lib.nn.GRU(3, 4, proj_size=2),
    lambda lib: lib.nn.LSTM(3, 4, proj_size=4),
    lambda lib: lib.nn.LSTM(3, 4, proj_size=-1),
    lambda lib: lib.nn.LSTM(3, 0),
    lambda lib: lib.nn.LSTM(0, 4),
    lambda lib: lib.nn.LSTM(3, 4, num_layers=0),
    lambda lib: lib.nn.LSTM(3, 4, dropout=1.5),
    lambda lib: lib.nn.LSTM(3, 4, bias=1),
    lambda lib: lib.nn.LSTM(3.0, 4),
])
def test_constructor_errors(ctor):
    _err(ctor)


@pytest.mark.parametrize("call", [
    lambda lib, m: m(lib.randn(2, 3, 4, 5)),
    lambda lib, m: m(lib.randn(2, 3, 7)),
    lambda lib, m: m(lib.randn(2, 3, 5, dtype=lib.float64)),
    lambda lib, m: m(lib.randn(2, 3, 5), (lib.randn(1, 3, 6), lib.randn(1, 2, 6))),
    lambda lib, m: m(lib.randn(2, 3, 5), (lib.randn(3, 6), lib.randn(1, 3, 6))),
    lambda lib, m: m(lib.randn(2, 5), (lib.randn(1, 1, 6), lib.randn(1, 1, 6))),
])
def test_forward_errors(call):
    _err(lambda lib: call(lib, lib.nn.LSTM(5, 6)))


def test_rnn_hidden_and_cell_errors():
    _err(lambda lib: lib.nn.RNN(5, 6)(lib.randn(2, 3, 4, 5)))
    _err(lambda lib: lib.nn.GRU(5, 6)(lib.randn(2, 3, 4, 5)))
    _err(lambda lib: lib.nn.GRU(5, 6)(lib.randn(2, 3, 5), lib.randn(2, 3, 6)))
    _err(lambda lib: lib.nn.RNN(5, 6)(lib.randn(2, 5), lib.randn(1, 1, 6)))
    _err(lambda lib: lib.nn.GRUCell(5, 6)(lib.randn(2, 2, 5)))
    _err(lambda lib: lib.nn.LSTMCell(5, 6)(lib.randn(2, 5), (lib.randn(1, 2, 2, 6), lib.randn(2, 6))))
    _err(lambda lib: lib.nn.RNNCell(5, 6)(lib.randn(2, 4)))
    _err(lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.randn(4, 2, 1), [2, 3]))
    _err(lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.randn(4, 2, 1), [2, 0]))
    _err(lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_sequence([lib.randn(3, 1)]), total_length=2))


def test_isinstance_relations_as_pytorch():
    pairs = itertools.product(["RNN", "LSTM", "GRU"], repeat=2)
    for a, b in pairs:
        assert isinstance(getattr(mt.nn, a)(2, 3), getattr(mt.nn, b)) == isinstance(getattr(torch.nn, a)(2, 3), getattr(torch.nn, b))


@pytest.mark.parametrize("mode", ["GRU", "LSTM"])
def test_packed_unsorted_with_initial_state(mode):
    """A given state is in the caller's batch order; the module sorts it with the sequences and
    returns the final state in the caller's order again."""
    outs = []
    for lib in LIBS:
        m = _build(lib, mode, input_size=3, hidden_size=4, bidirectional=True, batch_first=True)
        seqs = [lib.randn(n, 3) for n in (2, 4, 3)]
        h = lib.randn(2, 3, 4)
        hx = (h, lib.randn(2, 3, 4)) if mode == "LSTM" else h
        outs.append(_flat(m(lib.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False), hx)))
    _close(outs[0], outs[1])
