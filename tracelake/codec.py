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
# exponent (0.00001 for 1e-05) and one-digit exponents (2.5e-7 for 2.5e-07). Both are found
# by a search led by a literal, then confirmed as a number token: the mantissa before them
# must start right after ``:``, ``,``, ``[`` or the start of the text (with an optional
# minus). Text inside strings rarely passes that (a UUID's ``5c6e-4`` does not: ``c`` is no
# delimiter); when it does, the value only costs a fallback to the stdlib, never a wrong
# result.
_EXPONENT = re.compile(rb"e[-+]?[0-9](?![0-9])")
_SMALL = re.compile(rb"0\.0000")
_MANTISSA = frozenset(b"0123456789.")
_TOKEN_START = frozenset(b":,[")
# digits read as 0 and "+" as "-": one exponent search of a translated copy (~1 us for 1 KB)
# says whether any digit-e-sign-digit is there at all; hex ids (e5c, 3e-4) made the search
# for "e" alone confirm ~20 candidates per event in Python (~9 us)
_EXPONENT_SHAPE = bytes.maketrans(b"0123456789+", b"0000000000-")
# Integers orjson cannot hold (beyond an unsigned 64-bit one, 20+ digits; below a signed one,
# a minus and 19+ digits) are read as floats. One translated copy of a line answers that and
# counts its containers: digits read as 0, "[" as "{", "-" kept, the rest as blanks (one pass
# instead of three: 2.3 -> 1.8 us a line on the bench corpus).
_DIGITS_AND_OPENERS = bytes(
    0x30 if 0x30 <= b <= 0x39 else 0x7B if b in (0x5B, 0x7B) else b if b == 0x2D else 0x20
    for b in range(256)
)
_TWENTY_DIGITS = b"0" * 20
_NEGATIVE_NINETEEN = b"-" + b"0" * 19
_NINETEEN_DIGITS = b"0" * 19  # in both of the above: one search for the usual line


def _number_starts_at(out: bytes, end: int) -> bool:
    """Whether the bytes before *end* are a number token's digits (and dot), begun by a
    delimiter, an optional minus sign, or the start of *out*."""
    i = end - 1
    while i >= 0 and out[i] in _MANTISSA:
        i -= 1
    if i == end - 1:
        return False  # no digit before: a word such as "time-1"
    if i >= 0 and out[i] == 0x2D:  # "-"
        i -= 1
    return i < 0 or out[i] in _TOKEN_START


def _differs(out: bytes) -> bool:
    """Could orjson's *out* differ from the stdlib's text for the same value?"""
    if b"0.0000" in out:
        for match in _SMALL.finditer(out):
            start = match.start()
            if start == 0 or out[start - 1] in _TOKEN_START or out[start - 1] == 0x2D:
                return True
    if b"0e-0" in out.translate(_EXPONENT_SHAPE):
        for match in _EXPONENT.finditer(out):
            if _number_starts_at(out, match.start()):
                return True
    return False


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
    return _std_dumps(value, False).encode() if _differs(out) else out


def dumps_floatless(value: Any) -> bytes:
    """:func:`dumps_bytes` of a value that holds no float by construction (strings, integers,
    booleans, None, lists and dicts of them, such as a redaction report): orjson's text is the
    stdlib's there, so it is not searched for float tokens."""
    try:
        return orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):  # ints beyond 64 bits, lone surrogates
        return _std_dumps(value, False).encode()


def dumps_whole(value: Any) -> tuple[bytes, bool]:
    """:func:`dumps_bytes` of *value*, and whether that is orjson's own text: then the text
    of any container inside *value* (or of *value* with keys left out) is orjson's too
    (:func:`dumps_part`), since every number token there is one of this text's, after the
    same delimiter."""
    try:
        out = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return _std_dumps(value, False).encode(), False
    if _differs(out):
        return _std_dumps(value, False).encode(), False
    return out, True


def dumps_part(value: dict[str, Any] | list[Any], whole_is_orjson: bool) -> bytes:
    """:func:`dumps_bytes` of a container made of parts of a value that :func:`dumps_whole`
    encoded (a member, or the value without some keys): without the check when that text
    was orjson's own."""
    return orjson.dumps(value) if whole_is_orjson else dumps_bytes(value)


def dumps(value: Any) -> str:
    """The stored JSON of *value*: compact, UTF-8, keys in the given order."""
    return dumps_bytes(value).decode()


def canonical(value: Any) -> bytes:
    """Keys sorted, compact, UTF-8: what run identity hashes."""
    try:
        out = orjson.dumps(value, option=_SORT)
    except (TypeError, orjson.JSONEncodeError):
        return _std_dumps(value, True).encode()
    return _std_dumps(value, True).encode() if _differs(out) else out


def loads(data: bytes | str) -> Any:
    """Plain parsing of JSON written by :func:`dumps` (stored documents, spool records)."""
    return orjson.loads(data)


def loads_line(data: bytes, max_depth: int) -> dict[str, Any] | None:
    """The line's object when orjson reads it exactly as the careful path would, else None.

    ``max_depth`` is the number of nested containers below the root that are allowed (the
    careful path's limit); deeper lines go the careful way and are quarantined there.
    """
    shape = data.translate(_DIGITS_AND_OPENERS)
    if b"\\u0000" in data or (
        _NINETEEN_DIGITS in shape and (_TWENTY_DIGITS in shape or _NEGATIVE_NINETEEN in shape)
    ):
        return None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is not dict:
        return None
    limit = max_depth + 1  # containers open at once, the root included
    if shape.count(b"{") > limit and not _depth_ok(obj, limit):
        return None
    return obj


def _depth_ok(root: dict[str, Any], limit: int) -> bool:
    """At most *limit* containers open at once (a walk over containers only)."""
    level: list[Any] = [root]
    depth = 1
    while level:
        if depth > limit:
            return False
        nxt: list[Any] = []
        for c in level:
            for v in c.values() if type(c) is dict else c:
                if type(v) is dict or type(v) is list:
                    nxt.append(v)
        level, depth = nxt, depth + 1
    return True
