"""Size limits for tracelake/ and pipelines/ (issue #11): small modules, simple functions, names
that say what a module is.

- no module above MAX_LINES physical lines;
- no function, method or closure with radon cyclomatic complexity above MAX_COMPLEXITY
  (radon's Python API, as `radon cc -s tracelake pipelines` counts it; closures are their own
  blocks, as with `radon cc --show-closures`);
- no two modules share a basename, except __init__.py.
"""

from __future__ import annotations

from collections import defaultdict

from radon.complexity import add_inner_blocks, cc_visit
from radon.visitors import Function

from tests.architecture.import_graph import REPO, module_files

MAX_LINES = 400
MAX_COMPLEXITY = 15


def _files() -> list[str]:
    return sorted(str(path.relative_to(REPO)) for path in module_files().values())


def test_no_module_is_too_long() -> None:
    long = {}
    for name in _files():
        lines = len((REPO / name).read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            long[name] = lines
    assert not long, f"modules above {MAX_LINES} lines: {long}"


def complex_functions() -> dict[str, int]:
    """'path:line name' -> complexity, for every function above the limit."""
    found = {}
    for name in _files():
        blocks = add_inner_blocks(cc_visit((REPO / name).read_text(encoding="utf-8")))
        for block in blocks:
            if isinstance(block, Function) and block.complexity > MAX_COMPLEXITY:
                found[f"{name}:{block.lineno} {block.fullname}"] = block.complexity
    return found


def test_no_function_is_too_complex() -> None:
    found = complex_functions()
    assert not found, f"functions above cyclomatic complexity {MAX_COMPLEXITY}: {found}"


def test_the_complexity_reader_sees_functions() -> None:
    """Guard against a reader that finds nothing: it sees a known function and its branches."""
    code = "def f(x):\n    if x:\n        return 1\n    for _ in x:\n        pass\n    return 2\n"
    (block,) = cc_visit(code)
    assert isinstance(block, Function)
    assert block.complexity == 3


def test_no_duplicate_basenames() -> None:
    by_name: dict[str, list[str]] = defaultdict(list)
    for name in _files():
        by_name[name.rsplit("/", 1)[-1]].append(name)
    duplicates = {
        base: paths for base, paths in by_name.items() if len(paths) > 1 and base != "__init__.py"
    }
    assert not duplicates, f"modules sharing a basename: {duplicates}"
