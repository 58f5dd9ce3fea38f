"""The operator's view: list, show (with history), approve, reject; graph-tool-call's learning
block for one collection (``tracelake export learning``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from tracelake.errors import TracelakeError
from tracelake.projections import ProjectionEngine
from tracelake.promotion.decisions import (
    EVENT_TYPES,
    append_decisions,
    operator_decision,
    run_id_of,
)
from tracelake.store import Store
from tracelake.store.schema import learning_records, suggestions

if TYPE_CHECKING:
    from tracelake.scrub import Scrubber

STATUSES = ("suggested", "promotable", "promoted", "rejected")
# graph-tool-call's defaults (``_promotion_policy``), used when no policy file is given.
DEFAULT_POLICY = {
    "min_success_observations": 2,
    "max_recent_failure_ratio": 0.5,
    "max_attempts": 50,
    "max_suggestions": 100,
}


class SuggestionNotFoundError(TracelakeError):
    """No suggestion with that id."""


class DecisionRefusedError(TracelakeError):
    """The decision does not apply to the suggestion's current status."""


def catch_up(store: Store) -> None:
    """Bring the suggestions projection up to the log (decisions read the current state)."""
    ProjectionEngine(store).catch_up(["suggestions"])


def list_suggestions(
    store: Store, collection: str | None = None, status: str | None = None
) -> list[dict[str, Any]]:
    """Suggestion objects in graph-tool-call's shape, newest evidence first."""
    if status is not None and status not in STATUSES:
        raise TracelakeError(f"no status {status!r}; use one of {', '.join(STATUSES)}")
    query = sa.select(suggestions.c.document)
    if collection is not None:
        query = query.where(suggestions.c.collection_id == collection)
    if status is not None:
        query = query.where(suggestions.c.status == status)
    query = query.order_by(suggestions.c.collection_id, suggestions.c.id)
    with store.reading("read suggestions") as conn:
        docs = [dict(r.document) for r in conn.execute(query)]
    return sorted(docs, key=lambda d: str(d.get("last_seen_at") or ""), reverse=True)


@dataclass(frozen=True, slots=True)
class Current:
    document: dict[str, Any]
    version: int


def get(store: Store, suggestion_id: str) -> Current:
    query = sa.select(suggestions.c.document, suggestions.c.version).where(
        suggestions.c.id == suggestion_id
    )
    with store.reading("read a suggestion") as conn:
        row = conn.execute(query).first()
    if row is None:
        raise SuggestionNotFoundError(
            f"no suggestion {suggestion_id!r}; `tracelake suggestions list` shows the ids "
            "(run `tracelake promote` first if the list is empty)"
        )
    return Current(dict(row.document), int(row.version))


def history(store: Store, suggestion_id: str) -> list[dict[str, Any]]:
    """Every decision event of a suggestion, in order, replayed from the log."""
    out = []
    for e in store.run_events(run_id_of(suggestion_id)):
        if e.type not in EVENT_TYPES:
            continue
        p = e.payload
        out.append(
            {
                "seq": e.seq,
                "position": e.position,
                "recorded_at": e.recorded_at.isoformat(),
                "type": e.type,
                "from_status": p.get("from_status"),
                "to_status": p.get("to_status"),
                "actor": p.get("actor"),
                "decided_by": p.get("decided_by"),
                "reason": p.get("reason"),
                "observations": (p.get("suggestion") or {}).get("observations"),
            }
        )
    return out


def decide(
    store: Store, scrubber: Scrubber, suggestion_id: str, to_status: str, by: str, reason: str
) -> dict[str, Any]:
    """Approve (``promoted``) or reject (``rejected``) a suggestion; returns its new state.

    Idempotent: deciding what is already decided changes nothing. A rejected suggestion is
    never promoted (neither by the policy nor by approve)."""
    catch_up(store)
    current = get(store, suggestion_id)
    status = current.document.get("status")
    if status == to_status:
        return current.document
    if status == "rejected":
        raise DecisionRefusedError(
            f"suggestion {suggestion_id} was rejected ({current.document.get('decision_reason')}); "
            "a rejected suggestion is never promoted"
        )
    decision = operator_decision(scrubber, current.document, current.version, to_status, by, reason)
    result = append_decisions(store, [decision])
    if result.conflicts:
        raise DecisionRefusedError(
            f"suggestion {suggestion_id} changed while deciding (another decision took version "
            f"{decision.version}); look at `tracelake suggestions show {suggestion_id}` and retry"
        )
    catch_up(store)
    return get(store, suggestion_id).document


def learning_block(
    store: Store, collection: str, policy: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``{"learning": {"suggestions", "promotion_policy", "summary"}}`` for one collection,
    as graph-tool-call stores it per collection (``summarize_learning_state`` counts)."""
    block_policy = {**DEFAULT_POLICY, **(policy or {})}
    docs = list_suggestions(store, collection=collection)
    # Capped like graph-tool-call's merge, but decided suggestions are kept first: its order
    # (status *text* descending) would cut the promoted ones, the only ones that act in
    # mode="promoted", before any suggested one.
    docs.sort(key=lambda d: str(d.get("last_seen_at")), reverse=True)
    docs.sort(key=lambda d: _KEEP_FIRST.get(str(d.get("status")), len(_KEEP_FIRST)))
    docs = docs[: int(block_policy["max_suggestions"])]
    attempts = recent_attempts(store, collection, int(block_policy["max_attempts"]))
    successes = sum(1 for a in attempts if a["success"])
    summary = {  # what graph-tool-call's summarize_learning_state computes from this block
        "attempt_count": len(attempts),
        "success_count": successes,
        "failure_count": len(attempts) - successes,
        "success_rate": round(successes / len(attempts), 4) if attempts else None,
        "suggestion_count": len(docs),
        **{f"{s}_count": sum(1 for d in docs if d.get("status") == s) for s in STATUSES},
    }
    return {
        "learning": {
            "suggestions": docs,
            "attempts": attempts,
            "promotion_policy": block_policy,
            "summary": summary,
        }
    }


_KEEP_FIRST = {"promoted": 0, "promotable": 1, "suggested": 2, "rejected": 3}


def recent_attempts(store: Store, collection: str, limit: int) -> list[dict[str, Any]]:
    """The collection's latest learning records in graph-tool-call's attempt shape
    (``build_trace_learning_record``), newest first: its history for merges and summaries."""
    lr = learning_records
    query = (
        sa.select(lr)
        .where(sa.func.coalesce(lr.c.collection_id, "") == collection)
        .order_by(lr.c.finished_at.desc(), lr.c.run_id)
        .limit(limit)
    )
    with store.reading("read learning records") as conn:
        rows = conn.execute(query).all()
    return [
        {
            "query": r.goal,
            "query_fingerprint": r.query_fingerprint,
            "query_family": r.query_family,
            "collection_id": r.collection_id or "",
            "attempt_id": r.run_id,
            "selected_target": r.selected_target or "",
            "plan_tools": list(r.plan_tools or []),
            "failure_reason": r.failure_reason,
            "success": bool(r.success),
            "latency_ms": int(r.total_duration_ms) if r.total_duration_ms is not None else None,
            "created_at": r.finished_at.isoformat() if r.finished_at else None,
        }
        for r in rows
    ]
