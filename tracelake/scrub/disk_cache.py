"""Compiled artefacts kept on disk between processes (the hint automaton: ~0.5-0.8 s of CPU
to compile, 0.2 ms to load).

An entry is named by a digest of everything its content depends on (the caller's *key*:
library version, machine, the compiled source), so a changed source or library never reads
a stale entry; the caller still checks what it loads (Hyperscan refuses a database of another
version or platform) and compiles afresh when it cannot. Nothing personal is ever stored here:
only what is compiled from the package's own patterns.

The directory is ``$TRACELAKE_CACHE_DIR``, else ``$XDG_CACHE_HOME/tracelake``, else
``~/.cache/tracelake``; ``TRACELAKE_CACHE_DIR=off`` turns the cache off. It is created
private (0700) and an entry is read only from a directory and file that belong to this user
and that others cannot write to (a loaded automaton decides what is scrubbed). Writes are
atomic (a temporary file renamed into place); any failure to read or write is silent: the
cache only saves time.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from pathlib import Path

OFF = "off"
KEEP = 4  # entries per name (a few installed versions side by side)


def directory() -> Path | None:
    """Where entries live, or ``None`` when the cache is turned off."""
    configured = os.environ.get("TRACELAKE_CACHE_DIR")
    if configured:
        return None if configured.strip().lower() == OFF else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tracelake"


def _path(name: str, key: bytes) -> Path | None:
    folder = directory()
    if folder is None:
        return None
    return folder / f"{name}-{hashlib.sha256(key).hexdigest()[:32]}.bin"


def _trusted(st: os.stat_result) -> bool:
    """Owned by this user and not writable by anyone else (POSIX; elsewhere the user's own
    profile directory is trusted)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return True
    return st.st_uid == getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def load(name: str, key: bytes) -> bytes | None:
    """The entry stored for (*name*, *key*), or ``None``."""
    path = _path(name, key)
    if path is None:
        return None
    try:
        if not (_trusted(path.parent.stat()) and _trusted(path.stat())):
            return None
        return path.read_bytes()
    except OSError:
        return None


def store(name: str, key: bytes, blob: bytes) -> None:
    """Keep *blob* for (*name*, *key*); silently nothing when the directory is not writable."""
    path = _path(name, key)
    if path is None:
        return
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{name}-", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(blob)
            os.replace(tmp, path)
            _prune(path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _prune(kept: Path) -> None:
    """Remove all but the :data:`KEEP` newest entries of *kept*'s name."""
    name = kept.name.rsplit("-", 1)[0]
    entries = sorted(kept.parent.glob(f"{name}-*.bin"), key=_mtime, reverse=True)
    for old in entries[KEEP:]:
        if old != kept:
            with contextlib.suppress(OSError):
                old.unlink()


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
