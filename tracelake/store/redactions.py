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
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from tracelake import codec
from tracelake.store.connection import translate_errors, write_transaction
from tracelake.store.schema import redaction_reports

MAX_CACHED = 100_000  # hostile inputs with ever-new reports must not grow memory unbounded
REF = "r"


def digest(report_json: bytes) -> str:
    return hashlib.blake2b(report_json, digest_size=16).hexdigest()


class Reports:
    """Interned redaction reports of one database; cached, safe across processes."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._stored: dict[bytes, str] = {}  # report JSON -> the events.redactions JSON
        self._by_id: dict[int, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def refs(self, reports: list[bytes | None]) -> list[str | None]:
        """The ``events.redactions`` JSON for each report (given as JSON bytes; None: none).

        New reports are interned first, in their own committed transaction."""
        stored = self._stored
        missing = {r for r in reports if r is not None and r not in stored}
        if missing:
            with self._lock:
                found = self._intern(sorted(missing))
                if len(stored) + len(found) > MAX_CACHED:
                    stored.clear()
                stored.update({r: codec.dumps({REF: i}) for r, i in found.items()})
        return [None if r is None else stored[r] for r in reports]

    def ref_of(self, report: Mapping[str, Any] | None) -> str | None:
        """The ``events.redactions`` JSON of one report given as a dict."""
        return self.refs([codec.dumps_bytes(report) if report else None])[0]

    def _intern(self, missing: list[bytes]) -> dict[bytes, int]:
        t = redaction_reports
        by_digest = {digest(r): r for r in missing}
        found: dict[bytes, int] = {}
        with translate_errors("intern redaction reports"), write_transaction(self.engine) as conn:
            keys = list(by_digest)
            for start in range(0, len(keys), 400):
                chunk = keys[start : start + 400]
                rows = [{"digest": d, "report": codec.loads(by_digest[d])} for d in chunk]
                if self.engine.dialect.name == "postgresql":
                    from sqlalchemy.dialects.postgresql import insert as pg_insert

                    conn.execute(pg_insert(t).on_conflict_do_nothing(), rows)
                else:
                    conn.execute(t.insert().prefix_with("OR IGNORE"), rows)
                result = conn.execute(sa.select(t.c.id, t.c.digest).where(t.c.digest.in_(chunk)))
                found.update({by_digest[r.digest]: int(r.id) for r in result})
        return found

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
