"""Payload keys that the row's indexed columns already hold are stored once (migration 0010).

An event's ``type``, ``plan_id``, ``step_id`` and ``tool`` are indexed columns read from its
scrubbed payload, and graph-tool-call writes all four as top-level keys: every row held them
twice (~110 bytes of jsonb for a step event, about a tenth of a stored row). A top-level key
whose value is a string equal to its column is left out of the stored payload, and the row's
``events.redactions`` says which were (``"c": "<one hex digit>"``, a bit per key in
:data:`KEYS` order; ~10 bytes); the reader puts them back (``store.reader``), first, in that
order. Keys are compared, never guessed: a payload without the key, or with another value or
type under it, is stored as it is and gets no bit, so a reader adds exactly what was taken.

The content hash stays the hash of the whole payload (a re-ingest dedupes against rows of
either form); the hash chain covers the stored row as written. Rows without the mark (stored
before 0010, or with nothing to leave out) are read as they are. ``type`` is never left out
when its column is ``"unknown"`` (the column's value for a payload without a string type).
Parquet archives (``retention apply``) hold rows as stored, columns and mark included.
"""

from __future__ import annotations

from typing import Any

KEYS = ("type", "plan_id", "step_id", "tool")
MARK = "c"
_HEX = "0123456789abcdef"
_UNKNOWN_TYPE = "unknown"

Columns = tuple[str | None, str | None, str | None, str | None]  # type, plan_id, step_id, tool


def omitted(payload: dict[str, Any], columns: Columns) -> int:
    """The bit mask of the keys of *payload* that its columns hold (0: none)."""
    mask = 0
    get = payload.get
    for bit, key in _BITS:  # unrolled zip/enumerate: once per stored event
        column = columns[bit]
        if column is not None:
            value = get(key)
            if value.__class__ is str and value == column:
                mask |= 1 << bit
    if mask & 1 and columns[0] == _UNKNOWN_TYPE:
        mask &= ~1
    return mask


_BITS = tuple(enumerate(KEYS))


def without(payload: dict[str, Any], mask: int, also: str | None = None) -> dict[str, Any]:
    """*payload* without the keys in *mask* (and without *also*, when given)."""
    gone = {key for bit, key in enumerate(KEYS) if mask >> bit & 1}
    if also is not None:
        gone.add(also)
    return {k: v for k, v in payload.items() if k not in gone}


def mark(mask: int) -> str:
    """The ``"c"`` value of a mask (one hex digit)."""
    return _HEX[mask]


def mask_of(value: Any) -> int:
    """The mask a stored ``"c"`` value stands for (0 for anything that is not a mark)."""
    return max(_HEX.find(value), 0) if isinstance(value, str) and len(value) == 1 else 0


def restore(payload: dict[str, Any], mask: int, columns: Columns) -> dict[str, Any]:
    """The whole payload of a stored one: the keys in *mask* back from the columns, first."""
    if not mask:
        return payload
    head = {
        key: column
        for bit, (key, column) in enumerate(zip(KEYS, columns, strict=True))
        if mask >> bit & 1 and column is not None
    }
    return {**head, **payload}
