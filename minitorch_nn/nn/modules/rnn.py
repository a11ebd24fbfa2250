"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their one-step cells (mirrors
``torch/nn/modules/rnn.py``).

One time step of each, for input ``x`` and previous hidden state ``h`` (``W_ih``/``b_ih`` act on
the input, ``W_hh``/``b_hh`` on the hidden state; gates are stacked along the first dimension of
the weights in PyTorch's order)::

    RNN:   h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)        (or relu)
    LSTM:  i, f, g, o = chunks of (x W_ih^T + b_ih + h W_hh^T + b_hh)
           c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
           h' = sigmoid(o) * tanh(c')          then h' = h' W_hr^T when proj_size > 0
    GRU:   r, z, n_x = chunks of (x W_ih^T + b_ih);  _, _, n_h = chunks of (h W_hh^T + b_hh)
           r = sigmoid(r_x + r_h);  z = sigmoid(z_x + z_h);  n = tanh(n_x + r * n_h)
           h' = n + z * (h - n)

A full layer runs the step over time. ``x W_ih^T + b_ih`` does not depend on the state, so it is
computed for every step at once (one matrix product per layer and direction, as PyTorch does);
only the ``h W_hh^T`` part runs step by step. For the LSTM, ``b_hh`` is added to that
precomputed part too, so a step starts with a single ``addmm(x_part, h, W_hh^T)``: fewer ops per
step is what matters at these sizes (the sum is the same up to the order of float additions). A reverse direction walks the steps backwards.
Layers stack: layer ``l+1`` reads layer ``l``'s output (both directions concatenated), with
dropout between layers in training mode.

Packed input (``nn.utils.rnn.PackedSequence``) is handled directly: step ``t`` has only
``batch_sizes[t]`` live sequences, the first rows of the state; the other rows keep their value,
so each sequence's final state is the state after its own last step.

