"""``tracelake export learning|parquet``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn

from tracelake.cli.common import DatabaseUrl, _checked_store, _progress, out
from tracelake.cli.root import export_app
from tracelake.console import emit_json, say, table


@export_app.command("learning")
def export_learning(
    collection: Annotated[str, typer.Option("--collection", help="The collection id")],
    policy: Annotated[Path | None, typer.Option("--policy", help="JSON policy file")] = None,
    database_url: DatabaseUrl = None,
) -> None:
    """graph-tool-call's learning block for one collection, as JSON on stdout."""
    from tracelake.pipelines.promotion_policy import load_policy
    from tracelake.promotion import review as sug

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
