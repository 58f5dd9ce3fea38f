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

Identity is stable across versions. Before revision 0005 a bare run's id did not include the
input's identity (chain ``tracelake-runs-v1``) and an envelope event without ``seq`` or
``event_id`` was numbered in stream order. Every event still carries the key that code would
have given it (``Sequenced.legacy``); :class:`LegacyKeys` rewrites an event to that key when the
store already holds it (a bare run by its id, an envelope event by its content hash), so a
re-ingest after an upgrade from any earlier revision appends nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracelake import codec
from tracelake.runners import InboundEvent
from tracelake.store.records import TRACELAKE_SOURCE as TRACELAKE_SOURCE  # re-exported

if TYPE_CHECKING:
    from tracelake.store import Store
    from tracelake.store.records import EncodedEvent, StoredHead

RUN_ID_PREFIX = "run-"
# How many envelope contents (and runs) one stream remembers for numbering envelope events
# without seq/event_id (see StreamRuns): memory stays bounded however long the input is.
SEEN_WINDOW = 100_000


@dataclass(slots=True)
class Sequenced:
    """An event (or anything) with its run id and seq assigned."""

    run_id: str
    seq: int | None  # None: the store numbers it (it then has an event_id)
    item: Any
    event_id: str | None = None
    # The (run_id, seq) the code before revision 0005 gave it, when that differs; bare runs
    # are marked so a stored legacy run is adopted by its id.
    legacy: tuple[str, int] | None = None
    legacy_bare: bool = False


@dataclass(slots=True)
class _BareRun:
    hasher: Any
    legacy_hasher: Any
    items: list[Any] = field(default_factory=list)
    run_id: str | None = None  # fixed once the run outgrows the buffer
    legacy_id: str | None = None
    seq: int = 0


class StreamRuns:
    """Assigns run ids and seqs for one input stream (``tracelake ingest``).

    An envelope event without seq or event_id is told apart from a retry of itself by how often
    its content already occurred in its run in this stream. That count is kept for the last
    ``window`` distinct (run, content) pairs only (least recently seen forgotten first), so
    memory is bounded. The consequence: a content that repeats in its run after more than
    ``window`` other contents were seen in between counts as its first occurrence again, gets
    that occurrence's id and is recorded as a duplicate of it (not stored twice). The pre-0005
    numbering of such events (``legacy``) is kept for the last ``window`` runs alike: a run
    forgotten and seen again numbers its legacy keys from 1, so after an upgrade from before
    0005 those events are not adopted under their old key (stored anew, never lost).
    """

    def __init__(
        self,
        key: bytes,
        source: str = "-",
        max_buffered: int = 50_000,
        window: int = SEEN_WINDOW,
    ) -> None:
        self._key = key
        self._max = max_buffered
        self._window = window
        self._chain = b"tracelake-runs-v2\x00" + source.encode("utf-8", "surrogatepass")
        self._legacy_chain = LEGACY_CHAIN
        self._bare: _BareRun | None = None
        # content digest (keyed by its run) -> occurrences so far, least recently seen first
        self._seen: OrderedDict[str, int] = OrderedDict()
        self._legacy_seq: OrderedDict[str, int] = OrderedDict()  # pre-0005 envelope numbering

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
            legacy_seq = _count(self._legacy_seq, run_id, seq, self._window)
            if seq is not None or event_id is not None:
                return [Sequenced(run_id, seq, item, event_id)]
            assert content is not None
            occurrence = _count(self._seen, content, None, self._window)
            event_id = f"ev-{content}-{occurrence}"
            return [Sequenced(run_id, None, item, event_id, legacy=(run_id, legacy_seq))]
        assert event_canonical is not None
        ready: list[Sequenced] = []
        if starts_run or self._bare is None:
            ready = self._close_bare()
            self._bare = _BareRun(
                hmac.new(self._key, self._chain, hashlib.blake2b),
                hmac.new(self._key, self._legacy_chain, hashlib.blake2b),
            )
        bare = self._bare
        assert bare is not None
        bare.seq += 1
        if bare.run_id is not None:
            assert bare.legacy_id is not None
            legacy = (bare.legacy_id, bare.seq)
            ready.append(Sequenced(bare.run_id, bare.seq, item, legacy=legacy, legacy_bare=True))
            return ready
        bare.hasher.update(event_canonical)
        bare.legacy_hasher.update(event_canonical)
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
        legacy_digest = bare.legacy_hasher.hexdigest()[:24]
        self._legacy_chain = legacy_digest.encode()
        bare.legacy_id = RUN_ID_PREFIX + legacy_digest
        ready = [
            Sequenced(bare.run_id, i, item, legacy=(bare.legacy_id, i), legacy_bare=True)
            for i, item in enumerate(bare.items, 1)
        ]
        bare.items = []
        return ready


