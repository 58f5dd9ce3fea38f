"""Keyed pseudonyms for the ids analytics groups by, and where the key comes from.

``user_id``, ``mbrId``, ``custNo``, ``session_id`` ... become ``psn_`` + HMAC-SHA256(secret, value)
(first 20 hex digits, 80 bits): stable, so "events per user" still works, and not reversible.
With a key from :func:`load_pseudonym_key` the secret is the value's own random secret in the
database (``store.subject_secrets``), so deleting it erases the subject (crypto-shredding); a bare
key (tests, an in-memory database) is used directly.

Key source, in order: ``TRACELAKE_PSEUDONYM_KEY`` (hex, or any string of at least 16
characters); the file named by ``TRACELAKE_PSEUDONYM_KEY_FILE`` (generated there for SQLite
if missing: keep it off the database's disk); for a SQLite file, ``<dbfile>.pseudonym.key``
beside it (generated once, mode 0600, with a warning); for in-memory SQLite an ephemeral key (with a warning). PostgreSQL
requires the environment variable: a generated key kept on one app server would silently
give other servers different pseudonyms.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import logging
import os
import re
import secrets
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from tracelake.errors import ConfigError, ScrubError
from tracelake.scrub import replays

log = logging.getLogger("tracelake.scrub")

ENV_VAR = "TRACELAKE_PSEUDONYM_KEY"
KEY_FILE_VAR = "TRACELAKE_PSEUDONYM_KEY_FILE"
MIN_KEY_CHARS = 16
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}){16,}")
_HOW = (
    f"Set {ENV_VAR} to a secret of at least {MIN_KEY_CHARS} characters (for example the output "
    "of `python -c 'import secrets; print(secrets.token_hex(32))'`), the same value on every "
    "process that writes to this database."
)


def pseudonymize(key: bytes, value: object) -> str:
    """``psn_<20 hex>``: HMAC-SHA256 of the value's text under *key*."""
    text = value if isinstance(value, str) else repr(value)
    digest = hmac.new(subject_key(key, text), text.encode("utf-8"), hashlib.sha256).hexdigest()
    return f"psn_{digest[:20]}"


class BoundKey(bytes):
    """A pseudonym key bound to the database that holds its per-subject secrets.

    Equal only to the same key bound to the same database, never to the bare bytes (so
    results memoised under one never serve the other: ``scrub.policy.memoized`` keys on the
    key); compare ``bytes(key)`` for the key itself. Pickles as (key, url), so worker
    processes find the secrets too.
    """

    url: str
    _hash: int  # of (key, url), set by bind_key: memo lookups hash the key on every call

    def __eq__(self, other: object) -> bool:
        same = isinstance(other, bytes) and bytes(self) == bytes(other)
        return same and getattr(other, "url", None) == self.url

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            return hash((bytes(self), self.url))

    def __reduce__(self) -> tuple[object, tuple[bytes, str]]:
        return (bind_key, (bytes(self), self.url))


def bind_key(key: bytes, database_url: str) -> BoundKey:
    bound = BoundKey(key)
    bound.url = database_url
    bound._hash = hash((bytes(key), database_url))
    return bound


# Where a bound key's per-subject secrets come from: the store registers its lookup when it is
# imported (``tracelake.store.subject_secrets``), so the scrubber never imports the store (the
# layering is one-way: store -> scrub). A bound key carries a database URL, which only exists
# where the store package has been imported.
SecretLookup = Callable[[bytes, str, str], bytes]  # (key, database url, text) -> secret
_secret_lookup: list[SecretLookup] = []


# A stamp that changes whenever a provisional secret is handed out (see
# ``store.subject_secrets``: the ingest creates new subjects' secrets per chunk and a
# provisional one may lose to a stored one). Memos compare it before and after their work and
# keep nothing made with one. Each stamp comes from one counter, so a stale write never
# restores a value a reader saw before: a reader can only be told "changed" too often.
_stamps = itertools.count(1)
_stamp = 0


def note_provisional() -> None:
    global _stamp
    _stamp = next(_stamps)


def provisional_stamp() -> int:
    return _stamp


def use_subject_secrets(lookup: SecretLookup) -> None:
    """Install the per-subject secret lookup (the store does this once, at import)."""
    _secret_lookup[:] = [lookup]


def subject_key(key: bytes, text: str) -> bytes:
    """The HMAC key for *text*: its own secret for a bound key, else *key* itself."""
    url = getattr(key, "url", None)
    if url is None:
        return key
    if not _secret_lookup:  # fail closed: never a pseudonym that could not be erased later
        raise ScrubError("per-subject secrets are not available: import tracelake.store first")
    try:
        secret = _secret_lookup[0](key, url, text)
    except Exception:
        _unavailable[0] += 1  # callers that must not degrade check unavailable_count()
        raise
    replays.note(text, secret)  # for the memos of what this secret makes (scrub.replays)
    return secret


