"""Every test under ``tests/twins/`` runs twice: with the switch ``backends.compiled`` on, and off.

With it on, the tests compare each compiled twin with the readable code it mirrors (the reference
of ``harness.py`` always runs with the switch off); with it off they check that the readable path
gives the same answers and that nothing compiled stands in for it.
"""

import pytest

from minitorch_nn.backends import compiled


@pytest.fixture(params=[True, False], ids=["compiled-on", "compiled-off"], autouse=True, scope="module")
def switch(request):
    """The switch for the tests of one module (the previous value comes back afterwards); a
    module-wide fixture, so that hypothesis tests may use it."""
    with compiled.flags(enabled=request.param):
        yield request.param
