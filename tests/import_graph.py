"""The package's import graph, read from the source with :mod:`ast` (nothing is imported).

Every ``import`` and ``from ... import`` statement in every module of ``minitorch_nn`` counts,
wherever it sits: at module level, inside a function, a method, a ``try`` or an ``if``. An import
inside a function still ties the two modules together for a reader (and at run time), so a
cycle through one is still a cycle. ``from package import name`` is an edge to
``package.name`` when that is a module, and to ``package`` otherwise. Imports of parent packages
that Python performs implicitly are not edges: ``import minitorch_nn.nn.modules.module`` is an
edge to that module only.

Run as a script for a report: ``python -m tests.import_graph`` prints the largest import cycles,
and ``python -m tests.import_graph --upward`` every import that goes down-to-up in the layer order.

Used by ``tests/test_layers.py``.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import pathlib
import re
import sys

import networkx as nx

PACKAGE = "minitorch_nn"
PACKAGE_DIR = pathlib.Path(__file__).resolve().parent.parent / PACKAGE


@dataclasses.dataclass(frozen=True)
class Import:
    """One import statement's edge: module ``source`` imports module ``target``."""

    source: str
    target: str
    where: str  # file:line of the statement, the file relative to the repository root
    in_function: bool
    # "import", or "lookup" for ``sys.modules.get("minitorch_nn.x")``: a reference by name that
    # imports nothing (so it makes no cycle) but still ties the two modules together
    kind: str = "import"


@functools.cache
def module_files(package_dir: pathlib.Path = PACKAGE_DIR) -> dict[str, pathlib.Path]:
    """Map every module name of the package to its source file.

    A compiled module ``minitorch_nn.<name>`` is built from ``_ext/<name>.pyx``, and a compiled twin
    ``minitorch_nn._twins.<path>`` from ``_ext/twins/<path>.pyx`` (see setup.py); its source counts
    as that module's.
    """
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    ext = package_dir.parent / "_ext"
    for path in sorted(ext.rglob("*.pyx")):
        parts = list(path.relative_to(ext).with_suffix("").parts)
        if parts[0] == "twins":
            parts[0] = "_twins"
        modules[".".join([PACKAGE, *parts])] = path
    return modules


# Cython source is not Python, but its import statements are. A ``cimport`` of one of our compiled
# modules is an import too: the cimporting module imports it when it loads (to fetch its types and
# C functions), so it counts as an edge; a cimport of numpy, libc or cpython adds nothing of ours.
# A compiled module's own ``.pxd`` (``minitorch_nn/<path>.pxd``) is compiled into it, so its
# cimports are the module's too.
_CYTHON_IMPORT = re.compile(r"^(?P<indent>[ \t]*)(?P<stmt>(?:from[ \t]+\S+[ \t]+c?import|c?import)[ \t]+[^\n]*)$", re.M)
_CYTHON_INCLUDE = re.compile(r'^[ \t]*include[ \t]+"(?P<name>[^"]+)"', re.M)


_CIMPORT = re.compile(r"^(?:from[ \t]+(?P<source>\S+)[ \t]+cimport\b.*|cimport[ \t]+(?P<module>[\w.]+).*)$")


def _cimport_as_import(statement: str) -> str | None:
    """``from minitorch_nn.x cimport a`` as ``from minitorch_nn.x import a`` and ``cimport
    minitorch_nn.x as y`` as ``import minitorch_nn.x as y`` (the modules the compiled code loads:
    ``from minitorch_nn._twins cimport _gate`` loads ``minitorch_nn._twins._gate``); ``None`` for a
    cimport of anything not ours."""
    statement = statement.strip()
    match = _CIMPORT.match(statement)
    module = match and (match["source"] or match["module"])
    if not module or module.split(".")[0] != PACKAGE:
        return None
    if match["source"]:
        statement = statement.replace(" cimport ", " import ", 1)
        if "(" in statement and ")" not in statement and not statement.endswith("("):
            # the first line of a parenthesised list: the names on it, closed
            statement = statement.rstrip(",") + ")"
        return statement
    return "import " + statement.removeprefix("cimport").lstrip()


def _cython_imports(
    path: pathlib.Path, declarations: pathlib.Path | None = None
) -> tuple[ast.Module, list[str]]:
    """The import statements of a ``.pyx`` file, the ``.pxi`` files it includes and its own
    ``.pxd`` (``declarations``, when it has one), as Python.

    Returns the statements as one module, an indented import wrapped in a function (in Cython
    it can only sit in a block), and for each statement's line number the ``file:line`` it came
    from.
    """
    lines, where = [], [""]
    pending = [path]
    if declarations is not None and declarations.exists():
        pending.append(declarations)
    while pending:
        source = pending.pop()
        text = source.read_text(encoding="utf-8")
        pending += [path.parent / m["name"] for m in _CYTHON_INCLUDE.finditer(text)]
        for match in _CYTHON_IMPORT.finditer(text):
            statement = match["stmt"].split("#")[0].rstrip()
            if " cimport " in f" {statement} ":
                statement = _cimport_as_import(statement)
                if statement is None:
                    continue
            if statement.endswith("("):  # a parenthesised name list: the module is what counts
                statement = "import " + statement.split()[1]
            line = f"{source.name}:{text.count(chr(10), 0, match.start()) + 1}"
            if match["indent"]:
                lines += ["def _():", f"    {statement}"]
                where += ["", line]
            else:
                lines.append(statement)
                where.append(line)
    return ast.parse("\n".join(lines) or "pass", filename=str(path)), where


