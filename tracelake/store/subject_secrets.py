"""Per-subject pseudonym secrets: what makes erasure by crypto-shredding possible.

A pseudonymised value (a user, member, customer or session id; a caller id with personal data)
is ``psn_`` + HMAC-SHA256(*secret*, value), where *secret* is 32 random bytes kept for that
value alone in ``subject_secrets``, under a reference that is itself keyed
(HMAC(pseudonym key, value): neither the value nor its pseudonym is stored there). Without the
row, nobody -- not even someone holding the pseudonym key and a list of candidate ids -- can
recompute the pseudonym, so deleting it unlinks every stored event from the person
(``tracelake erase``). The next event for that value gets a fresh secret, hence a new pseudonym.

Each process caches secrets in memory and looks at ``erasures`` at most once a second: after
an erasure every process drops its cache (and the scrubber's memo) and so stops using the
erased secret within about a second. Events scrubbed in that second carry the old pseudonym,
which is as unlinkable as the rest once the secret is gone.

The lookup needs the database: a subject seen for the first time while the database is down
cannot be pseudonymised, so its event is stored as a minimal ``scrub_failed`` record (fail
closed) rather than with a pseudonym that could later not be erased.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import hmac
import os
import secrets
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from tracelake.errors import ScrubError, StoreError, StoreUnavailableError
from tracelake.scrub.pseudonym import use_subject_secrets
from tracelake.store.connection import create_engine, translate_errors
from tracelake.store.interrupt import interrupt
from tracelake.store.provisional import Provisional

REFRESH_SECONDS = 1.0
# No lookup waits longer: a server that stopped answering (SIGSTOP, a frozen VM) ignores its own
# timeouts, so a timer shuts the connection down under a call that overruns. After a failed
# call, lookups fail at once for a while (the scrubber fails closed: the event is kept as a
# minimal record) instead of each waiting for the timeout again: a sink's writer must keep
# spooling through an outage (an attack found it stuck in a lookup, its queue unspooled).
# A lookup takes milliseconds; one second bounds what a sink's writer holds during a hang.
LOOKUP_TIMEOUT = 1.0
RETRY_AFTER = 3.0  # doubled after each failure while the database stays away, up to 30 s
CACHE_LIMIT = 200_000
_REF_CONTEXT = b"tracelake-subject\x00"


def subject_ref(key: bytes, text: str) -> str:
    """The keyed reference a subject's secret is stored under."""
    return hmac.new(bytes(key), _REF_CONTEXT + text.encode("utf-8"), hashlib.sha256).hexdigest()


def pseudonym_with(secret: bytes, text: str, digits: int = 20) -> str:
    return "psn_" + hmac.new(secret, text.encode("utf-8"), hashlib.sha256).hexdigest()[:digits]


