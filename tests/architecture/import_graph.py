"""The import graph of tracelake/ and pipelines/, read with `ast` (nothing is imported).

Every `import` and `from ... import` statement counts: at module level, inside functions, and
under `if TYPE_CHECKING:` too (a type-only import still ties one layer to another, and the
issue asks for one-way dependencies, not one-way runtime loading). Relative imports are
resolved against the importing module. `pipelines` is also importable as `tracelake.pipelines`
(its name in the wheel); both spellings map to the top-level `pipelines` package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("tracelake", "pipelines")


@dataclass(frozen=True)
class Import:
    """One import statement's target, as seen from `source` (a dotted module name)."""

    source: str
    target: str
    line: int
    module_level: bool  # False inside a function body (a deferred import)
    type_checking: bool  # under `if TYPE_CHECKING:`


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module under the roots."""
    found: dict[str, Path] = {}
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _canonical(name: str) -> str:
    if name == "tracelake.pipelines" or name.startswith("tracelake.pipelines."):
        return name.removeprefix("tracelake.")
    return name


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, known: set[str]) -> None:
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.known = known
        self.depth = 0  # function nesting
        self.type_checking = 0
        self.found: list[Import] = []

    def _add(self, target: str, node: ast.stmt) -> None:
        target = _canonical(target)
        if target.split(".")[0] not in ROOTS:
            return
        self.found.append(
            Import(self.module, target, node.lineno, self.depth == 0, self.type_checking > 0)
        )

    def _resolve(self, name: str) -> str:
        """The longest known module that `name` names or lives in."""
        while name and _canonical(name) not in self.known:
            name = name.rpartition(".")[0]
        return name

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(self._resolve(alias.name), node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")
            base = base[: len(base) - (node.level - 1)]
            stem = ".".join([*base, node.module] if node.module else base)
        else:
            stem = node.module or ""
        for alias in node.names:
            # `from pkg import sub` imports the submodule pkg.sub when there is one.
            full = f"{stem}.{alias.name}"
            self._add(self._resolve(full if _canonical(full) in self.known else stem), node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self.type_checking += 1
            for child in node.body:
                self.visit(child)
            self.type_checking -= 1
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)


def imports() -> Iterator[Import]:
    """Every import of a tracelake/pipelines module by a tracelake/pipelines module."""
    files = module_files()
    known = set(files)
    for module, path in files.items():
        collector = _Collector(module, path.name == "__init__.py", known)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        yield from collector.found


def unit_of(module: str) -> str:
    """The layering unit: a subpackage or top-level module (`tracelake.store.engine` -> `store`).

    The root package itself (`tracelake`, which holds only `__version__`) is the unit `tracelake`.
    """
    parts = module.split(".")
    if parts[0] == "pipelines":
        return "pipelines"
    return parts[1] if len(parts) > 1 else "tracelake"


def unit_edges() -> dict[tuple[str, str], list[Import]]:
    """(importer unit, imported unit) -> the imports that make that edge; self-edges left out."""
    edges: dict[tuple[str, str], list[Import]] = {}
    for imp in imports():
        pair = (unit_of(imp.source), unit_of(imp.target))
        if pair[0] != pair[1]:
            edges.setdefault(pair, []).append(imp)
    return edges


def find_cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def strongconnect(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                strongconnect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            strongconnect(node)
    return sorted(out)


if (
    __name__ == "__main__"
):  # print the current unit graph: python tests/architecture/import_graph.py
    for (a, b), found in sorted(unit_edges().items()):
        first = found[0]
        kinds = sorted(
            {"tc" if i.type_checking else ("top" if i.module_level else "fn") for i in found}
        )
        print(
            f"{a:>14} -> {b:<14} {len(found):3d} {','.join(kinds):12} e.g. {first.source}:{first.line}"
        )
    print("cycles:", find_cycles(set(unit_edges())))


def docstring_ids(tree: ast.AST) -> set[int]:
    """``id()`` of every module, class and function docstring node of *tree* (checks on string
    constants leave docstrings out)."""
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
