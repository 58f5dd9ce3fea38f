"""The promotion job: learning records and evidence -> suggestions -> policy -> decisions.

``derive`` folds chunks of records through the pure transforms (memory bounded by the number
of suggestions and the attempt window, not by the records); ``plan`` compares the result with
the current suggestions and returns the decisions (events) that would change them; ``run``
is what ``tracelake promote`` calls: catch the projections up, derive, plan, and unless it is a
dry run append the decisions and project them. A second run finds nothing to change.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import polars as pl

from tracelake.projections import ProjectionEngine
from tracelake.promotion.decisions import Decision, append_decisions
from tracelake.store import Store

from . import derive as sg
from . import io
from . import suggestion_kinds as kinds
from .promotion_policy import Policy, apply_policy, next_status

EVIDENCE_KINDS = kinds.EVIDENCE_KINDS
DECISION_KEYS = ("status", "decided_by", "decision_reason")


def _merge(state: pl.DataFrame | None, part: pl.LazyFrame) -> pl.LazyFrame:
    return part if state is None else pl.concat([state.lazy(), part], how="diagonal_relaxed")


def derive(
    records: Iterable[pl.DataFrame],
    evidence: dict[str, Iterable[pl.DataFrame]],
    policy: Policy,
) -> pl.DataFrame:
    """Suggestions with ``policy_status``, one row each, from chunks of records/evidence."""
    window = fails = None
    counted: dict[str, pl.DataFrame | None] = dict.fromkeys(kinds.RECORD_KINDS)
    for chunk in records:
        rec = sg.normalize_records(chunk.lazy())
        window = sg.recent_window(_merge(window, sg.attempts(rec)), policy.max_attempts).collect()
        for name, state in counted.items():
            counted[name] = _count_records(name, state, rec)
        fails = (
            _merge(fails, sg.family_failures(rec))
            .group_by(sg.SCOPE)
            .agg(pl.col("prior_failure_count").sum())
            .collect()
        )
    if window is None or fails is None:
        return pl.DataFrame()
    frames = [
        sg.finish(state.lazy(), name, kinds.kind(name).fill)
        for name, state in counted.items()
        if state is not None
    ]
    for name in EVIDENCE_KINDS:
        frames.extend(_count_evidence(name, evidence.get(name, ())))
    found = pl.concat(frames, how="diagonal_relaxed").join(fails.lazy(), on=sg.SCOPE, how="left")
    stats = sg.window_stats(window.lazy())
    out = apply_policy(found, stats, policy).with_columns(
        pl.col("prior_failure_count").fill_null(0)
    )
    return out.sort("id").collect()


def _count_records(name: str, state: pl.DataFrame | None, rec: pl.LazyFrame) -> pl.DataFrame:
    """One chunk of records folded into a record kind's counts (its transform, its keys)."""
    source = kinds.kind(name).records
    assert source is not None
    keys = [*sg.SCOPE, *source.keys]
    merged = _merge(state, source.counts(rec))
    return sg.reduce_counts(merged, keys, ["query_family"], source.same).collect()


def _count_evidence(name: str, chunks: Iterable[pl.DataFrame]) -> list[pl.LazyFrame]:
    """An evidence kind's chunks folded into its suggestions (none when it has no rows)."""
    source = kinds.evidence_source(name)
    state: pl.DataFrame | None = None
    for chunk in chunks:
        part = sg.evidence_counts(chunk.lazy(), source.key, source.detail, source.target)
        keys, detail = [*sg.SCOPE, "key"], [c for c in part.collect_schema() if c not in _SUMS]
        state = sg.reduce_counts(
            _merge(state, part), keys, [c for c in detail if c not in keys]
        ).collect()
    return [] if state is None else [sg.finish(state.lazy(), name)]


_SUMS = {"observations", "failures", "created_at", "last_seen_at"}


def _iso(value: Any) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else None


