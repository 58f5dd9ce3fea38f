"""Decisions are events: every status change of a suggestion is appended to the ``events`` log.

A suggestion's history is the run ``suggestion:<id>`` (source ``tracelake``; the store numbers
its ``seq``). Two event types:

* ``suggestion.status_changed`` — from one status to another (``None`` when first derived), by
  which policy (``policy:<name>@<digest>``) or which operator, and why;
* ``suggestion.updated`` — new evidence (observations, timestamps), the status unchanged.

Each event carries the whole suggestion *as it is after the event*, so the ``suggestions``
projection is the last event of each run, and ``tracelake project --rebuild`` reproduces every
status from the log alone.

Optimistic concurrency and idempotence: an event's ``event_id`` is
``suggestion:<id>@<version>``, the version the suggestion reaches with it, and its payload holds
no wall-clock time. A rerun of the same decision is the same event (skipped as a duplicate); a
*different* decision racing for the same version (an operator approving while the job runs) is
a ``sequence_conflict``, quarantined by the store and not applied: the loser reruns.

Operator-typed text (names, reasons) goes through the scrubber before it is written; everything
else in the payload is derived from already scrubbed projections.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tracelake.run_identity import TRACELAKE_SOURCE
from tracelake.store import AppendResult, NewEvent, Store

if TYPE_CHECKING:
    from tracelake.scrub import Scrubber

STATUS_CHANGED = "suggestion.status_changed"
UPDATED = "suggestion.updated"
EVENT_TYPES = (STATUS_CHANGED, UPDATED)
BATCH = 1000


def run_id_of(suggestion_id: str) -> str:
    return f"suggestion:{suggestion_id}"


@dataclass(frozen=True, slots=True)
class Decision:
    """One change to one suggestion. ``suggestion`` is its state after the change."""

    suggestion: dict[str, Any]
    from_status: str | None
    to_status: str
    decided_by: str  # "policy:<name>@<digest>" or the (scrubbed) operator name
    actor: str  # "policy" | "operator"
    reason: str
    version: int  # the suggestion's version after this event (1 = first event)
    policy: dict[str, Any] | None = None

    @property
    def suggestion_id(self) -> str:
        return str(self.suggestion["id"])

    @property
    def event_type(self) -> str:
        return UPDATED if self.from_status == self.to_status else STATUS_CHANGED

    def payload(self) -> dict[str, Any]:
        return {
            "type": self.event_type,
            "suggestion_id": self.suggestion_id,
            "from_status": self.from_status,
            "to_status": self.to_status,
            "actor": self.actor,
            "decided_by": self.decided_by,
            "reason": self.reason,
            "policy": self.policy,
            "version": self.version,
            "suggestion": self.suggestion,
        }

    def event(self, recorded_at: datetime) -> NewEvent:
        run_id = run_id_of(self.suggestion_id)
        return NewEvent(
            run_id=run_id,
            seq=None,  # numbered by the store
            type=self.event_type,
            source=TRACELAKE_SOURCE,
            payload=self.payload(),
            recorded_at=recorded_at,
            event_id=f"{run_id}@{self.version}",
            tool=str(self.suggestion.get("target") or "") or None,
            collection_id=str(self.suggestion.get("collection_id") or "") or None,
        )


def append_decisions(store: Store, decisions: Sequence[Decision]) -> AppendResult:
    """Append decisions in batches (one transaction each); duplicates are skipped."""
    now = datetime.now(UTC)
    result = AppendResult()
    events = [d.event(now) for d in decisions]
    for start in range(0, len(events), BATCH):
        result += store.append(events[start : start + BATCH])
    return result


def operator_decision(
    scrubber: Scrubber,
    current: dict[str, Any],
    version: int,
    to_status: str,
    by: str,
    reason: str,
) -> Decision:
    """An operator's decision; the name and the reason are scrubbed before they are stored."""
    clean_by = scrubber.scrub_text(by, max_len=100)
    clean_reason = scrubber.scrub_text(reason, max_len=500)
    snapshot = {
        **current,
        "status": to_status,
        "decided_by": clean_by,
        "decision_reason": clean_reason,
    }
    return Decision(
        suggestion=snapshot,
        from_status=str(current.get("status")),
        to_status=to_status,
        decided_by=clean_by,
        actor="operator",
        reason=clean_reason,
        version=version + 1,
    )
