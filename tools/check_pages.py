"""Check the built site as a reader sees it: every page in headless Chromium (``make docs``).

After ``sphinx-build``, this serves ``docs/_build/html`` on a local port (127.0.0.1 only) and
opens **every page** in headless Chromium, driven by Playwright (the ``playwright`` package,
using Debian's ``/usr/bin/chromium``: no browser is downloaded). It fails when

* a page logs a console error or an uncaught exception, or a file it loads (script, style sheet,
  image) fails to load;
* an image on a page does not load (zero natural width after the page asked for all of them);
* an internal link, including a link into a highlighted source page (``_modules/...``,
  ``source_c.html#...``), points at a missing page or at an anchor that page does not have;
* a page shows a Python traceback;
* the landing page lacks its title or its links to the map, the tutorials and the API reference;
* a tutorial page does not show every line the tutorial printed, in order, or a figure it drew
  (each read with Pillow: a real PNG, at least 50x50 pixels), or shows no figure at all, or names
  a source file in its opening list without linking it (and the map, anywhere in its text);
* a card of the tutorial gallery shows sphinx-gallery's placeholder instead of a thumbnail.

The expected output of a tutorial is read from the reStructuredText sphinx-gallery generated
(``docs/auto_tutorials/<name>.rst``), so nothing here is hard-coded to today's output. A
full-page screenshot of every tutorial page (and the landing page and the gallery) is written to
``docs/_build/screenshots/``, for CI to keep and for people to look at.

Where Chromium or Playwright is not installed the check prints why it is skipped and exits 0,
so ``make docs`` still works on a machine without a browser (Debian: ``apt-get install
chromium``; ``pip install playwright``, which ``make docs`` does).

Usage::

    python tools/check_pages.py [docs/_build/html] [--screenshots DIR] [--chromium PATH]
                                [--only auto_tutorials/plot_01_tensor_object.html ...]
"""

from __future__ import annotations

import argparse
import functools
import html
import http.server
import os
import re
import shutil
import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_HTML = ROOT / "docs" / "_build" / "html"
GALLERY_SRC = ROOT / "docs" / "auto_tutorials"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]
SOURCE_LIST_TITLE = "Source files this tutorial walks through"
SOURCE_PATH = re.compile(r"^(?:minitorch_nn/[\w/]*?(?:\.py|/)|_ext/[\w/]+\.(?:pyx|pxi))$")


def find_chromium(explicit: str | None) -> str | None:
    """The Chromium binary to use, or None when there is none."""
    candidates = [explicit, os.environ.get("CHROMIUM"), "/usr/bin/chromium"]
    candidates += [shutil.which(n) for n in ("chromium", "chromium-browser")]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return c
    return None


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
    """(width, height) of a PNG file, read and verified by Pillow; ValueError when it is not one."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            if img.format != "PNG":
                raise ValueError(f"{path} is not a PNG file (Pillow reads {img.format})")
            img.verify()  # the whole file: a cut-off or corrupt PNG fails here
            return img.size
    except (UnidentifiedImageError, OSError, SyntaxError) as err:
        raise ValueError(f"{path} is not a PNG file ({err})") from None


def is_placeholder_thumbnail(path: Path) -> bool:
    """Whether a gallery thumbnail is sphinx-gallery's stock picture (no figure was drawn)."""
    from PIL import Image, ImageChops, ImageStat

    try:
        import sphinx_gallery
    except ImportError:
        return False
    stock = Path(sphinx_gallery.__file__).parent / "_static" / "no_image.png"
    with Image.open(path) as thumb, Image.open(stock) as placeholder:
        thumb = thumb.convert("L")
        placeholder = placeholder.convert("L").resize(thumb.size)
        diff = ImageStat.Stat(ImageChops.difference(thumb, placeholder)).mean[0]
    return diff < 8  # gray levels out of 255: the same picture, rescaled


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
    return problems


def check_tutorial(dom: str, rst_text: str, page: Path) -> tuple[list[str], dict]:
    """Printed lines (in order), figures (readable PNGs) and a traceback-free page."""
    problems = []
    text = visible_text(dom)
    blocks = expected_outputs(rst_text)
    if not blocks:
        problems.append(f"{page.name}: the generated .rst has no output blocks (did the tutorial run?)")
    if "sphx-glr-script-out" not in dom:
        problems.append(f"{page.name}: no output block (sphx-glr-script-out) in the page")
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


