"""One input line to what the store needs, in one pass: the CPU-heavy half of ``ingest``.

parse (fast codec) -> classify -> caller ids made safe -> scrub (fails closed) -> encode the
scrubbed payload once (stored JSON + content hash) and read its indexed columns. What comes
out is either :class:`Ready` (an event, scrubbed and encoded, plus what run identity needs) or
:class:`Rejected` (a scrubbed quarantine record). Nothing raw leaves this module except, for
bare events, the canonical bytes that bare run ids are hashed from (in memory, to the main
process, never stored).

The same :class:`Preparer` runs in the main process (one worker) or in each worker process
(see :mod:`tracelake.ingest.workers`), so both paths store exactly the same rows.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, NamedTuple

from tracelake import codec
from tracelake.admission import indexed_columns, quarantine_item, safe_identifier, scrub
from tracelake.errors import ContractError, StoreUnavailableError
from tracelake.ingest.lines import Line
from tracelake.ingest.parse import parse_line
from tracelake.run_identity import content_digest
from tracelake.runners import classify
from tracelake.runners.inbound import InboundEvent
from tracelake.scrub import replays
from tracelake.scrub.pseudonym import provisional_stamp, subject_key, unavailable_count
from tracelake.scrub.replays import Replays
from tracelake.store import column_keys
from tracelake.store.records import QuarantineItem, hash_payload
from tracelake.store.redactions import split_encoded

if TYPE_CHECKING:
    from tracelake.scrub import Scrubber
    from tracelake.store.subject_secrets import SubjectSecrets

_SAFE_IDS_MAX = 50_000


def _subjects(key: bytes) -> SubjectSecrets | None:
    url = getattr(key, "url", None)
    if url is None:
        return None
    from tracelake.store.subject_secrets import secrets_for

    return secrets_for(key, url)


class Ready(NamedTuple):
    """An event ready to be numbered and appended (plain tuple: cheap to send back)."""

    line_no: int
    run_id: str | None  # the envelope's run id, made safe
    event_id: str | None
    seq: int | None
    starts_run: bool
    canonical: bytes | None  # bare events only: the raw event's canonical JSON
    content: str | None  # envelope events without seq/event_id: their content digest
    source: str
    type: str  # read from the scrubbed payload
    plan_id: str | None
    step_id: str | None
    tool: str | None
    collection_id: str | None
    payload_json: str
    content_hash: str
    report: bytes | None  # the scrubber's redaction report as JSON (interned at append)
    failed: bool
    recorded_at: datetime
    context: bytes | None = None  # the payload's trace_metadata JSON, taken out of payload_json
    omitted: int = 0  # the keys left out of payload_json for the columns (store.column_keys)


class Rejected(NamedTuple):
    line_no: int
    reason: str
    item: QuarantineItem


class Preparer:
    def __init__(
        self, scrubber: Scrubber, key: bytes, origin: str, max_bytes: int, max_depth: int
    ) -> None:
        self.scrubber, self.key, self.origin = scrubber, key, origin
        self.max_bytes, self.max_depth = max_bytes, max_depth
        self._safe_ids: dict[str, str | None] = {}
        # ids pseudonymised with a provisional secret, replayed while it holds (scrub.replays)
        self._provisional_ids: Replays[tuple[str | None]] = Replays(subject_key, _SAFE_IDS_MAX)
        self._forgotten = 0  # SubjectSecrets.forgotten when _safe_ids was last valid

    def prepare(self, lines: list[Line]) -> list[Ready | Rejected]:
        """The lines prepared, new subjects' secrets created in one statement per chunk.

        Scrubbing a subject seen for the first time needs its secret (``store.subject_secrets``):
        one round trip each would cost more than the scrub itself when every run brings a new
        subject. So the chunk is scrubbed with provisional secrets for new subjects, which are
        then stored together; a line that used a subject which turned out to have a secret
        already (a re-ingest, another worker met it first) is scrubbed again, with the stored
        one. Nothing made with a provisional secret is memoised, so no other line is touched.
        """
        now = datetime.now(UTC)  # one time per chunk: its lines arrived together
        subjects = _subjects(self.key)
        if subjects is None:
            return [self.line(line, now) for line in lines]
        if subjects.forgotten != self._forgotten:  # an erasure: safe ids may hold its secret
            self._forgotten = subjects.forgotten
            self._safe_ids.clear()
            self._provisional_ids.clear()
        unavailable = unavailable_count()
        subjects.defer()
        out: list[Ready | Rejected] = []
        ends: list[int] = []  # subjects.used[ends[i - 1]:ends[i]]: what line i used
        try:
            for line in lines:
                out.append(self.line(line, now))
                ends.append(len(subjects.used))
        finally:
            wrong = subjects.settle()
        if wrong:
            used, start = subjects.used, 0
            for i, end in enumerate(ends):
                if start < end and not wrong.isdisjoint(used[start:end]):
                    out[i] = self.line(lines[i], now)
                start = end
        if unavailable_count() != unavailable:
            raise _secrets_unavailable(lines)
        return out

    def line(self, line: Line, now: datetime | None = None) -> Ready | Rejected:
        now = now or datetime.now(UTC)
        try:
            obj = parse_line(line, self.max_bytes, self.max_depth, self.key)
            inbound = classify(obj)
            # built directly: dataclasses.replace() re-reads every field through a loop
            inbound = InboundEvent(
                inbound.source,
                inbound.type,
                inbound.event,
                self.safe(inbound.run_id),
                self.safe(inbound.event_id),
                inbound.seq,
            )
            scrubbed = scrub(self.scrubber, inbound)
            canonical = content = None
            if inbound.run_id is None:
                canonical = codec.canonical(inbound.event)
            elif inbound.seq is None and inbound.event_id is None:
                content = content_digest(self.key, inbound.run_id, codec.canonical(inbound.event))
            payload_json, exact = codec.dumps_whole(scrubbed.payload)  # hashed whole
            etype, plan_id, step_id, tool, collection = indexed_columns(
                inbound.source, scrubbed.payload
            )
            omitted = column_keys.omitted(scrubbed.payload, (etype, plan_id, step_id, tool))
            stored_json, context = split_encoded(scrubbed.payload, payload_json, omitted, exact)
            return Ready(
                line.number,
                inbound.run_id,
                inbound.event_id,
                inbound.seq,
                inbound.starts_run,
                canonical,
                content,
                inbound.source,
                etype,
                plan_id,
                step_id,
                tool,
                collection,
                stored_json.decode(),
                hash_payload(payload_json),
                codec.dumps_floatless(scrubbed.report) if scrubbed.report else None,
                scrubbed.failed,
                now,
                context,
                omitted,
            )
        except ContractError as exc:
            return self._rejected(line, exc, now)
        except Exception as exc:  # noqa: BLE001 - a line must never stop the ones after it
            error = ContractError("internal_error", f"{type(exc).__name__} while reading it")
            return self._rejected(line, error, now)

    def safe(self, value: str | None) -> str | None:
        """A caller-given id as it may be stored (memoised: ids repeat on every event)."""
        if value is None:
            return None
        try:
            return self._safe_ids[value]
        except KeyError:
            pass
        replayed = self._provisional_ids.get(self.key, value)
        if replayed is not None:
            return replayed[0]
        stamp = provisional_stamp()
        recording = replays.start()
        try:
            safe = safe_identifier(self.scrubber, self.key, value)
        finally:
            used = replays.stop(recording)
        if provisional_stamp() != stamp:  # a provisional pseudonym: kept apart (see prepare)
            self._provisional_ids.put(value, (safe,), used)
            return safe
        if len(self._safe_ids) >= _SAFE_IDS_MAX:
            self._safe_ids.clear()
        self._safe_ids[value] = safe
        return safe

    def _rejected(self, line: Line, exc: ContractError, now: datetime) -> Rejected:
        item = quarantine_item(
            self.scrubber,
            self.key,
            origin=self.origin,
            reason=exc.reason,
            detail=exc.detail,
            raw=line.data,
            recorded_at=now,
            line_no=line.number,
        )
        return Rejected(line.number, exc.reason, item)


def _secrets_unavailable(lines: list[Line]) -> StoreUnavailableError:
    """A chunk scrubbed while subject secrets could not be read: its events would be stored
    as minimal records, and its run ids pseudonymised with a secret of this process only (a
    re-run would store those runs again under other ids). Found by a fault attack: a database
    stalled for 3 s turned 5,502 of 30,109 events into ``{"scrub_failed": true}`` with exit 0,
    and the re-run stored 180 events twice. The chunk is not stored; the ingest stops."""
    first = lines[0].number if lines else 0
    return StoreUnavailableError(
        "the database did not answer while the pseudonym secrets of the events from line "
        f"{first} on were read, so the ingest stopped there (the summary says what it "
        "stored). Check the database, then run the same ingest again: it stores only what is "
        "missing."
    )