def _is_package(name: str, modules: dict[str, pathlib.Path]) -> bool:
    return modules[name].name == "__init__.py"


def _resolve_relative(module: str, level: int, target: str | None, modules) -> str:
    """The absolute name of ``from <level dots><target> import ...`` written in ``module``."""
    base = module.split(".")
    # In a package's __init__ one dot names the package itself; in a module, its parent.
    if not _is_package(module, modules):
        base = base[:-1]
    if level > 1:
        base = base[: -(level - 1)]
    return ".".join(base + ([target] if target else []))


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, modules: dict[str, pathlib.Path], where: list[str] | str):
        self.module = module
        self.where = where
        self.modules = modules
        self.edges: list[Import] = []
        self._depth = 0

    def _function(self, node):
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def _add(self, target: str, line: int, kind: str = "import"):
        # Only edges inside the package; a name that is not a module falls back to its package.
        while target and target not in self.modules:
            target = target.rpartition(".")[0]
        if target.startswith(PACKAGE) and target != self.module:
            where = self.where[line] if isinstance(self.where, list) else f"{self.where}:{line}"
            self.edges.append(Import(self.module, target, where, self._depth > 0, kind))

    def visit_Call(self, node: ast.Call):
        # importlib.import_module("minitorch_nn.x") imports; sys.modules.get("minitorch_nn.x")
        # looks a loaded module up. Only a constant name can be followed.
        func = ast.unparse(node.func)
        if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            name = node.args[0].value
            if func in ("importlib.import_module", "import_module", "__import__"):
                self._add(name, node.lineno)
            elif func == "sys.modules.get":
                self._add(name, node.lineno, "lookup")
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript):
        # sys.modules["minitorch_nn.x"]
        if ast.unparse(node.value) == "sys.modules" and isinstance(node.slice, ast.Constant):
            if isinstance(node.slice.value, str):
                self._add(node.slice.value, node.lineno, "lookup")
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == PACKAGE:
                self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom):
        if node.level:
            base = _resolve_relative(self.module, node.level, node.module, self.modules)
        else:
            base = node.module or ""
        if base.split(".")[0] != PACKAGE:
            return
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            self._add(submodule if submodule in self.modules else base, node.lineno)


def collect_imports(package_dir: pathlib.Path = PACKAGE_DIR) -> list[Import]:
    """Every import edge between two modules of the package."""
    modules = module_files(package_dir)
    edges = []
    for name, path in modules.items():
        if path.suffix == ".pyx":
            declarations = package_dir.parent.joinpath(*name.split(".")).with_suffix(".pxd")
            tree, where = _cython_imports(path, declarations)
        else:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            where = str(path.relative_to(package_dir.parent))
        collector = _Collector(name, modules, where)
        collector.visit(tree)
        edges.extend(collector.edges)
    return edges


def build_graph(edges: list[Import] | None = None, *, include_functions: bool = True) -> nx.DiGraph:
    """A directed graph of modules; an edge ``a -> b`` means ``a`` imports ``b`` (lookups of
    loaded modules in ``sys.modules`` import nothing and are left out)."""
    if edges is None:
        edges = collect_imports()
    graph = nx.DiGraph()
    for edge in edges:
        if edge.kind != "import":
            continue
        if include_functions or not edge.in_function:
            graph.add_edge(edge.source, edge.target)
    return graph


def import_cycles(graph: nx.DiGraph | None = None) -> list[set[str]]:
    """The strongly connected components with more than one module, largest first."""
    if graph is None:
        graph = build_graph()
    components = [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    return sorted(components, key=len, reverse=True)


def _main(argv: list[str]) -> None:
    cycles = import_cycles()
    sizes = [len(c) for c in cycles]
    print(f"modules: {len(module_files())}, in cycles: {sum(sizes)}, cycle sizes: {sizes}")
    for cycle in cycles:
        print(f"\n{len(cycle)} modules:")
        for name in sorted(cycle):
            print("   ", name)
    if "--upward" in argv:
        from tests.test_layers import upward_imports

        print("\nupward imports:")
        for edge, source_layer, target_layer in upward_imports():
            where = "function" if edge.in_function else "module level"
            if edge.kind != "import":
                where += f", {edge.kind}"
            print(
                f"  {edge.where} {edge.source} -> {edge.target} "
                f"({source_layer} -> {target_layer}, {where})"
            )


if __name__ == "__main__":
    _main(sys.argv[1:])
