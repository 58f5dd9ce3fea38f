"""The on-disk cache of the hint automaton (tracelake.scrub.disk_cache, scrub.hints): a later
process loads what an earlier one compiled; a damaged, foreign or untrusted entry is never
used; the answers are the same with and without it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("hyperscan")

import tracelake.scrub.freetext  # noqa: F401  (registers every hint)
from tracelake.scrub import disk_cache, hints


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("TRACELAKE_CACHE_DIR", str(folder))
    return folder


def _compile() -> hints._Engine:
    engine = hints._compile(list(hints._HINTS))
    assert isinstance(engine, hints._Engine)
    return engine


def _answers(engine: hints._Engine, texts: list[str]) -> list[list[str]]:
    saved = hints._ENGINE
    hints._ENGINE = engine
    try:
        return [[h.name for h in hints._HINTS if h in hints.scan(t.lower())] for t in texts]
    finally:
        hints._ENGINE = saved


TEXTS = [
    "password: hunter2 for kim.minjun@example.com",
    "Contact: Max Field, passport M12345678",
    "call 010-1234-5678 tomorrow",
    "nothing to see here",
]


def test_a_second_compile_loads_the_first_and_answers_the_same(cache: Path) -> None:
    first = _compile()
    entries = list(cache.glob("hints-*.bin"))
    assert len(entries) == 1
    assert entries[0].stat().st_mode & 0o077 == 0 and cache.stat().st_mode & 0o077 == 0
    second = _compile()
    assert second.database is not first.database
    assert second.covered == first.covered
    assert _answers(second, TEXTS) == _answers(first, TEXTS)
    assert any(_answers(second, TEXTS))  # the texts do raise hints


def test_a_damaged_entry_is_compiled_afresh(cache: Path) -> None:
    good = _compile()
    (entry,) = cache.glob("hints-*.bin")
    entry.write_bytes(entry.read_bytes()[:1000] + b"\0" * 50)
    again = _compile()
    assert _answers(again, TEXTS) == _answers(good, TEXTS)
    assert entry.stat().st_size > 10_000  # rewritten whole


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
@pytest.mark.parametrize("loosen", ["file", "directory"])
def test_an_entry_others_can_write_is_not_read(
    cache: Path, monkeypatch: pytest.MonkeyPatch, loosen: str
) -> None:
    _compile()
    (entry,) = cache.glob("hints-*.bin")
    (entry if loosen == "file" else cache).chmod(0o666 if loosen == "file" else 0o777)
    loaded: list[bytes | None] = []
    real_load = disk_cache.load

    def spy(name: str, key: bytes) -> bytes | None:
        loaded.append(real_load(name, key))
        return loaded[-1]

    monkeypatch.setattr(disk_cache, "load", spy)
    assert isinstance(_compile(), hints._Engine)  # compiled afresh
    assert loaded == [None]
    cache.chmod(0o700)
    entry.chmod(0o600)
    assert real_load("hints", b"no such key") is None
    _compile()
    assert loaded[-1] is not None  # private again: read


def test_turned_off_nothing_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACELAKE_CACHE_DIR", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _compile()
    assert disk_cache.directory() is None
    assert not list(tmp_path.rglob("*.bin"))


def test_an_unwritable_directory_only_costs_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TRACELAKE_CACHE_DIR", str(blocker / "cache"))
    assert isinstance(_compile(), hints._Engine)


def test_old_entries_are_pruned(cache: Path) -> None:
    for i in range(disk_cache.KEEP + 3):
        disk_cache.store("hints", f"key {i}".encode(), b"x" * 32)
    assert len(list(cache.glob("hints-*.bin"))) == disk_cache.KEEP
    assert disk_cache.load("hints", f"key {disk_cache.KEEP + 2}".encode()) == b"x" * 32
