"""The kernel twins reach the compiled recorder through the gate's recorder slot (``_gate.pxd``).

The kernel twins sit below autograd and do not import the recorder twin
(``tests/test_layers.py`` checks that); the recorder twin fills the slot when
``autograd/recording.py`` is imported, as ``autograd/__init__.py`` fills the dispatcher's
``autograd_layer``. These tests check that it is filled with that twin, and that the gate's copy
of "recording.autograd_layer is unchanged" follows the readable module.
"""

import minitorch_nn as mt
from minitorch_nn import _dispatch
from minitorch_nn._twins import _gate
from minitorch_nn._twins.autograd import recording as _twin
from minitorch_nn.autograd import recording

_FUNCTIONS = ("ready", "recipe_for", "recipe_of", "record", "record_general", "record_computed")


def test_the_recorder_twin_fills_the_slot_when_autograd_is_imported():
    slot = _gate.recorder_slot()
    assert {name: slot[name] for name in _FUNCTIONS} == dict.fromkeys(_FUNCTIONS, True)
    assert slot["layer"] is _twin.autograd_layer
    # the layer the dispatcher holds is the one the kernel twins compare with
    assert _dispatch.autograd_layer is slot["layer"]
    assert slot["layer_unchanged"] is True


def test_a_replaced_recording_autograd_layer_clears_the_gates_flag_and_runs(monkeypatch):
    original = recording.autograd_layer
    calls = []

    def counting_layer(op, args, kwargs):
        calls.append(op)
        return original(op, args, kwargs)

    monkeypatch.setattr(recording, "autograd_layer", counting_layer)
    assert _gate.recorder_slot()["layer_unchanged"] is False
    a, b = mt.ones(2), mt.ones(2)
    assert (a + b).tolist() == [2.0, 2.0]
    # with the switch off the dispatcher's layer hands every op to recording.autograd_layer; with it
    # on, the kernel twins step aside (the flag is false) and the same happens
    assert calls, "the replaced recording.autograd_layer did not see a + b"
    monkeypatch.undo()
    assert _gate.recorder_slot()["layer_unchanged"] is True
