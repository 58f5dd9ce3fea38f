"""The one path into the log, shared by ``tracelake ingest`` and the sink.

normalize (runners) -> scrub (fail closed) -> NewEvent with its indexed columns -> append.
Nothing reaches disk (table, spool, quarantine, log line) before the scrubber has seen it: the
functions here are the only ones that turn inbound data into something storable.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from tracelake import codec
from tracelake.runners import InboundEvent
from tracelake.runners.normalize import clean_text
from tracelake.runners.registry import columns_of
from tracelake.scrub import replays
from tracelake.scrub.ids import uuid_id
from tracelake.scrub.pseudonym import note_provisional, subject_key
from tracelake.store import column_keys
from tracelake.store.records import EncodedEvent, NewEvent, QuarantineItem, hash_payload

if TYPE_CHECKING:  # the scrubber imports presidio; keep it off this module's import path
    from tracelake.scrub import Scrubber

log = logging.getLogger("tracelake.admission")

SCRUB_FAILED = "scrub_failed"


class ReportRefs(Protocol):
    """Where redaction reports are interned (a :class:`tracelake.store.Store`)."""

    def report_ref(self, report: Mapping[str, Any] | None) -> str | None: ...


@dataclass(frozen=True, slots=True)
class Scrubbed:
    """An event's storable form: the scrubbed payload and its redaction report."""

    payload: dict[str, Any]
    report: dict[str, Any]
    failed: bool = False


def scrub(scrubber: Scrubber, inbound: InboundEvent) -> Scrubbed:
    """Scrub one event; on any failure keep only a minimal record (invariant: fail closed)."""
    try:
        out = scrubber.scrub_event(inbound.source, inbound.type, inbound.event)
        return Scrubbed(out.payload, out.report)
    except Exception as exc:  # noqa: BLE001 - whatever broke, the raw event must not be stored
        _log_failure(type(exc).__name__)
        try:
            etype = scrubber.scrub_text(inbound.type, max_len=200)
        except Exception:  # noqa: BLE001 - not even the type can be checked: do not keep it
            etype = "unknown"
        return Scrubbed(
            {"type": etype, "scrub_failed": True}, {"failed": SCRUB_FAILED}, failed=True
        )


_failures: dict[str, float | int] = {"logged_at": float("-inf"), "since": 0}


def _log_failure(kind: str) -> None:
    """One line at most every 10 s (a database outage fails every new subject's event: a line
    per event would flood the log and, on a full stderr pipe, stall the sink's writer)."""
    now = time.monotonic()
    _failures["since"] += 1
    if now - _failures["logged_at"] < 10.0:
        return
    log.error(  # the type may be attacker-chosen text: only the exception class is logged
        "scrubbing an event failed (%s): its content is withheld, only a minimal record of it "
        "may be kept (%d such events since the last line)",
        kind,
        _failures["since"],
    )
    _failures["logged_at"], _failures["since"] = now, 0


def safe_identifier(scrubber: Scrubber, key: bytes, value: str | None) -> str | None:
    """A caller-given run or event id as it may be stored: itself when the scrubber finds
    nothing in it, else a keyed pseudonym (still stable, so runs still group and dedupe)."""
    if value is None:
        return None
    if uuid_id(value):  # req-<uuid>: nothing personal can be in it (scrub.ids)
        return value
    try:
        # As written, and with id separators as spaces ("req-010-1234-5678" hides a phone).
        variants = {value, _ID_SEPARATORS.sub(" ", value)}
        found = [
            p
            for v in variants
            for p in _PLACEHOLDER.findall(scrubber.scrub_text(v, max_len=len(v) + 64))
        ]
        # Ids are opaque by nature: the generic high-entropy-token rule ([SECRET]) does not
        # count here; anything personal does, and so does what the scrubber's id judgement
        # rejects (credential shapes: an attack stored `ev-sat_4gUy0BQ8...`,
        # `tenant-sk-proj-...`, an AWS secret key; whitespace; bare separated digits).
        if all(p == _OPAQUE for p in found) and scrubber.kept_as_id(value):
            return value
    except Exception:  # noqa: BLE001 - cannot tell: pseudonymise
        pass
    try:
        secret = subject_key(key, value)  # erasable: the subject's own secret (lifecycle)
    except Exception:  # noqa: BLE001 - no secret now (the database is away): unlinkable
        # A secret of this process only: the id stays the same for this process's events (a
        # run still groups), and nobody can link it to the value afterwards (as if erased).
        # Memos must not keep it: the next event gets the subject's secret once it can.
        secret = _PROCESS_SECRET
        note_provisional()
        replays.note_unreplayable()
    return "psn_" + hmac.new(secret, value.encode(), hashlib.sha256).hexdigest()[:24]


