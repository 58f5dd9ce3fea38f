"""``tracelake project`` (and ``--follow``) and ``tracelake explain RUN_ID``."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from tracelake.cli.common import DatabaseUrl, RunId, _checked_store, _no_run, _progress, out
from tracelake.cli.root import app
from tracelake.cli.serve_commands import follow_projections
from tracelake.console import markup, say, table


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
    if follow:  # rebuild first if asked, then keep following (tracelake/cli/serve_commands.py)
        return follow_projections(database_url, name, rebuild)
    from tracelake.projections import ProjectionEngine
    from tracelake.store.connection import retry_busy

    with _checked_store(database_url) as store:
        engine = ProjectionEngine(store)
        if rebuild:
            retry_busy(lambda: engine.reset(name))
        top = store.max_position()
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
