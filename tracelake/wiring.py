"""Open the parts a command or the sink needs: the store (schema checked), the key, the scrubber."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracelake.config import Settings
from tracelake.errors import SchemaNotReadyError
from tracelake.store import Store, migrate, open_store

log = logging.getLogger("tracelake")

if TYPE_CHECKING:
    from tracelake.scrub import Scrubber


@dataclass(frozen=True, slots=True)
class Components:
    settings: Settings
    store: Store
    key: bytes
    scrubber: Scrubber


def ensure_schema(store: Store) -> None:
    """Refuse an old schema; an embedded SQLite database is migrated on first use."""
    current = migrate.current_revision(store.engine)
    head = migrate.head_revision()
    if current == head:
        return
    if store.dialect == "sqlite":
        log.info("migrating the embedded database %s to %s", store.url, head)
        migrate.upgrade(store.engine)
        return
    raise SchemaNotReadyError(
        f"the database schema is at {current or 'nothing'}, tracelake needs {head}; "
        "run `tracelake db upgrade` (or the docker-compose `migrate` service) first"
    )


def open_components(settings: Settings, *, check_schema: bool = True) -> Components:
    from tracelake.scrub import get_scrubber, load_pseudonym_key

    key = load_pseudonym_key(settings.database_url)
    store = open_store(settings.database_url)
    if check_schema:
        ensure_schema(store)
    return Components(settings, store, key, get_scrubber(key))
