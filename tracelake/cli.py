"""The ``tracelake`` command: parse, call, print. No logic lives here."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TransferSpeedColumn
from rich.table import Table

from tracelake import lifecycle_cli
from tracelake.config import Settings
from tracelake.errors import TracelakeError
from tracelake.serve_cli import follow_projections, serve

if TYPE_CHECKING:
    from tracelake.store import Store

app = typer.Typer(
    no_args_is_help=True, add_completion=False, help=__doc__, pretty_exceptions_show_locals=False
)
db_app = typer.Typer(no_args_is_help=True, help="Schema migrations.")
runs_app = typer.Typer(no_args_is_help=True, help="Look at stored runs.")
spool_app = typer.Typer(no_args_is_help=True, help="The sink's on-disk spool.")
app.add_typer(db_app, name="db")
app.add_typer(runs_app, name="runs")
app.add_typer(spool_app, name="spool")
suggestions_app = typer.Typer(no_args_is_help=True, help="Suggestions and operator decisions.")
export_app = typer.Typer(no_args_is_help=True, help="Exports: learning block, Parquet lake.")
app.add_typer(suggestions_app, name="suggestions")
app.add_typer(export_app, name="export")
lifecycle_cli.register(app, db_app)  # db roles|verify|partitions, erase, subjects, retention

out = Console()
err = Console(stderr=True)

DatabaseUrl = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        envvar="TRACELAKE_DATABASE_URL",
        help="sqlite:///path.db (default sqlite:///tracelake.db) or postgresql://...",
        show_default=False,
    ),
]


def _settings(database_url: str | None) -> Settings:
    return Settings.from_env(database_url=database_url)


@contextlib.contextmanager
def _checked_store(database_url: str | None) -> Iterator[Store]:
    """The store, its schema checked (an embedded SQLite one is migrated), disposed after."""
    from tracelake.store import open_store
    from tracelake.wiring import ensure_schema

    store = open_store(_settings(database_url).database_url)
    try:
        ensure_schema(store)
        yield store
    finally:
        store.dispose()


@db_app.command("upgrade")
def db_upgrade(database_url: DatabaseUrl = None) -> None:
    """Create or migrate the schema to the newest revision."""
    from tracelake.store import migrate, open_store

    store = open_store(_settings(database_url).database_url)
    try:
        migrate.upgrade(store.engine)
        revision = migrate.current_revision(store.engine)
    finally:
        store.dispose()
    out.print(f"schema at revision [bold]{revision}[/] ({store.dialect})")


@app.command()
def ingest(
    paths: Annotated[list[str], typer.Argument(help="JSONL or JSONL.gz files, or - for stdin")],
    database_url: DatabaseUrl = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON")] = False,
) -> None:
    """Store runner events (graph-tool-call or agentlane, JSONL, gzip detected) exactly once.

    Exits 1 when any line was quarantined (the rest is still stored), 2 on an error.
    """
    from tracelake.ingest import Ingestor, IngestReport, open_source
    from tracelake.wiring import open_components

    parts = open_components(_settings(database_url))
    ingestor = Ingestor(parts.store, parts.scrubber, parts.key, parts.settings)
    report = IngestReport()
    show = sys.stderr.isatty() and not as_json
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TransferSpeedColumn(),
        TextColumn("{task.fields[events]} events"),
        console=err,
        disable=not show,
    ) as progress:
        for path in paths:
            if path != "-" and not Path(path).is_file():
                raise TracelakeError(f"no such file: {path}")
            size = None if path == "-" or path.endswith(".gz") else Path(path).stat().st_size
            task = progress.add_task(path, total=size, events=0)

            def tick(line: Any, task: Any = task) -> None:
                progress.update(task, advance=line.size + 1, events=report.events)

            with open_source(path) as stream:
                ingestor.ingest(stream, origin=path, report=report, on_line=tick)
            progress.update(task, completed=size or 0, events=report.events)
    summary = report.as_dict()
    if as_json:
        out.print_json(json.dumps(summary))
    else:
        table = Table(title="ingest", show_header=False)
        for k, v in summary.items():
            if k != "quarantined_by_reason":
                table.add_row(k, str(v))
        for reason, n in report.quarantined.items():
            table.add_row(f"  quarantined: {reason}", str(n))
        out.print(table)
        if report.quarantined_total:
            err.print(
                f"[yellow]{report.quarantined_total} line(s) quarantined[/]; "
                "see `tracelake stats` (table quarantine holds reasons and line numbers)"
            )
    if report.quarantined_total:
        raise typer.Exit(1)


@app.command()
def stats(
    database_url: DatabaseUrl = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON")] = False,
) -> None:
    """Events by type, runs, quarantined lines."""

    with _checked_store(database_url) as store:
        data = store.reader.stats()
    if as_json:
        out.print_json(json.dumps(data))
        return
    out.print(
        f"[bold]{data['events']}[/] events in [bold]{data['runs']}[/] runs, "
        f"[bold]{data['quarantined']}[/] quarantined"
    )
    table = Table("type", "events")
    for etype, n in data["events_by_type"].items():
        table.add_row(etype, str(n))
    out.print(table)
    if data["quarantined_by_reason"]:
        q = Table("quarantine reason", "lines")
        for reason, n in data["quarantined_by_reason"].items():
            q.add_row(reason, str(n))
        out.print(q)


@runs_app.command("show")
def runs_show(
    run_id: str,
    database_url: DatabaseUrl = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print events as JSON lines")] = False,
) -> None:
    """A run's events in order."""

    with _checked_store(database_url) as store:
        events = store.reader.run_events(run_id)
    if not events:
        err.print(f"no run {run_id!r}; `tracelake stats` shows what is stored")
        raise typer.Exit(1)
    if as_json:
        for e in events:
            sys.stdout.write(
                json.dumps(
                    {"position": e.position, "seq": e.seq, "type": e.type, "payload": e.payload},
                    ensure_ascii=False,
                )
                + "\n"
            )
        return
    table = Table("seq", "position", "type", "plan", "step", "tool", "recorded_at", title=run_id)
    for e in events:
        table.add_row(
            str(e.seq),
            str(e.position),
            e.type,
            e.plan_id or "",
            e.step_id or "",
            e.tool or "",
            e.recorded_at.isoformat(timespec="milliseconds"),
        )
    out.print(table)


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
    from tracelake.store import open_store
    from tracelake.wiring import ensure_schema

    store = open_store(_settings(database_url).database_url)
    try:
        ensure_schema(store)
        engine = ProjectionEngine(store)
        result = engine.rebuild(name) if rebuild else engine.catch_up(name)
    finally:
        store.dispose()
    table = Table("projection", "checkpoint", title="rebuilt" if rebuild else "caught up")
    for pname, position in result.positions.items():
        table.add_row(pname, str(position))
    out.print(table)
    out.print(f"read [bold]{result.events}[/] events in {result.batches} batch(es)")


