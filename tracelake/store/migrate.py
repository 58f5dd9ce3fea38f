"""Schema migrations (alembic), callable without an alembic.ini in the working directory."""

from __future__ import annotations

import atexit
import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.script.revision import RevisionError
from alembic.util.exc import CommandError
from sqlalchemy.engine import Connection, Engine

from tracelake.errors import ConfigError, TracelakeError
from tracelake.store.connection import translate_errors, write_transaction
from tracelake.store.schema import JSONDocument, metadata

_PACKAGE = Path(__file__).resolve().parents[1]
# An installed wheel carries them inside the package (setup.py maps migrations/ there); a
# checkout (or an editable install) has them at the repository's top level.
CANDIDATES = (_PACKAGE / "migrations", _PACKAGE.parent / "migrations")


_staged: Path | None = None


def migrations_dir() -> Path:
    installed, checkout = CANDIDATES
    if (installed / "env.py").is_file():
        return _stage(installed)
    if (checkout / "env.py").is_file():
        return checkout
    raise ConfigError(
        "tracelake's migrations are missing (looked in "
        + ", ".join(str(c) for c in CANDIDATES)
        + "); reinstall tracelake from a wheel or a source checkout (pip install tracelake-*.whl)"
    )


def _stage(installed: Path) -> Path:
    """A private copy of the installed migrations, laid out like the repository.

    The revisions are frozen and find their view SQL at
    ``Path(__file__).resolve().parents[2] / "tracelake" / "sql"`` (true in a checkout); in a
    wheel that would be ``tracelake/tracelake/sql``. So alembic runs them from a temporary
    ``<tmp>/migrations`` beside ``<tmp>/tracelake/sql``, made once per process.
    """
    global _staged
    if _staged is None or not (_staged / "env.py").is_file():
        root = Path(tempfile.mkdtemp(prefix="tracelake-migrations-"))
        atexit.register(shutil.rmtree, root, True)
        skip = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(installed, root / "migrations", ignore=skip)
        shutil.copytree(_PACKAGE / "sql", root / "tracelake" / "sql", ignore=skip)
        _staged = root / "migrations"
    return _staged


def alembic_config(url: str | None = None, connection: Connection | None = None) -> Config:
    migrations = migrations_dir()
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations))
    if url:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


@contextlib.contextmanager
def _known_revisions() -> Iterator[None]:
    """alembic's "can't locate revision" as a message that says what to do."""
    try:
        yield
    except (CommandError, RevisionError) as exc:
        raise ConfigError(
            f"{str(exc).splitlines()[0]}; `tracelake db history` lists the revisions this "
            "tracelake knows (a database migrated by a newer tracelake needs that version)"
        ) from None


def upgrade(engine: Engine, revision: str = "head") -> None:
    with (
        _known_revisions(),
        translate_errors("migrate the schema"),
        write_transaction(engine) as conn,
    ):
        command.upgrade(alembic_config(connection=conn), revision)


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


# The revision that creates the append-only log: going below it drops every stored event.
LOG_REVISION = "0001"


@dataclass(frozen=True, slots=True)
class Revision:
    revision: str
    down_revision: str | None
    doc: str
    applied: bool
    current: bool


def history(engine: Engine | None = None) -> list[Revision]:
    """Every revision, oldest first, marked applied/current when an engine is given."""
    scripts = ScriptDirectory.from_config(alembic_config())
    current = current_revision(engine) if engine is not None else None
    chain = list(reversed(list(scripts.walk_revisions())))
    applied: set[str] = set()
    if current is not None:
        with contextlib.suppress(CommandError, RevisionError):  # from a newer tracelake
            applied = {r.revision for r in scripts.iterate_revisions(current, "base")}
    return [
        Revision(
            r.revision,
            r.down_revision if isinstance(r.down_revision, str) else None,
            (r.doc or "").strip().splitlines()[0] if r.doc else "",
            r.revision in applied,
            r.revision == current,
        )
        for r in chain
    ]


def undone_by(engine: Engine, target: str) -> list[str]:
    """The revisions a downgrade to *target* would undo, newest first."""
    current = current_revision(engine)
    if current is None:
        return []
    scripts = ScriptDirectory.from_config(alembic_config())
    lower = None if target == "base" else scripts.get_revision(target).revision
    undone = []
    for r in scripts.iterate_revisions(current, "base"):
        if r.revision == lower:
            break
        undone.append(r.revision)
    return undone


def downgrade(engine: Engine, revision: str, *, force: bool = False) -> list[str]:
    """Downgrade; refuses to go below the log's revision (it drops the events) unless forced."""
    with _known_revisions():
        undone = undone_by(engine, revision)
    if LOG_REVISION in undone and not force:
        raise LogWouldBeDroppedError(
            f"downgrading to {revision} undoes revision {LOG_REVISION}, which drops the "
            "append-only event log and the quarantine with every stored event; export or "
            "back up the database first, then add --force if you really mean it"
        )
    with (
        _known_revisions(),
        translate_errors("downgrade the schema"),
        write_transaction(engine) as conn,
    ):
        command.downgrade(alembic_config(connection=conn), revision)
    return undone


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


class LogWouldBeDroppedError(TracelakeError):
    """A downgrade would drop the append-only log; it needs ``--force``."""
