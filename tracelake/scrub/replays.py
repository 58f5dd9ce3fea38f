"""Results made with provisional subject secrets, replayed while they still hold.

The ingest scrubs a chunk of lines before it stores the secrets of the subjects it met for the
first time (``store.provisional``), so every event of a run whose subject is new in the chunk
is scrubbed with a provisional secret. The memos (``scrub.policy.memoized``, the ingest's safe
ids) kept nothing made with one, so the ``trace_metadata`` copied onto every event of such a
run was scrubbed again for each event: 6% of a worker's instructions on the realistic corpus
(callgrind; BENCHMARKS.md, session 23).

Here such a result is kept with the secrets it was made with: every ``(subject, secret)`` that
:func:`tracelake.scrub.pseudonym.subject_key` handed out while it was computed (a
:func:`recording`). A later lookup asks for each subject's secret again, through the same
path: it is replayed only when every secret is the same bytes, so it is exactly what
computing it again would give. Asking again also does what computing it again would do to the
ingest's bookkeeping: the subject is marked as used by this line (so the line is scrubbed
again if its provisional secret loses at settle) and the provisional stamp moves. A secret of
the process (the database was away: ``admission.safe_identifier``) cannot be asked again: what
used one is never replayed (:func:`note_unreplayable`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from tracelake.forksafe import renew_locks_after_fork

T = TypeVar("T")
Used = tuple[str, bytes] | None  # (subject, secret), or None: something that cannot be asked again
Derive = Callable[[bytes, str], bytes]  # (pseudonym key, subject) -> the subject's secret now

_local = threading.local()  # .open: the recordings under way on this thread, innermost last


def note(text: str, secret: bytes) -> None:
    """A subject's secret was handed out: every recording under way on this thread saw it."""
    open_ = getattr(_local, "open", None)
    if open_:
        for recording in open_:
            recording.append((text, secret))


def note_unreplayable() -> None:
    """A secret that cannot be asked for again was used: no recording under way may replay."""
    open_ = getattr(_local, "open", None)
    if open_:
        for recording in open_:
            recording.append(None)


def start() -> list[Used]:
    """Record the secrets handed out on this thread from now until :func:`stop`."""
    open_: list[list[Used]] | None = getattr(_local, "open", None)
    if open_ is None:
        open_ = _local.open = []
    recording: list[Used] = []
    open_.append(recording)
    return recording


def stop(recording: list[Used]) -> tuple[Used, ...]:
    open_: list[list[Used]] = _local.open
    for i in range(len(open_) - 1, -1, -1):  # innermost last; by identity (equal lists abound)
        if open_[i] is recording:
            del open_[i]
            break
    return tuple(recording)


def still_holds(derive: Derive, key: bytes, used: tuple[Used, ...]) -> bool:
    """Whether every subject of *used* gets the same secret from *derive* now."""
    for item in used:
        if item is None:
            return False
        text, secret = item
        try:
            if derive(key, text) != secret:
                return False
        except Exception:  # noqa: BLE001 - no secret now: computed again, failing its own way
            return False
    return True


class Replays(Generic[T]):
    """A bounded memo of results made with provisional secrets (oldest out first).

    Written under one lock for every memo of the process (a fresh one after a fork:
    ``tracelake.forksafe``); read without it, as ``scrub.policy``'s memo is. A lock is needed
    although each step is one ``OrderedDict`` operation: a memo key holding a ``BoundKey`` equal
    to the stored one but another object compares in Python code, where another thread can run
    in the middle of the insert (an attack crashed CPython 3.11 so, with four threads)."""

    def __init__(self, derive: Derive, limit: int) -> None:
        self._derive = derive
        self._limit = limit
        self._entries: OrderedDict[object, tuple[T, tuple[Used, ...]]] = OrderedDict()

    def get(self, key: bytes, memo_key: object) -> T | None:
        """The result kept for *memo_key* when its secrets still hold (asked for again)."""
        entry = self._entries.get(memo_key)
        if entry is None:
            return None
        value, used = entry
        if not still_holds(self._derive, key, used):
            with _LOCK:
                self._entries.pop(memo_key, None)
            return None
        return value

    def put(self, memo_key: object, value: T, used: tuple[Used, ...]) -> None:
        if None in used:
            return
        with _LOCK:
            entries = self._entries
            entries[memo_key] = (value, used)
            while len(entries) > self._limit:
                entries.popitem(last=False)

    def clear(self) -> None:
        with _LOCK:
            self._entries.clear()


_LOCK = threading.Lock()
renew_locks_after_fork(globals(), "_LOCK")
