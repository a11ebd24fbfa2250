"""Shared pieces of the scenario sweeps (``test_scenarios_*_oracle.py``).

A scenario is a function of ``lib`` (``torch`` or ``minitorch_nn``), written the way a course or
a grader would write it after ``import minitorch_nn as torch``. ``transcript(fn, lib)`` runs it and
returns everything a person would see: what it printed, the ``repr`` of what it returned, the
type and text of an exception it raised, and every warning (category and text). The tests
compare the two transcripts character for character.

Scenarios must not print object addresses (``<... object at 0x...>``); print ``type(x).__name__``
or ``node.name()`` instead. Scenarios that change global state (print options, ``__future__``
flags, the default dtype) restore it in a ``finally``; the autouse fixture below restores the
random generators.
"""

import contextlib
import io
import re
import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402


@pytest.fixture(autouse=True)
def keep_global_rng_state():
    # Scenarios call manual_seed; leave both generators as they were for the files that run after.
    states = torch.get_rng_state(), mt.get_rng_state()
    yield
    torch.set_rng_state(states[0])
    mt.set_rng_state(states[1])


def transcript(fn, lib) -> str:
    """What running ``fn(lib)`` shows: stdout, the returned value's repr, the error, the warnings."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(lib)
            if result is not None:
                print(repr(result))
        except Exception as e:  # noqa: BLE001 - the type and text are what we compare
            print(f"raised {type(e).__name__}: {e}")
    for w in caught:
        # PyTorch's C++ warnings end with where they were raised in its build tree; that is not behaviour
        text = re.sub(r" \(Triggered internally at [^)]*\.\)$", "", str(w.message))
        print(f"warned {w.category.__name__}: {text}", file=out)
    return out.getvalue()


def assert_same_transcript(fn):
    expected = transcript(fn, torch)
    got = transcript(fn, mt)
    assert got == expected, f"\n--- PyTorch ---\n{expected}\n--- minitorch_nn ---\n{got}"


def scenarios():
    """A registry and its decorator: ``CASES, case = scenarios()``; ``@case`` adds a function by name."""
    registry = {}

    def case(fn):
        assert fn.__name__ not in registry, fn.__name__
        registry[fn.__name__] = fn
        return fn

    return registry, case