@app.command()
def explain(run_id: str, database_url: DatabaseUrl = None) -> None:
    """A run's timeline, where it failed, the likely cause and what to check."""
    from tracelake.projections.explain import explain as explain_run
    from tracelake.store import open_store
    from tracelake.wiring import ensure_schema

    store = open_store(_settings(database_url).database_url)
    try:
        ensure_schema(store)
        found = explain_run(store, run_id)
    finally:
        store.dispose()
    if found is None:
        err.print(f"no run {run_id!r}; `tracelake stats` shows what is stored")
        raise typer.Exit(1)
    run = found.run
    table = Table("seq", "type", "step", "tool", "detail", title=f"{run_id} ({run.source})")
    for s in found.timeline:
        table.add_row(str(s.seq), s.type, s.step_id or "", s.tool or "", s.note)
    out.print(table)
    out.print(
        f"status: [bold]{run.status}[/]; plans: {', '.join(run.plan_ids) or '-'}; "
        f"steps {run.step_count}, retries {run.retry_count}, skips {run.skip_count}, "
        f"repairs {run.repair_count}, coercions {run.coercion_count}, "
        f"binding repairs {run.binding_repair_count}"
    )
    if found.failed_at:
        reason = run.outcome.reason if run.outcome else "unknown"
        out.print(f"[red]failed at {found.failed_at}: reason {reason}[/]")
    for h in found.hints:
        out.print(f"- [bold]{h.symptom}[/]: likely {h.likely_cause}; check: {h.check}")


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
    table = Table("scenario", "run id", "events", "outcome", title="demo runs (real PlanRunner)")
    with sink:
        for n in range(repeat):
            for scenario in scenarios():
                run_id = f"ql-run-{stamp}-{uuid.uuid4().hex[:8]}"
                events = list(sink.tap(run_scenario(scenario), run_id=run_id))  # the integration
                if n == 0:
                    table.add_row(scenario.name, run_id, str(len(events)), events[-1].type)
    out.print(table)
    stats = sink.stats()
    out.print(
        f"recorded [bold]{stats['recorded']}[/] events, written {stats['written']}, "
        f"spooled {stats['spooled']}, quarantined {stats['quarantined']}, "
        f"dropped {stats['dropped']} -> {sink.store.url}"
    )
    out.print("next: [bold]tracelake runs show RUN_ID[/] or [bold]tracelake stats[/]")


