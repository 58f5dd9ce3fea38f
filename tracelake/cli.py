"""The ``tracelake`` command: parse, call, print. No logic lives here.

Output goes through :mod:`tracelake.console` (plain when not a terminal, stored text made
inert); errors go through :func:`main`, the one boundary that turns them into a message that
says what to do and an exit code (0 ok, 1 something was quarantined or not found, 2 error).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TransferSpeedColumn,
)

from tracelake import __version__, lifecycle_cli
from tracelake.config import Settings
from tracelake.console import (
    display_url,
    dumps,
    emit_json,
    markup,
    new_console,
    say,
    table,
)
from tracelake.errors import TracelakeError
from tracelake.serve_cli import follow_projections, serve

if TYPE_CHECKING:
    from tracelake.store import Store

HELP = """Store AI-agent runner events in a scrubbed, append-only log and learn from them.

Start with `tracelake db upgrade`, `tracelake ingest FILE` (or `tracelake demo`), then
`tracelake project` and `tracelake runs list`. Exit codes: 0 ok; 1 something was quarantined
or not found; 2 an error (the message says what to do).
"""

app = typer.Typer(
    no_args_is_help=True, add_completion=False, help=HELP, pretty_exceptions_show_locals=False
)
db_app = typer.Typer(no_args_is_help=True, help="Schema migrations.")
runs_app = typer.Typer(no_args_is_help=True, help="Look at stored runs.")
quarantine_app = typer.Typer(no_args_is_help=True, help="Lines and events set aside, and why.")
spool_app = typer.Typer(no_args_is_help=True, help="The sink's on-disk spool.")
suggestions_app = typer.Typer(no_args_is_help=True, help="Suggestions and operator decisions.")
export_app = typer.Typer(no_args_is_help=True, help="Exports: learning block, Parquet lake.")

# Sub-apps: other modules register theirs here, one line each.
app.add_typer(db_app, name="db")
app.add_typer(runs_app, name="runs")
app.add_typer(quarantine_app, name="quarantine")
app.add_typer(spool_app, name="spool")
app.add_typer(suggestions_app, name="suggestions")
app.add_typer(export_app, name="export")
lifecycle_cli.register(app, db_app)  # db roles|verify|partitions, erase, subjects, retention

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


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"tracelake {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", help="Print the version and exit", callback=_version, is_eager=True
        ),
    ] = False,
) -> None:
    """Event-sourced persistence and trace learning for AI-agent runners."""


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


# ---------------------------------------------------------------------------- db


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


# ---------------------------------------------------------------------------- ingest


@app.command()
def ingest(
    paths: Annotated[
        list[str], typer.Argument(metavar="FILE", help="JSONL or JSONL.gz files, or - for stdin")
    ],
    database_url: DatabaseUrl = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON")] = False,
) -> None:
    """Store runner events (graph-tool-call or agentlane, JSONL, gzip detected) exactly once.

    Exits 1 when any line was quarantined (the rest is still stored), 2 on an error.
    """
    from tracelake.ingest import Ingestor, IngestReport, open_source
    from tracelake.wiring import open_components

    for path in paths:  # every input is checked before anything is stored
        _check_input(path)
    parts = open_components(_settings(database_url))
    ingestor = Ingestor(parts.store, parts.scrubber, parts.key, parts.settings)
    report = IngestReport()
    failure: BaseException | None = None
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TransferSpeedColumn(),
        TextColumn("{task.fields[events]} events"),
    )
    try:
        with _progress(*columns, transient=False) as progress:
            for path in paths:
                plain = path == "-" or _is_gzip(path)
                size = None if plain else Path(path).stat().st_size
                task = progress.add_task(markup(path), total=size, events=0)

                def tick(line: Any, task: Any = task) -> None:
                    progress.update(task, advance=line.size + 1, events=report.events)

                try:
                    stream = open_source(path, parts.settings.max_decompressed_bytes)
                except OSError as exc:
                    raise TracelakeError(f"cannot read {path}: {exc.strerror or exc}") from None
                with stream:
                    ingestor.ingest(stream, origin=path, report=report, on_line=tick)
                progress.update(task, completed=size or 0, events=report.events)
    except (TracelakeError, OSError) as exc:
        failure = exc  # the summary of what was stored still prints, then the error
    finally:
        parts.store.dispose()
    _ingest_summary(report, as_json)
    if failure is not None:
        raise failure
    if report.quarantined_total:
        raise typer.Exit(1)


def _check_input(path: str) -> None:
    if path == "-":
        return
    target = Path(path)
    if target.is_dir():
        raise TracelakeError(f"{path} is a directory; give the files in it (e.g. {path}/*.jsonl)")
    if not target.exists():
        raise TracelakeError(f"no such file: {path}")
    if not os.access(target, os.R_OK):
        raise TracelakeError(f"cannot read {path}: permission denied")


def _is_gzip(path: str) -> bool:
    with contextlib.suppress(OSError), Path(path).open("rb") as handle:
        return handle.read(2) == b"\x1f\x8b"
    return False


def _ingest_summary(report: Any, as_json: bool) -> None:
    summary = report.as_dict()
    if as_json:
        emit_json(summary)
        return
    rows = [(k, v) for k, v in summary.items() if k != "quarantined_by_reason"]
    rows += [(f"quarantined: {reason}", n) for reason, n in sorted(report.quarantined.items())]
    table(out, ("ingest", "count"), rows)
    if report.quarantined_total:
        say(
            err,
            f"[yellow]{report.quarantined_total} line(s) quarantined[/]; "
            "see `tracelake quarantine list` (reasons, origins and line numbers)",
        )


# ---------------------------------------------------------------------------- reading


@app.command()
def stats(database_url: DatabaseUrl = None, as_json: AsJson = False) -> None:
    """Events by type, runs, quarantined lines."""

    with _checked_store(database_url) as store:
        data = store.reader.stats()
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
        events = store.reader.run_events(run_id)
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


def _no_run(run_id: str) -> None:
    say(err, f"no run {markup(repr(run_id))}; `tracelake runs list` shows the stored runs")
    raise typer.Exit(1)


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

    if origin is not None and origin != "-" and Path(origin).exists():
        origin = str(Path(origin).resolve())  # stored by resolved path
    with _checked_store(database_url) as store:
        rows = list_quarantine(store, reason=reason, origin=origin, limit=limit)
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


# ---------------------------------------------------------------------------- projections


@app.command()
def project(
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Delete the rows and replay from position 0")
    ] = False,
    name: Annotated[
        list[str] | None, typer.Option("--name", help="Only this projection (repeatable)")
    ] = None,
    database_url: DatabaseUrl = None,
    follow: Annotated[bool, typer.Option("--follow", help="Keep catching up as events arrive")] = (
        False
    ),
) -> None:
    """Bring the projections (runs, learning records, failures, evidence) up to the log."""
    if follow:  # rebuild first if asked, then keep following (tracelake/serve_cli.py)
        return follow_projections(database_url, name, rebuild)
    from tracelake.projections import ProjectionEngine
    from tracelake.store.connection import retry_busy

    with _checked_store(database_url) as store:
        engine = ProjectionEngine(store)
        if rebuild:
            retry_busy(lambda: engine.reset(name))
        top = store.reader.max_position()
        events = batches = 0
        columns = (
            SpinnerColumn(),
            TextColumn("projecting"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        with _progress(*columns) as progress:
            low = min(engine.checkpoints().values(), default=0)
            task = progress.add_task("project", total=max(top - low, 0) or None)
            while True:
                step = retry_busy(lambda: engine.catch_up(name, max_batches=1))
                if step.batches == 0:
                    break
                events += step.events
                batches += step.batches
                done = min(step.positions.values(), default=top) - low
                progress.update(task, completed=max(done, 0))
        positions = engine.checkpoints()
    chosen = set(name) if name else set(positions)
    rows = [(p, positions[p]) for p in sorted(positions) if p in chosen]
    table(out, ("projection", "checkpoint"), rows, "rebuilt" if rebuild else "caught up")
    state = "rebuilt" if rebuild else "caught up"
    say(out, f"{state}: read [bold]{events}[/] events in {batches} batch(es)")


@app.command()
def explain(run_id: RunId, database_url: DatabaseUrl = None) -> None:
    """A run's timeline, where it failed, the likely cause and what to check."""
    from tracelake.projections.explain import explain as explain_run

    with _checked_store(database_url) as store:
        found = explain_run(store, run_id)
    if found is None:
        _no_run(run_id)
        return
    run = found.run
    rows = [(s.seq, s.type, s.step_id, s.tool, s.note) for s in found.timeline]
    say(out, f"run [bold]{markup(run_id)}[/] ({markup(run.source)})")
    table(out, ("seq", "type", "step", "tool", "detail"), rows)
    say(
        out,
        f"status: [bold]{markup(run.status)}[/]; plans: {markup(', '.join(run.plan_ids) or '-')}; "
        f"steps {run.step_count}, retries {run.retry_count}, skips {run.skip_count}, "
        f"repairs {run.repair_count}, coercions {run.coercion_count}, "
        f"binding repairs {run.binding_repair_count}",
    )
    if found.failed_at:
        reason = run.outcome.reason if run.outcome else "unknown"
        say(out, f"[red]failed at {markup(found.failed_at)}: reason {markup(reason)}[/]")
    for h in found.hints:
        say(
            out,
            f"- [bold]{markup(h.symptom)}[/]: likely {markup(h.likely_cause)}; "
            f"check: {markup(h.check)}",
        )