class SubjectSecrets:
    """The secrets of one database, cached for this process. Thread-safe."""

    def __init__(self, key: bytes, url: str) -> None:
        self.key = bytes(key)
        self.url = url
        self._engine: Engine | None = None
        self._cache: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._checked = 0.0
        self._erasures: int | None = None
        self._raw: Any = None
        self._provisional = Provisional(lambda text: subject_ref(self.key, text))
        self._down_until = 0.0  # monotonic: no database call before then
        self.deferred = self.conflicts = 0  # of the last settle()
        self.forgotten = 0  # how often the cache was dropped after an erasure
        self._backoff = RETRY_AFTER
        self._call: tuple[float, Any] | None = None  # (deadline, driver) of the call under way
        self._watchdog: threading.Thread | None = None

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = create_engine(self.url, bounded=LOOKUP_TIMEOUT)
        return self._engine

    def secret_for(self, text: str) -> bytes:
        if time.monotonic() - self._checked > REFRESH_SECONDS:
            self.refresh()
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        if self._provisional.active_here():
            return self._provisional.secret_for(text)
        with self._lock:
            secret = self._load_or_create(subject_ref(self.key, text))
            if len(self._cache) >= CACHE_LIMIT:
                self._cache.clear()
            self._cache[text] = secret
        return secret

    # Deferred creation, for the ingest (see store.provisional): between defer() and settle(),
    # a subject this process has not seen gets a provisional secret at once, and settle()
    # stores all of them in one statement.
    def defer(self) -> None:
        with self._lock:
            self._provisional.start()

    @property
    def used(self) -> list[str]:
        """The subjects (texts) handed a provisional secret since defer(), in order."""
        return self._provisional.used

    def settle(self) -> frozenset[str]:
        """Store the deferred secrets; the subjects (texts) whose provisional secret is not
        the stored one (empty: everything scrubbed since defer() stands). Their stored
        secrets are cached where the database gave them; ``deferred`` and ``conflicts``
        count the subjects."""
        with self._lock:
            pending = self._provisional.take()
            self.deferred, self.conflicts = len(pending), 0
            if not pending:
                return frozenset()
            try:
                stored = self._store_all(pending)
            except Exception:  # noqa: BLE001 - scrubbed again, failing closed then
                self._close_raw()
                stored = {}
            if len(self._cache) + len(pending) >= CACHE_LIMIT:
                self._cache.clear()
            wrong: set[str] = set()
            for ref, (text, secret) in pending.items():
                found = stored.get(ref)
                if found is not None:
                    self._cache[text] = found
                if found != secret:
                    wrong.add(text)
            self.conflicts = len(wrong)
            return frozenset(wrong)

    def _store_all(self, pending: dict[str, tuple[str, bytes]]) -> dict[str, bytes]:
        """Insert what is new, in one statement on PostgreSQL; every secret as stored."""
        if self.engine.dialect.name != "postgresql":
            return {
                ref: self._load_or_create_one(ref, secret) for ref, (_, secret) in pending.items()
            }
        # sorted: two processes inserting overlapping subjects in opposite orders deadlock
        refs = sorted(pending)
        with self._bounded() as driver:
            cursor = driver.cursor()
            try:
                cursor.execute(_PG_UPSERT_ALL, (refs, [pending[r][1] for r in refs]))
                return {str(r): bytes(s) for r, s in cursor.fetchall()}
            finally:
                cursor.close()

    def _load_or_create_one(self, ref: str, secret: bytes) -> bytes:
        row = self._query("SELECT secret FROM subject_secrets WHERE subject_ref = ?", (ref,))
        if row is None:
            self._query(_SQLITE_INSERT, (ref, secret, _now(self.engine)))
            row = self._query("SELECT secret FROM subject_secrets WHERE subject_ref = ?", (ref,))
        return bytes(row[0])

    def lookup(self, text: str) -> bytes | None:
        """The stored secret, or ``None`` (never seen, or erased). Never creates one."""
        with translate_errors("look up a subject"), self.engine.connect() as conn:
            row = conn.execute(
                sa.text("SELECT secret FROM subject_secrets WHERE subject_ref = :r"),
                {"r": subject_ref(self.key, text)},
            ).first()
        return None if row is None else bytes(row[0])

    def refresh(self) -> None:
        """Drop the cache when an erasure happened since the last look."""
        with self._lock:
            try:
                count = int(self._query("SELECT count(*) FROM erasures", ())[0])
            except Exception:  # noqa: BLE001 - cannot tell: forget everything, look again later
                self._close_raw()
                count = -1
            self._checked = time.monotonic()
            if count != self._erasures or count < 0:
                if self._erasures is not None:
                    self.forget()
                self._erasures = count

    def forget(self) -> None:
        self._cache.clear()
        self.forgotten += 1  # callers' own memos of pseudonyms go too (ingest.prepare)
        from tracelake.scrub import policy

        policy.forget_memoised()  # results memoised with an erased pseudonym must go too

    # The lookups run on one raw DBAPI connection in autocommit mode (called under the lock):
    # a new subject costs three short statements, not a pooled SQLAlchemy transaction. On
    # PostgreSQL the insert commits without waiting for its WAL flush (synchronous_commit
    # off): the events that use the secret commit later, synchronously, and their flush
    # covers it, so no stored event can outlive its secret in a crash.
    def _raw_conn(self) -> Any:
        if self._raw is None:
            self._raw = self._connect_within(LOOKUP_TIMEOUT)
        return self._raw

    def _connect_within(self, seconds: float) -> Any:
        """Connect on a helper thread and wait at most *seconds* (libpq's own connect timeout
        is 2 s at least); a connection that arrives later is closed by that thread."""
        got: dict[str, Any] = {}
        abandoned = threading.Event()

        def connect() -> None:
            try:
                raw = self.engine.raw_connection()
                driver = raw.driver_connection
                if self.engine.dialect.name == "postgresql":
                    driver.autocommit = True  # type: ignore[union-attr]
                    driver.execute("SET synchronous_commit TO off")  # type: ignore[union-attr]
            except Exception as exc:  # noqa: BLE001 - raised on the caller's thread
                got["error"] = exc
                return
            got["raw"] = raw
            if abandoned.is_set():
                with contextlib.suppress(Exception):
                    raw.invalidate()

        helper = threading.Thread(target=connect, name="tracelake-subject-connect", daemon=True)
        helper.start()
        helper.join(seconds)
        if helper.is_alive():
            abandoned.set()
            raise StoreUnavailableError(f"the database did not accept a connection in {seconds}s")
        if "error" in got:
            raise got["error"]
        return got["raw"]

    def _query(self, sql: str, params: tuple[object, ...]) -> Any:
        if self.engine.dialect.name == "postgresql":
            sql = sql.replace("?", "%s")
        with self._bounded() as driver:
            cursor = driver.cursor()
            try:
                cursor.execute(sql, params)
                return cursor.fetchone() if cursor.description else None
            finally:
                cursor.close()

    @contextlib.contextmanager
    def _bounded(self) -> Iterator[Any]:
        """The driver connection for one call of at most LOOKUP_TIMEOUT (see there)."""
        if time.monotonic() < self._down_until:
            raise StoreUnavailableError(
                "the database did not answer a subject-secret lookup a moment ago"
            )
        try:
            driver = self._raw_conn().driver_connection  # (connect_timeout bounds a connect)
        except Exception:
            self._failed()
            raise
        if self._watchdog is None:
            self._watchdog = threading.Thread(
                target=self._watch, name="tracelake-subject-watchdog", daemon=True
            )
            self._watchdog.start()
        self._call = (time.monotonic() + LOOKUP_TIMEOUT, driver)
        try:
            yield driver
        except Exception:
            self._failed()
            raise
        finally:
            self._call = None
        self._backoff = RETRY_AFTER

    def _watch(self) -> None:
        """One thread per database, not a timer per call (a thread start costs about as much
        as a lookup): shuts down the connection under a call that passed its deadline."""
        while True:
            time.sleep(LOOKUP_TIMEOUT / 4)
            call = self._call
            if call is not None and time.monotonic() > call[0]:
                self._call = None
                interrupt(call[1])

    def _failed(self) -> None:
        self._down_until = time.monotonic() + self._backoff
        self._backoff = min(30.0, self._backoff * 2)

    def _close_raw(self) -> None:
        raw, self._raw = self._raw, None
        if raw is not None:
            with contextlib.suppress(Exception):
                raw.invalidate()

    def _load_or_create(self, ref: str) -> bytes:
        select = "SELECT secret FROM subject_secrets WHERE subject_ref = ?"
        pg = self.engine.dialect.name == "postgresql"
        fresh = secrets.token_bytes(32)
        try:
            if pg:  # one round trip: insert if new, else read the stored one
                row = self._query(_PG_UPSERT, (ref, fresh, ref))
            else:
                row = self._query(select, (ref,))
                if row is None:
                    self._query(_SQLITE_INSERT, (ref, fresh, _now(self.engine)))
            if row is None:
                row = self._query(select, (ref,))  # another process won the race
        except Exception as exc:  # noqa: BLE001 - the scrubber fails closed on this
            self._close_raw()
            raise ScrubError(
                f"cannot read or create a subject's pseudonym secret ({type(exc).__name__}); "
                "is the database reachable and migrated (`tracelake db upgrade`)?"
            ) from None
        if row is None:
            raise StoreError("a subject secret vanished while it was created; retry")
        return bytes(row[0])

    def dispose(self) -> None:
        with self._lock:
            self._close_raw()  # closes the driver connection outright: no reset round trip
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