def unlinked_sources(dom: str) -> list[str]:
    """Source files named in a tutorial's opening list that are not links."""
    start = dom.find(SOURCE_LIST_TITLE)
    if start < 0:
        return ["(no 'Source files this tutorial walks through' list)"]
    return _unlinked(dom[start:dom.find("</ul>", start)])


def unlinked_in_article(dom: str) -> list[str]:
    """Source files named in a page's main text (``<article>``) that are not links."""
    start = dom.find("<article")
    return _unlinked(dom[start:dom.find("</article>", start)] if start >= 0 else "")


def _unlinked(fragment: str) -> list[str]:
    missing = []
    for m in re.finditer(r"(<a [^>]*>)?\s*<code[^>]*>(.*?)</code>", fragment, re.S):
        name = html.unescape(re.sub(r"<[^>]+>", "", m.group(2)))
        if SOURCE_PATH.match(name) and not m.group(1):
            missing.append(name)
    return missing


class _Site:
    """The built site served on 127.0.0.1 from a background thread."""

    def __init__(self, root: Path):
        handler = functools.partial(_QuietHandler, directory=str(root))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _Anchors:
    """The ids (and names) each HTML file of the site defines, read once per file."""

    def __init__(self):
        self.cache: dict[Path, set[str]] = {}

    def __call__(self, path: Path) -> set[str]:
        if path not in self.cache:
            text = path.read_text(errors="replace")
            self.cache[path] = set(re.findall(r'\b(?:id|name)="([^"]+)"', text))
        return self.cache[path]


_PAGE_SCRIPT = """async () => {
  const images = Array.from(document.images);
  for (const img of images) { img.loading = "eager"; }
  await Promise.all(images.map(img => img.decode().catch(() => null)));
  return {
    broken: images.filter(img => img.naturalWidth === 0).map(img => img.getAttribute("src")),
    links: Array.from(document.querySelectorAll("a[href]")).map(a => a.href),
    images: images.length,
  };
}"""


def check_site(html_dir: Path, chromium: str, screenshots: Path | None, only=None) -> tuple[list[str], dict]:
    from playwright.sync_api import sync_playwright

    # Every page of the site; _static/ holds the theme's template fragments, not pages.
    pages = sorted(p.relative_to(html_dir).as_posix() for p in html_dir.rglob("*.html")
                   if p.relative_to(html_dir).parts[0] != "_static")
    if only:
        pages = [p for p in pages if p in only]
    anchors = _Anchors()
    problems: list[str] = []
    stats = {"pages": 0, "links": 0, "images": 0, "tutorials": 0, "lines": 0, "figures": 0}
    if screenshots:
        screenshots.mkdir(parents=True, exist_ok=True)
        for old in screenshots.glob("*.png"):  # a renamed tutorial's picture must not linger
            old.unlink()
    with _Site(html_dir) as site, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        # Chromium asks every site for /favicon.ico; this one has none, and that is not a page's fault.
        context.route("**/favicon.ico", lambda route: route.fulfill(status=204, body=""))
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda msg: errors.append(f"console {msg.type}: {msg.text}")
                if msg.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(f"uncaught exception: {exc}"))
        page.on("requestfailed", lambda req: errors.append(f"failed to load {req.url}")
                if req.url.startswith(site.base) else None)
        page.on("response", lambda resp: errors.append(f"HTTP {resp.status} for {resp.url}")
                if resp.status >= 400 and resp.url.startswith(site.base) else None)
        checked_links: set[str] = set()
        for rel in pages:
            errors.clear()
            page.goto(site.base + rel, wait_until="load")
            found = page.evaluate(_PAGE_SCRIPT)
            stats["pages"] += 1
            stats["images"] += found["images"]
            problems += [f"{rel}: {e}" for e in errors]
            problems += [f"{rel}: image does not load: {src}" for src in found["broken"]]
            dom = page.content()
            if "Traceback (most recent call last)" in visible_text(dom):
                problems.append(f"{rel}: the page shows a Python traceback")
            for href in found["links"]:
                if not href.startswith(site.base) or href in checked_links:
                    continue
                checked_links.add(href)
                stats["links"] += 1
                problem = _broken_link(html_dir, site.base, href, anchors)
                if problem:
                    problems.append(f"{rel}: link {href[len(site.base):]!r}: {problem}")
            if rel == "index.html":
                problems += check_landing(dom)
            if rel == "map.html":
                missing = unlinked_in_article(dom)
                if missing:
                    problems.append(f"map.html: source files named without a link: {sorted(set(missing))}")
            if rel == "auto_tutorials/index.html":
                problems += _check_thumbnails(html_dir, dom)
            m = re.fullmatch(r"auto_tutorials/(plot_\w+)\.html", rel)
            if m:
                stats["tutorials"] += 1
                problems += _check_tutorial_page(html_dir / rel, m.group(1), dom, stats)
            if screenshots and (m or rel in ("index.html", "auto_tutorials/index.html")):
                name = m.group(1) if m else rel.replace("/", "_").removesuffix(".html")
                page.screenshot(path=str(screenshots / f"{name}.png"), full_page=True)
        browser.close()
    return problems, stats