# ---------------------------------------------------------------------------- demo and sink


@app.command()
def demo(
    database_url: DatabaseUrl = None,
    repeat: Annotated[int, typer.Option(help="How many times to run each demo plan")] = 2,
) -> None:
    """Run the demo plans through graph-tool-call's real PlanRunner, recorded by the sink."""
    import uuid
    from datetime import UTC, datetime

    try:
        from tracelake.demo import run_scenario, scenarios
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise TracelakeError(
            f"the demo needs graph-tool-call: pip install 'tracelake[demo]' ({exc})"
        ) from None
    from tracelake.sink import TraceSink
    from tracelake.wiring import ensure_schema

    settings = _settings(database_url)
    sink = TraceSink(settings=settings)
    ensure_schema(sink.store)
    stamp = datetime.now(UTC).strftime("%Y%m%d")
    rows = []
    with sink:
        for n in range(repeat):
            for scenario in scenarios():
                run_id = f"ql-run-{stamp}-{uuid.uuid4().hex[:8]}"
                events = list(sink.tap(run_scenario(scenario), run_id=run_id))  # the integration
                if n == 0:
                    rows.append((scenario.name, run_id, len(events), events[-1].type))
    table(out, ("scenario", "run id", "events", "outcome"), rows, "demo runs (real PlanRunner)")
    stats = sink.stats()
    say(
        out,
        f"recorded [bold]{stats['recorded']}[/] events, written {stats['written']}, "
        f"spooled {stats['spooled']}, quarantined {stats['quarantined']}, "
        f"dropped {stats['dropped']} -> {markup(display_url(sink.store.url))}",
    )
    say(
        out,
        "next: [bold]tracelake project[/] (build the views), then [bold]tracelake runs list[/] "
        "or [bold]tracelake explain RUN_ID[/]",
    )


