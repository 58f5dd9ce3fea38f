"""What keeps the log append-only, per backend, and a check that it is all still in place.

SQLite: three triggers on ``events`` (no UPDATE, no DELETE outside a retention, no REPLACE)
and ``AUTOINCREMENT`` (a removed position is never reused). PostgreSQL: a row and a statement
trigger on ``events`` and its partitions, enabled, calling the function tracelake installed.
``tracelake db verify`` reports :func:`problems` (``lifecycle/verify.py``).
"""

from __future__ import annotations

import hashlib
import re

import sqlalchemy as sa
from sqlalchemy.engine import Connection

SQLITE_TRIGGERS = {
    "events_no_update": "CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT "
    "RAISE(ABORT, 'events is append-only: UPDATE is not allowed'); END",
    "events_no_delete": "CREATE TRIGGER events_no_delete BEFORE DELETE ON events WHEN NOT EXISTS "
    "(SELECT 1 FROM retention_guard WHERE OLD.recorded_at < retention_guard.cut) BEGIN SELECT "
    "RAISE(ABORT, 'events is append-only: DELETE is not allowed'); END",
    "events_no_replace": "CREATE TRIGGER events_no_replace BEFORE INSERT ON events WHEN EXISTS "
    "(SELECT 1 FROM events WHERE position = NEW.position) OR EXISTS (SELECT 1 FROM events WHERE "
    "run_id = NEW.run_id AND seq = NEW.seq) OR (NEW.event_id IS NOT NULL AND EXISTS ( SELECT 1 "
    "FROM events WHERE run_id = NEW.run_id AND event_id = NEW.event_id)) BEGIN SELECT "
    "RAISE(ABORT, 'events is append-only: REPLACE is not allowed'); END",
}
PG_TRIGGERS = ("events_append_only_row", "events_append_only_truncate")


def problems(conn: Connection) -> list[str]:
    """What no longer protects the log on this connection's database (empty: all in place)."""
    if conn.dialect.name == "sqlite":
        return _sqlite_problems(conn)
    return _postgres_problems(conn)


def _sqlite_problems(conn: Connection) -> list[str]:
    found: list[str] = []
    triggers: dict[str, str] = {
        str(r[0]): str(r[1])
        for r in conn.execute(sa.text("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
    }
    table = conn.execute(
        sa.text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'events'")
    ).scalar()
    if "AUTOINCREMENT" not in str(table).upper():
        found.append("events lost AUTOINCREMENT: removed positions could be reused")
    for name, sql in SQLITE_TRIGGERS.items():
        if name not in triggers:
            found.append(f"trigger {name} is missing")
        elif _squash(triggers[name]) != _squash(sql):
            found.append(f"trigger {name} was changed")
    return found


def _postgres_problems(conn: Connection) -> list[str]:
    found: list[str] = []
    rows = conn.execute(
        sa.text(
            "SELECT c.relname, t.tgname, t.tgenabled FROM pg_trigger t"
            " JOIN pg_class c ON c.oid = t.tgrelid"
            " WHERE t.tgname IN ('events_append_only_row', 'events_append_only_truncate')"
            " AND (c.oid = 'events'::regclass OR c.oid IN"
            " (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'events'::regclass))"
        )
    ).all()
    names = {(r[0], r[1]) for r in rows}
    for name in PG_TRIGGERS:
        if ("events", name) not in names:
            found.append(f"trigger {name} on events is missing")
    for table, name, enabled in rows:
        if enabled != "O":
            found.append(f"trigger {name} on {table} is disabled")
    body = conn.execute(
        sa.text("SELECT prosrc FROM pg_proc WHERE proname = 'tracelake_events_append_only'")
    ).scalar()
    if body is None or hashlib.sha256(_squash(body).encode()).hexdigest() != _PG_BODY:
        found.append("the trigger function tracelake_events_append_only() was replaced")
    return found


def _squash(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).strip()


_PG_BODY = hashlib.sha256(
    _squash(
        """
BEGIN
    IF TG_OP = 'DELETE' AND TG_LEVEL = 'ROW' AND EXISTS (
        SELECT 1 FROM retention_guard g
        WHERE g.token = txid_current()::text AND OLD.recorded_at < g.cut) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'events is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
"""
    ).encode()
).hexdigest()