SpoolDir = Annotated[
    Path,
    typer.Option("--dir", envvar="TRACELAKE_SPOOL_DIR", help="The spool folder"),
]


@spool_app.command("status")
def spool_status(
    spool_dir: SpoolDir = Path(".tracelake/spool"),
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON")] = False,
) -> None:
    """What the sink left waiting on disk (scrubbed batches not yet in the database)."""
    from tracelake.sink.spool import status

    data = status(spool_dir)
    if as_json:
        out.print_json(json.dumps(data))
        return
    out.print(
        f"{data['events']} events in {data['records']} batches, {data['segments']} segment(s), "
        f"{data['bytes']} bytes, {data['owners']} sink(s) of which {data['owners_alive']} alive "
        f"at {data['root']}"
    )


@spool_app.command("drain")
def spool_drain(
    database_url: DatabaseUrl = None, spool_dir: SpoolDir = Path(".tracelake/spool")
) -> None:
    """Replay spooled batches of sinks that are gone into the database (idempotent)."""
    from tracelake.sink.spool import Spool
    from tracelake.sink.writer import replay
    from tracelake.store import open_store
    from tracelake.wiring import ensure_schema

    store = open_store(_settings(database_url).database_url)
    ensure_schema(store)
    done = replay(Spool(spool_dir), store)
    out.print(
        f"replayed {done.segments} segment(s): {done.appended} events appended, "
        f"{done.duplicates} already stored, {done.quarantined} quarantined"
    )


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
    from pipelines import promote as job
    from pipelines.policy import load_policy
    from tracelake.store import open_store
    from tracelake.wiring import ensure_schema

    chosen = load_policy(policy)
    store = open_store(_settings(database_url).database_url)
    try:
        ensure_schema(store)
        report = job.run(store, chosen, collection=collection, dry_run=dry_run)
    finally:
        store.dispose()
    title = "would change (dry run)" if dry_run else "changed"
    table = Table("suggestion", "type", "collection", "target", "from", "to", "why", title=title)
    for d in report.decisions:
        doc = d.suggestion
        table.add_row(
            d.suggestion_id, doc["type"], doc["collection_id"], str(doc.get("target") or ""),
            d.from_status or "-", d.to_status, d.reason,
        )  # fmt: skip
    if report.decisions:
        out.print(table)
    changes = ", ".join(f"{k}: {v}" for k, v in report.changes.items()) or "nothing to change"
    out.print(f"{report.derived} suggestion(s) derived with {chosen.label}; {changes}")
    if not dry_run and report.decisions:
        out.print(
            f"appended {report.appended} decision event(s), {report.duplicates} already there"
        )
    if report.conflicts:
        err.print(
            f"[yellow]{report.conflicts} decision(s) lost a race with another decision[/]; "
            "run `tracelake promote` again"
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

    store = _open(database_url)
    try:
        sug.catch_up(store)
        docs = sug.list_suggestions(store, collection=collection, status=status)
    finally:
        store.dispose()
    if as_json:
        sys.stdout.write(json.dumps(docs, ensure_ascii=False, indent=2) + "\n")
        return
    table = Table("id", "type", "collection", "family", "target", "status", "obs", "failures")
    for d in docs:
        table.add_row(
            d["id"], d["type"], d["collection_id"], str(d.get("query_family") or ""),
            str(d.get("target") or ""), d["status"], str(d["observations"]),
            str(d["prior_failure_count"]),
        )  # fmt: skip
    out.print(table)


@suggestions_app.command("show")
def suggestions_show(
    suggestion_id: str,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON")] = False,
    database_url: DatabaseUrl = None,
) -> None:
    """One suggestion and its history (replayed from the log)."""
    from tracelake.promotion import suggestions as sug

    store = _open(database_url)
    try:
        sug.catch_up(store)
        doc = sug.get(store, suggestion_id).document
        events = sug.history(store, suggestion_id)
    finally:
        store.dispose()
    if as_json:
        sys.stdout.write(
            json.dumps({"suggestion": doc, "history": events}, ensure_ascii=False, indent=2) + "\n"
        )
        return
    out.print_json(json.dumps(doc, ensure_ascii=False))
    table = Table("seq", "recorded_at", "event", "from", "to", "by", "reason", title="history")
    for h in events:
        table.add_row(
            str(h["seq"]), h["recorded_at"], h["type"], str(h["from_status"] or "-"),
            str(h["to_status"]), str(h["decided_by"]), str(h["reason"]),
        )  # fmt: skip
    out.print(table)


@suggestions_app.command("approve")
def suggestions_approve(
    suggestion_id: str,
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
    suggestion_id: str,
    reason: Annotated[str, typer.Option("--reason", help="Why (scrubbed before storing)")],
    by: Annotated[str, typer.Option("--by", help="Who rejects")] = "operator",
    database_url: DatabaseUrl = None,
) -> None:
    """Reject a suggestion: the policy never promotes it afterwards."""
    _decide(database_url, suggestion_id, "rejected", by, reason)


def _open(database_url: str | None) -> Any:
    from tracelake.store import open_store
    from tracelake.wiring import ensure_schema

    store = open_store(_settings(database_url).database_url)
    ensure_schema(store)
    return store


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
    out.print(f"{suggestion_id}: [bold]{doc['status']}[/] (by {doc.get('decided_by')})")


@export_app.command("learning")
def export_learning(
    collection: Annotated[str, typer.Option("--collection", help="The collection id")],
    policy: Annotated[Path | None, typer.Option("--policy", help="JSON policy file")] = None,
    database_url: DatabaseUrl = None,
) -> None:
    """graph-tool-call's learning block for one collection, as JSON on stdout."""
    from pipelines.policy import load_policy
    from tracelake.promotion import suggestions as sug

    store = _open(database_url)
    try:
        sug.catch_up(store)
        block = sug.learning_block(store, collection, load_policy(policy).learning_block())
    finally:
        store.dispose()
    sys.stdout.write(json.dumps(block, ensure_ascii=False, indent=2) + "\n")


@export_app.command("parquet")
def export_parquet(
    directory: Annotated[Path, typer.Argument(help="The lake's root folder")],
    database_url: DatabaseUrl = None,
) -> None:
    """Scrubbed events and derived tables as Hive-partitioned Parquet (collection, date).

    Incremental: a watermark per table in DIR/_watermarks.json; a second run adds only what
    is new.
    """
    from pipelines.lake import export

    store = _open(database_url)
    try:
        report = export(store, directory)
    finally:
        store.dispose()
    table = Table("table", "new rows", "watermark", title=str(directory))
    for name, rows in report.rows.items():
        table.add_row(name, str(rows), str(report.watermarks.get(name, 0)))
    out.print(table)
    out.print(f"wrote {report.files} file(s)")


app.command()(serve)


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    import click

    try:
        rc = app(standalone_mode=False)
    except TracelakeError as exc:
        err.print(f"[red]error:[/] {exc}")
        sys.exit(2)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        err.print("aborted")
        sys.exit(130)
    except Exception as exc:  # a bug, not bad input: say so, exit 2, keep the trace on demand
        if os.environ.get("TRACELAKE_DEBUG"):
            raise
        err.print(
            f"[red]internal error:[/] {type(exc).__name__}; rerun with TRACELAKE_DEBUG=1 for the "
            "traceback and report it"
        )
        sys.exit(2)
    sys.exit(rc if isinstance(rc, int) else 0)