SpoolDir = Annotated[
    Path,
    typer.Option("--dir", envvar="TRACELAKE_SPOOL_DIR", help="The spool folder"),
]


@spool_app.command("status")
def spool_status(spool_dir: SpoolDir = Path(".tracelake/spool"), as_json: AsJson = False) -> None:
    """What the sink left waiting on disk (scrubbed batches not yet in the database)."""
    from tracelake.sink.spool import status

    data = status(spool_dir)
    if as_json:
        emit_json(data)
        return
    say(
        out,
        f"{data['events']} events in {data['records']} batches, {data['segments']} segment(s), "
        f"{data['bytes']} bytes, {data['owners']} sink(s) of which {data['owners_alive']} alive "
        f"at {markup(data['root'])}",
    )


@spool_app.command("drain")
def spool_drain(
    database_url: DatabaseUrl = None, spool_dir: SpoolDir = Path(".tracelake/spool")
) -> None:
    """Replay spooled batches of sinks that are gone into the database (idempotent)."""
    from tracelake.sink.spool import Spool
    from tracelake.sink.writer import replay

    with _checked_store(database_url) as store:
        done = replay(Spool(spool_dir), store)
    say(
        out,
        f"replayed {done.segments} segment(s): {done.appended} events appended, "
        f"{done.duplicates} already stored, {done.quarantined} quarantined",
    )


# ---------------------------------------------------------------------------- promotion


