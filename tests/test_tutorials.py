"""Every tutorial runs, and says where its code lives: catches drift between tutorials and code.

Each ``tutorials/plot_*.py`` script is executed as its own test case, the way sphinx-gallery runs
it during ``make docs`` (in-process, off-screen matplotlib, tqdm quiet), so a change in the library
that breaks a tutorial fails here first, with the tutorial's name in the test id.

The structure tests check what the documentation promises a reader: each tutorial names the
source files it walks through and those files exist, it ends with exercises, and the
"How PyTorch works inside" map only points at files that exist.

One tutorial is also converted to its course notebook (as ``make notebooks`` ships it) and run
by a real Jupyter kernel; it must print exactly what the script prints and show its figure.
That test needs the docs extra (sphinx-gallery, nbclient, ipykernel) and is skipped without it.
"""

from __future__ import annotations

import os
import re
import runpy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "tutorials").glob("plot_*.py"))
# Paths like ``minitorch_nn/_ops.py``, ``minitorch_nn/backends/cpu/``, ``_ext/_C.pyx``.
SOURCE_PATH = re.compile(r"``((?:minitorch_nn|_ext)/[\w/.]*)``")


def _ids(path):
    return path.stem


def test_there_are_tutorials():
    assert len(TUTORIALS) >= 3, f"expected the gallery scripts in {ROOT / 'tutorials'}"


