"""Hidden graded tests (kept out of student copies): differential checks against the reference."""

import probes
import pytest


@pytest.mark.task("module-state-dict")
@pytest.mark.parametrize("seed", [0, 1])
def test_state_dict_matches_reference(mt, ref, assert_close, seed):
    assert_close(probes.state_dict_probe(mt, seed), ref(probes.state_dict_probe, seed))