def _now(engine: Engine) -> object:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%d %H:%M:%S.%f") if engine.dialect.name == "sqlite" else now


_PG_UPSERT = (
    "WITH ins AS (INSERT INTO subject_secrets (subject_ref, secret, created_at)"
    " VALUES (?, ?, now()) ON CONFLICT (subject_ref) DO NOTHING RETURNING secret)"
    " SELECT secret FROM ins UNION ALL"
    " SELECT secret FROM subject_secrets WHERE subject_ref = ? LIMIT 1"
)
# Rows another transaction inserts concurrently are in neither half (the snapshot predates
# them, ON CONFLICT skips them): the caller sees them missing and scrubs again.
_PG_UPSERT_ALL = (
    "WITH v AS (SELECT * FROM unnest(%s::text[], %s::bytea[]) AS v(ref, secret)),"
    " ins AS (INSERT INTO subject_secrets (subject_ref, secret, created_at)"
    " SELECT ref, secret, now() FROM v ON CONFLICT (subject_ref) DO NOTHING"
    " RETURNING subject_ref, secret)"
    " SELECT subject_ref, secret FROM ins UNION ALL"
    # an index probe per ref whatever the statistics say (see reader.STORED_RUNS)
    " SELECT s.subject_ref, s.secret FROM v, LATERAL (SELECT subject_ref, secret"
    " FROM subject_secrets WHERE subject_ref = v.ref LIMIT 1) s"
)
_SQLITE_INSERT = (
    "INSERT OR IGNORE INTO subject_secrets (subject_ref, secret, created_at) VALUES (?, ?, ?)"
)