@pytest.mark.parametrize("script", TUTORIALS, ids=_ids)
def test_tutorial_runs(script, monkeypatch, tmp_path):
    matplotlib = pytest.importorskip("matplotlib", reason="tutorials draw figures (docs extra)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.setenv("TQDM_DISABLE", "1")
    monkeypatch.chdir(tmp_path)  # anything a tutorial writes lands in a throwaway folder
    monkeypatch.setattr(sys, "argv", [str(script)])
    monkeypatch.syspath_prepend(str(ROOT))
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        plt.close("all")


@pytest.mark.parametrize("script", TUTORIALS, ids=_ids)
def test_tutorial_names_its_source_files(script):
    text = script.read_text()
    doc = text[: text.index('"""', 3)]
    assert "Source files this tutorial walks through" in doc, (
        f"{script.name}: the opening docstring must list the source files it walks through"
    )
    named = SOURCE_PATH.findall(text)
    assert named, f"{script.name}: names no source file"
    missing = sorted({p for p in named if not (ROOT / p.rstrip("/")).exists()})
    assert not missing, f"{script.name} points at files that do not exist: {missing}"


@pytest.mark.parametrize("script", TUTORIALS, ids=_ids)
def test_tutorial_has_title_and_exercises(script):
    text = script.read_text()
    assert text.startswith('"""'), f"{script.name}: must open with a docstring (the page title)"
    assert re.search(r"^=+$", text[: text.index('"""', 3)], re.M), f"{script.name}: no RST title"
    tail = text[text.rindex("# %%") :]
    assert "# Exercises" in tail, f"{script.name}: the last section must be the exercises"
    assert re.search(r"^# 1\. ", tail, re.M), f"{script.name}: the exercises must be numbered"


def test_map_points_at_existing_files():
    map_rst = (ROOT / "docs" / "map.rst").read_text()
    named = SOURCE_PATH.findall(map_rst)
    assert len(named) >= 10
    missing = sorted({p for p in named if not (ROOT / p.rstrip("/")).exists()})
    assert not missing, f"docs/map.rst points at files that do not exist: {missing}"


def test_map_links_every_tutorial():
    map_rst = (ROOT / "docs" / "map.rst").read_text()
    for script in TUTORIALS:
        label = re.search(r"^\.\. _(tutorial-[\w-]+):", script.read_text(), re.M)
        assert label, f"{script.name}: needs a '.. _tutorial-...:' label so the map can link it"
        assert f":ref:`{label.group(1)}`" in map_rst, (
            f"docs/map.rst does not link {script.name} ({label.group(1)})"
        )


# -- the course notebook, executed by a real Jupyter kernel ------------------------------------

NOTEBOOK_TUTORIAL = ROOT / "tutorials" / "plot_01_tensor_object.py"


def _gallery_notebook(script: Path, target_dir: Path) -> Path:
    """The .ipynb sphinx-gallery makes from ``script`` with the site's settings (docs/conf.py)."""
    import copy

    from sphinx_gallery import gen_gallery
    from sphinx_gallery.notebook import jupyter_notebook, save_notebook
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    conf = runpy.run_path(str(ROOT / "docs" / "conf.py"))["sphinx_gallery_conf"]
    gallery_conf = copy.deepcopy(gen_gallery.DEFAULT_GALLERY_CONF)
    gallery_conf.update(conf)
    _, blocks = split_code_and_text_blocks(str(script))
    path = target_dir / script.with_suffix(".ipynb").name
    save_notebook(jupyter_notebook(blocks, gallery_conf, target_dir), path)
    return path


@pytest.mark.slow  # starts a kernel and imports the library twice: ~10 s
def test_notebook_runs_under_a_jupyter_kernel(tmp_path, monkeypatch, capsys):
    """The course notebook of a tutorial runs in a real kernel and prints what the script prints."""
    pytest.importorskip("sphinx_gallery", reason="needs the docs extra")
    nbformat = pytest.importorskip("nbformat", reason="needs the docs extra (nbformat)")
    nbclient = pytest.importorskip("nbclient", reason="needs the docs extra (nbclient)")
    pytest.importorskip("ipykernel", reason="needs the docs extra (ipykernel)")
    pytest.importorskip("matplotlib", reason="needs the docs extra (matplotlib)")
    # conf.py sets a few environment variables and sys.path: keep them out of other tests.
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("MPLBACKEND", "TQDM_MININTERVAL"):
        monkeypatch.setenv(name, os.environ.get(name, "agg" if name == "MPLBACKEND" else "60"))
    path = _gallery_notebook(NOTEBOOK_TUTORIAL, tmp_path)

    # What the plain script prints, as the oracle for the notebook's streams.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    try:
        runpy.run_path(str(NOTEBOOK_TUTORIAL), run_name="__main__")
    finally:
        plt.close("all")
    expected = capsys.readouterr().out

    # The kernel is the running interpreter (jupyter_client maps "python" to sys.executable);
    # PYTHONPATH makes the checkout importable even where it is not installed.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[0].cell_type == "code" and "%matplotlib inline" in nb.cells[0].source
    assert any(c.cell_type == "markdown" and "Exercises" in c.source for c in nb.cells)
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    printed = "".join(o.text for o in outputs if o.output_type == "stream" and o.name == "stdout")
    assert printed == expected
    figures = [o for o in outputs if o.output_type == "display_data" and "image/png" in o.get("data", {})]
    assert len(figures) >= 1, "the tutorial's figure should show in the notebook"


# -- the reader's check (tools/check_pages.py) on a hand-made page: no browser needed ----------

def _check_pages():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import check_pages
    finally:
        sys.path.pop(0)
    return check_pages


_RST = """
.. code-block:: Python

    print(x)

.. rst-class:: sphx-glr-script-out

 .. code-block:: none

    tensor([[1., 2.],
            [3., 4.]])

.. image-sg:: /auto_tutorials/images/sphx_glr_plot_x_001.png
   :alt: fig

.. rst-class:: sphx-glr-script-out

 .. code-block:: none

    same storage: True

"""


def _png(path: Path, w=120, h=80):
    Image = pytest.importorskip("PIL.Image", reason="the page check reads figures with Pillow")
    Image.new("RGB", (w, h), (200, 30, 30)).save(path, format="PNG")


def test_check_pages_reads_outputs_and_figures():
    cp = _check_pages()
    assert cp.expected_outputs(_RST) == [
        ["tensor([[1., 2.],", "[3., 4.]])"],
        ["same storage: True"],
    ]
    assert cp.expected_figures(_RST) == ["sphx_glr_plot_x_001.png"]


def test_check_pages_accepts_a_good_page_and_flags_a_broken_one(tmp_path):
    cp = _check_pages()
    (tmp_path / "auto_tutorials" / "images").mkdir(parents=True)
    page = tmp_path / "auto_tutorials" / "plot_x.html"
    (tmp_path / "_images").mkdir()
    _png(tmp_path / "_images" / "sphx_glr_plot_x_001.png")
    good = (
        '<html><body><div class="sphx-glr-script-out"><pre>tensor([[1., 2.],\n'
        "        [3., 4.]])</pre></div>"
        '<img src="../_images/sphx_glr_plot_x_001.png">'
        '<div class="sphx-glr-script-out"><pre>same storage: True</pre></div></body></html>'
    )
    problems, stats = cp.check_tutorial(good, _RST, page)
    assert problems == [] and stats == {"blocks": 2, "lines": 3, "figures": 1}

    # Output missing, output out of order, figure missing, traceback shown: each is reported.
    bad = good.replace("same storage: True", "same storage: ???").replace("sphx_glr_plot_x_001", "other")
    bad = bad.replace("</body>", "<pre>Traceback (most recent call last):</pre></body>")
    problems, _ = cp.check_tutorial(bad, _RST, page)
    text = "\n".join(problems)
    assert "same storage: True" in text and "is not in the page" in text and "traceback" in text

    # A figure whose file is not a PNG, or a PNG cut short, is reported too.
    figure = tmp_path / "_images" / "sphx_glr_plot_x_001.png"
    whole = figure.read_bytes()
    figure.write_bytes(b"not a png")
    problems, _ = cp.check_tutorial(good, _RST, page)
    assert any("not a PNG" in p for p in problems)
    figure.write_bytes(whole[: len(whole) // 2])
    problems, _ = cp.check_tutorial(good, _RST, page)
    assert any("not a PNG" in p for p in problems)


def test_check_pages_finds_unlinked_sources_and_placeholder_thumbnails(tmp_path):
    cp = _check_pages()
    head = "<p><strong>Source files this tutorial walks through</strong></p><ul>"
    linked = head + ('<li><a class="source-link" href="../_modules/minitorch_nn/_tensor.html">'
                     '<code class="docutils literal notranslate"><span class="pre">minitorch_nn/_tensor.py'
                     "</span></code></a>: the <code>Tensor</code> class</li></ul>")
    assert cp.unlinked_sources(linked) == []
    plain = head + "<li><code><span>_ext/_C.pyx</span></code>: <code>TensorBase</code></li></ul>"
    assert cp.unlinked_sources(plain) == ["_ext/_C.pyx"]
    article = "<nav><code>_ext/_C.pyx</code></nav><article>" + plain[len(head):] + "</article>"
    assert cp.unlinked_in_article(article) == ["_ext/_C.pyx"]
    assert cp.unlinked_in_article("<nav><code>_ext/_C.pyx</code></nav><article></article>") == []

    sphinx_gallery = pytest.importorskip("sphinx_gallery", reason="needs the docs extra")
    Image = pytest.importorskip("PIL.Image", reason="the page check reads figures with Pillow")
    stock = Path(sphinx_gallery.__file__).parent / "_static" / "no_image.png"
    with Image.open(stock) as img:
        img.convert("RGB").resize((400, 280)).save(tmp_path / "stock.png")
    assert cp.is_placeholder_thumbnail(tmp_path / "stock.png")
    _png(tmp_path / "real.png", 400, 280)
    assert not cp.is_placeholder_thumbnail(tmp_path / "real.png")


def test_check_pages_skips_cleanly_without_chromium(monkeypatch, capsys):
    cp = _check_pages()
    monkeypatch.setattr(cp, "find_chromium", lambda explicit: None)
    assert cp.main([str(ROOT / "docs" / "_build" / "html")]) == 0
    assert "SKIPPED: Chromium is not installed" in capsys.readouterr().out