_PROCESS_SECRET = secrets.token_bytes(32)


def indexed_columns(
    source: str, payload: dict[str, Any]
) -> tuple[str, str | None, str | None, str | None, str | None]:
    """``(type, plan_id, step_id, tool, collection_id)`` read from a *scrubbed* payload."""
    p = payload
    plan_id, step_id, tool = columns_of(source, p)  # as the event's runner reads them
    etype = p.get("type")
    return (
        etype if isinstance(etype, str) and etype else "unknown",  # the scrubbed type
        plan_id,
        step_id,
        tool,
        _collection(p.get("trace_metadata")),
    )


def new_event(
    inbound: InboundEvent,
    scrubbed: Scrubbed,
    run_id: str,
    seq: int | None,
    recorded_at: datetime,
    event_id: str | None = None,
) -> NewEvent:
    """The row for an event; indexed columns are read from the *scrubbed* payload only."""
    etype, plan_id, step_id, tool, collection = indexed_columns(inbound.source, scrubbed.payload)
    return NewEvent(
        run_id=run_id,
        seq=seq,
        type=etype,
        source=inbound.source,
        payload=scrubbed.payload,
        recorded_at=recorded_at,
        redactions=scrubbed.report or None,
        event_id=event_id or inbound.event_id,
        plan_id=plan_id,
        step_id=step_id,
        tool=tool,
        collection_id=collection,
    )


def encode_event(
    inbound: InboundEvent,
    scrubbed: Scrubbed,
    run_id: str,
    seq: int | None,
    recorded_at: datetime,
    reports: ReportRefs,
    event_id: str | None = None,
) -> EncodedEvent:
    """The fast path: the row encoded once with the fast codec (payload JSON, content hash,
    redaction report interned through *reports*, the store: ``Store.report_ref``), ready
    for ``Store.append``. ``tracelake ingest`` does the same work split between its
    workers (encoding) and its main process (interning)."""
    payload_json, exact = codec.dumps_whole(scrubbed.payload)
    etype, plan_id, step_id, tool, collection = indexed_columns(inbound.source, scrubbed.payload)
    omitted = column_keys.omitted(scrubbed.payload, (etype, plan_id, step_id, tool))
    stored_json = (
        codec.dumps_part(column_keys.without(scrubbed.payload, omitted), exact)
        if omitted
        else payload_json
    )
    return EncodedEvent(
        run_id=run_id,
        seq=seq,
        type=etype,
        source=inbound.source,
        recorded_at=recorded_at,
        payload_json=stored_json.decode(),
        content_hash=hash_payload(payload_json),
        redactions_json=reports.report_ref(scrubbed.report or None),
        event_id=event_id or inbound.event_id,
        plan_id=plan_id,
        step_id=step_id,
        tool=tool,
        collection_id=collection,
        omitted=omitted,  # the appender marks them (store.redactions.compact)
    )


def quarantine_item(
    scrubber: Scrubber,
    key: bytes,
    *,
    origin: str,
    reason: str,
    detail: str,
    raw: bytes,
    recorded_at: datetime,
    line_no: int | None = None,
    event_type: str | None = None,
    run_id: str | None = None,
    seq: int | None = None,
) -> QuarantineItem:
    """A quarantine record: scrubbed origin, detail and preview, a keyed fingerprint, no raw
    content. The origin is a file's path, which a user may have named after a person
    (``jane.doe@example.com 010-1234-5678.jsonl``): stored as :func:`stored_origin` says."""
    mac = hmac.new(key, f"{origin}\x00{line_no}\x00{reason}\x00".encode(), hashlib.blake2b)
    mac.update(raw)
    preview = _preview_text(raw)
    return QuarantineItem(
        origin=stored_origin(scrubber, origin),
        reason=reason,
        detail=_scrubbed(scrubber, detail, 500),
        recorded_at=recorded_at,
        dedupe_key=mac.hexdigest()[:40],
        line_no=line_no,
        event_type=None if event_type is None else _scrubbed(scrubber, event_type, 100),
        run_id=run_id,
        seq=seq,
        preview=_scrubbed(scrubber, preview, 200) if preview.strip() else None,
    )


