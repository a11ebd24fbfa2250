"""Sphinx configuration for the minitorch_nn site (``make docs``).

The site has four parts: the landing page (``index.rst``), the map of PyTorch's internals to
minitorch_nn's files (``map.rst``), the tutorials (``../tutorials/plot_*.py``, executed by
sphinx-gallery on every build and written to ``auto_tutorials/``) and the API reference
(``api.rst``, from docstrings, with links to the highlighted source).

``make docs`` runs ``sphinx-build -W --keep-going``: any warning fails the build, and so does any
tutorial that raises. Set ``MINITORCH_DOCS_KEEP_GOING=1`` to run every tutorial before failing
(the default stops at the first broken one), and ``DOCS_ONLINE=1`` on a networked machine to
link to the Python and numpy docs through intersphinx.
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The tutorials run inside this process: make the checkout importable even when it was not
# installed into the environment (``make docs`` installs it, a bare ``sphinx-build`` may not).
sys.path.insert(0, str(ROOT))
# This site's own Sphinx extension (docs/_ext/source_links.py).
sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

# Tutorials run in-process. tqdm reads these settings, so a progress bar shows only its first
# and last frames in the page; matplotlib draws off-screen.
os.environ.setdefault("TQDM_MININTERVAL", "60")
os.environ.setdefault("MPLBACKEND", "agg")

import minitorch_nn  # noqa: E402

project = "minitorch_nn"
author = "the minitorch_nn authors"
copyright = "2026, the minitorch_nn authors"  # noqa: A001 (Sphinx's name)
release = minitorch_nn.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinx_gallery.gen_gallery",
    # A copy button on every code block (prompts and line numbers are left out of the copy).
    "sphinx_copybutton",
    # Every source file a tutorial or the map names links to its highlighted page.
    "source_links",
]

if os.environ.get("DOCS_ONLINE") == "1":
    # Without a network intersphinx warns that it cannot reach the inventories, and -W turns
    # that into a failure, so it is opt-in.
    extensions.append("sphinx.ext.intersphinx")
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable/", None),
    }

exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]
# sphinx-gallery writes these next to the sources; they are build products, not pages.
# (The execution-times tables load jQuery from a CDN, which an offline reader cannot reach.)
exclude_patterns += ["auto_tutorials/*.md5", "sg_execution_times.rst", "auto_tutorials/sg_execution_times.rst"]

# -- autodoc -----------------------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_inherit_docstrings = False
napoleon_numpy_docstring = True
napoleon_google_docstring = False
# Source links for the compiled module come from the .pyx page (source_c.rst); viewcode covers
# the Python files, including every file a tutorial or the map names (docs/_ext/source_links.py).
viewcode_line_numbers = True
copybutton_exclude = ".linenos, .gp, .go"

# -- HTML --------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "minitorch_nn"
html_theme_options = {
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "show_prev_next": True,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# The colour mode on a first visit (left empty, the theme logs "Got invalid theme mode" in the
# browser's console).
html_context = {"default_mode": "auto"}
html_static_path = ["_static"]
html_css_files = ["custom.css"]
# Pages without sub-pages get no (empty) left sidebar; the tutorials keep their list.
html_sidebars = {"index": [], "map": [], "api": [], "source_c": [], "instructors": [], "design": []}
html_show_sourcelink = False

# -- sphinx-gallery ----------------------------------------------------------------------------
_keep_going = os.environ.get("MINITORCH_DOCS_KEEP_GOING") == "1"

sphinx_gallery_conf = {
    "examples_dirs": ["../tutorials"],
    "gallery_dirs": ["auto_tutorials"],
    # Files named plot_*.py are executed; their output and figures go into the page.
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py|/_",
    # plot_01_..., plot_02_...: read in file-name order.
    "within_subsection_order": "FileNameSortKey",
    # Always re-run: a tutorial whose own text did not change may still print something new when
    # the code it walks through changed, and the page must show what the code does today.
    "run_stale_examples": True,
    # A tutorial that raises fails the build (first failure stops it unless keep-going is set).
    "abort_on_example_error": not _keep_going,
    "only_warn_on_example_error": False,
    "expected_failing_examples": [],
    "doc_module": ("minitorch_nn",),
    "backreferences_dir": "gen_modules/backreferences",
    "download_all_examples": True,
    "remove_config_comments": True,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "min_reported_time": 0,
    "show_memory": False,
    "junit": "../sphinx-gallery-junit.xml",
    # The notebooks run in the repository's environment, where minitorch_nn is installed
    # (``make venv``); minitorch_nn is not on PyPI, so a %pip cell would fail.
    "first_notebook_cell": (
        "# In a minitorch_nn checkout, `make lab` opens these notebooks in JupyterLab with the\n"
        "# checkout's .venv, where minitorch_nn is installed. From another Jupyter, use a kernel from\n"
        "# that .venv (`.venv/bin/python -m ipykernel install --user --name minitorch_nn`).\n"
        "%matplotlib inline"
    ),
}
