"""The free-text pass's hints, found in one scan of the lower-cased text.

Each rule family of :mod:`tracelake.scrub.freetext` runs only where its hint matches (a word
such as ``password`` or ``passport``, a label, a shape). The hints are supersets of what
their rules can find, and they run on every distinct text the scrubber meets: with the
standard library's engine, the hints cost about 30 us on a 50-character text (an
alternation of many words is tried at every position), more than the rules they gate.

Here every hint is compiled once into one Hyperscan database (an automaton over all of them)
and one scan per text says which hints may match: about 1.5 us for all of them. A hint's
Hyperscan form matches at least what its regex matches (:mod:`tracelake.scrub.superset`); a
hint that fires where its regex would not only runs its rule, which finds nothing more (the
rule's own patterns decide). Where Hyperscan is not installed (it ships for Linux on
x86-64), cannot compile a hint, or a text is not valid UTF-8 (a lone
surrogate), the hint's regex runs instead: the same answers, at the old cost.
"""

from __future__ import annotations

import os
import platform
import re
import threading
from dataclasses import dataclass
from typing import Any

from tracelake.forksafe import renew_locks_after_fork
from tracelake.scrub import disk_cache
from tracelake.scrub.superset import plain, superset_pattern


@dataclass(frozen=True, slots=True)
class Hint:
    """One hint: its regex (run on the lower-cased text) and its bit in a scan's result.
    *narrowing*: a hint that only narrows a cheaper one (its regex costs about what the rule
    it gates costs): without the automaton it says "maybe" instead of running its regex."""

    name: str
    pattern: re.Pattern[str]
    bit: int
    narrowing: bool = False


@dataclass(frozen=True, slots=True)
class _Engine:
    database: Any  # hyperscan.Database
    covered: int  # the bits of the hints it reports (the others keep their regex)


_HINTS: list[Hint] = []
_LOCK = threading.Lock()
renew_locks_after_fork(globals(), "_LOCK")
_ENGINE: _Engine | bool | None = None  # None: not built yet; False: no Hyperscan here
_LOCAL = threading.local()  # a Hyperscan scratch space per thread (one scan at a time each)


def hint(name: str, pattern: re.Pattern[str], *, narrowing: bool = False) -> Hint:
    """Register *pattern* (for the lower-cased text) as a hint; at import time only."""
    if pattern.flags & ~re.UNICODE:  # the automaton form reads the source alone
        raise ValueError(f"hint {name!r}: write its flags into the pattern (got {pattern.flags})")
    global _ENGINE
    with _LOCK:
        found = Hint(name, pattern, 1 << len(_HINTS), narrowing)
        _HINTS.append(found)
        _ENGINE = None  # rebuilt with the new hint on the next scan
    return found


class Found:
    """The hints a text may match: one Hyperscan scan, or each hint's regex when asked."""

    __slots__ = ("_mask", "_scanned", "low")

    def __init__(self, low: str, mask: int, scanned: int) -> None:
        self.low = low
        self._mask = mask
        self._scanned = scanned  # the bits the scan answered for; others ask their regex

    def __contains__(self, item: Hint) -> bool:
        if item.bit & self._scanned:
            return bool(item.bit & self._mask)
        return item.narrowing or item.pattern.search(self.low) is not None


def scan(low: str) -> Found:
    """The hints *low* (a lower-cased text, :func:`tracelake.scrub.lowered.lowered`) may
    match. Until the automaton is built (in the background, see :func:`_start_build`), the
    hints' regexes answer: the same answers."""
    engine = _ENGINE
    if engine is None:
        _start_build()
        return Found(low, 0, 0)
    if not isinstance(engine, _Engine):
        return Found(low, 0, 0)
    database = engine.database
    try:
        data = plain(low).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: Hyperscan reads valid UTF-8 only
        return Found(low, 0, 0)
    scratch = getattr(_LOCAL, "scratch", None)
    if scratch is None or getattr(_LOCAL, "database", None) is not database:
        import hyperscan

        scratch = _LOCAL.scratch = hyperscan.Scratch(database)
        _LOCAL.database = database
    hits = [0]
    database.scan(data, match_event_handler=_on_match, context=hits, scratch=scratch)
    return Found(low, hits[0], engine.covered)


