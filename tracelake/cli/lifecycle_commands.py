"""Lifecycle commands: ``db roles``, ``db verify``, ``db partitions``, ``erase``,
``subjects find``, ``retention apply``. Parse, call, print; the work is in ``lifecycle``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tracelake.cli.common import DatabaseUrl, err, out
from tracelake.config import Settings
from tracelake.console import markup
from tracelake.errors import ConfigError

if TYPE_CHECKING:
    from tracelake.store import Store
    from tracelake.wiring import Components


AsJson = Annotated[bool, typer.Option("--json", help="Print the result as JSON")]
Yes = Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation")]

subjects_app = typer.Typer(no_args_is_help=True, help="Find what is linked to a data subject.")
retention_app = typer.Typer(no_args_is_help=True, help="Archive and remove old events.")


def register(app: typer.Typer, db_app: typer.Typer) -> None:
    db_app.command("roles")(db_roles)
    db_app.command("verify")(db_verify)
    db_app.command("partitions")(db_partitions)
    app.command("erase")(erase)
    app.add_typer(subjects_app, name="subjects")
    app.add_typer(retention_app, name="retention")


def _components(database_url: str | None) -> Components:
    from tracelake.wiring import open_components

    return open_components(Settings.from_env(database_url=database_url))


def _store(database_url: str | None) -> Store:
    from tracelake.wiring import open_store_for

    return open_store_for(database_url)


def db_roles(
    database_url: DatabaseUrl = None,
    login: Annotated[
        str | None,
        typer.Option(
            help="Also a LOGIN role in tracelake_writer (password from $TRACELAKE_LOGIN_PASSWORD)"
        ),
    ] = None,
) -> None:
    """Create the tracelake_writer and tracelake_reader roles and grant them (PostgreSQL; run
    as the owner, again after every upgrade). Also prepares the coming monthly partitions."""
    import os

    from tracelake.lifecycle.roles import PASSWORD_VAR, setup_roles

    store = _store(database_url)
    try:
        report = setup_roles(store, login, os.environ.get(PASSWORD_VAR) or None)
    finally:
        store.dispose()
    for role in report.created:
        out.print(f"created role [bold]{markup(role)}[/] (NOLOGIN)")
    for role, grants in report.grants.items():
        out.print(f"[bold]{markup(role)}[/]: " + markup("; ".join(grants)))
    if report.partitions:
        out.print(f"created partitions: {markup(', '.join(report.partitions))}")
    out.print(
        "login roles join a group: CREATE ROLE ingest LOGIN PASSWORD '...' IN ROLE tracelake_writer"
    )


def db_partitions(
    database_url: DatabaseUrl = None,
    months_ahead: Annotated[int, typer.Option(help="Prepare this many months ahead")] = 12,
) -> None:
    """Prepare the monthly partitions of events ahead of time (PostgreSQL; owner)."""
    from tracelake.store import partitions

    store = _store(database_url)
    try:
        with store.writing("prepare partitions") as conn:
            if not partitions.is_partitioned(conn):
                raise ConfigError("events is not partitioned here (SQLite has no partitions)")
            now = datetime.now(UTC)
            created = partitions.ensure_months(
                conn, now, partitions._months_later(now, months_ahead)
            )
    finally:
        store.dispose()
    out.print(f"created: {', '.join(created) or 'nothing (all there)'}")


def db_verify(
    database_url: DatabaseUrl = None,
    full: Annotated[
        bool, typer.Option("--full", help="From the anchor, not the checkpoint")
    ] = False,
    expect_head: Annotated[
        str | None,
        typer.Option(
            help="POSITION:HEAD printed by an earlier verify and kept elsewhere; must still hold"
        ),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Verify the hash chain over the log. Exit 0 when intact, 1 with the first bad position."""
    from tracelake.lifecycle.verify import verify

    expect = None
    if expect_head:
        pos, _, head = expect_head.partition(":")
        if not pos.isdigit() or len(head) != 64:
            raise ConfigError("--expect-head takes POSITION:HEAD as `db verify` prints them")
        expect = (int(pos), head.lower())
    store = _store(database_url)
    try:
        result = verify(store, full=full or expect is not None, expect=expect)
    finally:
        store.dispose()
    if as_json:
        print(json.dumps(result.as_dict()))
    elif result.ok:
        mode = "incremental from the checkpoint" if result.incremental else "from the anchor"
        out.print(
            f"[green]intact[/]: {result.events} events in {result.links} links verified ({mode},"
            f" positions {result.start + 1}..{result.end}); head {result.end}:{result.head}"
        )
    else:
        if result.problem:
            err.print(f"[red]broken[/] at position {result.position}: {markup(result.problem)}")
        for problem in result.schema_problems:
            err.print(f"[red]broken[/]: {markup(problem)}")
    raise typer.Exit(0 if result.ok else 1)


