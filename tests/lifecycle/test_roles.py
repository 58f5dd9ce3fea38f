"""The writer role is confined: it ingests, projects and verifies, and every way around the
append-only log is refused by PostgreSQL itself (run as a login role in tracelake_writer)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa
from faker import Faker

from tests.ingest.helpers import ingest_bytes
from tests.lifecycle.helpers import envelopes, jsonl, subjects
from tracelake.errors import ConfigError, StoreAccessError
from tracelake.lifecycle import retention
from tracelake.lifecycle.erasure import erase
from tracelake.lifecycle.roles import as_owner, setup_roles
from tracelake.lifecycle.verify import verify
from tracelake.projections.engine import ProjectionEngine
from tracelake.scrub import load_pseudonym_key
from tracelake.store import Store, open_store
from tracelake.store.connection import create_engine

PG = [pytest.mark.postgres, pytest.mark.parametrize("backend", ["postgresql"])]


@pytest.fixture
def login(store: Store, db_url: str) -> Iterator[tuple[str, str]]:
    """(writer URL, reader URL): login roles that join the two group roles."""
    names = [f"tl_w_{uuid.uuid4().hex[:8]}", f"tl_r_{uuid.uuid4().hex[:8]}"]
    setup_roles(store)
    setup_roles(store, login=names[0], password=uuid.uuid4().hex)  # idempotent, + login
    with store.autocommit("test") as conn:
        conn.exec_driver_sql(f"CREATE ROLE {names[1]} LOGIN IN ROLE tracelake_reader")
    urls = [sa.make_url(db_url).set(username=n).render_as_string(False) for n in names]
    yield urls[0], urls[1]
    with store.autocommit("test") as conn:
        for n in names:
            conn.exec_driver_sql(
                f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{n}'"
            )
            conn.exec_driver_sql(f"DROP ROLE IF EXISTS {n}")


BYPASSES = [
    "ALTER TABLE events DISABLE TRIGGER events_append_only_row",
    "ALTER TABLE events DISABLE TRIGGER ALL",
    "ALTER TABLE events_default DISABLE TRIGGER ALL",
    "DROP TRIGGER events_append_only_truncate ON events",
    "TRUNCATE events",
    "TRUNCATE events_default",
    "CREATE OR REPLACE FUNCTION tracelake_events_append_only() RETURNS trigger"
    " LANGUAGE plpgsql AS $$ BEGIN RETURN OLD; END; $$",
    "UPDATE events SET type = 'forged'",
    "DELETE FROM events",
    "UPDATE events_default SET type = 'forged'",
    "DELETE FROM event_chain",
    "UPDATE event_chain SET head = head",
    "DELETE FROM subject_secrets",
    "INSERT INTO retention_guard (token, cut) VALUES (txid_current()::text, now())",
    "ALTER TABLE events DETACH PARTITION events_default",
    "DROP TABLE events_default",
    "CREATE FUNCTION public.sneaky() RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "ALTER TABLE events OWNER TO CURRENT_USER",
    "SET ROLE postgres",
]


@PG[0]
@PG[1]
def test_writer_ingests_projects_and_verifies_but_cannot_rewrite_the_log(
    store: Store, login: tuple[str, str], fake: Faker, tmp_path: Path
) -> None:
    writer_url, reader_url = login
    writer = open_store(writer_url)
    try:
        who = subjects(fake, 4)
        report = ingest_bytes(writer, jsonl(envelopes(fake, who, 6, "w")))
        assert report.appended == 24 and not report.quarantined and not report.scrub_failed
        ProjectionEngine(writer).catch_up()
        assert verify(writer).ok  # and it may move the verify checkpoint
        before = verify(store, full=True)
        assert before.ok and before.events == 24
        refused = []
        for statement in BYPASSES:
            with pytest.raises(StoreAccessError) as caught, writer.writing() as conn:
                conn.exec_driver_sql(statement)
            assert _refused_by_privilege(caught.value), statement
            refused.append(statement)
        assert refused == BYPASSES
        # erasure and retention belong to the owner, and say so
        key = load_pseudonym_key(writer.url)
        with pytest.raises(ConfigError, match="must run as the owner"), as_owner("erase"):
            erase(writer, key, who[0])
        with pytest.raises(ConfigError, match="must run as the owner"), as_owner("retention"):
            retention.apply(writer, datetime.now(UTC), tmp_path)
    finally:
        writer.dispose()
    after = verify(store, full=True)
    assert after.ok and (after.events, after.head) == (before.events, before.head)
    assert after.schema_problems == []
    reader = create_engine(reader_url)
    try:
        with reader.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM v_runs")).scalar() == 6
            with pytest.raises(StoreAccessError) as caught:
                conn.execute(sa.text("SELECT count(*) FROM events"))
            assert _refused_by_privilege(caught.value)
    finally:
        reader.dispose()


def test_roles_refuse_sqlite(tmp_path: object) -> None:
    from tracelake.errors import ConfigError

    store = open_store(f"sqlite:///{tmp_path}/x.db")
    store.upgrade()
    with pytest.raises(ConfigError, match="PostgreSQL only"):
        setup_roles(store)
    store.dispose()


def _refused_by_privilege(error: BaseException) -> bool:
    """The engine translates driver errors once (StoreAccessError); PostgreSQL's own
    InsufficientPrivilege must be what it was translated from."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(getattr(seen, "orig", None), psycopg.errors.InsufficientPrivilege):
            return True
        if isinstance(seen, psycopg.errors.InsufficientPrivilege):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
