"""The records that cross the store boundary: what is appended, what is read back."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from tracelake.codec import dumps
from tracelake.store import column_keys

# The source of tracelake's own runs in the log (suggestion decisions, erasure receipts): the one
# home of this name (``run_identity`` re-exports it for the writers and readers above the store).
TRACELAKE_SOURCE = "tracelake"


@dataclass(frozen=True, slots=True)
class NewEvent:
    """A scrubbed event with its run identity, ready to append.

    ``seq=None`` asks the store to number the event after the run's last stored event (live
    producers); such an event needs an ``event_id``, which makes its retries idempotent.
    """

    run_id: str
    seq: int | None
    type: str
    source: str
    payload: dict[str, Any]
    recorded_at: datetime
    redactions: dict[str, Any] | None = None
    event_id: str | None = None
    plan_id: str | None = None
    step_id: str | None = None
    tool: str | None = None
    collection_id: str | None = None

    @property
    def key(self) -> tuple[str, int]:
        assert self.seq is not None, "a store-numbered event has no key before it is appended"
        return (self.run_id, self.seq)

    def __post_init__(self) -> None:
        if self.seq is None and self.event_id is None:
            raise ValueError("an event without seq needs an event_id (for idempotent retries)")


@dataclass(frozen=True, slots=True)
class EncodedEvent:
    """An event as the appender writes it: indexed columns plus its JSON encoded once.

    The hash is over the stored (scrubbed) payload bytes. The ingest workers build these
    directly (:func:`tracelake.admission.encode_event`), so the main process never decodes or
    re-encodes a payload; :meth:`of` encodes a :class:`NewEvent` (the sink, promotion).
    """

    run_id: str
    seq: int | None
    type: str
    source: str
    recorded_at: datetime
    payload_json: str
    content_hash: str
    redactions_json: str | None = None
    event_id: str | None = None
    plan_id: str | None = None
    step_id: str | None = None
    tool: str | None = None
    collection_id: str | None = None
    # The payload's trace_metadata JSON when the encoder took it out of payload_json (the
    # appender interns it and references it from redactions_json; content_hash is always
    # over the whole payload). None: payload_json is the whole payload.
    context_json: bytes | None = None
    # The mask of the top-level keys left out of payload_json because the columns hold them
    # (``store.column_keys``) that redactions_json does not mark yet (the appender marks them).
    omitted: int = 0

    @property
    def key(self) -> tuple[str, int]:
        assert self.seq is not None, "a store-numbered event has no key before it is appended"
        return (self.run_id, self.seq)

    def __post_init__(self) -> None:
        if self.seq is None and self.event_id is None:
            raise ValueError("an event without seq needs an event_id (for idempotent retries)")

    @classmethod
    def of(
        cls,
        event: NewEvent | EncodedEvent,
        redactions_json: str | None = "",
        omit_columns: bool = False,
    ) -> EncodedEvent:
        """*event* encoded; its redactions as given (the appender passes the compact form),
        or with the default, as the event has them. With *omit_columns* (the appender, which
        then marks them: ``store.redactions.compact``) the payload keys the columns hold are
        left out of ``payload_json`` (``store.column_keys``); the hash is over the whole."""
        if isinstance(event, EncodedEvent):
            return event
        if redactions_json == "":
            redactions_json = None if event.redactions is None else dumps(event.redactions)
        payload_json = stored_json = dumps(event.payload)
        omitted = 0
        if omit_columns:
            columns = (event.type, event.plan_id, event.step_id, event.tool)
            omitted = column_keys.omitted(event.payload, columns)
            if omitted:
                stored_json = dumps(column_keys.without(event.payload, omitted))
        return cls(
            run_id=event.run_id,
            seq=event.seq,
            type=event.type,
            source=event.source,
            recorded_at=event.recorded_at,
            payload_json=stored_json,
            content_hash=hash_payload(payload_json.encode("utf-8")),
            redactions_json=redactions_json,
            event_id=event.event_id,
            plan_id=event.plan_id,
            step_id=event.step_id,
            tool=event.tool,
            collection_id=event.collection_id,
            omitted=omitted,
        )


# The name earlier code used for the encoded form.
PreparedEvent = EncodedEvent


def hash_payload(payload_json: bytes) -> str:
    """The content hash of a stored payload (its exact UTF-8 JSON bytes)."""
    return hashlib.blake2b(payload_json, digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class StoredEvent:
    position: int
    run_id: str
    seq: int
    type: str
    source: str
    recorded_at: datetime
    payload: dict[str, Any]
    event_id: str | None = None
    plan_id: str | None = None
    step_id: str | None = None
    tool: str | None = None
    collection_id: str | None = None
    redactions: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class QuarantineItem:
    """Something that could not be stored as an event. Never holds raw content."""

    origin: str
    reason: str
    detail: str
    recorded_at: datetime
    dedupe_key: str
    line_no: int | None = None
    event_type: str | None = None
    run_id: str | None = None
    seq: int | None = None
    preview: str | None = None


@dataclass(slots=True)
class AppendResult:
    appended: int = 0
    duplicates: int = 0
    conflicts: list[EncodedEvent] = field(default_factory=list)
    rejected: int = 0  # refused by the database itself, quarantined

    def __iadd__(self, other: AppendResult) -> AppendResult:
        self.appended += other.appended
        self.duplicates += other.duplicates
        self.rejected += other.rejected
        self.conflicts.extend(other.conflicts)
        return self


class StoredHead(NamedTuple):
    """What the store holds at one key, short of the payload: its content hash and the
    indexed columns (enough to tell the same event, scrubbed by another version, from another
    event)."""

    content_hash: str
    type: str
    plan_id: str | None
    step_id: str | None
    tool: str | None
