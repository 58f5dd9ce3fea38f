"""The public scrubber: one call per event, fail closed, a report of counts only."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tracelake.errors import ScrubError
from tracelake.forksafe import renew_locks_after_fork
from tracelake.scrub.ids import kept_as_id
from tracelake.scrub.sources import SOURCES
from tracelake.scrub.walk import Walker


@dataclass(frozen=True)
class ScrubbedEvent:
    """``payload``: a new JSON-compatible dict, safe to store. ``report``: counts by entity type
    and by field path, and counts of actions (previewed, dropped, pseudonymized); no values."""

    payload: dict[str, Any]
    report: dict[str, Any] = field(default_factory=dict)


class Scrubber:
    """Scrubs events and texts. Thread-safe; holds only the pseudonym key.

    The presidio engine and the detection cache are process-wide and shared by all scrubbers
    (detection does not depend on the key; only pseudonyms do).
    """

    def __init__(self, key: bytes) -> None:
        if not isinstance(key, bytes) or len(key) < 16:
            raise ScrubError("the pseudonym key must be at least 16 bytes")
        self._key = key

    def scrub_event(self, source: str, event_type: str, event: dict[str, Any]) -> ScrubbedEvent:
        """Scrub one event (see :mod:`tracelake.scrub`). Raises :class:`ScrubError` on any
        failure; the message names the failure, never a value from the event."""
        try:
            if not isinstance(event, dict):
                raise ScrubError(f"an event must be a dict, not a {type(event).__name__}")
            scrub = SOURCES.get(source)
            if scrub is None:
                raise ScrubError(f"unknown source {source!r}; expected one of {sorted(SOURCES)}")
            walker = Walker(self._key)
            payload = scrub(walker, event)
            report = walker.report()
        except ScrubError:
            raise
        except Exception as exc:  # noqa: BLE001 - fail closed: never a partially scrubbed event
            # `from None`: the original exception's message or traceback could carry a value.
            raise ScrubError(
                f"scrubbing a {source} {event_type!s:.64} event failed ({type(exc).__name__})"
            ) from None
        return ScrubbedEvent(payload=payload, report=report)

    def scrub_events(
        self, items: Sequence[tuple[str, str, dict[str, Any]]]
    ) -> list[ScrubbedEvent | ScrubError]:
        """Scrub many ``(source, event_type, event)`` items, in order, in this process.

        Each result is the :class:`ScrubbedEvent` or, for an event that failed, its
        :class:`ScrubError` (the caller stores a minimal record for it): one bad event does
        not stop the batch. A process pool was measured for large batches on the 2-CPU
        machine and lost (see BENCHMARKS.md), so there is none.
        """
        out: list[ScrubbedEvent | ScrubError] = []
        for source, event_type, event in items:
            try:
                out.append(self.scrub_event(source, event_type, event))
            except ScrubError as exc:
                out.append(exc)
        return out

    def kept_as_id(self, value: str) -> bool:
        """Whether *value*, given as an id (a run id, an event id, a value under an id key),
        may be stored as it is: an id's shape and nothing personal in it
        (:mod:`tracelake.scrub.ids`). Otherwise the caller stores a keyed pseudonym."""
        try:
            return kept_as_id(str(value))
        except Exception as exc:  # noqa: BLE001 - fail closed
            raise ScrubError(f"judging an id failed ({type(exc).__name__})") from None

    def warm_up(self) -> None:
        """Build presidio's analyzer and load the Korean lexicon now (seconds), not on the
        first event."""
        from tracelake.scrub import hints

        hints.build()
        self.scrub_text("warm up: 김민수 고객님 010-1234-5678")

    def scrub_text(self, text: str, max_len: int = 500) -> str:
        """Scrubbed, cut text for error messages, quarantine details and log lines.

        A text that is (or starts like) a JSON document, such as a quarantined line, gets the
        key rules too, exactly as the event path applies them: ``"memberId": 123`` becomes
        the same pseudonym, ``"phone": 1012345678`` the same marker."""
        try:
            text = str(text)
            walker = Walker(self._key)
            if text.lstrip()[:1] in ("{", "["):
                out = walker.json_text(text.strip(), "text", limit=max_len)
                return out if len(out) <= max_len else out[:max_len] + "…"
            return walker.text(text, "text", limit=max_len)
        except Exception as exc:  # noqa: BLE001 - fail closed
            raise ScrubError(f"scrubbing a text failed ({type(exc).__name__})") from None


_SCRUBBERS: dict[bytes, Scrubber] = {}
_LOCK = threading.Lock()
renew_locks_after_fork(globals(), "_LOCK")


def get_scrubber(key: bytes) -> Scrubber:
    """The process-wide :class:`Scrubber` for *key* (the engine is built on first use)."""
    scrubber = _SCRUBBERS.get(key)
    if scrubber is None:
        with _LOCK:
            scrubber = _SCRUBBERS.setdefault(key, Scrubber(key))
    return scrubber


def clear_caches() -> None:
    """Empty every per-process memo (detection results, key classes, parsed cut previews,
    trace_metadata).

    For benchmarks and tests that must measure or exercise a cold scrubber; the presidio
    engine itself stays built."""
    from tracelake.scrub import detect, keys, policy, preview

    detect.detect.cache_clear()
    detect.CLEAN_TEXTS.clear()
    detect.CLEAN_IDS.clear()
    keys.classify.cache_clear()
    keys.is_quantity.cache_clear()
    keys.credential_quantity.cache_clear()
    preview._maybe_json.cache_clear()
    policy.forget_memoised()
