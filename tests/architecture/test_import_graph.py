"""The subpackages depend on each other one way: each unit imports only its own layer or lower.

A unit is a subpackage of tracelake (`store`, `scrub`, ...), a top-level module of tracelake
(`codec`, `wiring`, ...), or `pipelines`. Imports are read with `ast` (see import_graph.py):
module-level and function-level, and those under `if TYPE_CHECKING:` as well. The layers are the
data flow, normalize -> scrub -> append -> project -> promote, with the front ends on top.
Besides the layers, the edges docs/ARCHITECTURE.md says never exist are checked one by one
(``FORBIDDEN``): within the front ends, and from the web page to the batch jobs.
"""

from __future__ import annotations

import pytest

from tests.architecture.import_graph import find_cycles, imports, unit_edges, unit_of

# Lowest first. A unit may import units of its own layer (without a cycle) or of lower ones.
LAYERS: list[tuple[str, ...]] = [
    ("tracelake", "errors", "codec", "config", "forksafe", "collector"),  # `tracelake`: __version__
    ("runners",),
    ("scrub",),
    ("store",),
    # the write path into the store, and the helpers that sit beside it
    ("admission", "ingest", "sink", "run_identity", "wiring", "learning"),
    ("projections", "listing"),
    ("promotion", "pipelines"),
    # front ends
    ("lifecycle", "web", "cli", "console", "demo", "__main__"),
]
# Same-layer or downward edges that the architecture still rules out.
FORBIDDEN = {
    ("web", "pipelines"),  # the page reads the store's views; batch jobs are not a library
    ("web", "cli"),
    ("web", "lifecycle"),
    ("lifecycle", "web"),
    ("lifecycle", "cli"),
    ("demo", "cli"),
    ("console", "cli"),
    ("ingest", "sink"),  # the two ways in share admission, not each other
    ("sink", "ingest"),
}
LAYER = {unit: depth for depth, units in enumerate(LAYERS) for unit in units}


def test_every_unit_has_a_layer() -> None:
    units = {unit_of(imp.source) for imp in imports()} | {unit_of(imp.target) for imp in imports()}
    missing = sorted(units - LAYER.keys())
    assert not missing, f"units without a layer (add them to LAYERS): {missing}"


def test_no_import_goes_up_a_layer() -> None:
    upward = [
        f"{a} (layer {LAYER[a]}) -> {b} (layer {LAYER[b]}): "
        + ", ".join(f"{i.source}:{i.line}" for i in found)
        for (a, b), found in sorted(unit_edges().items())
        if a in LAYER and b in LAYER and LAYER[a] < LAYER[b]
    ]
    assert not upward, "imports against the layering:\n" + "\n".join(upward)


def test_no_forbidden_edge() -> None:
    found = sorted(edge for edge in unit_edges() if edge in FORBIDDEN)
    assert not found, f"imports docs/ARCHITECTURE.md rules out: {found}"


def test_only_main_imports_the_command_line() -> None:
    importers = sorted(
        {a for (a, b) in unit_edges() if b == "cli" and a not in ("cli", "__main__")}
    )
    assert not importers, f"only tracelake/__main__ may import the cli package: {importers}"


def test_no_cycle_between_units() -> None:
    cycles = find_cycles(set(unit_edges()))
    assert not cycles, f"import cycles between units: {cycles}"


def test_no_import_cycle_between_modules_at_load_time() -> None:
    """Module-level runtime imports (what runs on `import`) form no cycle between modules."""
    edges = {
        (imp.source, imp.target)
        for imp in imports()
        if imp.module_level and not imp.type_checking and imp.source != imp.target
    }
    assert not find_cycles(edges)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("tracelake.store.engine", "store"),
        ("tracelake.codec", "codec"),
        ("tracelake", "tracelake"),
        ("pipelines.io", "pipelines"),
    ],
)
def test_unit_of(source: str, expected: str) -> None:
    assert unit_of(source) == expected


def test_the_reader_sees_all_kinds_of_import() -> None:
    """Guard against a reader that silently finds nothing: all three kinds occur in the tree."""
    found = list(imports())
    assert any(i.module_level and not i.type_checking for i in found)
    assert any(not i.module_level for i in found)
    assert any(i.type_checking for i in found)
    # `from . import io` in pipelines resolves to the module, and tracelake.pipelines to pipelines
    targets = {i.target for i in found}
    assert "pipelines.io" in targets
    assert not any(t.startswith("tracelake.pipelines") for t in targets)
