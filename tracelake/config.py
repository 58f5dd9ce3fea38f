"""Settings, read once from ``TRACELAKE_*`` environment variables.

A frozen dataclass rather than pydantic-settings: the set is small, and the sink reads it on
the runner's thread, where import time matters.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Self

from tracelake.errors import ConfigError

DEFAULT_DATABASE_URL = "sqlite:///tracelake.db"
# "1": presidio is imported without spaCy (tracelake.scrub.presidio_import); the tracelake
# command sets it for its own processes, a library user never gets it unasked.
PRESIDIO_WITHOUT_SPACY = "TRACELAKE_PRESIDIO_WITHOUT_SPACY"


def _int(env: Mapping[str, str], name: str, default: int, minimum: int = 1) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(
            f"{name}={raw!r} is not a whole number; unset it or give e.g. {default}"
        ) from None
    if value < minimum:
        raise ConfigError(f"{name}={value} is below the minimum {minimum}")
    return value


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    # Input limits: a line or nesting beyond these is quarantined, never parsed into memory whole.
    max_line_bytes: int = 8 * 1024 * 1024
    max_depth: int = 64
    # A gzip input that inflates beyond this is cut there (the rest is quarantined as damage).
    max_decompressed_bytes: int = 64 * 1024**3
    # Appends are batched: at most this many events per transaction.
    batch_size: int = 2000
    # Processes that parse and scrub ingest input (0: one per CPU; 1: in the main process).
    ingest_workers: int = 0
    # Seconds one database call of ``ingest`` may take before its connection is shut down
    # (a server that stopped answering ignores its own timeouts): the ingest then stops with
    # an error instead of hanging, and a re-run stores the rest.
    db_call_timeout: int = 120

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> Self:
        env = os.environ if env is None else env
        default = cls()
        settings = cls(
            database_url=env.get("TRACELAKE_DATABASE_URL") or DEFAULT_DATABASE_URL,
            max_line_bytes=_int(env, "TRACELAKE_MAX_LINE_BYTES", default.max_line_bytes, 1024),
            max_depth=_int(env, "TRACELAKE_MAX_DEPTH", default.max_depth, 4),
            batch_size=_int(env, "TRACELAKE_BATCH_SIZE", default.batch_size),
            ingest_workers=_int(env, "TRACELAKE_INGEST_WORKERS", default.ingest_workers, 0),
            db_call_timeout=_int(env, "TRACELAKE_DB_CALL_TIMEOUT", default.db_call_timeout),
            max_decompressed_bytes=_int(
                env, "TRACELAKE_MAX_DECOMPRESSED_BYTES", default.max_decompressed_bytes, 1024
            ),
        )
        clean = {k: v for k, v in overrides.items() if v is not None}
        return replace(settings, **clean) if clean else settings  # type: ignore[arg-type]
