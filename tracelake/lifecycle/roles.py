"""Least privilege on PostgreSQL: ``tracelake_writer`` and ``tracelake_reader``.

``tracelake db roles`` (run by the role that owns the schema, the one that migrates) creates two
NOLOGIN group roles and grants them exactly what they need; login roles join them
(``CREATE ROLE ingest LOGIN PASSWORD '...' IN ROLE tracelake_writer``).

* ``tracelake_writer`` (ingest, the sink, the projector, promotion): SELECT and INSERT on the log
  and its chain, nothing else there: no UPDATE, DELETE or TRUNCATE, and as it owns nothing it
  cannot ALTER/DISABLE/DROP a trigger or replace the trigger function. Full DML on the derived
  tables (projections are replaced per run). It may create subject secrets, never delete them.
* ``tracelake_reader``: SELECT on the analytics views (``v_*``) only.

Idempotent: it revokes what the roles hold on tracelake's tables and grants again, so rerun it
after every ``db upgrade`` (new tables and partitions start with no grants).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.errors import ConfigError, StoreError
from tracelake.store import Store, partitions
from tracelake.store.schema import metadata

WRITER = "tracelake_writer"
READER = "tracelake_reader"

# Append-only to the writer: it may read and insert, never change or remove.
APPEND_ONLY = ("events", "quarantine", "event_chain", "subject_secrets")
READ_ONLY = ("chain_anchors", "chain_removed", "erasures", "alembic_version", "retention_guard")
WRITER_DML = ("verify_checkpoints",)
OWNER_ONLY: tuple[str, ...] = ()


@dataclass
class RolesReport:
    created: list[str] = field(default_factory=list)
    grants: dict[str, list[str]] = field(default_factory=dict)
    partitions: list[str] = field(default_factory=list)


def derived_tables() -> list[str]:
    """Every table in the schema that is neither the log nor lifecycle bookkeeping."""
    special = {*APPEND_ONLY, *READ_ONLY, *WRITER_DML, *OWNER_ONLY}
    return sorted(t for t in metadata.tables if t not in special)


PASSWORD_VAR = "TRACELAKE_LOGIN_PASSWORD"


def setup_roles(store: Store, login: str | None = None, password: str | None = None) -> RolesReport:
    """Create and grant the group roles; with *login*, also a LOGIN role in the writer group
    (created if missing; its password set when *password* is given)."""
    if store.embedded:
        raise ConfigError(
            "database roles exist on PostgreSQL only; an SQLite file is protected by its file "
            "permissions (see README, 'Operating tracelake')"
        )
    report = RolesReport()
    with store.writing("set up roles") as conn:
        _check_owner(conn)
        for role in (WRITER, READER):
            exists = conn.execute(
                sa.text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": role}
            ).first()
            if not exists:
                conn.execute(sa.text(f"CREATE ROLE {role} NOLOGIN"))
                report.created.append(role)
        if partitions.is_partitioned(conn):
            report.partitions = partitions.ensure_months(conn, _now(conn))
        report.grants = grant(conn)
        if login:
            _login(conn, login, password, report)
    return report


def _login(conn: Connection, name: str, password: str | None, report: RolesReport) -> None:
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
        raise ConfigError(f"login role name {name!r}: use lower-case letters, digits and _")
    exists = conn.execute(sa.text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": name}).first()
    if not exists:
        conn.execute(sa.text(f"CREATE ROLE {name} LOGIN"))
        report.created.append(name)
    if password:
        quoted = conn.execute(sa.text("SELECT quote_literal(:p)"), {"p": password}).scalar()
        conn.execute(sa.text(f"ALTER ROLE {name} WITH LOGIN PASSWORD {quoted}"))
    conn.execute(sa.text(f"GRANT {WRITER} TO {name}"))
    report.grants.setdefault(name, []).append(f"member of {WRITER}")


def _now(conn: Connection) -> datetime:
    now = conn.execute(sa.text("SELECT now()")).scalar()
    return now if isinstance(now, datetime) else datetime.now(UTC)


def _check_owner(conn: Connection) -> None:
    owner = conn.execute(
        sa.text("SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = to_regclass('events')")
    ).scalar()
    if owner is None:
        raise ConfigError("no events table: run `tracelake db upgrade` first, as the owner")
    me = conn.execute(sa.text("SELECT current_user")).scalar()
    superuser = conn.execute(sa.text("SELECT rolsuper FROM pg_roles WHERE rolname = current_user"))
    if owner != me and not superuser.scalar():
        raise ConfigError(
            f"`db roles` must run as the owner of the schema ({owner}), not {me}; "
            "use the connection that runs `db upgrade`"
        )


def grant(conn: Connection) -> dict[str, list[str]]:
    """Revoke and grant again (idempotent). Returns what each role holds."""
    schema = conn.execute(sa.text("SELECT current_schema()")).scalar()
    existing = {
        r[0]
        for r in conn.execute(
            sa.text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        )
    } | {
        r[0]
        for r in conn.execute(
            sa.text("SELECT viewname FROM pg_views WHERE schemaname = current_schema()")
        )
    }
    # Partitioned parents are listed in pg_tables too; partitions are never granted.
    both = f"{WRITER}, {READER}"
    run = conn.execute
    run(sa.text(f"REVOKE CREATE ON SCHEMA {schema} FROM PUBLIC"))
    run(sa.text(f"GRANT USAGE ON SCHEMA {schema} TO {both}"))
    run(sa.text(f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {both}"))
    run(sa.text(f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA {schema} FROM {both}"))
    held: dict[str, list[str]] = {WRITER: [], READER: []}

    def give(privileges: str, table: str, role: str) -> None:
        if table in existing:
            run(sa.text(f"GRANT {privileges} ON {table} TO {role}"))
            held[role].append(f"{privileges} ON {table}")

    for table in APPEND_ONLY:
        give("SELECT, INSERT", table, WRITER)
    for table in READ_ONLY:
        give("SELECT", table, WRITER)
    for table in WRITER_DML:
        give("SELECT, INSERT, UPDATE", table, WRITER)
    for table in derived_tables():
        give("SELECT, INSERT, UPDATE, DELETE", table, WRITER)
    for view in sorted(v for v in existing if v.startswith("v_")):
        give("SELECT", view, WRITER)
        give("SELECT", view, READER)
    run(sa.text(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema} TO {WRITER}"))
    held[WRITER].append("USAGE ON ALL SEQUENCES")
    return held


@contextlib.contextmanager
def as_owner(what: str) -> Iterator[None]:
    """Turn a privilege error into what to do: this operation belongs to the owner role."""
    try:
        yield
    except StoreError as exc:
        text = str(exc)
        if "permission denied" in text or "must be owner" in text:
            raise ConfigError(
                f"{what} must run as the owner of the schema (the role that runs `db upgrade`), "
                f"not as a {WRITER} login: {text}"
            ) from None
        raise
