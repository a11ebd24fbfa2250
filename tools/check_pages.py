"""Check the built site as a reader sees it: open pages in headless Chromium (``make docs``).

After ``sphinx-build``, this opens the landing page and one tutorial page in headless Chromium
and reads back the DOM the browser built. It fails when

* the landing page lacks its title or its links to the map, the tutorials and the API reference;
* the tutorial page does not show every line of output the tutorial printed, in order, or a figure the
  tutorial drew is missing from the page or is not a readable PNG next to it;
* a page shows a Python traceback.

The expected output is read from the reStructuredText sphinx-gallery generated for the tutorial
(``docs/auto_tutorials/<name>.rst``), so nothing here is hard-coded to today's output.

Where Chromium is not installed (Debian: ``apt-get install chromium``) the check prints why it is
skipped and exits 0, so ``make docs`` still works on a machine without a browser.

Usage::

    python tools/check_pages.py [docs/_build/html] [--tutorial plot_01_tensor_object]
                                [--screenshots DIR] [--chromium PATH]
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_HTML = ROOT / "docs" / "_build" / "html"
GALLERY_SRC = ROOT / "docs" / "auto_tutorials"
DEFAULT_TUTORIAL = "plot_01_tensor_object"

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # containers often have a tiny /dev/shm
]


def find_chromium(explicit: str | None) -> str | None:
    """The Chromium binary to use, or None when there is none."""
    candidates = [explicit, os.environ.get("CHROMIUM"), "/usr/bin/chromium"]
    candidates += [shutil.which(n) for n in ("chromium", "chromium-browser")]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return c
    return None


def run_chromium(chromium: str, page: Path, extra: list[str], timeout: int = 120) -> str:
    """Run Chromium on a local page with a throwaway profile; return its stdout."""
    with tempfile.TemporaryDirectory(prefix="check_pages_") as profile:
        cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(
            f"Chromium exited with status {proc.returncode} on {page}:\n{proc.stderr[-2000:]}"
        )
    return proc.stdout


def dump_dom(chromium: str, page: Path) -> str:
    dom = run_chromium(chromium, page, ["--dump-dom"])
    if "<html" not in dom.lower():
        raise RuntimeError(f"Chromium returned no document for {page}")
    return dom


def visible_text(dom: str) -> str:
    """The page's text with tags removed, entities decoded and whitespace collapsed."""
    dom = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", dom)
    text = html.unescape(re.sub(r"(?s)<[^>]+>", "", dom))
    return " ".join(text.split())


def expected_outputs(rst_text: str) -> list[list[str]]:
    """Output blocks of a sphinx-gallery page: the lines under each ``sphx-glr-script-out``."""
    blocks, lines = [], rst_text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == ".. rst-class:: sphx-glr-script-out":
            # Skip to the code-block directive, then collect its indented body.
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(".. code-block::"):
                j += 1
            j += 1
            body = []
            while j < len(lines) and (not lines[j].strip() or lines[j].startswith("    ")):
                body.append(lines[j])
                j += 1
            block = [" ".join(line.split()) for line in body if line.strip()]
            if block:
                blocks.append(block)
            i = j
        else:
            i += 1
    return blocks


