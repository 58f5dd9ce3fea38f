"""The fast JSON codec (orjson), byte for byte the same as the stdlib encodings it replaces.

Stored documents and content hashes must not change when the codec does (a re-ingest of data
stored by an earlier version is recognised by its content hash, and bare run ids hash the
canonical form of their events), so every function here either returns exactly what the
stdlib form returns or falls back to the stdlib for that one value:

* :func:`dumps` == ``json.dumps(v, ensure_ascii=False, separators=(",", ":"), allow_nan=False)``
* :func:`canonical` == the same with ``sort_keys=True``, as UTF-8 bytes
* :func:`loads_line` parses an input line, or returns ``None`` when the line needs the careful
  stdlib path (anything orjson reads differently or that needs cleaning: NaN/Infinity, huge
  numbers, ``\\u0000``, lone surrogates, a BOM, nesting beyond the limit, invalid JSON).

The differences this guards against were measured: orjson writes floats below 1e-4 without an
exponent (``0.00001`` where Python writes ``1e-05``), refuses integers beyond 64 bits on
output, reads integers beyond 64 bits as floats, and reads ``\\u0000`` into a NUL character.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_SORT = orjson.OPT_SORT_KEYS
# Number tokens that orjson writes differently from Python: floats below 1e-4 without an
# exponent (0.00001 for 1e-05) and one-digit exponents (2.5e-7 for 2.5e-07). A match inside a
# string only costs a fallback to the stdlib, never a wrong result.
_SMALL_FLOAT = re.compile(rb"(?:^|[:,\[])-?(?:0\.0000|\d+(?:\.\d+)?e[-+]?\d(?!\d))")
# Integers of 20+ digits may be beyond 64 bits: orjson reads them as floats.
_LONG_DIGITS = re.compile(rb"\d{20}")
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"{}[]")


def _std_dumps(value: Any, sort_keys: bool) -> str:
    return json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, sort_keys=sort_keys
    )


def dumps_bytes(value: Any) -> bytes:
    """The stored JSON of *value* as UTF-8 bytes (see the module docstring)."""
    try:
        out = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):  # ints beyond 64 bits, non-str keys, NaN
        return _std_dumps(value, False).encode()
    if _SMALL_FLOAT.search(out) is None:
        return out
    return _std_dumps(value, False).encode()


def dumps(value: Any) -> str:
    """The stored JSON of *value*: compact, UTF-8, keys in the given order."""
    return dumps_bytes(value).decode()


def canonical(value: Any) -> bytes:
    """Keys sorted, compact, UTF-8: what run identity hashes."""
    try:
        out = orjson.dumps(value, option=_SORT)
    except (TypeError, orjson.JSONEncodeError):
        return _std_dumps(value, True).encode()
    if _SMALL_FLOAT.search(out) is None:
        return out
    return _std_dumps(value, True).encode()


def loads(data: bytes | str) -> Any:
    """Plain parsing of JSON written by :func:`dumps` (stored documents, spool records)."""
    return orjson.loads(data)


def loads_line(data: bytes, max_depth: int) -> dict[str, Any] | None:
    """The line's object when orjson reads it exactly as the careful path would, else None.

    ``max_depth`` is the number of nested containers below the root that are allowed (the
    careful path's limit); deeper lines go the careful way and are quarantined there.
    """
    if b"\\u0000" in data or b"\\U0000" in data or _LONG_DIGITS.search(data) is not None:
        return None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is not dict or not _depth_ok(data, max_depth + 1):
        return None
    return obj


def _depth_ok(data: bytes, limit: int) -> bool:
    """At most *limit* containers open at once (strings, which may hold brackets, skipped)."""
    if data.count(b"{") + data.count(b"[") <= limit:
        return True
    depth = 0
    for c in _STRINGS.sub(b"", data).translate(None, _NOT_BRACKETS):
        if c == 0x7B or c == 0x5B:  # { [
            depth += 1
            if depth > limit:
                return False
        else:
            depth -= 1
    return True
