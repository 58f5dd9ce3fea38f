"""``tracelake demo`` (real PlanRunner runs recorded by the sink) and ``spool status|drain``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tracelake.cli.common import AsJson, DatabaseUrl, _settings, out
from tracelake.cli.root import app, spool_app
from tracelake.console import display_url, emit_json, markup, say, table
from tracelake.errors import TracelakeError


@app.command()
def demo(
    database_url: DatabaseUrl = None,
    repeat: Annotated[int, typer.Option(help="How many times to run each demo plan")] = 2,
) -> None:
    """Run the demo plans through graph-tool-call's real PlanRunner, recorded by the sink."""
    import uuid
    from datetime import UTC, datetime

    try:  # tracelake.demo imports the runner only when a plan runs: ask for it here
        import graph_tool_call  # noqa: F401

        from tracelake.demo import run_scenario, scenarios
    except ImportError as exc:
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
    from tracelake.sink.drain import drain

    done = drain(_settings(database_url).database_url, spool_dir)  # bounded calls (watchdog)
    say(
        out,
        f"replayed {done.segments} segment(s): {done.appended} events appended, "
        f"{done.duplicates} already stored, {done.quarantined} quarantined",
    )