def _json(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return text


def documents(derived: pl.DataFrame, policy: Policy) -> Iterator[dict[str, Any]]:
    """Suggestion objects in graph-tool-call's shape (one Python dict per suggestion)."""
    for r in derived.iter_rows(named=True):
        kind, target = r["type"], r["target"]
        recent = {
            "window": policy.max_attempts,
            "successes": int(r["recent_successes"]),
            "failures": int(r["recent_failures"]),
        }
        doc: dict[str, Any] = {
            "id": r["id"],
            "type": kind,
            "collection_id": r["collection_id"],
            "query_family": r["query_family"],
            "query_fingerprint": r["query_fingerprint"],
            "target": target,
            "status": r["policy_status"],
            "observations": int(r["observations"]),
            "prior_failure_count": int(r["prior_failure_count"]),
            "created_at": _iso(r["created_at"]),
            "last_seen_at": _iso(r["last_seen_at"]),
            "evidence_sources": ["run"],
        }
        fields, evidence = kinds.kind(kind).export(r)
        doc.update(fields)
        doc["evidence"] = {**evidence, "recent_attempts": recent}
        yield doc


def _reason(doc: dict[str, Any], policy: Policy) -> str:
    recent = doc["evidence"]["recent_attempts"]
    total = recent["successes"] + recent["failures"]
    return (
        f"{doc['observations']} successful run(s) (needs {policy.min_success_observations}); "
        f"{recent['failures']} of the last {total} attempt(s) failed "
        f"(allowed ratio {policy.max_recent_failure_ratio})"
    )


def plan(derived: pl.DataFrame, current: pl.DataFrame, policy: Policy) -> list[Decision]:
    """The decisions that bring the stored suggestions to what the evidence and policy say."""
    known = {r["id"]: r for r in current.iter_rows(named=True)}
    out: list[Decision] = []
    for doc in documents(derived, policy):
        cur = known.get(doc["id"])
        before: dict[str, Any] = _json(cur["document"]) if cur else {}
        old = cur["status"] if cur else None
        new = next_status(old, doc["status"], policy)
        version = int(cur["version"]) if cur else 0
        if old is not None and new == old:
            unchanged = {k: v for k, v in before.items() if k not in DECISION_KEYS}
            if unchanged == {k: v for k, v in doc.items() if k != "status"}:
                continue
            snapshot = {**doc, **{k: before.get(k) for k in DECISION_KEYS}}
            reason = "new evidence"
        else:
            reason = _reason(doc, policy)
            snapshot = {**doc, "status": new, "decided_by": policy.label, "decision_reason": reason}
        out.append(
            Decision(
                suggestion=snapshot,
                from_status=old,
                to_status=new,
                decided_by=policy.label,
                actor="policy",
                reason=reason,
                version=version + 1,
                policy=policy.as_dict(),
            )
        )
    return out


@dataclass
class Report:
    derived: int = 0
    decisions: list[Decision] = field(default_factory=list)
    appended: int = 0
    duplicates: int = 0
    conflicts: int = 0

    @property
    def changes(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for d in self.decisions:
            key = f"{d.from_status or 'new'} -> {d.to_status}"
            counts[key] = counts.get(key, 0) + 1
        return dict(sorted(counts.items()))


def run(
    store: Store, policy: Policy, collection: str | None = None, dry_run: bool = False
) -> Report:
    engine = ProjectionEngine(store)
    engine.catch_up()  # derived tables only; a dry run appends nothing to the log
    derived = derive(
        io.read_learning_records(store, collection),
        {k: io.read_evidence(store, k, collection) for k in EVIDENCE_KINDS},
        policy,
    )
    current = io.read_current_suggestions(store, collection)
    report = Report(derived=derived.height)
    report.decisions = plan(derived, current, policy) if derived.height else []
    if dry_run or not report.decisions:
        return report
    result = append_decisions(store, report.decisions)
    report.appended, report.duplicates = result.appended, result.duplicates
    report.conflicts = len(result.conflicts)
    engine.catch_up(["suggestions"])
    return report
