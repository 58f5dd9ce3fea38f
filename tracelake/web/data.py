"""What the pages and the API show, read from the projections (no HTML here; JSON-ready dicts).

The runs behind a suggestion are matched as graph-tool-call's ``_record_matches_suggestion``
does: same collection and query fingerprint, and the suggestion's target is the run's selected
target or one of its planned tools.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from tracelake.projections.explain import explain
from tracelake.promotion import kinds
from tracelake.promotion import review as sug
from tracelake.store import Store
from tracelake.store.dialects import time_bucket
from tracelake.store.schema import (
    binding_repair_evidence,
    coercion_evidence,
    data_flow_evidence,
    events,
    failure_taxonomy,
    learning_records,
    projection_checkpoints,
    quarantine,
    suggestions,
)

RUNS_SCANNED = 500  # newest learning records of a family examined per suggestion
RECENT_FAILURES = 10
EVIDENCE_ROWS = 20
WINDOW_DAYS = 14


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


# -- the review queue ------------------------------------------------------------------------
def queue(store: Store, status: str | None, collection: str | None) -> dict[str, Any]:
    items = sug.list_suggestions(store, collection=collection, status=status)
    s = suggestions
    counts_q = sa.select(s.c.status, sa.func.count().label("n")).group_by(s.c.status)
    if collection is not None:
        counts_q = counts_q.where(s.c.collection_id == collection)
    with store.reading("read the review queue") as conn:
        counts = {r.status: int(r.n) for r in conn.execute(counts_q)}
        collections = [
            r[0]
            for r in conn.execute(
                sa.select(s.c.collection_id).distinct().order_by(s.c.collection_id)
            )
        ]
    by_status = {k: counts.get(k, 0) for k in sug.STATUSES}
    decided = by_status["promoted"] + by_status["rejected"]
    return {
        "items": items,
        "counts": by_status,
        "total": sum(by_status.values()),
        "decided": decided,
        "collections": collections,
        "status": status,
        "collection": collection,
    }


def next_item(items: list[dict[str, Any]], current: str) -> str | None:
    """The id after ``current`` in the queue (wrapping), for skip and after a decision."""
    ids = [str(d["id"]) for d in items]
    if not ids:
        return None
    if current not in ids:
        return ids[0]
    later = ids[ids.index(current) + 1 :]
    return later[0] if later else None


def evidence(store: Store, doc: dict[str, Any]) -> dict[str, Any]:
    collection = str(doc.get("collection_id") or "")
    fingerprint = doc.get("query_fingerprint")
    target = doc.get("target")
    ev = doc.get("evidence") if isinstance(doc.get("evidence"), dict) else {}
    assert isinstance(ev, dict)
    lr = learning_records
    query = (
        sa.select(lr)
        .where(sa.func.coalesce(lr.c.collection_id, "") == collection)
        .where(lr.c.query_fingerprint == fingerprint)
        .order_by(lr.c.finished_at.desc(), lr.c.run_id)
        .limit(RUNS_SCANNED)
    )
    with store.reading("read a suggestion's evidence") as conn:
        rows = [r for r in conn.execute(query) if _matches(r, target)]
        by_kind: dict[str, Any] = {key: [] for key, _ in _SHOWN.values()}
        shown = _shown_for(doc)
        if shown is not None:  # the rows of its kind's evidence table
            by_kind[shown[0]] = shown[1](conn, doc, collection, ev)
    runs = [
        {
            "run_id": r.run_id,
            "success": bool(r.success),
            "failure_stage": r.failure_stage,
            "failure_reason": r.failure_reason,
            "failed_step": r.failed_step,
            "failed_tool": r.failed_tool,
            "selected_target": r.selected_target,
            "finished_at": _iso(r.finished_at),
        }
        for r in rows
    ]
    return {
        "query_family": doc.get("query_family"),
        "query_fingerprint": fingerprint,
        "runs_examined": len(runs),
        "successes": sum(1 for r in runs if r["success"]),
        "failures": sum(1 for r in runs if not r["success"]),
        "recent_runs": runs[:EVIDENCE_ROWS],
        "recent_failures": [r for r in runs if not r["success"]][:RECENT_FAILURES],
        **by_kind,
    }


def _matches(record: Any, target: Any) -> bool:
    """graph-tool-call's ``_record_matches_suggestion``: the selected target or a planned tool."""
    return target is None or record.selected_target == target or target in (record.plan_tools or [])


