"""The garbage collector's bulk settings: rarer young collections, the start frozen, both undone."""

from __future__ import annotations

import gc
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