@app.command()
def promote(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would change; append nothing")
    ] = False,
    policy: Annotated[
        Path | None, typer.Option("--policy", help="JSON policy file (graph-tool-call keys)")
    ] = None,
    collection: Annotated[str | None, typer.Option("--collection", help="Only this one")] = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Derive suggestions from the learning records and apply the promotion policy.

    Every status change is appended to the log as an event; a second run changes nothing.
    """
    from tracelake.pipelines import promote as job
    from tracelake.pipelines.policy import load_policy

    chosen = load_policy(policy)
    with _checked_store(database_url) as store:
        report = job.run(store, chosen, collection=collection, dry_run=dry_run)
    title = "would change (dry run)" if dry_run else "changed"
    rows = [
        (
            d.suggestion_id, d.suggestion["type"], d.suggestion["collection_id"],
            d.suggestion.get("target"), d.from_status or "-", d.to_status, d.reason,
        )
        for d in report.decisions
    ]  # fmt: skip
    if rows:
        table(out, ("suggestion", "type", "collection", "target", "from", "to", "why"), rows, title)
    changes = ", ".join(f"{k}: {v}" for k, v in report.changes.items()) or "nothing to change"
    say(out, f"{report.derived} suggestion(s) derived with {markup(chosen.label)}; {changes}")
    if not dry_run and report.decisions:
        say(out, f"appended {report.appended} decision event(s), {report.duplicates} already there")
    if report.conflicts:
        say(
            err,
            f"[yellow]{report.conflicts} decision(s) lost a race with another decision[/]; "
            "run `tracelake promote` again",
        )
        raise typer.Exit(1)


@suggestions_app.command("list")
def suggestions_list(
    as_json: Annotated[bool, typer.Option("--json", help="A JSON array of suggestions")] = False,
    collection: Annotated[str | None, typer.Option("--collection")] = None,
    status: Annotated[
        str | None, typer.Option("--status", help="suggested|promotable|promoted|rejected")
    ] = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Suggestions in graph-tool-call's shape, newest evidence first."""
    from tracelake.promotion import suggestions as sug

    with _checked_store(database_url) as store:
        sug.catch_up(store)
        docs = sug.list_suggestions(store, collection=collection, status=status)
    if as_json:
        emit_json(docs)
        return
    rows = [
        (
            d["id"], d["type"], d["collection_id"], d.get("query_family"), d.get("target"),
            d["status"], d["observations"], d["prior_failure_count"],
        )
        for d in docs
    ]  # fmt: skip
    columns = ("id", "type", "collection", "family", "target", "status", "obs", "failures")
    table(out, columns, rows)


@suggestions_app.command("show")
def suggestions_show(
    suggestion_id: SuggestionId, as_json: AsJson = False, database_url: DatabaseUrl = None
) -> None:
    """One suggestion and its history (replayed from the log)."""
    from tracelake.promotion import suggestions as sug

    with _checked_store(database_url) as store:
        sug.catch_up(store)
        doc = sug.get(store, suggestion_id).document
        events = sug.history(store, suggestion_id)
    if as_json:
        emit_json({"suggestion": doc, "history": events})
        return
    emit_json(doc)
    rows = [
        (
            h["seq"], h["recorded_at"], h["type"], h["from_status"] or "-", h["to_status"],
            h["decided_by"], h["reason"],
        )
        for h in events
    ]  # fmt: skip
    table(out, ("seq", "recorded_at", "event", "from", "to", "by", "reason"), rows, "history")


@suggestions_app.command("approve")
def suggestions_approve(
    suggestion_id: SuggestionId,
    by: Annotated[str, typer.Option("--by", help="Who approves (scrubbed before storing)")] = (
        "operator"
    ),
    reason: Annotated[str, typer.Option("--reason")] = "approved by an operator",
    database_url: DatabaseUrl = None,
) -> None:
    """Promote a suggestion (an event in the log). A rejected one cannot be promoted."""
    _decide(database_url, suggestion_id, "promoted", by, reason)


@suggestions_app.command("reject")
def suggestions_reject(
    suggestion_id: SuggestionId,
    reason: Annotated[str, typer.Option("--reason", help="Why (scrubbed before storing)")],
    by: Annotated[str, typer.Option("--by", help="Who rejects")] = "operator",
    database_url: DatabaseUrl = None,
) -> None:
    """Reject a suggestion: the policy never promotes it afterwards."""
    _decide(database_url, suggestion_id, "rejected", by, reason)