def erase(
    subject: Annotated[str, typer.Option("--subject", help="The value as it appeared (an id)")],
    database_url: DatabaseUrl = None,
    exports: Annotated[
        Path | None, typer.Option(help="A Parquet export directory to list files to rewrite")
    ] = None,
    yes: Yes = False,
    as_json: AsJson = False,
) -> None:
    """Erase a data subject by deleting its pseudonym secret (crypto-shredding); prints and
    stores a receipt and appends a subject.erased event (no personal data in either)."""
    from tracelake.lifecycle.erasure import erase as do_erase
    from tracelake.lifecycle.erasure import find
    from tracelake.lifecycle.roles import as_owner

    parts = _components(database_url)
    try:
        if not yes:
            found = find(parts.store, parts.key, subject)
            typer.confirm(
                f"unlink {found.events} event(s) and {sum(found.derived.values())} derived row(s)"
                " from this subject for good?",
                abort=True,
            )
        with as_owner("erase"):
            receipt = do_erase(parts.store, parts.key, subject, exports)
    finally:
        parts.store.dispose()
    if as_json:
        print(json.dumps(receipt))
        return
    out.print("[bold]erasure receipt[/] (stored in the erasures table)")
    for k, v in receipt.items():
        out.print(f"  {markup(k)}: {markup(v)}")


@subjects_app.command("find")
def subjects_find(
    value: Annotated[str, typer.Argument(help="The value as it appeared (an id)")],
    database_url: DatabaseUrl = None,
    as_json: AsJson = False,
) -> None:
    """Count the events and derived rows linked to a subject ({"events": N, ...})."""
    from tracelake.lifecycle.erasure import find

    parts = _components(database_url)
    try:
        found = find(parts.store, parts.key, value)
    finally:
        parts.store.dispose()
    if as_json:
        print(json.dumps(found.as_dict()))
        return
    for k, v in found.as_dict().items():
        out.print(f"{markup(k)}: {markup(v)}")


def _parse_time(text: str) -> datetime:
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(
            f"--before {text!r} is not a date or time; use e.g. 2026-06-01 or 2026-06-01T00:00Z"
        ) from None
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t


@retention_app.command("apply")
def retention_apply(
    before: Annotated[str, typer.Option("--before", help="Cut: events recorded before it go")],
    archive: Annotated[Path, typer.Option("--archive", help="Directory for the Parquet archive")],
    database_url: DatabaseUrl = None,
    yes: Yes = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only say what would go")] = False,
    as_json: AsJson = False,
) -> None:
    """Archive the events recorded before the cut to Parquet and remove them (owner role)."""
    from tracelake.lifecycle import retention
    from tracelake.lifecycle.roles import as_owner

    cut = _parse_time(before)
    store = _store(database_url)
    try:
        preview = retention.plan(store, cut)
        if dry_run:
            report = preview
        else:
            if not yes:
                typer.confirm(
                    f"archive to {archive} and remove {preview.archived} event(s) recorded before"
                    f" {cut.isoformat()}?",
                    abort=True,
                )
            with as_owner("retention apply"):
                report = retention.apply(store, cut, archive)
    finally:
        store.dispose()
    if as_json:
        print(json.dumps(report.as_dict()))
        return
    verb = "would archive and remove" if report.dry_run else "archived and removed"
    out.print(f"{verb} {report.archived} event(s) recorded before {report.cut}")
    if report.dropped_partitions:
        out.print(f"partitions dropped: {markup(', '.join(report.dropped_partitions))}")
    if not report.dry_run:
        out.print(f"trimmed: {report.trimmed}; files: {len(report.files)} under {markup(archive)}")
        if report.anchor_position is not None:
            out.print(f"chain anchored at position {report.anchor_position}")
