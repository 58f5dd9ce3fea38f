"""What every command module shares: the consoles, the option types, and the ways to open
the store (schema checked, or as it is for the ``db`` commands)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import Progress

from tracelake.config import Settings
from tracelake.console import markup, new_console, say

if TYPE_CHECKING:
    from tracelake.store import Store

out = new_console()
err = new_console(stderr=True)

DatabaseUrl = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        envvar="TRACELAKE_DATABASE_URL",
        help="sqlite:///path.db (default sqlite:///tracelake.db) or postgresql://...",
        show_default=False,
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print as JSON")]
RunId = Annotated[str, typer.Argument(metavar="RUN_ID", help="From `tracelake runs list`")]
SuggestionId = Annotated[str, typer.Argument(metavar="SUGGESTION_ID")]


def _settings(database_url: str | None) -> Settings:
    return Settings.from_env(database_url=database_url)


@contextlib.contextmanager
def _checked_store(database_url: str | None) -> Iterator[Store]:
    """The store, its schema checked (an embedded SQLite one is migrated), disposed after."""
    from tracelake.wiring import store_session

    with store_session(database_url) as store:
        yield store


@contextlib.contextmanager
def _plain_store(database_url: str | None) -> Iterator[Store]:
    """The store as it is (no schema check): for the ``db`` commands."""
    from tracelake.wiring import store_session

    with store_session(database_url, check_schema=False) as store:
        yield store


def _progress(*columns: Any, transient: bool = True) -> Progress:
    """A progress display on stderr, shown only when stderr is a terminal."""
    return Progress(*columns, console=err, transient=transient, disable=not err.is_terminal)


def _no_run(run_id: str) -> None:
    say(err, f"no run {markup(repr(run_id))}; `tracelake runs list` shows the stored runs")
    raise typer.Exit(1)
