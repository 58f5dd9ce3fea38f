"""Run identity: which run an event belongs to, and its sequence number in that run.

Seed 000 names run ids (``ql-run-20260725-001``) but neither runner emits one, so:

* an envelope's ``run_id`` wins, and its ``seq`` when it gives one. Without a ``seq``, the
  event gets an ``event_id`` derived from the run, its content and how often that content
  already occurred in the run in this stream, and the store numbers it after the run's last
  stored event: so a run split over several files (log rotation) continues, and the same file
  ingested again is recognised event by event;
* in a bare stream a new run starts at each ``plan.started`` (graph-tool-call) or root
  ``agent_start`` (agentlane); everything up to the next start belongs to it, so a run keeps
  its identity across ``plan.repaired`` (the plan id changes, the run does not). ``plan_id``
  is never the key: many runs execute the same plan.

A bare run's id must be the same when the same input is ingested again (that is what makes
re-ingest append nothing) and different for different input. It is a keyed hash (the
pseudonym key, so it cannot be used to guess content) over the input's identity (its resolved
path, or ``-``), the run's events, and the previous run's id: ``run-<hex>``. So the same file
ingested again appends nothing, while byte-identical runs in two different files (a health
check that runs every day) stay two runs. Bare streams carry no identity of their own: to move
or rename files freely, have the producer write envelopes with run ids. Because the id depends on
the whole run, a bare run is held back until the next start (or the end of the input), up to
``max_buffered`` events; a longer run fixes its id at that point and streams on.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from tracelake import codec
from tracelake.contracts import InboundEvent

RUN_ID_PREFIX = "run-"


@dataclass(slots=True)
class Sequenced:
    """An event (or anything) with its run id and seq assigned."""

    run_id: str
    seq: int | None  # None: the store numbers it (it then has an event_id)
    item: Any
    event_id: str | None = None


@dataclass(slots=True)
class _BareRun:
    hasher: Any
    items: list[Any] = field(default_factory=list)
    run_id: str | None = None  # fixed once the run outgrows the buffer
    seq: int = 0


class StreamRuns:
    """Assigns run ids and seqs for one input stream (``tracelake ingest``)."""

    def __init__(self, key: bytes, source: str = "-", max_buffered: int = 50_000) -> None:
        self._key = key
        self._max = max_buffered
        self._chain = b"tracelake-runs-v2\x00" + source.encode("utf-8", "surrogatepass")
        self._bare: _BareRun | None = None
        self._seen: dict[tuple[str, str], int] = defaultdict(int)

    def feed(self, inbound: InboundEvent, item: Any) -> list[Sequenced]:
        if inbound.run_id is not None and inbound.seq is None and inbound.event_id is None:
            content = content_digest(self._key, inbound.run_id, canonical(inbound.event))
            return self.feed_parts(inbound.run_id, None, None, False, None, content, item)
        bare = inbound.run_id is None
        return self.feed_parts(
            inbound.run_id,
            inbound.seq,
            inbound.event_id,
            inbound.starts_run,
            canonical(inbound.event) if bare else None,
            None,
            item,
        )

    def feed_parts(
        self,
        run_id: str | None,
        seq: int | None,
        event_id: str | None,
        starts_run: bool,
        event_canonical: bytes | None,
        content: str | None,
        item: Any,
    ) -> list[Sequenced]:
        """:meth:`feed` from what the ingest workers compute: an envelope's ids, whether the
        event starts a run, and the event's :func:`canonical` bytes (bare events) or its
        :func:`content_digest` (envelope events without seq or event_id)."""
        if run_id is not None:
            if seq is not None or event_id is not None:
                return [Sequenced(run_id, seq, item, event_id)]
            assert content is not None
            self._seen[(run_id, content)] += 1
            occurrence = self._seen[(run_id, content)]
            return [Sequenced(run_id, None, item, f"ev-{content}-{occurrence}")]
        assert event_canonical is not None
        ready: list[Sequenced] = []
        if starts_run or self._bare is None:
            ready = self._close_bare()
            self._bare = _BareRun(hmac.new(self._key, self._chain, hashlib.blake2b))
        bare = self._bare
        assert bare is not None
        bare.seq += 1
        if bare.run_id is not None:
            ready.append(Sequenced(bare.run_id, bare.seq, item))
            return ready
        bare.hasher.update(event_canonical)
        bare.items.append(item)
        if len(bare.items) >= self._max:
            ready.extend(self._fix_id(bare))
        return ready

    def finish(self) -> list[Sequenced]:
        return self._close_bare()

    def _close_bare(self) -> list[Sequenced]:
        bare, self._bare = self._bare, None
        if bare is None or bare.run_id is not None:
            return []
        return self._fix_id(bare)

    def _fix_id(self, bare: _BareRun) -> list[Sequenced]:
        digest = bare.hasher.hexdigest()[:24]
        self._chain = digest.encode()
        bare.run_id = RUN_ID_PREFIX + digest
        ready = [Sequenced(bare.run_id, i, item) for i, item in enumerate(bare.items, 1)]
        bare.items = []
        return ready


def canonical(event: dict[str, Any]) -> bytes:
    """Keys sorted, compact UTF-8 JSON (byte-identical to the stdlib form run ids used)."""
    return codec.canonical(event)


def content_digest(key: bytes, run_id: str, event_canonical: bytes) -> str:
    """A keyed digest of an event's content within its run (envelopes without ids)."""
    mac = hmac.new(key, run_id.encode() + b"\x00", hashlib.blake2b)
    mac.update(event_canonical)
    return mac.hexdigest()[:24]
