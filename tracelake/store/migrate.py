"""Schema migrations (alembic), callable without an alembic.ini in the working directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection, Engine

from tracelake.errors import ConfigError
from tracelake.store.engine import translate_errors, write_transaction
from tracelake.store.schema import JSONDocument, metadata

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


def alembic_config(url: str | None = None, connection: Connection | None = None) -> Config:
    if not (MIGRATIONS / "env.py").is_file():
        raise ConfigError(
            f"migrations not found at {MIGRATIONS}; install tracelake from its source tree "
            "(pip install -e .) so that migrations/ ships beside the package"
        )
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    if url:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def upgrade(engine: Engine, revision: str = "head") -> None:
    with translate_errors("migrate the schema"), write_transaction(engine) as conn:
        command.upgrade(alembic_config(connection=conn), revision)


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def compare_type(
    ctx: Any, inspected: Any, metadata_column: Any, inspected_type: Any, metadata_type: Any
) -> bool | None:
    """JSONDocument is JSONB on PostgreSQL and TEXT on SQLite: compare what it renders to."""
    if isinstance(metadata_type, JSONDocument):
        dialect = ctx.dialect
        expected = metadata_type.load_dialect_impl(dialect).compile(dialect=dialect)
        return bool(expected.lower() != inspected_type.compile(dialect=dialect).lower())
    return None


def schema_diff(engine: Engine) -> list[Any]:
    """What autogenerate would change: empty when migrations match ``store.schema``."""
    with engine.connect() as conn:
        from tracelake.store import partitions

        opts = {"compare_type": compare_type, "include_object": partitions.include_object}
        ctx = MigrationContext.configure(conn, opts=opts)
        return [d for d in compare_metadata(ctx, metadata) if not partitions.expected_difference(d)]
