"""``tracelake promote`` and ``suggestions list|show|approve|reject``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tracelake.cli.common import (
    AsJson,
    DatabaseUrl,
    SuggestionId,
    _checked_store,
    _settings,
    err,
    out,
)
from tracelake.cli.root import app, suggestions_app
from tracelake.console import emit_json, markup, say, table


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
    from tracelake.pipelines.promotion_policy import load_policy

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
    from tracelake.promotion import review as sug

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
    from tracelake.promotion import review as sug

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
    from tracelake.promotion import review as sug
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