def _count(counts: OrderedDict[str, int], key: str, value: int | None, window: int) -> int:
    """*value* (else the key's count + 1), remembered as the key's count (the highest seen),
    the key moved to the most recent end; the least recent key forgotten past *window*."""
    before = counts.pop(key, 0)
    value = before + 1 if value is None else value
    counts[key] = max(before, value)
    if len(counts) > window:
        counts.popitem(last=False)
    return value


def canonical(event: dict[str, Any]) -> bytes:
    """Keys sorted, compact UTF-8 JSON (byte-identical to the stdlib form run ids used)."""
    return codec.canonical(event)


def content_digest(key: bytes, run_id: str, event_canonical: bytes) -> str:
    """A keyed digest of an event's content within its run (envelopes without ids)."""
    mac = hmac.new(key, _utf8(run_id) + b"\x00", hashlib.blake2b)
    mac.update(event_canonical)
    return mac.hexdigest()[:24]


LEGACY_CHAIN = b"tracelake-runs-v1"


class LegacyKeys:
    """Rewrites a batch's events to the keys stored by the code before revision 0005.

    A bare run is adopted when its pre-0005 id is stored (the id is a hash of the run's
    content, so this is the same run); the event then dedupes (or, if the scrubber's output
    changed since, is quarantined as ``sequence_conflict``) instead of being appended twice.
    An envelope event without ``seq``/``event_id`` is adopted when its pre-0005 key holds the
    same event: the very same content, or the same type, plan, step and tool where each of
    these either matches or was scrubbed by one of the two versions (``tool: "動物"`` stored
    by 0003 is ``[PERSON]`` today). Any other event at that key (a later file continuing the
    run) is not adopted and is appended under its own id.
    """

    def __init__(self) -> None:
        self._marks: list[tuple[int, tuple[str, int], bool]] = []

    def note(self, index: int, seq: Sequenced) -> None:
        if seq.legacy is not None and seq.legacy != (seq.run_id, seq.seq):
            self._marks.append((index, seq.legacy, seq.legacy_bare))

    def clear(self) -> None:
        self._marks.clear()

    def adopt(self, store: Store, batch: list[EncodedEvent]) -> int:
        """Rewrite in place; returns how many events were given their legacy key."""
        if not self._marks:
            return 0
        from dataclasses import replace

        bare_ids = sorted({key[0] for _, key, bare in self._marks if bare})
        keyed = [key for _, key, bare in self._marks if not bare]
        stored_runs = store.existing_runs(bare_ids) if bare_ids else set()
        heads = store.stored_heads(keyed) if keyed else {}
        adopted = 0
        for index, key, bare in self._marks:
            event = batch[index]
            if key[0] in stored_runs if bare else _same(heads.get(key), event):
                batch[index] = replace(event, run_id=key[0], seq=key[1], event_id=None)
                adopted += 1
        self._marks.clear()
        return adopted


def _same(stored: StoredHead | None, event: EncodedEvent) -> bool:
    """Whether *stored* is this event, as this version or an earlier one scrubbed it."""
    if stored is None:
        return False
    from tracelake.store.appender import content_hash

    if stored.content_hash == content_hash(event):
        return True
    return stored.type == event.type and all(
        _alike(a, b)
        for a, b in (
            (stored.plan_id, event.plan_id),
            (stored.step_id, event.step_id),
            (stored.tool, event.tool),
        )
    )


_SCRUBBED = re.compile(r"\[[A-Z][A-Z_]*\]|psn_[0-9a-f]{20,24}")


def _alike(stored: str | None, new: str | None) -> bool:
    """Equal, or one of the two holds what a scrubber wrote (a placeholder, a pseudonym)."""
    if stored == new:
        return True
    return (
        stored is not None
        and new is not None
        and bool(_SCRUBBED.search(stored) or _SCRUBBED.search(new))
    )


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")
