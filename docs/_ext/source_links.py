"""Sphinx extension: every source file a page names becomes a link to its highlighted source.

The tutorials and the map name files as inline literals (``minitorch_nn/_tensor.py``,
``_ext/_C.pyx``) followed by the functions they walk through (``_from_array``). Here:

* a Python file links to its page under ``_modules/`` (the pages ``sphinx.ext.viewcode`` writes);
  a file the API reference does not document gets a page too, because we hand viewcode its source
  here. A folder (``minitorch_nn/backends/cpu/``) links to its package's ``__init__.py``;
* each literal after it in the same paragraph or list item that names a function, class or
  method of that file links to that definition in the page (viewcode's ``viewcode-block``
  anchors, which we ask viewcode to add); the literal gets the id viewcode's ``[docs]`` link
  points back to;
* a Cython file (``.pyx``, ``.pxi``) links to its listing on the ``source_c`` page, and a name
  after it to the line that defines it (anchors added to that page once it is written).

The literal text is unchanged, so the tutorials read the same as scripts and notebooks.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.pycode import ModuleAnalyzer

PATH = re.compile(r"^(?:minitorch_nn/[\w/]*?(?:\.py|/)|_ext/[\w/]+\.(?:pyx|pxi))$")
CYTHON_PAGE = "source_c"
ROOT = Path(__file__).resolve().parents[2]


def _module_name(path: str) -> str:
    return path.rstrip("/").removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _file_id(path: str) -> str:
    """The id of a Cython file's listing on the source_c page: ``src-_C-pyx``,
    ``src-twins-backends-cpu-pointwise-pyx``."""
    return "src-" + path.removeprefix("_ext/").replace("/", "-").replace(".", "-")


def _viewcode_entry(env, modname: str):
    """viewcode's record for ``modname`` (code, tags, used, refname), made if missing."""
    modules = env.__dict__.setdefault("_viewcode_modules", {})
    entry = modules.get(modname)
    if entry is None:
        try:
            analyzer = ModuleAnalyzer.for_module(modname)
            analyzer.find_tags()
        except Exception:  # not importable or not Python source: leave the literal as text
            modules[modname] = False
            return None
        entry = modules[modname] = (analyzer.code, analyzer.tags, {}, modname)
    return entry or None


def _cython_definitions(path: str) -> dict[str, int]:
    """Line number (1-based) of each ``def``/``cdef``/``cpdef``/``class`` name in a Cython file."""
    found: dict[str, int] = {}
    source = (ROOT / path).read_text()
    pattern = re.compile(r"^\s*(?:cdef\s+class|class|cpdef|cdef|def)\b[^(:=#\n]*?\b(\w+)\s*[(:]")
    for number, line in enumerate(source.splitlines(), start=1):
        m = pattern.match(line)
        if m:
            found.setdefault(m.group(1), number)
    return found


def _register_modules(app, doctree):
    """At read time, give viewcode every Python module a page names, so it writes their pages."""
    for lit in doctree.findall(nodes.literal):
        text = lit.astext()
        if PATH.match(text) and not text.startswith("_ext/"):
            _viewcode_entry(app.env, _module_name(text))


def _link(node, uri: str, ids=()):
    ref = nodes.reference("", "", internal=True, refuri=uri, classes=["source-link"])
    ref += node.deepcopy()
    if ids:
        ref["ids"] = list(ids)
    node.replace_self(ref)


def _link_sources(app, doctree, docname):
    env, builder = app.env, app.builder
    if builder.format != "html":
        return
    taken_ids: set[str] = set()
    cython_anchors = env.__dict__.setdefault("_source_links_cython", {})
    for block in list(doctree.findall(lambda n: isinstance(n, (nodes.paragraph, nodes.list_item)))):
        current = None  # (kind, path, data) of the last file named in this block
        for lit in list(block.findall(nodes.literal)):
            if isinstance(lit.parent, nodes.reference):
                continue
            text = lit.astext()
            if PATH.match(text):
                if text.startswith("_ext/"):
                    if not (ROOT / text).is_file():
                        current = None
                        continue
                    uri = builder.get_relative_uri(docname, CYTHON_PAGE) + "#" + _file_id(text)
                    current = ("cython", text, _cython_definitions(text))
                else:
                    modname = _module_name(text)
                    entry = _viewcode_entry(env, modname)
                    if entry is None:
                        current = None
                        continue
                    page = "_modules/" + modname.replace(".", "/")
                    uri = builder.get_relative_uri(docname, page)
                    current = ("python", modname, entry)
                _link(lit, uri)
                continue
            if current is None:
                continue
            name = text.removesuffix("()")
            kind, where, data = current
            if kind == "python":
                _, tags, used, refname = data
                if name not in tags:
                    continue
                back = f"{refname}.{name}"
                ids = ()
                if name not in used:
                    used[name] = docname  # viewcode adds the anchor, and a [docs] link back here
                if used[name] == docname and back not in taken_ids:
                    taken_ids.add(back)
                    ids = (back,)
                page = "_modules/" + where.replace(".", "/")
                _link(lit, builder.get_relative_uri(docname, page) + "#" + name, ids)
            else:
                short = name.rsplit(".", 1)[-1]
                if short not in data:
                    continue
                anchor = f"{_file_id(where)}-{short}"
                cython_anchors.setdefault(where, {})[short] = data[short]
                _link(lit, builder.get_relative_uri(docname, CYTHON_PAGE) + "#" + anchor)


