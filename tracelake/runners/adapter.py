"""A runner adapter: everything tracelake knows about one runner family, in one value.

Each family's module (``graph_tool_call``, ``agentlane``) builds one :class:`RunnerAdapter`
and ``registry`` lists them: the rest of the code asks the registry, never says a runner's
name. Adding a runner is adding a module that builds an adapter, and one line in the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from tracelake.runners.field_rules import FieldPolicy
from tracelake.runners.run_model import Event, Handler, Hint, RunFold, Troubleshoot

Columns = tuple[str | None, str | None, str | None]  # plan_id, step_id, tool
Payload = dict[str, Any]
Note = Callable[[Payload], list[str]]  # an event body's extra detail for a timeline


def _no_columns(payload: Payload) -> Columns:
    return None, None, None


def _itself(event: Payload) -> Payload:
    return event


def _no_hints(run: RunFold, types: frozenset[str]) -> list[Hint]:
    return []


@dataclass(frozen=True, slots=True)
class RunnerAdapter:
    """One runner family.

    * ``source``: the value stored in ``events.source`` for its events;
    * contract: ``looks_like`` recognises a bare event, ``models`` checks the known types
      (on ``body(event)``: the part of the event the type's model describes);
      ``starts_run`` says an event opens a new run in a bare stream;
    * ``field_policy``: what the scrubber does with each field (``field_rules``);
    * ``columns``: the indexed columns ``(plan_id, step_id, tool)`` of a *scrubbed* payload;
    * fold: ``every_event`` then ``handlers[type]`` fold one stored event into a
      :class:`RunFold`; ``status_groups`` maps a type to the run status it means (seed 000's
      UI grouping); ``passive`` lists the contract's types the fold reads nothing from;
    * ``troubleshoot``: the runner's troubleshooting hints for a folded run (``explain``);
    * timeline (``explain``, the run page): ``hidden`` types are left out of it (streams,
      snapshots), ``trouble`` types are marked as something going wrong, ``notes[type]`` adds
      detail read from the event's body.
    """

    source: str
    looks_like: Callable[[Payload], bool]
    models: Mapping[str, type[BaseModel]]
    field_policy: FieldPolicy
    handlers: Mapping[str, Handler]
    starts_run: Callable[[str, Payload], bool]
    body: Callable[[Payload], Payload] = _itself
    columns: Callable[[Payload], Columns] = _no_columns
    every_event: Handler | None = None
    status_groups: Mapping[str, str] = field(default_factory=dict)
    passive: frozenset[str] = frozenset()
    troubleshoot: Troubleshoot = _no_hints
    hidden: frozenset[str] = frozenset()
    trouble: frozenset[str] = frozenset()
    notes: Mapping[str, Note] = field(default_factory=dict)

    def fold(self, run: RunFold, event: Event) -> None:
        """Fold one stored event of this runner into *run*."""
        if self.every_event is not None:
            self.every_event(run, event)
        handler = self.handlers.get(event.type)
        if handler is not None:
            handler(run, event)
