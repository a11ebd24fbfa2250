"""Graded tests: replaying an exported graph (task export-replay)."""

import pytest


@pytest.mark.task("export-replay")
def test_exported_module_matches_eager(mt, assert_close):
    from minitorch_nn.export import export

    mt.manual_seed(0)
    model = mt.nn.Sequential(mt.nn.Linear(3, 4), mt.nn.ReLU(), mt.nn.Linear(4, 2))
    x = mt.randn(5, 3)
    ep = export(model, (x,))
    assert_close(ep.module()(x), model(x))
    y = mt.randn(5, 3)  # new inputs of the same shape replay the same graph
    assert_close(ep.module()(y), model(y))


@pytest.mark.task("export-replay")
def test_run_graph_checks_input_count(mt):
    from minitorch_nn.export import export
    from minitorch_nn.export.graph import run_graph

    ep = export(mt.nn.Linear(2, 2), (mt.ones(1, 2),))
    with pytest.raises(RuntimeError, match="inputs, got 0"):
        run_graph(ep.graph, [])