def _backlink_ids(app, doctree, docname):
    """Give each documented object the id viewcode's ``[docs]`` link uses for it.

    viewcode links back to ``<module>.<name>``, with the module under which it first met the
    source file; an object documented under another module (``minitorch_nn.promote_types``
    lives in ``minitorch_nn/_dtype.py``) has another id, so that link would miss it.
    """
    from sphinx import addnodes
    from sphinx.ext.viewcode import _get_full_modname

    modules = app.env.__dict__.get("_viewcode_modules", {})
    for sig in doctree.findall(addnodes.desc_signature):
        modname, fullname = sig.get("module"), sig.get("fullname")
        if not modname or not fullname or not sig.get("ids"):
            continue
        entry = modules.get(_get_full_modname(modname, fullname) or modname)
        if entry:
            alias = f"{entry[3]}.{fullname}"
            if alias not in sig["ids"] and entry[2].get(fullname) == docname:
                sig["ids"].append(alias)


def _drop_missing_modules(app):
    """viewcode's index lists modules whose source it could not read (the compiled ``_C``) and
    links to pages it never writes: leave them out."""
    modules = app.env.__dict__.get("_viewcode_modules", {})
    for modname in [m for m, entry in modules.items() if not entry]:
        del modules[modname]
    return []


def _mark_cython_listings(app, doctree, docname):
    """Give each Cython listing on the source_c page the id the links above point at."""
    if docname != CYTHON_PAGE:
        return
    for block in doctree.findall(nodes.literal_block):
        source = block.get("source", "")
        if source.endswith((".pyx", ".pxi")):
            try:
                source = Path(source).resolve().relative_to(ROOT).as_posix()
            except ValueError:
                pass
            block["ids"].append(_file_id(source))


def _anchor_cython_lines(app, exception):
    """Add an anchor at each Cython definition a page links to (after the pages are written)."""
    if exception is not None or app.builder.format != "html":
        return
    wanted = getattr(app.env, "_source_links_cython", {})
    page = Path(app.outdir) / f"{CYTHON_PAGE}.html"
    if not wanted or not page.is_file():
        return
    html = page.read_text()
    for path, names in wanted.items():
        start = html.find(f'id="{_file_id(path)}"')
        if start < 0:
            continue
        end = html.find("</pre>", start)
        for name, line in sorted(names.items(), key=lambda kv: -kv[1]):
            m = re.compile(rf'<span class="linenos">\s*{line}</span>').search(html, start, end)
            if m:
                anchor = f'<span id="{_file_id(path)}-{name}"></span>'
                html = html[: m.start()] + anchor + html[m.start():]
                end += len(anchor)
    page.write_text(html)


def _fresh_module_pages(app):
    """viewcode skips a page newer than its module; ours may need new anchors, so rewrite all."""
    shutil.rmtree(Path(app.outdir) / "_modules", ignore_errors=True)


def _read_every_page(app, env, added, changed, removed):
    """Read and write every page on every build: the links and the source pages they point at
    are made while pages are written, so a page left from the last build would point at source
    pages this build no longer makes. (The site is small; this costs seconds.)"""
    return sorted(env.found_docs - set(added) - set(changed))


def setup(app):
    app.setup_extension("sphinx.ext.viewcode")
    app.connect("builder-inited", _fresh_module_pages)
    app.connect("env-get-outdated", _read_every_page)
    app.connect("doctree-read", _register_modules)
    app.connect("doctree-resolved", _mark_cython_listings)
    app.connect("doctree-resolved", _link_sources)
    app.connect("doctree-resolved", _backlink_ids)
    app.connect("html-collect-pages", _drop_missing_modules, priority=100)
    app.connect("build-finished", _anchor_cython_lines)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": False}