def _decide(
    database_url: str | None, suggestion_id: str, status: str, by: str, reason: str
) -> None:
    from tracelake.promotion import suggestions as sug
    from tracelake.wiring import open_components

    parts = open_components(_settings(database_url))
    try:
        doc = sug.decide(parts.store, parts.scrubber, suggestion_id, status, by, reason)
    finally:
        parts.store.dispose()
    say(
        out,
        f"{markup(suggestion_id)}: [bold]{markup(doc['status'])}[/] "
        f"(by {markup(doc.get('decided_by'))})",
    )


# ---------------------------------------------------------------------------- exports


@export_app.command("learning")
def export_learning(
    collection: Annotated[str, typer.Option("--collection", help="The collection id")],
    policy: Annotated[Path | None, typer.Option("--policy", help="JSON policy file")] = None,
    database_url: DatabaseUrl = None,
) -> None:
    """graph-tool-call's learning block for one collection, as JSON on stdout."""
    from tracelake.pipelines.policy import load_policy
    from tracelake.promotion import suggestions as sug

    with _checked_store(database_url) as store:
        sug.catch_up(store)
        block = sug.learning_block(store, collection, load_policy(policy).learning_block())
    emit_json(block)


@export_app.command("parquet")
def export_parquet(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="The lake's root folder")],
    database_url: DatabaseUrl = None,
) -> None:
    """Scrubbed events and derived tables as Hive-partitioned Parquet (collection, date).

    Incremental: a watermark per table in DIR/_watermarks.json; a second run adds only what
    is new.
    """
    from tracelake.pipelines.lake import TABLES, export

    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with _checked_store(database_url) as store, _progress(*columns) as progress:
        task = progress.add_task("export", total=len(TABLES))

        def on_table(name: str, rows: int) -> None:
            progress.update(task, advance=1, description=f"exported {name} ({rows} rows)")

        report = export(store, directory, on_table=on_table)
    rows = [(n, r, report.watermarks.get(n, 0)) for n, r in report.rows.items()]
    table(out, ("table", "new rows", "watermark"), rows, str(directory))
    say(out, f"wrote {report.files} file(s)")


app.command()(serve)


# ---------------------------------------------------------------------------- the boundary


def _click_exceptions() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(usage errors, aborts) of every click typer may use: its vendored copy and click."""
    usage: list[type[BaseException]] = []
    aborts: list[type[BaseException]] = [typer.Abort, KeyboardInterrupt]
    for name in ("typer._click.exceptions", "click.exceptions"):
        with contextlib.suppress(ImportError):
            module = __import__(name, fromlist=["ClickException"])
            usage.append(module.ClickException)
            if hasattr(module, "Abort"):
                aborts.append(module.Abort)
    return tuple(usage), tuple(aborts)


def _fail(message: str, code: int = 2) -> None:
    say(err, f"[red]error:[/] {markup(message)}")
    sys.exit(code)


def main(argv: list[str] | None = None) -> None:
    """Run the command; every error leaves here as a message and an exit code."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if not sys.stdout.isatty():  # plain help when piped: no boxes
        app.rich_markup_mode = None
    usage_errors, aborts = _click_exceptions()
    try:
        rc = app(args=argv, standalone_mode=False, prog_name="tracelake")
    except TracelakeError as exc:
        _fail(str(exc))
    except usage_errors as exc:  # looks exactly like click's own: "Usage: ...\nError: ..."
        exc.show()  # type: ignore[attr-defined]
        sys.exit(exc.exit_code)  # type: ignore[attr-defined]
    except aborts:
        say(err, "aborted")
        sys.exit(130)
    except BrokenPipeError:  # `tracelake runs list | head`: the reader has what it wanted
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        _fail(f"cannot use{where}: {exc.strerror or exc}; check that it exists and is readable")
    except Exception as exc:  # a bug, not bad input: say so, exit 2, keep the trace on demand
        if os.environ.get("TRACELAKE_DEBUG"):
            raise
        _fail(
            f"internal error: {type(exc).__name__}; rerun with TRACELAKE_DEBUG=1 for the "
            "traceback and report it"
        )
    sys.exit(rc if isinstance(rc, int) else 0)
