"""The event store: one schema, an appender and a quarantine writer per dialect, a reader,
behind one :class:`Store` (see ``store.recorder``) that owns the database engine."""

from __future__ import annotations

# Imported for its side effect: it installs the scrubber's per-subject secret lookup.
from tracelake.store import subject_secrets as _subject_secrets  # noqa: F401
from tracelake.store.leadership import Leadership
from tracelake.store.recorder import Store, open_store
from tracelake.store.records import (
    AppendResult,
    NewEvent,
    QuarantineItem,
    StoredEvent,
)
from tracelake.store.tracking import Tracking

__all__ = [
    "AppendResult",
    "Leadership",
    "NewEvent",
    "QuarantineItem",
    "Store",
    "StoredEvent",
    "Tracking",
    "open_store",
]