SCRUB_FAILED_TEXT = "[scrub failed: withheld]"


def stored_origin(scrubber: Scrubber, origin: str) -> str:
    """The origin (a path, ``-``, ``sink``) as the quarantine stores it: each part of the
    path scrubbed on its own (a whole path reads as one long token, which the secret rule
    would take), so the directories stay readable; ``quarantine list --origin`` looks up
    the same form."""
    return "/".join(_origin_part(scrubber, part) if part else part for part in origin.split("/"))


ORIGIN_PART_MAX = 255  # a file name's limit on common file systems
# Words a file name joins with ".", "_" or "+" (Crystal.Robinson.jsonl, Gabriel+Carpentier):
# read apart as well, or a name is one token to the scrub (found by an attack on origins).
_NAME_JOINER = re.compile(r"(?<=[^\W\d_])[._+](?=[^\W\d_])")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,6}(?:\.gz)?$")


def _origin_part(scrubber: Scrubber, part: str) -> str:
    """One part of a path scrubbed as written, then with its joined words apart (its
    extension and the markers already in it kept as they are)."""
    ext = _EXTENSION.search(part)
    stem, suffix = (part[: ext.start()], ext.group(0)) if ext else (part, "")
    first = _scrubbed(scrubber, stem, ORIGIN_PART_MAX)
    apart = "".join(
        piece if _PLACEHOLDER.fullmatch(piece) else _NAME_JOINER.sub(" ", piece)
        for piece in _MARKER_SPLIT.split(first)
    )
    if apart != first:
        second = _scrubbed(scrubber, apart, ORIGIN_PART_MAX)
        if second != apart:  # something found in the words apart: stored that way
            return second + suffix
    return first + suffix


def _scrubbed(scrubber: Scrubber, text: str, max_len: int) -> str:
    """*text* scrubbed, or a marker when the scrubber fails (a subject's secret cannot be
    created while the database is away): the record is kept, its text withheld."""
    try:
        # a NUL (a damaged line: PostgreSQL refuses it in text) becomes U+FFFD, as in events
        return clean_text(scrubber.scrub_text(text, max_len=max_len))
    except Exception:  # noqa: BLE001 - fail closed, and never lose the record
        return SCRUB_FAILED_TEXT


_PLACEHOLDER = re.compile(r"\[[A-Z][A-Z_]*\]")
_MARKER_SPLIT = re.compile(f"({_PLACEHOLDER.pattern})")  # the markers kept as pieces
_OPAQUE = "[SECRET]"
_ID_SEPARATORS = re.compile(r"[-_:/|]")
_UNICODE_ESCAPE = re.compile(
    r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})"
)
_PARTIAL_TOKEN = re.compile(r"[^\s,\"':;{}\[\]]*$")
PREVIEW_CHARS = 600


def _unescape(match: re.Match[str]) -> str:
    if match.group(3):
        return chr(int(match.group(3), 16))
    high, low = int(match.group(1), 16), int(match.group(2), 16)
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


def _preview_text(raw: bytes) -> str:
    """Text the scrubber can read: JSON \\u escapes decoded (or a secret would hide behind
    them), cut before the limit at a token boundary (never half a secret)."""
    text = raw[: PREVIEW_CHARS * 4].decode("utf-8", errors="replace")
    text = _UNICODE_ESCAPE.sub(_unescape, text)
    if len(text) > PREVIEW_CHARS:
        text = _PARTIAL_TOKEN.sub("", text[:PREVIEW_CHARS])
    return text


def _text(obj: Mapping[str, Any] | None, key: str) -> str | None:
    value = obj.get(key) if obj else None
    return value if isinstance(value, str) and value else None


def _collection(meta: Any) -> str | None:
    return _text(meta, "collection_id") if isinstance(meta, Mapping) else None
