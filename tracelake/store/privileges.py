"""PostgreSQL roles and grants: the catalogue reads and the DDL that ``tracelake db roles``
(``lifecycle/roles.py``, which decides who gets what) runs. PostgreSQL only: an SQLite file
has no roles, its file permissions protect it.

Role names are checked against :data:`ROLE_NAME` before they reach DDL (identifiers cannot be
bound parameters); a password is quoted by the server (``quote_literal``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.errors import ConfigError

ROLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def check_name(name: str) -> str:
    if not ROLE_NAME.fullmatch(name):
        raise ConfigError(f"login role name {name!r}: use lower-case letters, digits and _")
    return name


def check_owner(conn: Connection) -> None:
    """Roles and grants are the schema owner's (or a superuser's) to change."""
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


def ensure_role(conn: Connection, name: str, *, login: bool) -> bool:
    """Create the role unless it exists (NOLOGIN for a group); True when it was created."""
    exists = conn.execute(
        sa.text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": check_name(name)}
    ).first()
    if exists:
        return False
    conn.execute(sa.text(f"CREATE ROLE {name} {'LOGIN' if login else 'NOLOGIN'}"))
    return True


def set_password(conn: Connection, name: str, password: str) -> None:
    quoted = conn.execute(sa.text("SELECT quote_literal(:p)"), {"p": password}).scalar()
    conn.execute(sa.text(f"ALTER ROLE {check_name(name)} WITH LOGIN PASSWORD {quoted}"))


def add_member(conn: Connection, group: str, member: str) -> None:
    conn.execute(sa.text(f"GRANT {check_name(group)} TO {check_name(member)}"))


def now(conn: Connection) -> datetime:
    """The server's clock (partitions are cut by it)."""
    value = conn.execute(sa.text("SELECT now()")).scalar()
    return value if isinstance(value, datetime) else datetime.now(UTC)


def schema_objects(conn: Connection) -> set[str]:
    """The tables and views of the current schema (partitioned parents included)."""
    tables = conn.execute(
        sa.text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    )
    views = conn.execute(
        sa.text("SELECT viewname FROM pg_views WHERE schemaname = current_schema()")
    )
    return {str(r[0]) for r in tables} | {str(r[0]) for r in views}


def reset(conn: Connection, roles: tuple[str, ...]) -> None:
    """Nobody but the owner creates in the schema; *roles* may use it and hold nothing on
    its tables and sequences (the grants that follow are then all they hold)."""
    schema = conn.execute(sa.text("SELECT current_schema()")).scalar()
    both = ", ".join(check_name(r) for r in roles)
    conn.execute(sa.text(f"REVOKE CREATE ON SCHEMA {schema} FROM PUBLIC"))
    conn.execute(sa.text(f"GRANT USAGE ON SCHEMA {schema} TO {both}"))
    conn.execute(sa.text(f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {both}"))
    conn.execute(sa.text(f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA {schema} FROM {both}"))


def grant(conn: Connection, privileges: str, table: str, role: str) -> None:
    """``GRANT privileges ON table TO role`` (names from tracelake's own schema)."""
    conn.execute(sa.text(f"GRANT {privileges} ON {table} TO {check_name(role)}"))


def grant_sequences(conn: Connection, role: str) -> None:
    schema = conn.execute(sa.text("SELECT current_schema()")).scalar()
    conn.execute(sa.text(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema} TO {check_name(role)}"))
