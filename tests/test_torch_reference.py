"""The recorded PyTorch outputs the tutorials show where PyTorch is not installed.

Each tutorial's "Compare with PyTorch" section calls ``compare_with_pytorch(story, name)``
(``minitorch_nn/testing/pytorch_side.py``). Without torch, PyTorch's side comes from
``tutorials/torch_reference/<name>.json``, written by ``tools/record_torch_outputs.py``. These
tests check that every story has a recording, that the helper reads it and flags a difference,
and, whenever torch 2.13 is installed, run every story with torch again and compare with the
recording, so the recordings cannot go stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from minitorch_nn.testing import pytorch_side

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "tutorials").glob("plot_*.py"))


def _recorder():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import record_torch_outputs
    finally:
        sys.path.pop(0)
    return record_torch_outputs


@pytest.mark.parametrize("script", TUTORIALS, ids=lambda p: p.stem)
def test_every_tutorial_has_a_story_and_a_recording(script):
    if "# Compare with PyTorch\n" not in script.read_text():
        pytest.skip(f"{script.name} has no 'Compare with PyTorch' section")
    rec = _recorder()
    found = rec.story_source(script)
    assert found is not None, f"{script.name}: its Compare with PyTorch section has no compare_with_pytorch call"
    code, story, name = found
    assert name == script.stem, f"{script.name}: compare_with_pytorch should be given {script.stem!r}"
    assert f"def {story}(" in code
    # only the story and what it needs: not the call that prints the comparison
    assert f"compare_with_pytorch({story}" not in code and f"pytorch_lines({story}" not in code
    recorded = pytorch_side.load_reference(name)
    assert recorded is not None, f"no recording for {name}: run tools/record_torch_outputs.py"
    assert recorded["torch_version"] == pytorch_side.RECORDED_VERSION
    assert recorded["lines"] and all(isinstance(line, str) for line in recorded["lines"])


def test_without_torch_the_recording_is_shown_and_differences_raise(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    monkeypatch.setattr(pytorch_side, "REFERENCE_DIR", tmp_path)
    (tmp_path / "demo.json").write_text(json.dumps(
        {"tutorial": "demo", "torch_version": "2.13.0", "lines": ["a: 1", "b: 2"]}))

    def story(lib):
        return ["a: 1", "b: 2"]

    pytorch_side.compare_with_pytorch(story, "demo")
    out = capsys.readouterr().out
    assert "recorded by tools/record_torch_outputs.py" in out
    assert "  minitorch_nn  b: 2\n  PyTorch       b: 2" in out and "All 2 lines are the same" in out

    theirs, source = pytorch_side.pytorch_lines(story, "demo")
    with pytest.raises(AssertionError, match="1 line\\(s\\) differ"):
        pytorch_side.print_side_by_side(["a: 1", "b: 3"], theirs, source)
    assert "^ DIFFERENT" in capsys.readouterr().out

    # no recording at all: our lines are shown with the reason
    pytorch_side.compare_with_pytorch(story, "missing")
    out = capsys.readouterr().out
    assert "no recording exists" in out and "  minitorch_nn  a: 1" in out


@pytest.mark.oracle
@pytest.mark.parametrize("script", TUTORIALS, ids=lambda p: p.stem)
def test_recordings_match_pytorch_now(script, monkeypatch):
    torch = pytest.importorskip(
        "torch", reason="regenerating the recordings needs PyTorch 2.13; install torch==2.13.0")
    if not torch.__version__.startswith(pytorch_side.RECORDED_VERSION):
        pytest.skip(f"the recordings are PyTorch {pytorch_side.RECORDED_VERSION}'s; torch {torch.__version__} is installed")
    monkeypatch.setattr(sys, "path", list(sys.path))
    name, lines = _recorder().run_story(script, torch)
    recorded = pytorch_side.load_reference(name)["lines"]
    assert lines == recorded, (
        f"{name}: PyTorch now prints other lines than the recording; rerun "
        "tools/record_torch_outputs.py and review the change"
    )