_unavailable = [0]


def unavailable_count() -> int:
    """How many times this process could not get a subject's secret (the database away or
    slow): the scrubber then fails closed, storing a minimal record or an unlinkable
    pseudonym. A sink must go on that way (it never blocks its runner); ``ingest`` compares
    the count around a chunk and stops instead (a re-run stores what it did not)."""
    return _unavailable[0]


def parse_key(raw: str, *, origin: str) -> bytes:
    raw = raw.strip()
    if _HEX.fullmatch(raw):
        return bytes.fromhex(raw)
    if len(raw) < MIN_KEY_CHARS:
        raise ConfigError(f"The pseudonym key from {origin} is too short. {_HOW}")
    return raw.encode("utf-8")


def _sqlite_path(database_url: str) -> str | None:
    """The database file of a SQLite URL, or ``None`` for an in-memory database."""
    rest = database_url.split(":", 1)[1] if ":" in database_url else ""
    rest = rest.removeprefix("///") if rest.startswith("///") else rest.removeprefix("//")
    path = rest.split("?", 1)[0]
    if path in ("", ":memory:") or path.startswith("file::memory:") or "mode=memory" in rest:
        return None
    return path.removeprefix("file:")


def _load_key(database_url: str, env: Mapping[str, str]) -> bytes:
    """The pseudonym key for *database_url* (see the module docstring for the order)."""
    raw = env.get(ENV_VAR, "")
    if raw.strip():
        return parse_key(raw, origin=f"${ENV_VAR}")
    key_file = env.get(KEY_FILE_VAR, "").strip()
    if key_file and Path(key_file).is_file():
        return parse_key(Path(key_file).read_text(encoding="ascii"), origin=key_file)
    scheme = database_url.split(":", 1)[0].split("+", 1)[0].lower()
    if scheme != "sqlite":
        raise ConfigError(
            f"{ENV_VAR} is not set and the database is {scheme or 'unknown'}, not an embedded "
            f"SQLite file, so no key can be generated beside it. {_HOW}"
        )
    db_path = _sqlite_path(database_url)
    if db_path is None:
        log.warning(
            "%s is not set and the database is in memory: using an ephemeral pseudonym key; "
            "pseudonyms will not match those of any other process.",
            ENV_VAR,
        )
        return secrets.token_bytes(32)
    key_path = Path(key_file or db_path + ".pseudonym.key")
    existing = _read_key_file(key_path)
    if existing is not None:
        return existing
    key = secrets.token_bytes(32)
    key_path.parent.mkdir(parents=True, exist_ok=True)
    if not _publish_key_file(key_path, key):  # another process created it first: use theirs
        found = _read_key_file(key_path)
        if found is None:
            raise ConfigError(f"{key_path} vanished while it was being created; run again")
        return found
    log.warning(
        "%s is not set: generated a pseudonym key and kept it in %s (mode 0600). Back it up "
        "with the database; without it, new pseudonyms will not match old ones.",
        ENV_VAR,
        key_path,
    )
    return key


def load_pseudonym_key(database_url: str, env: Mapping[str, str] = os.environ) -> bytes:
    """The pseudonym key for *database_url*, bound to the database's per-subject secrets
    (crypto-shredding, ``tracelake erase``) unless the database is in memory."""
    key = _load_key(database_url, env)
    if database_url.lower().startswith("sqlite") and _sqlite_path(database_url) is None:
        return key
    return bind_key(key, database_url)


def _read_key_file(key_path: Path) -> bytes | None:
    """The key in the file, or None when there is none. A file that is still being written by
    a process using the fallback path (empty or short) is waited for briefly."""
    for attempt in range(50):
        try:
            text = key_path.read_text(encoding="ascii")
        except FileNotFoundError:
            return None
        if text.endswith("\n") or attempt == 49:
            return parse_key(text, origin=str(key_path))
        time.sleep(0.02)
    return None  # pragma: no cover


def _publish_key_file(key_path: Path, key: bytes) -> bool:
    """Create the key file atomically, complete and mode 0600; False if it already exists.

    The key is written and fsync'd under a private temporary name, then hard-linked to the
    final name (link fails if the name exists), so no process ever reads a partial key.
    """
    fd, tmp = tempfile.mkstemp(prefix=key_path.name + ".", suffix=".tmp", dir=key_path.parent)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:  # mkstemp makes it 0600
            handle.write(key.hex() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, key_path)
        except FileExistsError:
            return False
        except OSError:  # a file system without hard links: exclusive create, then write
            try:
                out = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                return False
            with os.fdopen(out, "w", encoding="ascii") as handle:
                handle.write(key.hex() + "\n")
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