def _on_match(bit: int, start: int, end: int, flags: int, hits: list[int]) -> None:
    hits[0] |= bit


def build() -> _Engine | bool:
    """Build the automaton now (a warm-up: ~0.4 s); later scans use it."""
    global _ENGINE
    with _LOCK:
        if _ENGINE is None:
            _ENGINE = _compile(list(_HINTS))
        return _ENGINE


# The first scan starts the build on a daemon thread (Hyperscan's compiler releases the GIL)
# and scans on with the regexes meanwhile: a fresh process's first scrub does not wait for it
# (a sink's writer in a just-started worker has its first events to keep before a SIGTERM).
_BUILDER: list[int] = []  # the pid that started a build thread


def _start_build() -> None:
    with _LOCK:
        if _ENGINE is not None or os.getpid() in _BUILDER:
            return
        _BUILDER[:] = [os.getpid()]
    threading.Thread(target=build, name="tracelake-hints-build", daemon=True).start()


def _compile(hints: list[Hint]) -> _Engine | bool:
    """One database for every hint Hyperscan accepts (False: no Hyperscan here)."""
    try:
        import hyperscan
    except ImportError:
        return False
    flags = (
        hyperscan.HS_FLAG_UTF8  # its classes are spelt out (scrub.superset): no UCP
        | hyperscan.HS_FLAG_SINGLEMATCH
        | hyperscan.HS_FLAG_ALLOWEMPTY
        | hyperscan.HS_FLAG_PREFILTER
    )
    accepted = [(superset_pattern(h.pattern.pattern).encode("utf-8"), h.bit) for h in hints]
    cache_key = _cache_key(hyperscan, accepted, flags)
    cached = _cached(hyperscan, cache_key)
    if cached is not None:
        return cached
    database = _database(hyperscan, accepted, flags)
    if database is not None:
        disk_cache.store(
            _CACHE_NAME, cache_key, _covered(accepted).to_bytes(16) + hyperscan.dumpb(database)
        )
    else:  # one by one: a hint Hyperscan rejects keeps its regex
        accepted = [one for one in accepted if _database(hyperscan, [one], flags) is not None]
        database = _database(hyperscan, accepted, flags) if accepted else None
    if database is None:
        return False
    return _Engine(database, _covered(accepted))


def _covered(accepted: list[tuple[bytes, int]]) -> int:
    covered = 0
    for _, bit in accepted:
        covered |= bit
    return covered


# The compiled automaton is kept on disk (tracelake.scrub.disk_cache): the next process loads
# it in 0.2 ms instead of compiling it again (0.5-0.8 s of CPU, every CLI start and test).
_CACHE_NAME = "hints"


def _cache_key(hyperscan: Any, accepted: list[tuple[bytes, int]], flags: int) -> bytes:
    parts = [
        str(getattr(hyperscan, "__version__", "")),
        platform.machine(),
        platform.python_implementation(),
        str(flags),
    ]
    parts += [f"{bit}:{expression.hex()}" for expression, bit in accepted]
    return "\n".join(parts).encode("utf-8")


def _cached(hyperscan: Any, key: bytes) -> _Engine | None:
    blob = disk_cache.load(_CACHE_NAME, key)
    if blob is None or len(blob) <= 16:
        return None
    try:
        database = hyperscan.loadb(blob[16:], hyperscan.HS_MODE_BLOCK)
        hyperscan.Scratch(database)  # refuses a database this CPU cannot run
    except Exception:  # noqa: BLE001 - damaged, or built elsewhere: compile it afresh
        return None
    return _Engine(database, int.from_bytes(blob[:16]))


def _database(hyperscan: Any, expressions: list[tuple[bytes, int]], flags: int) -> Any | None:
    database = hyperscan.Database()
    try:
        database.compile(
            expressions=[e for e, _ in expressions],
            ids=[bit for _, bit in expressions],
            elements=len(expressions),
            flags=[flags] * len(expressions),
        )
    except Exception:  # noqa: BLE001 - hyperscan.error, or a CPU it cannot run on
        return None
    return database
