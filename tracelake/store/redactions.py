"""The stored redaction report: interned, so each event holds a reference, not a copy.

The scrubber reports, per event, counts by entity and by field path and counts of actions::

    {"entities": {"EMAIL_ADDRESS": 2}, "paths": {"args_resolved.email": {"EMAIL_ADDRESS": 2}},
     "actions": {"previewed": 1}}

Stored in every row that was ~330 bytes per event (a third of the scrubbed payload), yet
events of one kind are redacted alike: 20,000 realistic events had 144 distinct reports. So
each distinct report is stored once in ``redaction_reports`` (keyed by a digest of its JSON)
and ``events.redactions`` holds ``{"r": <id>}`` (~20 bytes); readers get the report back
(:class:`Reports`, used by ``store.reader``). Reports are written in their own small
transaction *before* the events that point at them, so a stored event never points at a
missing report; a crash in between leaves at most an unused report row. Reports hold counts
and field paths built from scrubbed keys, never values.

A report that is not the scrubber's (another producer's ``redactions``) is interned alike.
Rows stored before migration 0007 keep the report inline; readers accept both forms.

Since migration 0009 the same column also references the event's interned ``trace_metadata``
(``{"r": <report id>, "t": <context id>}``, see :func:`split_context` and ``trace_contexts``):
graph-tool-call repeats the run's whole ``trace_metadata`` (~330 bytes as jsonb) in every event,
so each distinct one is stored once and the reader puts it back (``store.reader``).

Since migration 0010 it also says which top-level payload keys were left out because the row's
indexed columns hold them (``"c"``, see ``store.column_keys``).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from tracelake import codec
from tracelake.store import column_keys
from tracelake.store.column_keys import MARK
from tracelake.store.connection import translate_errors, write_transaction
from tracelake.store.records import EncodedEvent
from tracelake.store.schema import redaction_reports, trace_contexts

MAX_CACHED = 100_000  # hostile inputs with ever-new reports must not grow memory unbounded
CONTEXTS_CACHED = 8_192
REF = "r"
CONTEXT = "t"
CONTEXT_KEY = "trace_metadata"
_CONTEXT_MARK = '"trace_metadata":{'


def digest(report_json: bytes) -> str:
    return hashlib.blake2b(report_json, digest_size=16).hexdigest()


class Interned:
    """Documents stored once each in *table* (``id``, ``digest``, ``report``/``document``),
    referenced by id; cached, safe across processes."""

    def __init__(
        self, engine: Engine, table: sa.Table = redaction_reports, cached: int = MAX_CACHED
    ) -> None:
        self.engine = engine
        self.table = table
        self.cached = cached
        self._doc = table.c.report if "report" in table.c else table.c.document
        self._stored: dict[bytes, str] = {}  # report JSON -> the events.redactions JSON
        self._ids: dict[bytes, int] = {}  # document JSON -> its id
        self._by_id: dict[int, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def ids(self, documents: Sequence[bytes | None]) -> list[int | None]:
        """The id of each document (JSON bytes; None: none), interning new ones first in
        their own committed transaction."""
        known = self._ids
        wanted = {d for d in documents if d is not None}
        hits = {d: known[d] for d in wanted if d in known}
        missing = wanted - hits.keys()
        if missing:
            with self._lock:
                found = self._intern(sorted(missing))
                if len(known) + len(found) > self.cached:
                    known.clear()  # bounded; this batch's ids are in hits
                known.update(found)
            hits.update(found)
        return [None if d is None else hits[d] for d in documents]

    def documents(self, ids: set[int]) -> dict[int, dict[str, Any]]:
        """The documents with these ids (one query for those not cached)."""
        cache = self._by_id
        missing = sorted(i for i in ids if i not in cache)
        if missing:
            t = self.table
            with translate_errors("read interned documents"), self.engine.connect() as conn:
                for start in range(0, len(missing), 400):
                    chunk = missing[start : start + 400]
                    rows = conn.execute(sa.select(t.c.id, self._doc).where(t.c.id.in_(chunk)))
                    if len(cache) > self.cached:
                        cache.clear()
                    cache.update({int(r[0]): r[1] for r in rows})
        return {i: cache[i] for i in ids if i in cache}

    def _intern(self, missing: list[bytes]) -> dict[bytes, int]:
        t = self.table
        by_digest = {digest(r): r for r in missing}
        found: dict[bytes, int] = {}
        with translate_errors(f"intern {t.name}"), write_transaction(self.engine) as conn:
            keys = list(by_digest)
            for start in range(0, len(keys), 400):
                chunk = keys[start : start + 400]
                rows = [{"digest": d, self._doc.name: codec.loads(by_digest[d])} for d in chunk]
                if self.engine.dialect.name == "postgresql":
                    from sqlalchemy.dialects.postgresql import insert as pg_insert

                    conn.execute(pg_insert(t).on_conflict_do_nothing(), rows)
                else:
                    conn.execute(t.insert().prefix_with("OR IGNORE"), rows)
                result = conn.execute(sa.select(t.c.id, t.c.digest).where(t.c.digest.in_(chunk)))
                found.update({by_digest[r.digest]: int(r.id) for r in result})
        return found


class Reports(Interned):
    """Interned redaction reports of one database; cached, safe across processes."""

    def refs(self, reports: Sequence[bytes | None]) -> list[str | None]:
        """The ``events.redactions`` JSON for each report (given as JSON bytes; None: none).

        New reports are interned first, in their own committed transaction."""
        stored = self._stored
        wanted = {r for r in reports if r is not None}
        hits = {r: stored[r] for r in wanted if r in stored}
        missing = wanted - hits.keys()
        if missing:
            with self._lock:
                found = {r: codec.dumps({REF: i}) for r, i in self._intern(sorted(missing)).items()}
                if len(stored) + len(found) > MAX_CACHED:
                    stored.clear()  # bounded; this batch's references are in hits
                stored.update(found)
            hits.update(found)
        return [None if r is None else hits[r] for r in reports]

    def ref_of(self, report: Mapping[str, Any] | None) -> str | None:
        """The ``events.redactions`` JSON of one report given as a dict."""
        return self.refs([codec.dumps_bytes(report) if report else None])[0]

    def expand(self, stored: Any) -> dict[str, Any] | None:
        """The report an ``events.redactions`` value stands for (inline reports as they are)."""
        if not isinstance(stored, dict) or set(stored) != {REF}:
            return stored  # type: ignore[no-any-return]
        ref = stored[REF]
        found = self._by_id.get(ref)
        if found is None:
            with translate_errors("read redaction reports"), self.engine.connect() as conn:
                rows = conn.execute(
                    sa.select(redaction_reports.c.id, redaction_reports.c.report).where(
                        redaction_reports.c.id >= min(ref, max(self._by_id, default=0))
                    )
                )
                if len(self._by_id) > MAX_CACHED:
                    self._by_id.clear()
                self._by_id.update({int(r.id): r.report for r in rows})
            found = self._by_id.get(ref)
        return found if found is not None else stored


class Contexts(Interned):
    """Interned ``trace_metadata`` objects (``trace_contexts``, migration 0009)."""

    def __init__(self, engine: Engine) -> None:
        # one context per run, met again only while the run goes on: a small cache will do
        # (at 100,000 entries of ~300 bytes the ingest's main process held ~40 MB more)
        super().__init__(engine, trace_contexts, cached=CONTEXTS_CACHED)


def split_context(payload: dict[str, Any]) -> tuple[dict[str, Any], bytes | None]:
    """The payload as stored (without a non-empty top-level ``trace_metadata`` object) and
    that object's JSON, to be interned; or the payload as it is and None."""
    meta = payload.get(CONTEXT_KEY)
    if not isinstance(meta, dict) or not meta:
        return payload, None
    rest = {k: v for k, v in payload.items() if k != CONTEXT_KEY}
    return rest, codec.dumps_bytes(meta)


