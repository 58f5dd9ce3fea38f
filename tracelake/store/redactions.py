"""The stored redaction report: counts per interned (field path, entity) site, and actions.

The scrubber reports, per event, counts by entity and by field path and counts of actions::

    {"entities": {"EMAIL_ADDRESS": 2}, "paths": {"args_resolved.email": {"EMAIL_ADDRESS": 2}},
     "actions": {"previewed": 1}}

Stored as is, that was ~330 bytes per event, a third of the scrubbed payload, repeating the
same few dozen path strings in every row. What is stored instead (``events.redactions``)::

    {"s": {"17": 2}, "a": {"previewed": 1}}

where 17 is the id of the site ``("args_resolved.email", "EMAIL_ADDRESS")`` in the
``redaction_sites`` table. Entity totals are the sums over an event's sites, so nothing is
lost (:func:`expand` gives the scrubber's form back). An event with nothing redacted and no
action stores NULL. Sites are inserted in their own small transaction *before* the events
that use them, so a stored event never points at a missing site; a crash in between leaves
at most an unused site row. Paths are built from scrubbed keys, never values.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from tracelake import codec
from tracelake.store.engine import translate_errors, write_transaction
from tracelake.store.schema import redaction_sites

Site = tuple[str, str]  # (field path, entity)
MAX_CACHED = 200_000  # hostile inputs with ever-new keys must not grow memory without bound


def sites_of(report: Mapping[str, Any] | None) -> list[tuple[str, str, int]]:
    """The ``(path, entity, count)`` triples of a scrubber report (empty for other shapes)."""
    paths = report.get("paths") if report else None
    if not isinstance(paths, Mapping):
        return []
    return [
        (path, entity, n)
        for path, counts in paths.items()
        if isinstance(counts, Mapping)
        for entity, n in counts.items()
    ]


def is_scrubber_report(report: Mapping[str, Any] | None) -> bool:
    return bool(report) and set(report or ()) <= {"entities", "paths", "actions"}


def compact_json(
    report: Mapping[str, Any] | None,
    ids: Mapping[Site, int],
    triples: Iterable[tuple[str, str, int]] | None = None,
) -> str | None:
    """The stored JSON of a report; *ids* must hold every site of it (see :class:`Sites`)."""
    if not report:
        return None
    if not is_scrubber_report(report):
        return codec.dumps(report)  # a minimal record's {"failed": ...} or a caller's own
    out: dict[str, Any] = {}
    sites: dict[str, int] = {}
    for path, entity, n in sites_of(report) if triples is None else triples:
        key = str(ids[(path, entity)])
        sites[key] = sites.get(key, 0) + n
    if sites:
        out["s"] = sites
    actions = report.get("actions")
    if actions:
        out["a"] = actions
    return codec.dumps(out) if out else None


def expand(stored: Mapping[str, Any] | None, sites: Mapping[int, Site]) -> dict[str, Any]:
    """The scrubber's form of a stored report (``sites``: id -> (path, entity))."""
    if not stored:
        return {"entities": {}, "paths": {}, "actions": {}}
    if "s" not in stored and "a" not in stored:
        return dict(stored)
    entities: dict[str, int] = {}
    paths: dict[str, dict[str, int]] = {}
    for key, n in (stored.get("s") or {}).items():
        path, entity = sites[int(key)]
        entities[entity] = entities.get(entity, 0) + n
        paths.setdefault(path, {})[entity] = paths.get(path, {}).get(entity, 0) + n
    return {"entities": entities, "paths": paths, "actions": dict(stored.get("a") or {})}


class Sites:
    """Interned ``(path, entity)`` ids of one database; cached, safe across processes."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._ids: dict[Site, int] = {}
        self._memo: dict[bytes, str | None] = {}
        self._lock = threading.Lock()

    def ids(self, wanted: Iterable[Site]) -> dict[Site, int]:
        """Ids for every wanted site, inserting the new ones (committed before returning)."""
        wanted = set(wanted)
        known = self._ids
        missing = [s for s in wanted if s not in known]
        if missing:
            with self._lock:
                found = self._resolve(missing)
                if len(known) + len(found) > MAX_CACHED:
                    known.clear()
                known.update(found)
        return {s: known[s] for s in wanted}

    def compact_many(self, reports: list[bytes | None]) -> list[str | None]:
        """The stored form of each report given as JSON bytes (the ingest workers' form).

        Most events share their report's shape exactly (the same fields hit the same way),
        so each distinct report is converted once and remembered: ids never change."""
        memo = self._memo
        missing = {r for r in reports if r is not None and r not in memo}
        if missing:
            parsed = {r: codec.loads(r) for r in missing}
            ids = self.ids((p, e) for rep in parsed.values() for p, e, _ in sites_of(rep))
            if len(memo) + len(parsed) > MAX_CACHED:
                memo.clear()
            for raw, rep in parsed.items():
                memo[raw] = compact_json(rep, ids)
        return [None if r is None else memo[r] for r in reports]

    def _resolve(self, missing: list[Site]) -> dict[Site, int]:
        t = redaction_sites
        found: dict[Site, int] = {}
        with translate_errors("intern redaction sites"), write_transaction(self.engine) as conn:
            for start in range(0, len(missing), 400):
                chunk = missing[start : start + 400]
                rows = [{"path": p, "entity": e} for p, e in chunk]
                if self.engine.dialect.name == "postgresql":
                    from sqlalchemy.dialects.postgresql import insert as pg_insert

                    conn.execute(pg_insert(t).on_conflict_do_nothing(), rows)
                else:
                    conn.execute(t.insert().prefix_with("OR IGNORE"), rows)
                result = conn.execute(
                    sa.select(t.c.id, t.c.path, t.c.entity).where(
                        sa.tuple_(t.c.path, t.c.entity).in_(chunk)
                    )
                )
                found.update({(r.path, r.entity): int(r.id) for r in result})
        return found

    def table(self) -> dict[int, Site]:
        """Every site (for :func:`expand`)."""
        with translate_errors("read redaction sites"), self.engine.connect() as conn:
            rows = conn.execute(sa.select(redaction_sites))
            return {int(r.id): (r.path, r.entity) for r in rows}
