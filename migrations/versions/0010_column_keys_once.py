"""Column keys once: payload keys that the row's indexed columns hold are not stored twice.

New events leave out of the stored payload each top-level ``type``, ``plan_id``, ``step_id``
and ``tool`` whose value is the string its column holds, and mark which in
``events.redactions`` (``"c"``: one hex digit, a bit per key in that order); the reader puts
them back (``tracelake/store/column_keys.py``). Nothing in the schema changes and no stored row
is rewritten on upgrade: rows without the mark are read as they are, and the content hash
stays the hash of the whole payload.

Downgrade puts the marked keys back into their payloads from the columns (with the append-only
trigger lifted for those statements), drops the mark, and re-links the hash chain from the
first changed event, as 0009's downgrade does.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies (the downgrade lifts and restores the append-only triggers of 0008).
PG_ROW_TRIGGER = """
CREATE TRIGGER events_append_only_row BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION tracelake_events_append_only();
"""
SQLITE_UPDATE = """CREATE TRIGGER events_no_update BEFORE UPDATE ON events
       BEGIN SELECT RAISE(ABORT, 'events is append-only: UPDATE is not allowed'); END"""

KEYS = ("type", "plan_id", "step_id", "tool")  # bit 0, 1, 2, 3 of the mark
HEX = "0123456789abcdef"

PG_MASK = f"(strpos('{HEX}', e.redactions ->> 'c') - 1)"
PG_INFLATE = (
    "UPDATE events e SET payload = jsonb_strip_nulls(jsonb_build_object("
    + ", ".join(
        f"'{key}', CASE WHEN {PG_MASK} & {1 << bit} <> 0 THEN e.{key} END"
        for bit, key in enumerate(KEYS)
    )
    + ")) || e.payload,"
    " redactions = NULLIF(e.redactions - 'c', '{}'::jsonb)"
    " WHERE e.redactions ? 'c'"
)
SQLITE_MASK = f"(instr('{HEX}', json_extract(redactions, '$.c')) - 1)"
SQLITE_INFLATE = [
    f"UPDATE events SET payload = json_set(payload, '$.{key}', {key})"
    f" WHERE json_extract(redactions, '$.c') IS NOT NULL AND {SQLITE_MASK} & {1 << bit} <> 0"
    for bit, key in enumerate(KEYS)
] + [
    "UPDATE events SET redactions = CASE WHEN json_remove(redactions, '$.c') = '{}' THEN NULL"
    " ELSE json_remove(redactions, '$.c') END WHERE json_extract(redactions, '$.c') IS NOT NULL"
]


def upgrade() -> None:
    pass  # new rows take the compact form; stored rows stay as they are


def _first_marked(pg: bool) -> int | None:
    where = "redactions ? 'c'" if pg else "json_extract(redactions, '$.c') IS NOT NULL"
    found = op.get_bind().execute(sa.text(f"SELECT min(position) FROM events WHERE {where}"))
    value = found.scalar()
    return None if value is None else int(value)


def downgrade() -> None:
    pg = op.get_bind().dialect.name == "postgresql"
    first = _first_marked(pg)
    if first is None:
        return
    if pg:
        op.execute("DROP TRIGGER events_append_only_row ON events")
        op.execute(PG_INFLATE)
        op.execute(PG_ROW_TRIGGER)
    else:
        op.execute("DROP TRIGGER events_no_update")
        for statement in SQLITE_INFLATE:
            op.execute(statement)
        op.execute(SQLITE_UPDATE)
    from tracelake.store import chain

    # the links that cover a changed event are made again from the stored rows
    op.execute(sa.text("DELETE FROM event_chain WHERE last_position >= :p").bindparams(p=first))
    while chain.link_appended(op.get_bind(), limit=2000):
        pass
