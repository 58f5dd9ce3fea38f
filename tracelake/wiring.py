"""Open the parts a command or the sink needs: the store (schema checked), the key, the scrubber."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracelake.config import Settings
from tracelake.errors import SchemaNotReadyError
from tracelake.store import Store, open_store

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
    from tracelake.store.schema_head import HEAD_REVISION

    current = store.revision()
    if current == HEAD_REVISION:  # the usual case, known without importing alembic
        return
    from tracelake.store import migrate

    head = migrate.head_revision()
    if current == head:
        return
    if store.embedded:
        log.info("migrating the embedded database %s to %s", store.url, head)
        store.upgrade()
        return
    raise SchemaNotReadyError(
        f"the database schema is at {current or 'nothing'}, tracelake needs {head}; "
        "run `tracelake db upgrade` (or the docker-compose `migrate` service) first"
    )


def open_store_for(database_url: str | None, *, check_schema: bool = True) -> Store:
    """The one way a command opens the store: the URL from the settings (*database_url*
    overrides the environment), the schema checked unless *check_schema* is false."""
    store = open_store(Settings.from_env(database_url=database_url).database_url)
    if check_schema:
        try:
            ensure_schema(store)
        except BaseException:
            store.dispose()
            raise
    return store


@contextlib.contextmanager
def store_session(database_url: str | None, *, check_schema: bool = True) -> Iterator[Store]:
    """:func:`open_store_for`, disposed when the block ends."""
    store = open_store_for(database_url, check_schema=check_schema)
    try:
        yield store
    finally:
        store.dispose()


def open_components(settings: Settings, *, check_schema: bool = True) -> Components:
    from tracelake.scrub import get_scrubber, load_pseudonym_key

    key = load_pseudonym_key(settings.database_url)
    store = open_store(settings.database_url)
    if check_schema:
        ensure_schema(store)
    return Components(settings, store, key, get_scrubber(key))