def _check_tutorial_page(path: Path, name: str, dom: str, stats: dict) -> list[str]:
    rst = GALLERY_SRC / f"{name}.rst"
    if not rst.is_file():
        return [f"{path.name}: {rst} does not exist"]
    rst_text = rst.read_text()
    problems, found = check_tutorial(dom, rst_text, path)
    stats["lines"] += found["lines"]
    stats["figures"] += found["figures"]
    if not found["figures"]:
        problems.append(f"{path.name}: the tutorial draws no picture")
    missing = unlinked_sources(dom)
    if missing:
        problems.append(f"{path.name}: source files named without a link: {missing}")
    return problems


def _check_thumbnails(html_dir: Path, dom: str) -> list[str]:
    problems = []
    thumbs = re.findall(r'<img[^>]+src="([^"]*sphx_glr_(plot_\w+?)_thumb\.png)"', dom)
    if not thumbs:
        return ["auto_tutorials/index.html: no gallery thumbnails"]
    for src, name in thumbs:
        img = (html_dir / "auto_tutorials" / html.unescape(src)).resolve()
        if img.is_file() and is_placeholder_thumbnail(img):
            problems.append(f"auto_tutorials/index.html: {name} shows the placeholder thumbnail")
    return problems


def _broken_link(html_dir: Path, base: str, href: str, anchors: _Anchors) -> str | None:
    url, fragment = urldefrag(href)
    path = html_dir / unquote(urlparse(url).path).lstrip("/")
    if path.is_dir():
        path = path / "index.html"
    if not path.exists():
        return "no such page"
    if fragment and path.suffix == ".html" and unquote(fragment) not in anchors(path):
        return f"{path.name} has no anchor #{fragment}"
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html_dir", nargs="?", default=str(DEFAULT_HTML), type=Path)
    parser.add_argument("--chromium", default=None, help="path to the Chromium binary")
    parser.add_argument("--screenshots", default=None, type=Path,
                        help="where to save screenshots (default: screenshots/ beside html/)")
    parser.add_argument("--only", nargs="*", default=None,
                        help="check only these pages (paths relative to the site)")
    args = parser.parse_args(argv)

    chromium = find_chromium(args.chromium)
    if chromium is None:
        print(
            "check_pages: SKIPPED: Chromium is not installed (no /usr/bin/chromium), so the built "
            "pages were not opened in a browser. Install it (Debian: `apt-get install chromium`) "
            "to check that every page loads and shows the tutorials' output and figures."
        )
        return 0
    try:
        import playwright  # noqa: F401
    except ImportError:
        print("check_pages: SKIPPED: the playwright package is not installed (it is in the docs "
              "extra: `pip install playwright`), so the built pages were not opened in a browser.")
        return 0

    html_dir = args.html_dir.resolve()
    if not (html_dir / "index.html").is_file():
        print(f"check_pages: FAILED: {html_dir / 'index.html'} does not exist; build the site first (make docs)")
        return 1
    screenshots = args.screenshots or html_dir.parent / "screenshots"
    start = time.perf_counter()
    try:
        problems, stats = check_site(html_dir, chromium, screenshots, args.only)
    except Exception as err:  # the browser did not start or crashed: say which and why
        print(f"check_pages: FAILED: Chromium ({chromium}) could not check the pages: "
              f"{type(err).__name__}: {err}")
        return 1
    seconds = time.perf_counter() - start
    if problems:
        print(f"check_pages: FAILED ({len(problems)} problem(s)) in Chromium ({chromium}):")
        for p in problems[:200]:
            print("  -", p)
        return 1
    print(
        f"check_pages: OK in {seconds:.0f} s: {stats['pages']} pages opened in headless Chromium, "
        f"no console errors; {stats['images']} images loaded; {stats['links']} internal links "
        f"resolve; {stats['tutorials']} tutorial pages show all {stats['lines']} printed lines and "
        f"{stats['figures']} figures; screenshots in {screenshots}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
