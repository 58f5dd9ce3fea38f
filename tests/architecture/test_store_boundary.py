"""The store's parts are its own: code outside tracelake/store calls `Store` methods, never its
appender, reader, quarantine writer or engine (issue #11, "Store as a recorder"); and only the
store knows which backend it runs on (catalogues, pragmas, drivers).

Read with `ast`: an attribute access `<something named *store*>.<part>` in a module of
tracelake/ or pipelines/ outside tracelake/store is a leak. Tests may use the one seam,
`Store.parts_for_tests()`; product code may not. Backend-specific code is an import of a
driver or of a SQLAlchemy dialect, a `<conn>.dialect.name` test, or SQL text naming a
catalogue or a driver object (`pg_*`, `sqlite_master`, `PRAGMA`, `::regclass`, `pgconn`) outside docstrings and comments.
"""

from __future__ import annotations

import ast
import re

from tests.architecture.import_graph import REPO, docstring_ids, module_files

PARTS = {"appender", "reader", "quarantine", "engine"}
PRIVATE = {f"_{p}" for p in PARTS}
SEAM = "parts_for_tests"


def _names_a_store(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return "store" in node.id.lower()
    if isinstance(node, ast.Attribute):
        return "store" in node.attr.lower()
    return False


def leaks(source: str) -> set[str]:
    """The store parts *source* reaches: `store.reader`, `self.store._engine`, the seam."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute):
            continue
        if node.attr == SEAM or (node.attr in PARTS | PRIVATE and _names_a_store(node.value)):
            found.add(node.attr)
    return found


def test_no_module_outside_the_store_reaches_its_parts() -> None:
    offenders = []
    for path in module_files().values():
        name = str(path.relative_to(REPO))
        if name.startswith("tracelake/store/"):
            continue
        for part in sorted(leaks(path.read_text(encoding="utf-8"))):
            offenders.append(f"{name}: .{part}")
    assert offenders == [], "use Store methods instead of its parts:\n" + "\n".join(offenders)


def test_the_leak_reader_sees_leaks() -> None:
    """Guard against a reader that finds nothing: each kind of leak is seen, a method is not."""
    assert leaks("store.reader.stats()") == {"reader"}
    assert leaks("self.store.appender.append(x)") == {"appender"}
    assert leaks("self.store._engine.connect()") == {"_engine"}
    assert leaks("s = x.parts_for_tests()") == {"parts_for_tests"}
    assert leaks("store.stats(); self.store.append(x); reader.read()") == set()


DRIVERS = ("psycopg", "sqlite3", "sqlalchemy.dialects")
CATALOGUE = re.compile(
    r"\bpg_[a-z_]+|\bpgconn\b|\bsqlite_master\b|\bPRAGMA\b|::regclass", re.IGNORECASE
)


def backend_specific(source: str) -> set[str]:
    """What in *source* is specific to one database backend."""
    tree = ast.parse(source)
    docs = docstring_ids(tree)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names.append(getattr(node, "module", None) or "")
            found |= {f"import {n}" for n in names if n.startswith(DRIVERS)}
        elif isinstance(node, ast.Attribute) and node.attr == "name":
            if isinstance(node.value, ast.Attribute) and node.value.attr == "dialect":
                found.add(".dialect.name")
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
        ):
            found |= {f"SQL {m.group(0)!r}" for m in CATALOGUE.finditer(node.value)}
    return found


def test_only_the_store_knows_its_backend() -> None:
    offenders = [
        f"{path.relative_to(REPO)}: {sorted(found)}"
        for path in module_files().values()
        if not str(path.relative_to(REPO)).startswith("tracelake/store/")
        and (found := backend_specific(path.read_text(encoding="utf-8")))
    ]
    assert offenders == [], "backend-specific code outside tracelake/store:\n" + "\n".join(
        offenders
    )


def test_the_backend_reader_sees_backend_code() -> None:
    assert backend_specific("import psycopg") == {"import psycopg"}
    assert backend_specific("from sqlalchemy.dialects import sqlite") == {
        "import sqlalchemy.dialects"
    }
    assert backend_specific("x = conn.dialect.name == 'sqlite'") == {".dialect.name"}
    assert backend_specific("q = 'SELECT 1 FROM pg_roles'") == {"SQL 'pg_roles'"}
    assert backend_specific('"""pg_class in a docstring"""\nq = "SELECT 1"') == set()
