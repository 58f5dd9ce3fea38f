"""A PostgreSQL server that a test starts and stops itself (for fault tests).

Uses the machine's PostgreSQL binaries (``pg_config --bindir`` or /usr/lib/postgresql/*/bin).
initdb refuses to run as root, so as root the server runs as the ``postgres`` user.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa

from tracelake.store import migrate
from tracelake.store.connection import create_engine


def _bindir() -> Path | None:
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        path = Path(out.stdout.strip())
        if (path / "initdb").exists() and (path / "pg_ctl").exists():
            return path
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    return Path(found[-1]) if found else None


class PrivatePostgres:
    def __init__(self) -> None:
        bindir = _bindir()
        if bindir is None:
            raise RuntimeError("no PostgreSQL server binaries (initdb, pg_ctl) on this machine")
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="tracelake-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, tool: str, *args: str) -> None:
        cmd = [*self.as_user, str(self.bindir / tool), *args]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", opts, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def pids(self) -> list[int]:
        """The postmaster and every server process it started."""
        text = (self.data / "postmaster.pid").read_text()
        master = int(text.split()[0])
        found = [master]
        for stat in glob.glob("/proc/[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = Path(stat).read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == master:
                    found.append(int(Path(stat).parent.name))
        return found

    def freeze(self) -> None:
        """A hung server: every server process stopped (SIGSTOP), its sockets stay open."""
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)

    def migrate(self) -> None:
        engine = create_engine(self.url, poolclass=sa.NullPool)
        migrate.upgrade(engine)
        engine.dispose()

    def execute(self, sql: str) -> list[tuple[object, ...]]:
        engine = create_engine(self.url, poolclass=sa.NullPool, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            result = conn.exec_driver_sql(sql)
            rows = [tuple(r) for r in result] if result.returns_rows else []
        engine.dispose()
        return rows

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            self.thaw()
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def started_server() -> Iterator[PrivatePostgres]:
    """A private server, started and migrated, destroyed afterwards (a fixture's body): the
    test is skipped when none can start here, and fails under TRACELAKE_REQUIRE_POSTGRES=1."""
    import pytest

    from tests.conftest import REQUIRE_PG

    try:
        server = PrivatePostgres()
        server.start()
        server.migrate()
    except Exception as exc:  # noqa: BLE001 - any failure means "cannot run a private server"
        if REQUIRE_PG:
            pytest.fail(
                f"TRACELAKE_REQUIRE_POSTGRES=1 but a private PostgreSQL could not start: {exc}"
            )
        pytest.skip(f"SKIPPING FAULT TESTS: a private PostgreSQL could not start: {exc}")
    yield server
    server.destroy()
