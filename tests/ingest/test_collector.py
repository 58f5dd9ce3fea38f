"""The garbage collector's bulk settings: rarer young collections, the start frozen, both undone."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref

from tracelake import collector


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_streaming_freezes_and_restores() -> None:
    gc.unfreeze()
    before = gc.get_threshold()
    with collector.streaming():
        assert gc.get_threshold()[0] >= collector.YOUNG_THRESHOLD
        assert gc.get_freeze_count() > 0
        assert gc.isenabled()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_streaming_keeps_what_was_frozen_before() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector.streaming():
            pass
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()


def test_cycles_made_while_streaming_are_still_collected() -> None:
    """Rarer is not never: garbage cycles die once enough has been allocated, unprompted."""
    with collector.streaming():
        first = _Node()
        gone = weakref.ref(first)
        del first
        for _ in range(3 * collector.YOUNG_THRESHOLD):
            _Node()  # each one a cycle: net allocations the collector counts
        assert gone() is None


_EXIT_PROBE = """
import atexit, gc, sys
from tracelake.cli import main
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0))
sys.argv = ["tracelake", *sys.argv[1:]]
main({argv})
"""


def _exit_probe(argv: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _EXIT_PROBE.format(argv=argv), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_command_line_process_leaves_with_its_heap_frozen() -> None:
    """`tracelake ...` as a program freezes what is alive before the interpreter exits (its
    exit then skips a collection over the whole heap); the output and exit code are intact."""
    done = _exit_probe("", "--version")
    assert done.returncode == 0, done.stderr
    assert "tracelake" in done.stdout
    assert "frozen at exit: True" in done.stdout


def test_main_called_with_arguments_leaves_the_callers_collector_alone() -> None:
    """A caller that runs ``main([...])`` in its own process (tests, an embedding) keeps its
    collector as it was."""
    done = _exit_probe("['--version']")
    assert done.returncode == 0, done.stderr
    assert "frozen at exit: False" in done.stdout