def split_encoded(
    payload: dict[str, Any], whole: bytes, omitted: int = 0, whole_is_orjson: bool = False
) -> tuple[bytes, bytes | None]:
    """:func:`split_context` given the payload's JSON *whole* too, also leaving out the keys in
    *omitted* (``store.column_keys``): when only ``trace_metadata`` goes and it is the last key
    (graph-tool-call writes it last) the stored JSON is cut out of *whole* instead of encoding
    the payload again. *whole_is_orjson*: see ``codec.dumps_whole``."""
    meta = payload.get(CONTEXT_KEY)
    if not isinstance(meta, dict) or not meta:
        if not omitted:
            return whole, None
        rest = column_keys.without(payload, omitted)
        return codec.dumps_part(rest, whole_is_orjson), None
    meta_json = codec.dumps_part(meta, whole_is_orjson)
    if not omitted:
        tail = b',"trace_metadata":' + meta_json + b"}"
        if len(payload) > 1 and whole.endswith(tail):
            return whole[: -len(tail)] + b"}", meta_json
    rest = column_keys.without(payload, omitted, CONTEXT_KEY)
    return codec.dumps_part(rest, whole_is_orjson), meta_json


def split_context_json(payload_json: str) -> tuple[str, bytes | None]:
    """:func:`split_context` on a payload's JSON (parsed only when it can hold one)."""
    if _CONTEXT_MARK not in payload_json:
        return payload_json, None
    rest, meta = split_context(codec.loads(payload_json))
    return (payload_json, None) if meta is None else (codec.dumps(rest), meta)


