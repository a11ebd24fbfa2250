"""Write the tutorials as Jupyter notebooks, without building the site (``make notebooks``).

sphinx-gallery turns each ``tutorials/plot_*.py`` into a notebook while it builds the site; this
does the same conversion on its own, with the site's settings (``docs/conf.py``: the first cell,
``%matplotlib inline``...), so ``make lab`` can open the notebooks in seconds. The notebooks are
written unexecuted: JupyterLab runs them.

Usage::

    python tools/make_notebooks.py [notebooks]
"""

from __future__ import annotations

import copy
import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_notebooks(target: Path) -> list[Path]:
    from sphinx_gallery import gen_gallery
    from sphinx_gallery.notebook import jupyter_notebook, save_notebook
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    conf = runpy.run_path(str(ROOT / "docs" / "conf.py"))["sphinx_gallery_conf"]
    gallery_conf = copy.deepcopy(gen_gallery.DEFAULT_GALLERY_CONF)
    gallery_conf.update(conf)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for script in sorted((ROOT / "tutorials").glob("plot_*.py")):
        _, blocks = split_code_and_text_blocks(str(script))
        path = target / script.with_suffix(".ipynb").name
        save_notebook(jupyter_notebook(blocks, gallery_conf, target), path)
        written.append(path)
    return written


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    target = Path(argv[0]) if argv else ROOT / "notebooks"
    written = write_notebooks(target)
    print(f"Wrote {len(written)} notebooks to {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