def expected_figures(rst_text: str) -> list[str]:
    """File names of the figures a sphinx-gallery page embeds (``image-sg`` directives)."""
    return [Path(m).name for m in re.findall(r"\.\. image-sg:: (\S+\.png)", rst_text)]


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) of a PNG file; raises ValueError when it is not a PNG."""
    head = path.read_bytes()[:24]
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError(f"{path} is not a PNG file")
    return struct.unpack(">II", head[16:24])


def check_landing(dom: str) -> list[str]:
    problems = []
    text = visible_text(dom)
    if not re.search(r"<title>[^<]*minitorch_nn", dom):
        problems.append("the landing page's <title> does not name minitorch_nn")
    for target in ("map.html", "auto_tutorials/index.html", "api.html"):
        if f'href="{target}' not in dom and f'href="./{target}' not in dom:
            problems.append(f"the landing page has no link to {target}")
    if "How to start" not in text:
        problems.append("the landing page has no 'How to start' section")
    if "Traceback (most recent call last)" in text:
        problems.append("the landing page shows a Python traceback")
    return problems


def check_tutorial(dom: str, rst_text: str, page: Path) -> tuple[list[str], dict]:
    problems = []
    text = visible_text(dom)
    blocks = expected_outputs(rst_text)
    if not blocks:
        problems.append(f"{page.name}: the generated .rst has no output blocks (did the tutorial run?)")
    if 'class="sphx-glr-script-out' not in dom and "sphx-glr-script-out" not in dom:
        problems.append(f"{page.name}: no output block (sphx-glr-script-out) in the page")
    # Every printed line must appear, in the order the tutorial printed it.
    lines_checked, pos = 0, 0
    for block in blocks:
        for line in block:
            lines_checked += 1
            found = text.find(line, pos)
            if found < 0:
                problems.append(f"{page.name}: printed line not shown (in order) in the page: {line[:100]!r}")
            else:
                pos = found + len(line)
    figures = expected_figures(rst_text)
    for name in figures:
        m = re.search(r'<img[^>]+src="([^"]*' + re.escape(name) + r')"', dom)
        if not m:
            problems.append(f"{page.name}: figure {name} is not in the page")
            continue
        img = (page.parent / html.unescape(m.group(1))).resolve()
        if not img.is_file():
            problems.append(f"{page.name}: figure {name} points at a missing file {img}")
            continue
        try:
            w, h = png_size(img)
        except ValueError as err:
            problems.append(f"{page.name}: {err}")
            continue
        if w < 50 or h < 50:
            problems.append(f"{page.name}: figure {name} is only {w}x{h} pixels")
    if "Traceback (most recent call last)" in text:
        problems.append(f"{page.name}: the page shows a Python traceback")
    return problems, {"blocks": len(blocks), "lines": lines_checked, "figures": len(figures)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html_dir", nargs="?", default=str(DEFAULT_HTML), type=Path)
    parser.add_argument("--tutorial", default=None, help=f"page to check (default {DEFAULT_TUTORIAL})")
    parser.add_argument("--gallery-src", default=str(GALLERY_SRC), type=Path,
                        help="where sphinx-gallery wrote the generated .rst files")
    parser.add_argument("--chromium", default=None, help="path to the Chromium binary")
    parser.add_argument("--screenshots", default=None, type=Path,
                        help="also save a PNG screenshot of each page checked into this folder")
    args = parser.parse_args(argv)

    chromium = find_chromium(args.chromium)
    if chromium is None:
        print(
            "check_pages: SKIPPED: Chromium is not installed (no /usr/bin/chromium), so the built "
            "pages were not opened in a browser. Install it (Debian: `apt-get install chromium`) "
            "to check that the pages show the tutorials' output and figures."
        )
        return 0

    html_dir = args.html_dir.resolve()
    index = html_dir / "index.html"
    if not index.is_file():
        print(f"check_pages: FAILED: {index} does not exist; build the site first (make docs)")
        return 1
    name = args.tutorial
    if name is None:
        name = DEFAULT_TUTORIAL
        if not (html_dir / "auto_tutorials" / f"{name}.html").is_file():
            found = sorted((html_dir / "auto_tutorials").glob("plot_*.html"))
            if not found:
                print(f"check_pages: FAILED: no tutorial pages in {html_dir / 'auto_tutorials'}")
                return 1
            name = found[0].stem
    page = html_dir / "auto_tutorials" / f"{name}.html"
    rst = args.gallery_src / f"{name}.rst"
    for needed in (page, rst):
        if not needed.is_file():
            print(f"check_pages: FAILED: {needed} does not exist")
            return 1

    try:
        problems = check_landing(dump_dom(chromium, index))
        tut_problems, stats = check_tutorial(dump_dom(chromium, page), rst.read_text(), page)
        problems += tut_problems
        if args.screenshots:
            args.screenshots.mkdir(parents=True, exist_ok=True)
            for p in (index, page):
                shot = args.screenshots / f"{p.stem}.png"
                run_chromium(chromium, p, ["--window-size=1280,2400", f"--screenshot={shot}"])
                print(f"check_pages: screenshot {shot}")
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as err:
        print(f"check_pages: FAILED: Chromium ({chromium}) could not open the pages: {err}")
        return 1

    if problems:
        print(f"check_pages: FAILED ({len(problems)} problem(s)) in Chromium ({chromium}):")
        for p in problems:
            print("  -", p)
        return 1
    print(
        f"check_pages: OK: opened {index.relative_to(html_dir)} and {page.relative_to(html_dir)} in "
        f"headless Chromium; the page shows all {stats['lines']} printed lines of "
        f"{stats['blocks']} output blocks and {stats['figures']} figure(s)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
