"""``tracelake db upgrade|current|history|downgrade``: schema migrations."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer

from tracelake.cli.common import AsJson, DatabaseUrl, _plain_store, err, out
from tracelake.cli.root import db_app
from tracelake.console import display_url, emit_json, markup, say, table


@db_app.command("upgrade")
def db_upgrade(database_url: DatabaseUrl = None) -> None:
    """Create or migrate the schema to the newest revision."""

    with _plain_store(database_url) as store:
        store.upgrade()
        revision = store.revision()
        say(out, f"schema at revision [bold]{markup(revision)}[/] ({store.dialect})")


@db_app.command("current")
def db_current(database_url: DatabaseUrl = None, as_json: AsJson = False) -> None:
    """The database's schema revision and the newest one this tracelake knows."""
    from tracelake.store import migrate

    with _plain_store(database_url) as store:
        current = store.revision()
        head = migrate.head_revision()
        url = display_url(store.url)
    if as_json:
        emit_json(
            {"database": url, "current": current, "head": head, "up_to_date": current == head}
        )
        return
    state = "up to date" if current == head else "run `tracelake db upgrade`"
    say(out, f"{markup(url)}: revision {markup(current or 'none')} (newest {head}; {state})")


@db_app.command("history")
def db_history(database_url: DatabaseUrl = None, as_json: AsJson = False) -> None:
    """Every schema revision, oldest first, and which are applied to this database."""

    with _plain_store(database_url) as store:
        revisions = store.history()
        current = store.revision()
    if as_json:
        emit_json([asdict(r) for r in revisions])
        return
    rows = [
        (r.revision, "current" if r.current else ("applied" if r.applied else "-"), r.doc)
        for r in revisions
    ]
    table(out, ("revision", "state", "what it does"), rows)
    if current is not None and not any(r.current for r in revisions):
        say(
            err,
            f"this database is at revision {markup(current)}, which this tracelake does not know",
        )


@db_app.command("downgrade")
def db_downgrade(
    revision: Annotated[
        str, typer.Argument(metavar="REVISION", help="Target revision, e.g. 0004, or base")
    ],
    force: Annotated[
        bool, typer.Option("--force", help="Allow dropping the event log (below revision 0001)")
    ] = False,
    database_url: DatabaseUrl = None,
) -> None:
    """Undo migrations down to REVISION. Refuses to drop the event log without --force."""

    with _plain_store(database_url) as store:
        undone = store.downgrade(revision, force=force)
        now = store.revision()
    done = ", ".join(undone) or "nothing"
    say(out, f"undid {markup(done)}; schema at revision {markup(now or 'none')}")