Everything is written with ordinary tensor ops, so autograd (and ``gradcheck``) works through it.
Parameter names, shapes and initialisation (``uniform_(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``
on every parameter, in registration order) are PyTorch's, so seeded weights and state dicts are
interchangeable.

Differences from PyTorch: no cuDNN (``flatten_parameters`` does nothing), and results agree with
PyTorch's fused CPU kernels to rounding rather than bit for bit.
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import minitorch_nn as _t
from minitorch_nn._warnings import warn_user
from minitorch_nn.nn import functional as F
from minitorch_nn.nn import init
from minitorch_nn.nn.modules.module import Module
from minitorch_nn.nn.parameter import Parameter
from minitorch_nn.nn.utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


class _Input(NamedTuple):
    """What ``forward`` was given, as the layer loop needs it (see ``RNNBase._prepare``)."""

    data: object  # (T, B, F) / (B, T, F) tensor, or the packed (N, F) data
    packed: bool
    batch_sizes: object  # PackedSequence.batch_sizes, or None
    sorted_indices: object
    unsorted_indices: object
    is_batched: bool
    batch_dim: int | None  # where the batch dimension was added for unbatched input
    max_batch_size: int


# ---------------------------------------------------------------------- one time step
def _rnn_step(x_part, h, w_hh, b_hh, nonlinearity):
    """``x_part`` is ``x W_ih^T + b_ih``, already computed."""
    pre = x_part + F.linear(h, w_hh, b_hh)
    return _t.tanh(pre) if nonlinearity == "tanh" else _t.relu(pre)


def _lstm_step(x_part, state, w_hh_t, w_hr):
    """``x_part`` is ``x W_ih^T + b_ih + b_hh`` and ``w_hh_t`` is ``W_hh^T``."""
    h, c = state
    gates = _t.addmm(x_part, h, w_hh_t)
    i, f, g, o = gates.chunk(4, 1)
    c_next = _t.sigmoid(f) * c + _t.sigmoid(i) * _t.tanh(g)
    h_next = _t.sigmoid(o) * _t.tanh(c_next)
    if w_hr is not None:
        h_next = F.linear(h_next, w_hr)
    return h_next, c_next


def _gru_step(x_part, h, w_hh, b_hh):
    r_x, z_x, n_x = x_part.chunk(3, 1)
    r_h, z_h, n_h = F.linear(h, w_hh, b_hh).chunk(3, 1)
    r = _t.sigmoid(r_x + r_h)
    z = _t.sigmoid(z_x + z_h)
    n = _t.tanh(n_x + r * n_h)
    return n + z * (h - n)


def _step(mode, x_part, state, w_hh, b_hh, w_hr):
    if mode == "LSTM":
        return _lstm_step(x_part, state, w_hh, w_hr)  # (w_hh is W_hh^T here, b_hh folded in x_part)
    if mode == "GRU":
        return _gru_step(x_part, state, w_hh, b_hh)
    return _rnn_step(x_part, state, w_hh, b_hh, "tanh" if mode == "RNN_TANH" else "relu")


# ---------------------------------------------------------------------- one layer, one direction
def _live_rows(state, live):
    """The rows of the state taking part in this step (all of them unless the input is packed;
    no slicing then, so no extra op per step)."""
    return state if live == state.size(0) else state[:live]


def _keep_rows(new, old, live):
    """The state after a step in which only the first ``live`` rows (sequences) took part."""
    if live == old.size(0):
        return new
    return _t.cat([new, old[live:]], 0)


def _run_direction(mode, x_parts, state, w_hh, b_hh, w_hr, reverse):
    """Run the recurrence over the per-step inputs ``x_parts`` (each ``(live_t, gates)``).

    Returns the per-step outputs (``h`` of the live rows) and the final state.
    """
    steps = range(len(x_parts) - 1, -1, -1) if reverse else range(len(x_parts))
    outputs = [None] * len(x_parts)
    for t in steps:
        live = x_parts[t].size(0)
        if mode == "LSTM":
            h, c = state
            h_new, c_new = _step(mode, x_parts[t], (_live_rows(h, live), _live_rows(c, live)), w_hh, b_hh, w_hr)
            state = (_keep_rows(h_new, h, live), _keep_rows(c_new, c, live))
            outputs[t] = h_new
        else:
            h_new = _step(mode, x_parts[t], _live_rows(state, live), w_hh, b_hh, w_hr)
            state = _keep_rows(h_new, state, live)
            outputs[t] = h_new
    return outputs, state


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: parameters, checks, the layer loop."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warn_user(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
            )
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size

        # registration order decides the order of the init draws: keep PyTorch's
        self._flat_weights_names = []
        self._all_weights = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                suffix = "_reverse" if direction == 1 else ""
                params = {
                    f"weight_ih_l{layer}{suffix}": _t.empty((gate_size, layer_input_size), **factory_kwargs),
                    f"weight_hh_l{layer}{suffix}": _t.empty((gate_size, real_hidden_size), **factory_kwargs),
                }
                if bias:
                    params[f"bias_ih_l{layer}{suffix}"] = _t.empty(gate_size, **factory_kwargs)
                    params[f"bias_hh_l{layer}{suffix}"] = _t.empty(gate_size, **factory_kwargs)
                if proj_size > 0:
                    params[f"weight_hr_l{layer}{suffix}"] = _t.empty((proj_size, hidden_size), **factory_kwargs)
                for name, value in params.items():
                    setattr(self, name, Parameter(value))
                self._flat_weights_names.extend(params)
                self._all_weights.append(list(params))
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Does nothing: it packs weights for cuDNN in PyTorch."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -------------------------------------------------------------- checks (PyTorch's messages)
    def check_input(self, input, batch_sizes) -> None:
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). "
                f"Convert input: input.to({weight_dtype}), or convert model: model.to({input.dtype})"
            )
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}") -> None:
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # -------------------------------------------------------------- the layer loop
    def _layer_params(self, layer, direction):
        suffix = "_reverse" if direction == 1 else ""
        get = lambda name: getattr(self, f"{name}_l{layer}{suffix}", None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    def _run(self, x, batch_sizes, hx):
        """The stacked recurrence. ``x`` is ``(T, B, in)``, or packed ``(N, in)`` with
        ``batch_sizes``; ``hx`` is ``(L*D, B, H)`` (a pair for LSTM). Returns output and state."""
        num_directions = 2 if self.bidirectional else 1
        sizes = batch_sizes.tolist() if batch_sizes is not None else None
        final_h, final_c = [], []
        for layer in range(self.num_layers):
            direction_outputs = []
            for direction in range(num_directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_params(layer, direction)
                index = layer * num_directions + direction
                # the input part of every step in one product
                x_all = F.linear(x, w_ih, b_ih)
                if self.mode == "LSTM":  # see the module docstring
                    if b_hh is not None:
                        x_all = x_all + b_hh
                    w_hh, b_hh = w_hh.t(), None
                x_parts = list(x_all.split(sizes, 0)) if sizes is not None else list(x_all.unbind(0))
                state = (hx[0][index], hx[1][index]) if self.mode == "LSTM" else hx[index]
                outputs, state = _run_direction(self.mode, x_parts, state, w_hh, b_hh, w_hr, direction == 1)
                if self.mode == "LSTM":
                    final_h.append(state[0])
                    final_c.append(state[1])
                else:
                    final_h.append(state)
                direction_outputs.append(_t.cat(outputs, 0) if sizes is not None else _t.stack(outputs, 0))
            x = direction_outputs[0] if num_directions == 1 else _t.cat(direction_outputs, -1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        hidden = _t.stack(final_h, 0)
        if self.mode == "LSTM":
            hidden = (hidden, _t.stack(final_c, 0))
        return x, hidden

    def _prepare(self, input):
        """Shared front half of ``forward``: unpack a PackedSequence, or add a batch dimension."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            return _Input(data, True, batch_sizes, sorted_indices, unsorted_indices, True, None,
                          int(batch_sizes[0]))
        if input.dim() not in (2, 3):
            # (PyTorch's RNN says "...D tensor instead", its LSTM and GRU "...D instead")
            what = "D tensor" if self.mode.startswith("RNN") else "D"
            name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}{what} instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        return _Input(input, False, None, None, None, is_batched, batch_dim, input.size(batch_dim))

    def _finish(self, output, hidden, given):
        """Shared back half of ``forward``: repack, or put the batch dimension back as given."""
        if given.packed:
            return (PackedSequence(output, given.batch_sizes, given.sorted_indices, given.unsorted_indices),
                    self.permute_hidden(hidden, given.unsorted_indices))
        if self.batch_first:
            output = output.transpose(0, 1)
        if not given.is_batched:
            output = output.squeeze(given.batch_dim)
            hidden = tuple(h.squeeze(1) for h in hidden) if isinstance(hidden, tuple) else hidden.squeeze(1)
            return output, hidden
        return output, hidden

    def _time_major(self, input, packed):
        return input.transpose(0, 1) if (self.batch_first and not packed) else input

    def _forward_single_state(self, input, hx):
        """``forward`` of RNN and GRU, whose state is one tensor."""
        given = self._prepare(input)
        input = given.data
        num_directions = 2 if self.bidirectional else 1
        if not given.packed and hx is not None:
            if not given.is_batched:
                if hx.dim() != 2:
                    raise RuntimeError(
                        f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor"
                    )
                hx = hx.unsqueeze(1)
            elif hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        if hx is None:
            hx = _t.zeros(self.num_layers * num_directions, given.max_batch_size, self.hidden_size,
                          dtype=input.dtype, device=input.device)
        else:
            hx = self.permute_hidden(hx, given.sorted_indices)
        self.check_forward_args(input, hx, given.batch_sizes)
        output, hidden = self._run(self._time_major(input, given.packed), given.batch_sizes, hx)
        return self._finish(output, hidden, given)



class RNN(RNNBase):
    """Elman RNN with ``tanh`` (default) or ``relu``: ``RNN(input_size, hidden_size, num_layers=1,
    nonlinearity='tanh', bias=True, batch_first=False, dropout=0.0, bidirectional=False)``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_single_state(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit: ``GRU(input_size, hidden_size, num_layers=1, bias=True,
    batch_first=False, dropout=0.0, bidirectional=False)``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_single_state(input, hx)


class LSTM(RNNBase):
    """Long short-term memory: ``LSTM(input_size, hidden_size, num_layers=1, bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, proj_size=0)``; state is ``(h, c)``."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx=None):
        given = self._prepare(input)
        input = given.data
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            layers = self.num_layers * num_directions
            hx = (_t.zeros(layers, given.max_batch_size, real_hidden_size, dtype=input.dtype, device=input.device),
                  _t.zeros(layers, given.max_batch_size, self.hidden_size, dtype=input.dtype, device=input.device))
        else:
            if not given.packed:
                if given.is_batched:
                    if hx[0].dim() != 3 or hx[1].dim() != 3:
                        raise RuntimeError(
                            "For batched 3-D input, hx and cx should also be 3-D but got "
                            f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                        )
                else:
                    if hx[0].dim() != 2 or hx[1].dim() != 2:
                        raise RuntimeError(
                            "For unbatched 2-D input, hx and cx should also be 2-D but got "
                            f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                        )
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            hx = self.permute_hidden(hx, given.sorted_indices)
        self.check_forward_args(input, hx, given.batch_sizes)
        output, hidden = self._run(self._time_major(input, given.packed), given.batch_sizes, hx)
        return self._finish(output, hidden, given)


# ---------------------------------------------------------------------- cells
class RNNCellBase(Module):
    """What the cells share: ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_t.empty((num_chunks * hidden_size, input_size), **factory_kwargs))
        self.weight_hh = Parameter(_t.empty((num_chunks * hidden_size, hidden_size), **factory_kwargs))
        if bias:
            self.bias_ih = Parameter(_t.empty(num_chunks * hidden_size, **factory_kwargs))
            self.bias_hh = Parameter(_t.empty(num_chunks * hidden_size, **factory_kwargs))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check_dims(self, input, states):
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for label, value in states:
            if value is not None and value.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {value.dim()}D instead")

    def _check_sizes(self, input, hx):
        if input.size(1) != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}"
            )
        if hx.size(0) != input.size(0):
            raise RuntimeError(
                f"Input batch size {input.size(0)} doesn't match hidden0 batch size {hx.size(0)}"
            )
        if hx.size(1) != self.hidden_size:
            raise RuntimeError(
                f"hidden0 has inconsistent hidden_size: got {hx.size(1)}, expected {self.hidden_size}"
            )


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        self._check_dims(input, [("hidden", hx)])
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = _t.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check_sizes(input, hx)
        out = _rnn_step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh,
                        self.nonlinearity)
        return out if is_batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; state and result are ``(h, c)``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        states = [] if hx is None else [(f"hx[{i}]", value) for i, value in enumerate(hx)]
        self._check_dims(input, states)
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = _t.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        self._check_sizes(input, hx[0])
        x_part = F.linear(input, self.weight_ih, self.bias_ih)
        if self.bias_hh is not None:
            x_part = x_part + self.bias_hh
        h, c = _lstm_step(x_part, hx, self.weight_hh.t(), None)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        self._check_dims(input, [("hidden", hx)])
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = _t.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        self._check_sizes(input, hx)
        out = _gru_step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh)
        return out if is_batched else out.squeeze(0)
