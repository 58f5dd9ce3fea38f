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
after every ``db upgrade`` (new tables and partitions start with no grants). This module is the
policy (who gets what); the catalogue reads and DDL are ``store.privileges``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from sqlalchemy.engine import Connection

from tracelake.errors import ConfigError, StoreError
from tracelake.store import Store, partitions, privileges
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
        privileges.check_owner(conn)
        for role in (WRITER, READER):
            if privileges.ensure_role(conn, role, login=False):
                report.created.append(role)
        if partitions.is_partitioned(conn):
            report.partitions = partitions.ensure_months(conn, privileges.now(conn))
        report.grants = grant(conn)
        if login:
            _login(conn, login, password, report)
    return report


def _login(conn: Connection, name: str, password: str | None, report: RolesReport) -> None:
    privileges.check_name(name)
    if privileges.ensure_role(conn, name, login=True):
        report.created.append(name)
    if password:
        privileges.set_password(conn, name, password)
    privileges.add_member(conn, WRITER, name)
    report.grants.setdefault(name, []).append(f"member of {WRITER}")


def grant(conn: Connection) -> dict[str, list[str]]:
    """Revoke and grant again (idempotent). Returns what each role holds."""
    existing = privileges.schema_objects(conn)
    # Partitioned parents are listed among the tables too; partitions are never granted.
    privileges.reset(conn, (WRITER, READER))
    held: dict[str, list[str]] = {WRITER: [], READER: []}

    def give(granted: str, table: str, role: str) -> None:
        if table in existing:
            privileges.grant(conn, granted, table, role)
            held[role].append(f"{granted} ON {table}")

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
    privileges.grant_sequences(conn, WRITER)
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
