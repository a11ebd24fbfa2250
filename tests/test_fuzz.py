"""The crash fuzzers (``tests/fuzzing.py``) in their CI-sized profile, with hypothesis drawing the
cases: geometry/op chains over adversarial integers, mutated checkpoints, mutated safetensors
headers. Every case runs in a pool of subprocesses, so a crash is a counted failure with the case
that caused it, not the end of the test run. The long profile is
``python -m tests.fuzzing --long``.
"""

from __future__ import annotations

import json
import random

import pytest
from fuzzing import Pool, build_corpus, generate_chain, generate_checkpoint, generate_safetensors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CI = settings(max_examples=4, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    corpus = build_corpus(str(tmp_path_factory.mktemp("corpus")))
    p = Pool(2, corpus, timeout=10.0)
    p.corpus_size = len(corpus)
    yield p
    p.close()


def assert_clean(stats):
    assert not stats.crashes, "crashed on:\n" + "\n".join(json.dumps(c) for _, c in stats.crashes[:3])
    assert not stats.hangs, "hung on:\n" + "\n".join(json.dumps(c) for c in stats.hangs[:3])
    assert not stats.harness_errors, stats.harness_errors[:3]
    assert not stats.peak_over_4x, stats.peak_over_4x[:3]


def rngs(seed, n):
    """``n`` independent random streams from one hypothesis-drawn seed (a batch of cases per
    example keeps the subprocess round trips cheap; a failing batch shrinks to its seed)."""
    return [random.Random(seed * 100_003 + i) for i in range(n)]


@CI
@given(st.integers(0, 2**32))
def test_geometry_and_op_chains_never_crash(pool, seed):
    stats = pool.run([generate_chain(r) for r in rngs(seed, 250)])
    assert_clean(stats)
    assert stats.cases == {"chain": 250}


@CI
@given(st.integers(0, 2**32))
def test_mutated_checkpoints_never_crash_and_stay_bounded(pool, seed):
    stats = pool.run([generate_checkpoint(r, pool.corpus_size) for r in rngs(seed, 120)])
    assert_clean(stats)
    # the unmutated controls load (a reader that refused everything would pass the rest)
    assert stats.outcomes.get(("checkpoint", "loaded"), 0) > 0, stats.outcomes


@CI
@given(st.integers(0, 2**32))
def test_mutated_safetensors_never_crash(pool, seed):
    stats = pool.run([generate_safetensors(r) for r in rngs(seed, 60)])
    assert_clean(stats)
    assert sum(v for (kind, _), v in stats.outcomes.items() if kind == "safetensors") == 60
