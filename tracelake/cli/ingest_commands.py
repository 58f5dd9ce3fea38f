"""``tracelake ingest FILE...``: store runner events from files or stdin."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, TextColumn, TransferSpeedColumn

from tracelake import collector
from tracelake.cli.common import DatabaseUrl, _progress, _settings, err, out
from tracelake.cli.root import app
from tracelake.console import emit_json, markup, say, table
from tracelake.errors import TracelakeError

_TICK_BYTES = 256 * 1024
_LARGE_INPUT = 4 << 20  # bytes of plain input from which the workers start at once


@app.command()
def ingest(
    paths: Annotated[
        list[str], typer.Argument(metavar="FILE", help="JSONL or JSONL.gz files, or - for stdin")
    ],
    database_url: DatabaseUrl = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON")] = False,
) -> None:
    """Store runner events (graph-tool-call or agentlane, JSONL, gzip detected) exactly once.

    Exits 1 when any line was quarantined (the rest is still stored), 2 on an error.
    """
    from tracelake.ingest.call_guard import Stopped

    for path in paths:  # every input is checked before anything is stored
        _check_input(path)
    stopper = _Stopper()
    with _stopped_by_signals(stopper):
        try:
            _ingest_paths(paths, database_url, as_json, stopper)
        except Stopped as exc:  # at start-up, before the summary's try: nothing is stored yet
            say(err, f"[yellow]stopped by {signal.Signals(exc.signum).name}[/]: nothing stored")
            raise typer.Exit(128 + exc.signum) from None


class _Stopper:
    """What a signal does: stop the ingest under way (``Ingestor.stop``), or raise the stop
    now when there is none yet (start-up)."""

    def __init__(self) -> None:
        self.ingestor: Any = None

    def __call__(self, signum: int) -> None:
        from tracelake.ingest.call_guard import Stopped

        if self.ingestor is None:
            raise Stopped(signum)
        self.ingestor.stop(signum)


def _ingest_paths(
    paths: list[str], database_url: str | None, as_json: bool, stopper: _Stopper
) -> None:
    from tracelake.ingest import Ingestor, IngestReport, open_source
    from tracelake.ingest.call_guard import guarded
    from tracelake.wiring import ensure_schema, open_components

    parts = open_components(_settings(database_url), check_schema=False)
    try:  # bounded like the ingest's own calls (a lock held on the schema table waited for good)
        with guarded(parts.store, parts.settings.db_call_timeout) as guard, guard.call():
            ensure_schema(parts.store)
    except BaseException:
        parts.store.dispose()
        raise
    ingestor = stopper.ingestor = Ingestor(parts.store, parts.scrubber, parts.key, parts.settings)
    report = IngestReport()
    failure: BaseException | None = None
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TransferSpeedColumn(),
        TextColumn("{task.fields[events]} events"),
    )
    try:
        parts.scrubber.warm_up()  # built before collector.streaming() freezes it
        if sum(_plain_size(path) or 0 for path in paths) >= _LARGE_INPUT:
            ingestor.start_workers()  # forked warm, before the first line is read
        with collector.streaming(), _progress(*columns, transient=False) as progress:
            for path in paths:
                size = _plain_size(path)
                task = progress.add_task(markup(path), total=size, events=0)

                unshown = [0]  # bytes read since the bar last moved

                def tick(read: int, task: Any = task, unshown: list[int] = unshown) -> None:
                    unshown[0] += read
                    if unshown[0] >= _TICK_BYTES:
                        progress.update(task, advance=unshown[0], events=report.events)
                        unshown[0] = 0

                try:
                    stream = open_source(path, parts.settings.max_decompressed_bytes)
                except OSError as exc:
                    raise TracelakeError(f"cannot read {path}: {exc.strerror or exc}") from None
                with stream:
                    ingestor.ingest(stream, origin=path, report=report, on_read=tick)
                progress.update(task, advance=unshown[0], events=report.events)
                if size is not None:
                    progress.update(task, completed=size)
    except (TracelakeError, OSError) as exc:
        failure = exc  # the summary of what was stored still prints, then the error
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM (_stopped_by_signals)
        failure = exc
    finally:
        parts.store.dispose()
    _ingest_summary(report, as_json)
    if isinstance(failure, KeyboardInterrupt):
        signum = getattr(failure, "signum", signal.SIGINT)
        say(
            err,
            f"[yellow]stopped by {signal.Signals(signum).name}[/]: the events counted as "
            "appended above are stored (a batch committed as the signal came may not be "
            "counted). Run the same ingest again: it stores only what is missing.",
        )
        raise typer.Exit(128 + signum)
    if failure is not None:
        raise failure
    if report.quarantined_total:
        raise typer.Exit(1)


@contextlib.contextmanager
def _stopped_by_signals(stopper: _Stopper) -> Iterator[None]:
    """SIGTERM (how a supervisor stops a job) and Ctrl-C end the ingest alike: the summary of
    what was stored prints and the exit status says which signal (128 + its number); before,
    SIGTERM ended the process at once, saying nothing. A database call under way is ended
    first (``Ingestor.stop``), so nothing is left half-stored: each batch is one transaction.
    The workers ignore both signals (their parent decides; they die with it). A second signal
    ends the process at once. A signal ignored when the command started (``ingest ... &`` in a
    script ignores SIGINT) stays ignored."""

    def stop(signum: int, _frame: object) -> None:
        for sig in previous:  # from now on a second signal ends the process there and then
            signal.signal(sig, _exit_now)
        stopper(signum)

    previous: dict[int, Any] = {}  # filled before any handler can run with it
    try:
        for sig in _SIGNALS:
            if signal.getsignal(sig) is not signal.SIG_IGN:
                previous[sig] = signal.getsignal(sig)
                signal.signal(sig, stop)
    except ValueError:  # not the main thread (a test calling the command): nothing to do
        yield
        return
    try:
        yield
    finally:
        for kept, handler in previous.items():
            if signal.getsignal(kept) is stop:  # a stop keeps _exit_now until the process ends
                signal.signal(kept, handler)


_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _exit_now(signum: int, _frame: object) -> None:
    with contextlib.suppress(Exception):
        err.file.flush()
    os._exit(128 + signum)


def _check_input(path: str) -> None:
    if path == "-":
        return
    target = Path(path)
    if target.is_dir():
        raise TracelakeError(f"{path} is a directory; give the files in it (e.g. {path}/*.jsonl)")
    if not target.exists():
        raise TracelakeError(f"no such file: {path}")
    if not os.access(target, os.R_OK):
        raise TracelakeError(f"cannot read {path}: permission denied")


def _plain_size(path: str) -> int | None:
    """The size of an uncompressed input file (None for stdin and gzip: not known before)."""
    return None if path == "-" or _is_gzip(path) else Path(path).stat().st_size


def _is_gzip(path: str) -> bool:
    with contextlib.suppress(OSError), Path(path).open("rb") as handle:
        return handle.read(2) == b"\x1f\x8b"
    return False


def _ingest_summary(report: Any, as_json: bool) -> None:
    summary = report.as_dict()
    if as_json:
        emit_json(summary)
        return
    rows = [(k, v) for k, v in summary.items() if k != "quarantined_by_reason"]
    rows += [(f"quarantined: {reason}", n) for reason, n in sorted(report.quarantined.items())]
    table(out, ("ingest", "count"), rows)
    if report.quarantined_total:
        say(
            err,
            f"[yellow]{report.quarantined_total} line(s) quarantined[/]; "
            "see `tracelake quarantine list` (reasons, origins and line numbers)",
        )
