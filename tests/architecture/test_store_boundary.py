"""The store's parts are its own: code outside tracelake/store calls `Store` methods, never its
appender, reader, quarantine writer or engine (issue #11, "Store as a recorder").

Read with `ast`: an attribute access `<something named *store*>.<part>` in a module of
tracelake/ or pipelines/ outside tracelake/store is a leak. Tests may use the one seam,
`Store.parts_for_tests()`; product code may not.
"""

from __future__ import annotations

import ast

from tests.architecture.import_graph import REPO, module_files

PARTS = {"appender", "reader", "quarantine", "engine"}
PRIVATE = {f"_{p}" for p in PARTS}
SEAM = "parts_for_tests"
# Known gap (docs/ARCHITECTURE.md): the sink is being changed elsewhere; its two call sites
# still write through the deprecated `Store.quarantine` property.
ALLOWED = {
    ("tracelake/sink/shipper.py", "quarantine"),
    ("tracelake/sink/writer.py", "quarantine"),
}


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
        if node.attr == SEAM or (node.attr in PRIVATE and _names_a_store(node.value)):
            found.add(node.attr)
        elif node.attr in PARTS and _names_a_store(node.value):
            found.add(node.attr)
    return found


def test_no_module_outside_the_store_reaches_its_parts() -> None:
    offenders = []
    for path in module_files().values():
        name = str(path.relative_to(REPO))
        if name.startswith("tracelake/store/"):
            continue
        for part in sorted(leaks(path.read_text(encoding="utf-8"))):
            if (name, part) not in ALLOWED:
                offenders.append(f"{name}: .{part}")
    assert offenders == [], "use Store methods instead of its parts:\n" + "\n".join(offenders)


def test_the_leak_reader_sees_leaks() -> None:
    """Guard against a reader that finds nothing: each kind of leak is seen, a method is not."""
    assert leaks("store.reader.stats()") == {"reader"}
    assert leaks("self.store.appender.append(x)") == {"appender"}
    assert leaks("self.store._engine.connect()") == {"_engine"}
    assert leaks("s = x.parts_for_tests()") == {"parts_for_tests"}
    assert leaks("store.stats(); self.store.append(x); reader.read()") == set()


def test_the_allowed_leaks_still_exist() -> None:
    """When the sink stops using `Store.quarantine`, drop ALLOWED and the property."""
    for name, part in ALLOWED:
        assert part in leaks((REPO / name).read_text(encoding="utf-8")), (name, part)