EvidenceReader = Callable[[sa.Connection, dict[str, Any], str, dict[str, Any]], Any]
# Per evidence table (which kind reads which is ``promotion.kinds``'): the key of the page's
# evidence list and how the rows behind one suggestion are read.
_SHOWN: dict[str, tuple[str, EvidenceReader]] = {
    binding_repair_evidence.name: (
        "binding_repairs",
        lambda conn, doc, c, ev: _repairs(conn, doc, c, ev),
    ),
    coercion_evidence.name: ("coercions", lambda conn, doc, c, ev: _coercions(conn, c, ev)),
    data_flow_evidence.name: ("data_flows", lambda conn, doc, c, ev: _flows(conn, c, ev)),
}


def _shown_for(doc: dict[str, Any]) -> tuple[str, EvidenceReader] | None:
    """How the page shows the evidence rows of the document's kind (None: a kind counted from
    the learning records, or one no longer known)."""
    kind = kinds.info(str(doc.get("type")))
    return None if kind is None or kind.evidence is None else _SHOWN[kind.evidence.name]


def _repairs(conn: sa.Connection, doc: dict[str, Any], collection: str, ev: dict[str, Any]) -> Any:
    """Binding repairs behind the suggestion: field, recovered path, and before/after.

    graph-tool-call's ``binding.repaired`` names the field and the path it recovered; the stale
    binding itself is not in the event, so "before" is what the plan had: an unresolved
    ``${...}`` for that field. "after" is the recovered path and the (scrubbed) value."""
    b = binding_repair_evidence
    query = (
        sa.select(b)
        .where(sa.func.coalesce(b.c.collection_id, "") == collection)
        .where(b.c.tool == doc.get("target"))
        .where(b.c.field_name == ev.get("field_name"))
        .where(b.c.recovered_path == ev.get("recovered_path"))
        .order_by(b.c.position.desc())
        .limit(EVIDENCE_ROWS)
    )
    return [
        {
            "run_id": r.run_id,
            "step_id": r.step_id,
            "field_name": r.field_name,
            "recovered_path": r.recovered_path,
            "before": f"{r.field_name}: binding did not resolve",
            "after": f"{r.field_name} <- {r.recovered_path}",
            "value_preview": r.value_preview,
            "run_completed": r.run_completed,
            "recorded_at": _iso(r.recorded_at),
        }
        for r in conn.execute(query)
    ]


def _coercions(conn: sa.Connection, collection: str, ev: dict[str, Any]) -> Any:
    c = coercion_evidence
    query = (
        sa.select(c)
        .where(sa.func.coalesce(c.c.collection_id, "") == collection)
        .where(c.c.tool == ev.get("tool"))
        .where(c.c.field_name == ev.get("field_name"))
        .where(c.c.rule == "enum")
        .order_by(c.c.position.desc())
        .limit(EVIDENCE_ROWS)
    )
    return [
        {
            "run_id": r.run_id,
            "field_name": r.field_name,
            "before": r.from_value,
            "after": r.to_value,
            "recorded_at": _iso(r.recorded_at),
        }
        for r in conn.execute(query)
    ]


def _flows(conn: sa.Connection, collection: str, ev: dict[str, Any]) -> Any:
    d = data_flow_evidence
    edge = ev.get("data_flow") if isinstance(ev.get("data_flow"), dict) else {}
    assert isinstance(edge, dict)
    query = (
        sa.select(d)
        .where(sa.func.coalesce(d.c.collection_id, "") == collection)
        .where(d.c.to_field == edge.get("to_field"))
        .order_by(d.c.position.desc())
        .limit(EVIDENCE_ROWS)
    )
    return [
        {
            "run_id": r.run_id,
            "source": f"{r.source_tool}.{r.from_path}",
            "target": f"{r.target_tool}.{r.to_field}",
            "via": r.via,
        }
        for r in conn.execute(query)
    ]


# -- a run -----------------------------------------------------------------------------------
def run_view(store: Store, run_id: str) -> dict[str, Any] | None:
    """``tracelake explain``'s data as JSON: summary, timeline, where it failed, hints."""
    found = explain(store, run_id)
    if found is None:
        return None
    run = found.run
    outcome = run.outcome
    return {
        "run_id": run.run_id,
        "source": run.source,
        "collection_id": run.collection_id,
        "status": run.status,
        "finished": run.finished,
        "success": run.success,
        "plan_ids": list(run.plan_ids),
        "counts": {
            "steps": run.step_count,
            "retries": run.retry_count,
            "skips": run.skip_count,
            "repairs": run.repair_count,
            "coercions": run.coercion_count,
            "binding_repairs": run.binding_repair_count,
        },
        "failed_at": found.failed_at,
        "failure": None
        if outcome is None
        else {
            "reason": outcome.reason,
            "stage": outcome.stage,
            "retryable": outcome.retryable,
            "operator_action": outcome.operator_action,
            "http_status": outcome.http_status,
            "exception_type": outcome.exception_type,
            "error_kind": outcome.error_kind,
        },
        "timeline": [asdict(s) for s in found.timeline],
        "hints": [asdict(h) for h in found.hints],
    }


