"""Shared fixtures: every store test runs on SQLite and on a real PostgreSQL.

PostgreSQL comes from TRACELAKE_TEST_DATABASE_URL (default: the local server). The session
creates a migrated template database and gives each test a fresh copy of it; all of them are
dropped at the end. Without a reachable server the PostgreSQL cases skip with a loud reason,
unless TRACELAKE_REQUIRE_POSTGRES=1, which makes that a failure.
"""

from __future__ import annotations

import itertools
import os
import secrets
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

# Tests must never depend on a developer's own settings, and PostgreSQL needs a pseudonym key.
os.environ.pop("TRACELAKE_DATABASE_URL", None)
os.environ.setdefault("TRACELAKE_PSEUDONYM_KEY", "tracelake-test-pseudonym-key-0123456789")
os.environ["TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"] = ""

from tracelake.store import (
    Store,
    migrate,
    open_store,
)
from tracelake.store.connection import create_engine

PG_URL = os.environ.get(
    "TRACELAKE_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
REQUIRE_PG = os.environ.get("TRACELAKE_REQUIRE_POSTGRES") == "1"
REPO = Path(__file__).resolve().parents[1]
# The seeds and samples live in shared/, beside the repository (CI lays it there).
SHARED = Path(os.environ.get("TRACELAKE_SHARED_DIR") or REPO.parent / "shared")
AGENTLANE = SHARED / "samples" / "agentlane"


def require_agentlane_samples() -> Path:
    """The agentlane samples folder; skip loudly without it (fail under TRACELAKE_REQUIRE_SAMPLES=1)."""
    if (AGENTLANE / "events.jsonl").is_file() and (AGENTLANE / "secrets.txt").is_file():
        return AGENTLANE
    reason = (
        f"agentlane samples not found at {AGENTLANE}; put shared/ beside the repository "
        "or set TRACELAKE_SHARED_DIR"
    )
    if os.environ.get("TRACELAKE_REQUIRE_SAMPLES") == "1":
        pytest.fail(f"TRACELAKE_REQUIRE_SAMPLES=1 but {reason}", pytrace=False)
    pytest.skip(f"SKIPPING: {reason}")


_pg_skip_reason: list[str] = []


class PgServer:
    """Creates and drops databases on the test server."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self.admin = create_engine(admin_url, isolation_level="AUTOCOMMIT", poolclass=sa.NullPool)
        self.prefix = f"tl_test_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        self.created: list[str] = []
        self._n = itertools.count()
        self.template = self.create()
        engine = create_engine(self.url(self.template), poolclass=sa.NullPool)
        migrate.upgrade(engine)
        engine.dispose()

    def url(self, name: str) -> str:
        return sa.make_url(self.admin_url).set(database=name).render_as_string(hide_password=False)

    def create(self, template: str | None = None) -> str:
        name = f"{self.prefix}_{next(self._n)}"
        clause = f" TEMPLATE {template}" if template else ""
        with self.admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {name}{clause}")
        self.created.append(name)
        return name

    def drop_all(self) -> None:
        with self.admin.connect() as conn:
            for name in reversed(self.created):
                conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        self.admin.dispose()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    try:
        probe = create_engine(PG_URL, poolclass=sa.NullPool)
        with probe.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
        probe.dispose()
    except Exception as exc:  # noqa: BLE001 - any failure means "no server"
        reason = f"PostgreSQL at {PG_URL} is not reachable ({type(exc).__name__}: {exc})"
        if REQUIRE_PG:
            pytest.fail(f"TRACELAKE_REQUIRE_POSTGRES=1 but {reason}", pytrace=False)
        _pg_skip_reason.append(reason)
        pytest.skip(f"SKIPPING POSTGRESQL TESTS: {reason}")
    server = PgServer(PG_URL)
    yield server
    server.drop_all()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """One fresh hypothesis seed per test session, printed, so that any failure reproduces.

    Runs before hypothesis' own plugin reads ``--hypothesis-seed``: without that option every
    session draws a new seed (fresh examples every run, as before), and the header and, after a
    failure, the summary say which seed it was.
    """
    if config.getoption("hypothesis_seed", default=None) is None and hasattr(
        config.option, "hypothesis_seed"
    ):
        config.option.hypothesis_seed = str(secrets.randbelow(2**32))


def _hypothesis_seed(config: pytest.Config) -> str | None:
    seed = config.getoption("hypothesis_seed", default=None)
    return None if seed is None else str(seed)


def pytest_report_header(config: pytest.Config) -> str | None:
    seed = _hypothesis_seed(config)
    return (
        None if seed is None else f"hypothesis seed: {seed} (reproduce: --hypothesis-seed={seed})"
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    seed = _hypothesis_seed(terminalreporter.config)
    if seed is not None and terminalreporter.stats.get("failed"):
        terminalreporter.write_sep(
            "!", f"hypothesis seed of this run: {seed}; rerun with --hypothesis-seed={seed}"
        )
    if _pg_skip_reason:
        terminalreporter.write_sep(
            "!", "PostgreSQL tests were SKIPPED: " + _pg_skip_reason[0], red=True, bold=True
        )


BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def db_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, migrated database on the given backend."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'tracelake.db'}"
        engine = create_engine(url)
        migrate.upgrade(engine)
        engine.dispose()
        return url
    server: PgServer = request.getfixturevalue("pg_server")
    return server.url(server.create(template=server.template))


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    s = open_store(db_url)
    yield s
    s.dispose()
