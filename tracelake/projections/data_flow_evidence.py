"""``data_flow_evidence``: observed field flow between the tools of a graph-tool-call run.

For each step's resolved argument we look for the same value in the (scrubbed) output preview
of an earlier completed step of the same plan, nearest step first: a match is evidence that
``source_tool.<from_path>`` flows into ``target_tool.<to_field>`` (``via`` = ``value``). A
``binding.repaired`` names its source directly (``recovered_path`` = ``s1.result.order.x``;
``via`` = ``repair``) and wins over a value match for the same field. Pseudonyms are keyed and
deterministic, so a scrubbed value still equals itself across steps.

Only values specific enough to mean something count (strings of 4+ characters that are not
redaction markers, integers of 4+ digits): ``page=2`` matching ``total=2`` is no data flow.
The rows of a run are derived once it has finished (from its stored events, read here) and
replaced whenever the run is folded again, like every projection (rebuild == incremental).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from tracelake.projections.engine import Projection, delete_runs, insert
from tracelake.projections.fold import RunFold
from tracelake.store.schema import data_flow_evidence, events

STEP_TYPES = ("step.started", "step.completed", "binding.repaired")


def _specific(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) >= 1000
    return isinstance(value, str) and len(value) >= 4 and not value.startswith("[")


def _paths(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Scalar leaves of an output preview with their dotted paths (``orders[0].orderNo``)."""
    if isinstance(value, dict):
        if "_preview" in value and prefix == "":
            yield from _paths(value["_preview"])
            return
        for k, v in value.items():
            yield from _paths(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, f"{prefix}[{i}]")
    elif _specific(value):
        yield prefix, value


def flows(run: RunFold, run_events: list[Any]) -> list[dict[str, Any]]:
    """The data-flow rows of one finished run, from its events in position order."""
    outputs: dict[tuple[str | None, str], tuple[str, dict[Any, str]]] = {}  # step -> tool, values
    order: list[tuple[str | None, str]] = []
    repaired: dict[tuple[str | None, str, str], str] = {}  # (plan, step, field) -> path
    rows: dict[tuple[int, str], dict[str, Any]] = {}
    for e in run_events:
        p = e.payload
        plan, step = p.get("plan_id"), p.get("step_id")
        if not isinstance(step, str):
            continue
        if e.type == "binding.repaired":
            field, path = p.get("field_name"), p.get("recovered_path")
            if isinstance(field, str) and isinstance(path, str) and "." in path:
                repaired[(plan, step, field)] = path
        elif e.type == "step.completed":
            tool = p.get("tool") or run.tool_of(plan, step)
            if isinstance(tool, str):
                values: dict[Any, str] = {}
                for path, value in _paths(p.get("output_preview")):
                    values.setdefault(value, path)
                outputs[(plan, step)] = (tool, values)
                order.append((plan, step))
        elif e.type == "step.started" and isinstance(p.get("tool"), str):
            args = p.get("args_resolved")
            for field, value in args.items() if isinstance(args, dict) else ():
                row = _repaired(repaired.get((plan, step, field)), plan, outputs)
                if row is None and _specific(value):
                    row = _matched(value, plan, order, outputs)
                if row is not None:
                    rows[(e.position, field)] = {
                        "position": e.position,
                        "to_field": field,
                        "run_id": run.run_id,
                        "collection_id": run.collection_id,
                        **row,
                        "target_step": step,
                        "target_tool": p["tool"],
                        "recorded_at": e.recorded_at,
                    }
    return list(rows.values())


def _repaired(
    path: str | None, plan: Any, outputs: dict[tuple[str | None, str], tuple[str, dict[Any, str]]]
) -> dict[str, Any] | None:
    if path is None:
        return None
    source_step, _, rest = path.partition(".")
    found = outputs.get((plan, source_step))
    if found is None:
        return None
    return {"source_step": source_step, "source_tool": found[0], "from_path": rest, "via": "repair"}


def _matched(
    value: Any,
    plan: Any,
    order: list[tuple[str | None, str]],
    outputs: dict[tuple[str | None, str], tuple[str, dict[Any, str]]],
) -> dict[str, Any] | None:
    for key in reversed(order):  # the nearest earlier step of the same plan first
        if key[0] != plan:
            continue
        tool, values = outputs[key]
        path = values.get(value)
        if path is not None:
            return {"source_step": key[1], "source_tool": tool, "from_path": path, "via": "value"}
    return None


class DataFlowEvidenceProjection(Projection):
    name = "data_flow_evidence"
    tables: ClassVar[tuple[sa.Table, ...]] = (data_flow_evidence,)

    def apply(self, conn: Connection, runs: Sequence[RunFold]) -> None:
        delete_runs(conn, data_flow_evidence, [r.run_id for r in runs])
        done = {r.run_id: r for r in runs if r.finished and r.source == "graph_tool_call"}
        if not done:
            return
        by_run: dict[str, list[Any]] = {rid: [] for rid in done}
        ids = sorted(done)
        for start in range(0, len(ids), 400):
            chunk = ids[start : start + 400]
            query = (
                sa.select(
                    events.c.position,
                    events.c.run_id,
                    events.c.type,
                    events.c.payload,
                    events.c.recorded_at,
                )
                .where(events.c.run_id.in_(chunk), events.c.type.in_(STEP_TYPES))
                .order_by(events.c.position)
            )
            for row in conn.execute(query):
                if row.position <= done[row.run_id].last_event.position:
                    by_run[row.run_id].append(row)
        insert(conn, data_flow_evidence, [f for rid in ids for f in flows(done[rid], by_run[rid])])
