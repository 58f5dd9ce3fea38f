"""``tracelake ingest``: files or stdin through the one pipeline into the store.

Every line ends up in exactly one place: appended, recognised as a duplicate of what is
stored, or quarantined with a reason (invariant 6). A bad line never stops the lines after it.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from tracelake.config import Settings
from tracelake.ingest.call_guard import CallGuard, Stopped, guarded
from tracelake.ingest.lines import Chunk, iter_chunks
from tracelake.ingest.prepare import Preparer, Ready, Rejected
from tracelake.ingest.workers import default_workers, pool, prepare_ordered, started
from tracelake.run_identity import LegacyKeys, Sequenced, StreamRuns
from tracelake.store import QuarantineItem, Store
from tracelake.store.records import EncodedEvent
from tracelake.store.redactions import with_context

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
    """Reads lines, prepares them (parse, classify, scrub, encode: in worker processes when
    ``settings.ingest_workers`` is not 1), numbers them into runs in input order, appends.

    The workers' results come back in input order (see :mod:`tracelake.ingest.workers`), and
    run identity, numbering, batching and appends happen here, in one place, in that order: a
    parallel ingest stores exactly what a serial one stores.
    """

    def __init__(self, store: Store, scrubber: Scrubber, key: bytes, settings: Settings) -> None:
        self.store = store
        self.scrubber = scrubber
        self.key = key
        self.settings = settings
        self._guard: CallGuard | None = None  # while ingest() runs
        self._stop_requested: int | None = None

    @property
    def workers(self) -> int:
        from tracelake.scrub.scrubber import Scrubber

        if type(self.scrubber) is not Scrubber:  # a caller's own scrubber cannot be shipped
            return 1
        return self.settings.ingest_workers or default_workers()

    def ingest(
        self,
        stream: BinaryIO,
        origin: str,
        report: IngestReport | None = None,
        on_read: Callable[[int], None] | None = None,
    ) -> IngestReport:
        """Store every line of *stream*; *on_read* is told how many input bytes each chunk
        read (a progress bar). A database call that does not end within the settings'
        ``db_call_timeout`` is interrupted (:mod:`tracelake.ingest.call_guard`)."""
        report = report if report is not None else IngestReport()
        with guarded(self.store, self.settings.db_call_timeout) as guard:
            self._guard = guard
            guard.stop_requested = self._stop_requested
            try:
                self._ingest(stream, origin, report, on_read, guard)
            except Stopped:
                self._stop_requested = None  # the caller has it: the next ingest is not stopped
                raise
            finally:
                self._guard = None
        return report

    def _ingest(
        self,
        stream: BinaryIO,
        origin: str,
        report: IngestReport,
        on_read: Callable[[int], None] | None,
        guard: CallGuard,
    ) -> IngestReport:
        source = _identity(origin)
        origin = source  # quarantine keys by resolved path: x, ./x and /abs/x are one input
        runs = StreamRuns(self.key, source=source)
        pending: list[Sequenced] = []
        bad: list[QuarantineItem] = []
        reasons: Counter[str] = Counter()  # of the bad lines not written yet
        limit = self.settings.batch_size

        def counted() -> Iterator[Chunk]:
            for chunk in iter_chunks(stream, self.settings.max_line_bytes, CHUNK_LINES):
                if on_read is not None:
                    on_read(chunk.read)
                yield chunk

        for results in self._prepared(origin, counted()):
            report.lines += len(results)  # one result per line that is not blank
            for r in results:
                if isinstance(r, Rejected):
                    bad.append(r.item)
                    reasons[r.reason] += 1
                    if len(bad) >= limit:  # bounded memory however many lines are bad
                        with guard.call():
                            self._quarantine(bad, reasons, report)
                    continue
                report.scrub_failed += r.failed
                report.events += 1
                pending.extend(
                    runs.feed_parts(
                        r.run_id, r.seq, r.event_id, r.starts_run, r.canonical, r.content, r
                    )
                )
                if len(pending) >= limit:
                    with guard.call():
                        self._flush(pending, bad, reasons, report)
        pending.extend(runs.finish())
        with guard.call():
            self._flush(pending, bad, reasons, report)
        return report

    def stop(self, signum: int) -> None:
        """Stop the ingest under way (a signal handler's call, on the main thread): raises
        :class:`~tracelake.ingest.call_guard.Stopped` now, or as the database call under way
        ends, which is made to end at once (:meth:`CallGuard.stop`)."""
        self._stop_requested = signum  # raised again at the next database section, should
        if self._guard is None:  # this raise be swallowed (in a finalizer, say)
            raise Stopped(signum)
        self._guard.stop(signum)

    def start_workers(self) -> None:
        """Start the worker processes now, for an input known to be large: its first lines
        go to them instead of being prepared here while the pool starts."""
        if self.workers > 1:
            pool(self.workers)

    def _prepared(self, origin: str, chunks: Iterator[Chunk]) -> Iterator[list[Ready | Rejected]]:
        s = self.settings
        preparer = Preparer(self.scrubber, self.key, origin, s.max_line_bytes, s.max_depth)
        workers = self.workers
        # Small inputs are prepared here: starting worker processes (each loads the scrubber's
        # engine) costs more than it saves below a few thousand lines. A caller that knows
        # its input is large starts the pool first (start_workers).
        serial = None if workers == 1 else 0 if started(workers) else CHUNKS_BEFORE_WORKERS
        for done, chunk in enumerate(chunks):
            if serial is not None and done >= serial:
                config = (self.key, s.max_line_bytes, s.max_depth)
                rest = itertools.chain([chunk], chunks)
                # Enough chunks in flight to keep every worker busy while this process
                # appends a whole batch (the results wait here, in order, bounded).
                window = 2 * workers + 2 + s.batch_size // CHUNK_LINES
                yield from prepare_ordered(pool(workers), origin, config, rest, window)
                return
            yield preparer.prepare(chunk.lines(s.max_line_bytes))

    def _rows(self, pending: list[Sequenced]) -> list[EncodedEvent]:
        """The batch's rows, their redaction reports and trace_metadata interned first."""
        ready: list[Ready] = [s.item for s in pending]
        redactions = self.store.intern_reports([r.report for r in ready])
        if any(r.context is not None or r.omitted for r in ready):
            contexts = self.store.intern_contexts([r.context for r in ready])
            redactions = [
                with_context(ref, context, r.omitted)
                for ref, context, r in zip(redactions, contexts, ready, strict=True)
            ]
        return [
            EncodedEvent(
                run_id=s.run_id,
                seq=s.seq,
                type=r.type,
                source=r.source,
                recorded_at=r.recorded_at,
                payload_json=r.payload_json,
                content_hash=r.content_hash,
                redactions_json=red,
                event_id=s.event_id or r.event_id,
                plan_id=r.plan_id,
                step_id=r.step_id,
                tool=r.tool,
                collection_id=r.collection_id,
            )
            for s, r, red in zip(pending, ready, redactions, strict=True)
        ]

    def _flush(
        self,
        pending: list[Sequenced],
        bad: list[QuarantineItem],
        reasons: Counter[str],
        report: IngestReport,
    ) -> None:
        if pending:
            rows = self._rows(pending)
            legacy = LegacyKeys()
            for index, seq in enumerate(pending):
                legacy.note(index, seq)
            legacy.adopt(self.store, rows)  # keys given by the code before revision 0005
            result = self.store.append(rows)
            report.runs.update(s.run_id for s in pending)  # once stored: a stop may come first
            report.appended += result.appended
            report.duplicates += result.duplicates
            if result.conflicts:
                report.quarantined["sequence_conflict"] += len(result.conflicts)
            if result.rejected:
                report.quarantined["rejected_by_database"] += result.rejected
            pending.clear()
        if bad:
            self._quarantine(bad, reasons, report)

    def _quarantine(
        self, bad: list[QuarantineItem], reasons: Counter[str], report: IngestReport
    ) -> None:
        """Write the bad lines; only then are they counted (an ingest that stops before
        must not report quarantine rows that were never written: a fault attack saw 791)."""
        self.store.add_to_quarantine(bad)
        report.quarantined.update(reasons)
        bad.clear()
        reasons.clear()


CHUNK_LINES = 200  # lines per worker task (at least): large enough to amortise the hand-off
CHUNKS_BEFORE_WORKERS = 2  # the first ~400 lines are prepared in the main process


def _identity(origin: str) -> str:
    """What identifies an input for bare-run ids: a file's resolved path, else the origin."""
    path = Path(origin)
    return str(path.resolve()) if origin != "-" and path.is_file() else origin