_REGISTRY: dict[tuple[bytes, str], SubjectSecrets] = {}
_REGISTRY_LOCK = threading.Lock()


def secrets_for(key: bytes, url: str) -> SubjectSecrets:
    """The process-wide secrets of the database at *url* for *key*."""
    ident = (bytes(key), url)
    found = _REGISTRY.get(ident)
    if found is None:
        with _REGISTRY_LOCK:
            found = _REGISTRY.setdefault(ident, SubjectSecrets(key, url))
    return found


def dispose_all() -> None:
    """Close every cached database connection (at exit; tests; a process about to fork)."""
    with _REGISTRY_LOCK:
        for found in _REGISTRY.values():
            with contextlib.suppress(Exception):
                found.dispose()
        _REGISTRY.clear()


atexit.register(dispose_all)

_inherited: list[SubjectSecrets] = []


def _forget_inherited() -> None:
    """In a forked child: the parent's connections are kept, never used or closed (closing
    one would end the parent's session); this process opens its own when it needs them."""
    global _REGISTRY_LOCK
    _REGISTRY_LOCK = threading.Lock()  # it may have been held by a thread of the parent's
    _inherited.extend(_REGISTRY.values())
    _REGISTRY.clear()


os.register_at_fork(after_in_child=_forget_inherited)


def _lookup(key: bytes, url: str, text: str) -> bytes:
    return secrets_for(key, url).secret_for(text)


use_subject_secrets(_lookup)  # the scrubber's bound keys find their secrets here
