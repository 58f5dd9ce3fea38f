"""PostgreSQL's COPY text format for event rows (tab-separated, ``\\N`` for NULL, backslash,
tab, newline and CR escaped), columns in ``store.appender.COLUMNS`` order."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from tracelake.store.records import EncodedEvent

_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _text(value: str | None) -> str:
    if value is None:
        return "\\N"
    if "\\" in value or "\t" in value or "\n" in value or "\r" in value:
        return value.translate(_COPY_ESCAPES)
    return value


def _json_text(value: str) -> str:
    # Compact JSON never holds a raw tab, newline or CR (they are escaped inside strings).
    return value.replace("\\", "\\\\") if "\\" in value else value


def copy_text(rows: Sequence[EncodedEvent]) -> bytes:
    """Rows in COPY text format, columns in :data:`COLUMNS` order."""
    out = []
    # the rows of one ingest chunk share their recorded_at object: formatted once
    when: datetime | None = None
    when_text = ""
    for e in rows:
        if e.recorded_at is not when:
            when, when_text = e.recorded_at, e.recorded_at.isoformat()
        out.append(
            "\t".join(
                (
                    _text(e.run_id),
                    str(e.seq),
                    _text(e.type),
                    _text(e.source),
                    _text(e.event_id),
                    _text(e.plan_id),
                    _text(e.step_id),
                    _text(e.tool),
                    _text(e.collection_id),
                    when_text,
                    e.content_hash,
                    _json_text(e.payload_json),
                    "\\N" if e.redactions_json is None else _json_text(e.redactions_json),
                )
            )
        )
    out.append("")
    return "\n".join(out).encode("utf-8")
