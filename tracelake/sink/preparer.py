"""Snapshot and scrub the sink's queued items into events (or quarantine rows).

The same code runs on the sink's writer thread and, when the sink offloads it, in the scrubber
process (:mod:`tracelake.sink.scrub_worker`): one definition of what an item becomes.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tracelake.admission import new_event, quarantine_item, safe_identifier, scrub
from tracelake.errors import ContractError
from tracelake.runners import InboundEvent, classify_object, to_jsonable
from tracelake.store import NewEvent, QuarantineItem

if TYPE_CHECKING:
    from tracelake.scrub import Scrubber

# What record() enqueues: (the caller's object, untouched, run_id, time.time() when it was
# recorded, trace_metadata). A plain tuple, not a dataclass: building it costs the runner's
# thread ~0.1 us instead of ~0.5 us per event (a Python-level __init__), and it is one object.
Item = tuple[Any, "str | None", float, "dict[str, Any] | None"]

Prepared = tuple[Sequence[NewEvent], Sequence[QuarantineItem], float]


@dataclass(frozen=True)
class Unreadable:
    """An item whose snapshot failed where it was pickled (its ``to_dict()`` raised): quarantined
    as the writer thread quarantines it (:mod:`tracelake.sink.pickling`)."""

    error: str  # the exception's type name


def new_run_id() -> str:
    return f"run-{uuid.uuid4().hex}"


class Preparer:
    def __init__(self, scrubber: Scrubber, key: bytes, max_depth: int) -> None:
        self.scrubber, self.key, self.max_depth = scrubber, key, max_depth
        self._ids = itertools.count(1)
        self._id_prefix = uuid.uuid4().hex[:16]  # unique across processes and sinks
        self._bare_run: str | None = None
        self._safe_ids: dict[str, str] = {}

    def prepare(self, batch: list[Item], between: Callable[[], None] | None = None) -> Prepared:
        """Snapshot and scrub each item; an item that cannot be made into an event is
        quarantined on its own (with its reason), never taking the batch down with it.
        ``between`` is called before each item (the writer's pacing)."""
        events: list[NewEvent] = []
        bad: list[QuarantineItem] = []
        for item in batch:
            if between is not None:
                between()
            obj, given_run, recorded_at, meta = item
            now = datetime.fromtimestamp(recorded_at, UTC)
            try:
                if isinstance(obj, Unreadable):
                    raise ContractError("unreadable_event", _unreadable(obj.error))
                inbound = self._snapshot(obj, meta)
                run_id = self._safe(self._run_of(inbound, given_run)) or new_run_id()
                event_id = self._safe(inbound.event_id) or f"{self._id_prefix}-{next(self._ids)}"
                inbound = InboundEvent(
                    inbound.source, inbound.type, inbound.event, run_id, event_id
                )
                events.append(new_event(inbound, scrub(self.scrubber, inbound), run_id, None, now))
            except ContractError as exc:
                bad.append(self.quarantined(given_run, exc.reason, exc.detail, now))
            except Exception as exc:  # noqa: BLE001 - e.g. a __str__ or to_dict() that raises
                detail = _unreadable(type(exc).__name__)
                bad.append(self.quarantined(given_run, "unreadable_event", detail, now))
        return events, bad, batch[0][2] if batch else time.time()

    def unreadable(self, size: int, oldest: float, why: str) -> Prepared:
        """A batch whose pickle does not load (its class's own loading code failed): each of
        its events is quarantined (counted, its run unknown), not dropped without a trace."""
        now = datetime.fromtimestamp(oldest, UTC)
        detail = f"the event could not be copied for scrubbing ({why})"
        bad = [self.quarantined(None, "unreadable_event", detail, now) for _ in range(size)]
        return [], bad, oldest

    def quarantined(
        self, given_run: str | None, reason: str, detail: str, now: datetime
    ) -> QuarantineItem:
        return quarantine_item(
            self.scrubber,
            self.key,
            origin="sink",
            reason=reason,
            detail=detail,
            raw=f"{self._id_prefix}-{next(self._ids)}".encode(),  # unique across processes
            recorded_at=now,
            run_id=self._safe(given_run) if isinstance(given_run, str) else None,
        )

    def _safe(self, value: str | None) -> str | None:
        """Run and event ids given by the caller, as they may be stored (see safe_identifier)."""
        if value is None:
            return None
        known = self._safe_ids.get(value)
        if known is None:
            if len(self._safe_ids) > 10_000:
                self._safe_ids.clear()
            known = self._safe_ids[value] = safe_identifier(self.scrubber, self.key, value) or ""
        return known

    def _snapshot(self, obj: Any, trace_metadata: dict[str, Any] | None) -> InboundEvent:
        """A private copy of the caller's event (their objects are never touched)."""
        for attempt in range(3):
            try:
                inbound = classify_object(obj, self.max_depth)
                break
            except RuntimeError as exc:  # the caller changed a dict while we copied it: again
                if "during iteration" not in str(exc):
                    raise  # e.g. a to_dict() that raises RuntimeError: unreadable, not unstable
                if attempt == 2:
                    raise ContractError(
                        "unstable_object", "the event changed while it was copied"
                    ) from None
        if trace_metadata:
            meta = to_jsonable(trace_metadata, self.max_depth)
            own = inbound.event.get("trace_metadata")
            inbound.event["trace_metadata"] = {**meta, **own} if isinstance(own, dict) else meta
        return inbound

    def _run_of(self, inbound: InboundEvent, given_run: str | None) -> str:
        if given_run is not None:
            return given_run
        if inbound.run_id is not None:
            return inbound.run_id
        if inbound.starts_run or self._bare_run is None:
            self._bare_run = new_run_id()
        return self._bare_run

    def safe_error(self, exc: BaseException) -> str:
        """An exception's first line, scrubbed: log lines are a path to disk too. A system
        error is its number and the system's text (never its file name)."""
        if isinstance(exc, OSError) and exc.errno is not None and exc.strerror:
            return f"{type(exc).__name__} [Errno {exc.errno}] {exc.strerror}"
        try:
            return self.scrubber.scrub_text(_short(exc), max_len=200)
        except Exception:  # noqa: BLE001 - if even that fails, say only what kind it was
            return type(exc).__name__


def _unreadable(error: str) -> str:
    return f"{error} while taking a snapshot of the event"


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:300]
