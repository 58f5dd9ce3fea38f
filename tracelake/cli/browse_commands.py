"""``tracelake stats``, ``runs list|show``, ``quarantine list|show``: what is stored."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from tracelake.cli.common import (
    AsJson,
    DatabaseUrl,
    RunId,
    _checked_store,
    _no_run,
    _settings,
    err,
    out,
)
from tracelake.cli.root import app, quarantine_app, runs_app
from tracelake.console import dumps, emit_json, say, table


@app.command()
def stats(database_url: DatabaseUrl = None, as_json: AsJson = False) -> None:
    """Events by type, runs, quarantined lines."""

    with _checked_store(database_url) as store:
        data = store.stats()
    if as_json:
        emit_json(data)
        return
    say(
        out,
        f"[bold]{data['events']}[/] events in [bold]{data['runs']}[/] runs, "
        f"[bold]{data['quarantined']}[/] quarantined",
    )
    table(out, ("type", "events"), data["events_by_type"].items())
    if data["quarantined_by_reason"]:
        table(out, ("quarantine reason", "lines"), data["quarantined_by_reason"].items())


@runs_app.command("list")
def runs_list(
    collection: Annotated[str | None, typer.Option("--collection", help="Only this one")] = None,
    status: Annotated[
        str | None,
        typer.Option(
            "--status", help="Running, 'Partial progress', 'Needs attention', Success, Failed"
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most this many")] = 50,
    database_url: DatabaseUrl = None,
    as_json: AsJson = False,
) -> None:
    """Stored runs, newest first, with their status from the runs projection."""
    from tracelake.listing import list_runs

    with _checked_store(database_url) as store:
        found = list_runs(store, collection=collection, status=status, limit=limit)
    if as_json:
        emit_json(found.runs)
    else:
        rows = [
            (
                r["run_id"],
                r["source"],
                r["collection_id"],
                r["status"] or "(not projected)",
                r["events"],
                r["last_event_type"],
                r["last_recorded_at"],
            )
            for r in found.runs
        ]
        table(out, ("run id", "source", "collection", "status", "events", "last", "at"), rows)
    if found.behind:
        say(
            err,
            f"{found.behind} event(s) are not in the runs projection yet; run "
            "`tracelake project` for current statuses",
        )
    if not found.runs:
        say(err, "no runs match; `tracelake stats` shows what is stored")


@runs_app.command("show")
def runs_show(run_id: RunId, database_url: DatabaseUrl = None, as_json: AsJson = False) -> None:
    """A run's events in order."""

    with _checked_store(database_url) as store:
        events = store.run_events(run_id)
    if not events:
        _no_run(run_id)
    if as_json:
        for e in events:
            doc = {"position": e.position, "seq": e.seq, "type": e.type, "payload": e.payload}
            sys.stdout.write(dumps(doc, indent=None) + "\n")
        return
    rows = [
        (
            e.seq,
            e.position,
            e.type,
            e.plan_id,
            e.step_id,
            e.tool,
            e.recorded_at.isoformat(timespec="milliseconds"),
        )
        for e in events
    ]
    table(out, ("seq", "position", "type", "plan", "step", "tool", "recorded_at"), rows, run_id)


def _stored_origins(origin: str, database_url: str | None) -> tuple[str, ...]:
    """The forms *origin* is stored in: scrubbed (as ingest stores it now) and as given (a
    quarantine written before origins were scrubbed)."""
    from tracelake.admission import stored_origin
    from tracelake.scrub import get_scrubber, load_pseudonym_key

    scrubber = get_scrubber(load_pseudonym_key(_settings(database_url).database_url))
    return tuple(dict.fromkeys((stored_origin(scrubber, origin), origin)))


@quarantine_app.command("list")
def quarantine_list(
    reason: Annotated[str | None, typer.Option("--reason", help="Only this reason")] = None,
    origin: Annotated[str | None, typer.Option("--origin", help="Only this input")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most this many")] = 50,
    database_url: DatabaseUrl = None,
    as_json: AsJson = False,
) -> None:
    """Quarantined lines and events, newest first (`quarantine show ID` for one)."""
    from tracelake.listing import list_quarantine

    origins: tuple[str, ...] | None = None
    if origin is not None:
        if origin != "-" and Path(origin).exists():
            origin = str(Path(origin).resolve())  # stored by resolved path
        origins = _stored_origins(origin, database_url)
    with _checked_store(database_url) as store:
        rows = list_quarantine(store, reason=reason, origins=origins, limit=limit)
    if as_json:
        emit_json(rows)
        return
    shown = [
        (r["id"], r["reason"], r["origin"], r["line_no"], r["recorded_at"], r["detail"])
        for r in rows
    ]
    table(out, ("id", "reason", "origin", "line", "recorded_at", "detail"), shown)
    if not rows:
        say(err, "nothing is quarantined" + (" with that filter" if reason or origin else ""))


@quarantine_app.command("show")
def quarantine_show(
    item_id: Annotated[int, typer.Argument(metavar="ID", help="The id from `quarantine list`")],
    database_url: DatabaseUrl = None,
    as_json: AsJson = False,
) -> None:
    """One quarantined item: reason, origin, line, and its scrubbed preview (never raw)."""
    from tracelake.listing import get_quarantined

    with _checked_store(database_url) as store:
        found = get_quarantined(store, item_id)
    if found is None:
        say(err, f"no quarantined item {item_id}; `tracelake quarantine list` shows them")
        raise typer.Exit(1)
    if as_json:
        emit_json(found)
        return
    table(out, ("field", "value"), found.items())