# -- the dashboard ---------------------------------------------------------------------------
def dashboard(store: Store) -> dict[str, Any]:
    return {
        "failures": failures_over_time(store),
        "latency": tool_latency(store),
        "funnel": funnel(store),
    }


def failures_over_time(store: Store) -> dict[str, Any]:
    """Failures per collection, reason and time bucket over the last ``WINDOW_DAYS`` days of
    data (hours when the data spans two days or less, minutes when three hours or less)."""
    f = failure_taxonomy
    with store.reading("read failures") as conn:
        latest = conn.execute(sa.select(sa.func.max(f.c.recorded_at))).scalar()
        if latest is None:
            return {"unit": "day", "buckets": [], "collections": {}}
        start = latest - timedelta(days=WINDOW_DAYS)
        first = conn.execute(
            sa.select(sa.func.min(f.c.recorded_at)).where(f.c.recorded_at >= start)
        ).scalar()
        span = latest - (first or latest)
        unit = (
            "minute"
            if span <= timedelta(hours=3)
            else "hour"
            if span <= timedelta(days=2)
            else "day"
        )
        bucket = time_bucket(conn, f.c.recorded_at, unit)
        rows = conn.execute(
            sa.select(
                sa.func.coalesce(f.c.collection_id, "").label("collection"),
                f.c.reason,
                bucket.label("bucket"),
                sa.func.count().label("n"),
            )
            .where(f.c.recorded_at >= start)
            .group_by(sa.text("1"), f.c.reason, sa.text("3"))
        ).all()
    buckets = sorted({str(r.bucket) for r in rows})
    out: dict[str, dict[str, list[int]]] = {}
    for r in rows:
        series = out.setdefault(r.collection, {}).setdefault(r.reason, [0] * len(buckets))
        series[buckets.index(str(r.bucket))] += int(r.n)
    return {"unit": unit, "buckets": buckets, "collections": out}


def tool_latency(store: Store) -> list[dict[str, Any]]:
    with store.reading("read tool latency") as conn:
        rows = conn.execute(
            sa.text(
                "SELECT tool, calls, failures, timed_calls, p50_ms, p95_ms, p99_ms "
                "FROM v_tool_latency ORDER BY p95_ms DESC, tool"
            )
        ).all()
    return [dict(r._mapping) for r in rows]


def funnel(store: Store) -> dict[str, int]:
    """derived -> promotable (or decided) -> promoted; rejected beside."""
    s = suggestions
    with store.reading("read suggestions") as conn:
        counts = {
            r.status: int(r.n)
            for r in conn.execute(
                sa.select(s.c.status, sa.func.count().label("n")).group_by(s.c.status)
            )
        }
    return {
        "derived": sum(counts.values()),
        "promotable": counts.get("promotable", 0) + counts.get("promoted", 0),
        "promoted": counts.get("promoted", 0),
        "rejected": counts.get("rejected", 0),
    }


# -- /metrics --------------------------------------------------------------------------------
def health(store: Store, projection_names: list[str]) -> dict[str, Any]:
    with store.reading("read metrics") as conn:
        stored = int(conn.execute(sa.select(sa.func.count()).select_from(events)).scalar() or 0)
        head = int(conn.execute(sa.select(sa.func.max(events.c.position))).scalar() or 0)
        quarantined = {
            r.reason: int(r.n)
            for r in conn.execute(
                sa.select(quarantine.c.reason, sa.func.count().label("n")).group_by(
                    quarantine.c.reason
                )
            )
        }
        checkpoints = {
            r.name: int(r.position)
            for r in conn.execute(
                sa.select(projection_checkpoints.c.name, projection_checkpoints.c.position)
            )
        }
        by_status = {
            r.status: int(r.n)
            for r in conn.execute(
                sa.select(suggestions.c.status, sa.func.count().label("n")).group_by(
                    suggestions.c.status
                )
            )
        }
        positions = {n: checkpoints.get(n, 0) for n in projection_names}
        behind = {  # events after each distinct checkpoint (positions may have gaps)
            p: int(
                conn.execute(
                    sa.select(sa.func.count()).select_from(events).where(events.c.position > p)
                ).scalar()
                or 0
            )
            for p in set(positions.values())
        }
    return {
        "events": stored,
        "head_position": head,
        "quarantined": quarantined,
        "checkpoints": positions,
        "lag": {n: behind[p] for n, p in positions.items()},
        "suggestions": {k: by_status.get(k, 0) for k in sug.STATUSES},
    }
