"""graph-tool-call data-flow observation, one event at a time (behind ``data_flow_evidence``).

For each step's resolved argument we look for the same value in the (scrubbed) output preview
of an earlier completed step of the same plan, nearest step first: a match is evidence that
``source_tool.<from_path>`` flows into ``target_tool.<to_field>`` (``via`` = ``value``). A
``binding.repaired`` names its source directly (``recovered_path`` = ``s1.result.order.x``;
``via`` = ``repair``) and wins over a value match for the same field. Pseudonyms are keyed and
deterministic, so a scrubbed value still equals itself across steps.

Only values specific enough to mean something count (strings of 4+ characters that are not
redaction markers, integers of 4+ digits): ``page=2`` matching ``total=2`` is no data flow.

The state is an index per plan from value to the latest completed step that produced it (so a
lookup costs O(1), not a scan of every earlier step), the tools of completed steps, and the
repairs seen; a row is emitted when its ``step.started`` is folded and depends only on the
events before it. The adapter's handlers for those three event types call the method of the same
name.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tracelake.runners.run_model import Event, RunFold

Source = tuple[str, str, str]  # source step, source tool, from path


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


@dataclass(slots=True)
class DataFlowState:
    by_value: dict[Any, dict[Any, Source]] = field(default_factory=dict)  # plan -> value -> src
    done: dict[tuple[Any, str], str] = field(default_factory=dict)  # (plan, step) -> tool
    repaired: dict[tuple[Any, str, str], str] = field(default_factory=dict)  # -> path

    def binding_repaired(self, e: Event) -> None:
        """A repair names its source directly (``recovered_path`` = ``s1.result.x``)."""
        p = e.payload
        step, name, path = p.get("step_id"), p.get("field_name"), p.get("recovered_path")
        if not (isinstance(step, str) and isinstance(name, str) and isinstance(path, str)):
            return
        if "." in path:
            self.repaired[(p.get("plan_id"), step, name)] = path

    def step_completed(self, run: RunFold, e: Event) -> None:
        """Index the values of the step's output preview by value."""
        p = e.payload
        plan, step = p.get("plan_id"), p.get("step_id")
        tool = p.get("tool") or run.tool_of(plan, step)
        if not isinstance(step, str) or not isinstance(tool, str):
            return
        values: dict[Any, str] = {}
        for path, value in _paths(p.get("output_preview")):
            values.setdefault(value, path)  # the first path within one output
        index = self.by_value.setdefault(plan, {})
        for value, path in values.items():  # a later step is nearer: it wins
            index[value] = (step, tool, path)
        self.done[(plan, step)] = tool

    def step_started(self, run: RunFold, e: Event) -> list[dict[str, Any]]:
        """The data-flow rows of the step's resolved arguments (only a start yields rows)."""
        p = e.payload
        step = p.get("step_id")
        if not isinstance(step, str) or not isinstance(p.get("tool"), str):
            return []
        return self._started(run, e, p.get("plan_id"), step)

    def _started(self, run: RunFold, e: Event, plan: Any, step: str) -> list[dict[str, Any]]:
        args = e.payload.get("args_resolved")
        rows: list[dict[str, Any]] = []
        for name, value in args.items() if isinstance(args, dict) else ():
            found = self._repair(self.repaired.get((plan, step, name)), plan)
            if found is None and _specific(value):
                hit = self.by_value.get(plan, {}).get(value)  # str or int: hashable
                if hit is not None:
                    found = {
                        "source_step": hit[0],
                        "source_tool": hit[1],
                        "from_path": hit[2],
                        "via": "value",
                    }
            if found is not None:
                rows.append(
                    {
                        "position": e.position,
                        "to_field": name,
                        "run_id": run.run_id,
                        "collection_id": run.collection_id,
                        **found,
                        "target_step": step,
                        "target_tool": e.payload["tool"],
                        "recorded_at": e.recorded_at,
                    }
                )
        return rows

    def _repair(self, path: str | None, plan: Any) -> dict[str, Any] | None:
        if path is None:
            return None
        source_step, _, rest = path.partition(".")
        tool = self.done.get((plan, source_step))
        if tool is None:
            return None
        return {"source_step": source_step, "source_tool": tool, "from_path": rest, "via": "repair"}