def with_context(ref_json: str | None, context_id: int | None, omitted: int = 0) -> str | None:
    """The ``events.redactions`` JSON with a reference to the event's interned context and
    the mark of the payload keys its columns hold (``store.column_keys``)."""
    extra = []
    if context_id is not None:
        extra.append(f'"{CONTEXT}":{context_id}')
    if omitted:
        extra.append(f'"{MARK}":"{column_keys.mark(omitted)}"')
    if not extra:
        return ref_json
    if ref_json is None:
        return "{" + ",".join(extra) + "}"
    return ref_json[:-1] + "," + ",".join(extra) + "}"


def stored_form(stored: Any) -> tuple[Any, int | None, int]:
    """(the redactions as readers see them, the context id, the mask of the payload keys left
    out for the columns) of an ``events.redactions``."""
    if (
        isinstance(stored, dict)
        and (CONTEXT in stored or MARK in stored)
        and set(stored) <= {REF, CONTEXT, MARK}
    ):
        ref = stored.get(CONTEXT)
        rest = {REF: stored[REF]} if REF in stored else None
        return rest, ref if isinstance(ref, int) else None, column_keys.mask_of(stored.get(MARK))
    return stored, None, 0


def compact(contexts: Contexts, batch: list[EncodedEvent]) -> list[EncodedEvent]:
    """Each event's ``trace_metadata`` interned and referenced, and the keys its encoder left
    out for the columns marked (the appender's last step): ``trace_metadata`` is taken out of
    the payload here unless its encoder (the ingest workers) did it already."""

    def has(e: EncodedEvent) -> bool:
        return e.context_json is not None or e.omitted != 0 or _CONTEXT_MARK in e.payload_json

    split = [_split(e) for e in batch if has(e)]
    if not split:
        return batch
    ids = iter(contexts.ids([e.context_json for e in split]))
    found = iter(split)
    out = []
    for e in batch:
        if has(e):
            e, ref = next(found), next(ids)
            e = replace(
                e,
                redactions_json=with_context(e.redactions_json, ref, e.omitted),
                context_json=None,
                omitted=0,
            )
        out.append(e)
    return out


def _split(e: EncodedEvent) -> EncodedEvent:
    if e.context_json is not None or _CONTEXT_MARK not in e.payload_json:
        return e
    payload_json, context = split_context_json(e.payload_json)
    return e if context is None else replace(e, payload_json=payload_json, context_json=context)
