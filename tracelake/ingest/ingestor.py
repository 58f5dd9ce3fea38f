"""``tracelake ingest``: files or stdin through the one pipeline into the store.

Every line ends up in exactly one place: appended, recognised as a duplicate of what is
stored, or quarantined with a reason (invariant 6). A bad line never stops the lines after it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from tracelake.config import Settings
from tracelake.contracts import classify
from tracelake.errors import ContractError
from tracelake.ingest.lines import Line, iter_lines
from tracelake.ingest.parse import parse_line
from tracelake.pipeline import new_event, quarantine_item, safe_identifier, scrub
from tracelake.runs import LegacyKeys, Sequenced, StreamRuns
from tracelake.store import NewEvent, QuarantineItem, Store

if TYPE_CHECKING:
    from tracelake.scrub import Scrubber


@dataclass(slots=True)
class IngestReport:
    lines: int = 0
    events: int = 0
    appended: int = 0
    duplicates: int = 0
    scrub_failed: int = 0
    quarantined: Counter[str] = field(default_factory=Counter)
    runs: set[str] = field(default_factory=set)

    @property
    def quarantined_total(self) -> int:
        return sum(self.quarantined.values())

    def as_dict(self) -> dict[str, object]:
        return {
            "lines": self.lines,
            "events": self.events,
            "appended": self.appended,
            "duplicates": self.duplicates,
            "quarantined": self.quarantined_total,
            "quarantined_by_reason": dict(sorted(self.quarantined.items())),
            "scrub_failed": self.scrub_failed,
            "runs": len(self.runs),
        }


class Ingestor:
    def __init__(self, store: Store, scrubber: Scrubber, key: bytes, settings: Settings) -> None:
        self.store = store
        self.scrubber = scrubber
        self.key = key
        self.settings = settings

    def ingest(
        self,
        stream: BinaryIO,
        origin: str,
        report: IngestReport | None = None,
        on_line: Callable[[Line], None] | None = None,
    ) -> IngestReport:
        report = report if report is not None else IngestReport()
        source = _identity(origin)
        origin = source  # quarantine keys by resolved path: x, ./x and /abs/x are one input
        runs = StreamRuns(self.key, source=source)
        batch: list[NewEvent] = []
        bad: list[QuarantineItem] = []
        legacy = LegacyKeys()
        limit = self.settings.batch_size
        for line in iter_lines(stream, self.settings.max_line_bytes):
            report.lines += 1
            if on_line is not None:
                on_line(line)
            now = datetime.now(UTC)
            try:
                obj = parse_line(
                    line, self.settings.max_line_bytes, self.settings.max_depth, self.key
                )
                inbound = classify(obj)
                inbound = replace(
                    inbound,
                    run_id=safe_identifier(self.scrubber, self.key, inbound.run_id),
                    event_id=safe_identifier(self.scrubber, self.key, inbound.event_id),
                )
                scrubbed = scrub(self.scrubber, inbound)
                ready = runs.feed(inbound, (inbound, scrubbed, now))
            except ContractError as exc:
                bad.append(self._quarantine(origin, line, exc, now))
                report.quarantined[exc.reason] += 1
                if len(bad) >= limit:  # bounded memory however many lines are bad
                    self.store.quarantine.add(bad)
                    bad.clear()
                continue
            except Exception as exc:  # noqa: BLE001 - a line must never stop the ones after it
                error = ContractError("internal_error", f"{type(exc).__name__} while reading it")
                bad.append(self._quarantine(origin, line, error, now))
                report.quarantined[error.reason] += 1
                if len(bad) >= limit:
                    self.store.quarantine.add(bad)
                    bad.clear()
                continue
            report.scrub_failed += scrubbed.failed
            report.events += 1
            del obj  # the raw event goes no further than the scrubber
            self._rows(ready, report, batch, legacy)
            if len(batch) >= limit:
                self._flush(batch, bad, report, legacy)
        self._rows(runs.finish(), report, batch, legacy)
        self._flush(batch, bad, report, legacy)
        return report

    def _rows(
        self,
        ready: list[Sequenced],
        report: IngestReport,
        batch: list[NewEvent],
        legacy: LegacyKeys,
    ) -> None:
        for s in ready:
            inbound, scrubbed, now = s.item
            legacy.note(len(batch), s)
            batch.append(new_event(inbound, scrubbed, s.run_id, s.seq, now, s.event_id))
            report.runs.add(s.run_id)

    def _flush(
        self,
        batch: list[NewEvent],
        bad: list[QuarantineItem],
        report: IngestReport,
        legacy: LegacyKeys,
    ) -> None:
        if batch:
            legacy.adopt(self.store, batch)  # keys given by the code before revision 0005
            result = self.store.appender.append(batch)
            report.appended += result.appended
            report.duplicates += result.duplicates
            if result.conflicts:
                report.quarantined["sequence_conflict"] += len(result.conflicts)
            if result.rejected:
                report.quarantined["rejected_by_database"] += result.rejected
            batch.clear()
        if bad:
            self.store.quarantine.add(bad)
            bad.clear()

    def _quarantine(
        self, origin: str, line: Line, exc: ContractError, now: datetime
    ) -> QuarantineItem:
        return quarantine_item(
            self.scrubber,
            self.key,
            origin=origin,
            reason=exc.reason,
            detail=exc.detail,
            raw=line.data,
            recorded_at=now,
            line_no=line.number,
        )


def _identity(origin: str) -> str:
    """What identifies an input for bare-run ids: a file's resolved path, else the origin."""
    path = Path(origin)
    return str(path.resolve()) if origin != "-" and path.is_file() else origin
