"""StreamRuns remembers occurrences of envelope contents in a bounded window (memory stays
flat however long the input); what falls out of the window is the documented consequence."""

from __future__ import annotations

from tracelake.run_identity import StreamRuns, content_digest

KEY = b"k" * 32


def _ids(runs: StreamRuns, contents: list[str], run: str = "r") -> list[str | None]:
    out = []
    for c in contents:
        digest = content_digest(KEY, run, c.encode())
        (seq,) = runs.feed_parts(run, None, None, False, None, digest, c)
        out.append(seq.event_id)
    return out


def test_repeats_inside_the_window_are_counted() -> None:
    ids = _ids(StreamRuns(KEY, window=3), ["a", "b", "a", "a"])
    assert ids[0] != ids[2] != ids[3] and ids[0] != ids[3]
    assert [i.rsplit("-", 1)[1] for i in ids if i] == ["1", "1", "2", "3"]


def test_a_repeat_beyond_the_window_takes_its_first_occurrences_id() -> None:
    runs = StreamRuns(KEY, window=3)
    ids = _ids(runs, ["a", "b", "c", "d", "a"])
    assert ids[4] == ids[0]  # recorded as a duplicate of the first "a", never stored twice
    assert len(runs._seen) <= 3 and len(runs._legacy_seq) <= 3


def test_memory_is_bounded_by_the_window() -> None:
    runs = StreamRuns(KEY, window=100)
    for n in range(50):
        _ids(runs, [f"c{n}-{i}" for i in range(20)], run=f"run-{n}")
    assert len(runs._seen) == 100
    assert len(runs._legacy_seq) == 50
