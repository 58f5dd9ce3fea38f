"""Compact previews of outputs, results, bodies and messages.

A preview keeps the *shape* of a value (keys, nesting, types) with scrubbed, truncated
scalars, bounded depth and item count, and the original size:

    {"_preview": {"orderNo": "ORD-1", "items": [{...}, {"_more": 7}]},
     "_bytes": 18234, "_items": 3, "_truncated": true}

Strings are scanned before they are cut (on a prefix a little longer than the cut), so a
secret that straddles the cut is still found. graph-tool-call's own ``{"_preview": "<json
cut at 512>", "_truncated": true}`` is parsed back (or judged pair by pair when the cut
broke the JSON) instead of being kept as opaque text.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

import orjson

from tracelake.scrub.detect import CLEAN_TEXTS
from tracelake.scrub.keys import KeyClass, classify
from tracelake.scrub.walk import Walker
from tracelake.scrub.written import named_pair

MAX_DEPTH = 3
MAX_ITEMS = 3
MAX_KEYS = 24
MAX_STR = 80
CUT_JSON_STR = 300  # a cut JSON text cannot be shaped: keep more of it


# The original size: the value's compact UTF-8 JSON (orjson, ~10x the stdlib encoder; the
# stdlib's for what orjson refuses: integers beyond 64 bits, NaN, non-string keys)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _size(value: Any) -> int:
    try:
        return len(orjson.dumps(value))
    except (TypeError, orjson.JSONEncodeError):
        pass
    try:
        return len(_ENCODER.encode(value).encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError):
        return -1


def preview(w: Walker, value: Any, path: str) -> Any:
    """The stored form of an output-like field (``None`` stays ``None``)."""
    if value is None:
        return None
    w.act("previewed")
    if isinstance(value, dict) and set(value) <= {"_preview", "_truncated"}:
        inner = value.get("_preview")
        if isinstance(inner, str):  # graph-tool-call's cut JSON text
            parsed = _maybe_json(inner)
            return {
                "_preview": w.json_text(inner, path, limit=CUT_JSON_STR)
                if isinstance(parsed, str)
                else _shape(w, parsed, path, 0),
                "_bytes": len(inner.encode("utf-8")),
                "_truncated": True,
            }
    shaped = _shape(w, value, path, 0)
    out: dict[str, Any] = {"_preview": shaped, "_bytes": _size(value)}
    if isinstance(value, dict | list):
        out["_items"] = len(value)
    out["_truncated"] = _was_cut(value, shaped)
    return out


@lru_cache(maxsize=4096)
def _maybe_json(text: str) -> Any:
    """*text* parsed (or repaired, when cut) if it is JSON, else *text*.

    Cached: graph-tool-call repeats the same cut preview across the events of a run. The
    parsed value is shared between calls, so it must only be read (``_shape`` builds new
    containers and never changes its input)."""
    body = text.rstrip("…")
    if body[:1] in "{[":
        try:
            return json.loads(body)
        except ValueError:
            repaired = repair_cut_json(body)
            if repaired is not None:
                return repaired
    return text


# Strings (complete ones only) and the structural characters of a JSON text.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],]')


def repair_cut_json(text: str) -> Any | None:
    """The longest complete prefix of a JSON text cut at an arbitrary character, parsed.

    graph-tool-call cuts ``output_preview`` JSON at 512 characters. Everything up to the last
    ``,`` at which every earlier value is complete is kept and the open brackets are closed,
    so ``{"a": 1, "b": {"c": "x", "d": "ab`` becomes ``{"a": 1, "b": {"c": "x"}}``; the
    value that was cut is dropped (it is not stored at all). ``None`` if nothing parses.
    Callers record ``_truncated``.
    """
    stack: list[str] = []
    cuts: list[tuple[int, str]] = []
    for match in _JSON_TOKEN.finditer(text):
        token = match.group(0)
        if token in ("{", "["):
            stack.append("}" if token == "{" else "]")
        elif token in ("}", "]"):
            if not stack or stack.pop() != token:
                return None
            if not stack:
                cuts.append((match.end(), ""))
        elif token == ",":
            cuts.append((match.start(), "".join(reversed(stack))))
    # A "," inside a string that the cut left open is mistaken for a separator: if the last
    # candidate does not parse, an earlier one does.
    for end, closing in reversed(cuts[-4:]):
        try:
            return json.loads(text[:end] + closing)
        except ValueError:
            continue
    return None


def _was_cut(original: Any, shaped: Any) -> bool:
    if isinstance(original, str):
        return isinstance(shaped, str) and shaped.endswith("…") and not original.endswith("…")
    if isinstance(original, list):
        return len(original) > MAX_ITEMS or any(
            _was_cut(o, s) for o, s in zip(original, shaped, strict=False)
        )
    if isinstance(original, dict):
        if len(original) > MAX_KEYS or not isinstance(shaped, dict):
            return True
        for k, v in original.items():
            if v is None or v.__class__ in _NEVER_CUT:  # _was_cut() would say False
                continue
            if k in shaped and _was_cut(v, shaped[k]):
                return True
    return False


_NEVER_CUT = frozenset({int, float, bool})
_FLOAT_CHECKED = 10_000_000.0  # Walker checks whole floats of 8 digits and more


def _shape(w: Walker, value: Any, path: str, depth: int) -> Any:
    cls = value.__class__
    if cls is str or isinstance(value, str):
        if value[:1] in "{[" and value.rstrip()[-1:] in "}]…":
            return w.json_text(value, path, limit=MAX_STR)
        return w.text(value, path, limit=MAX_STR)
    if not (cls is dict or cls is list or isinstance(value, dict | list)):
        return w.value(value, path)  # numbers (ints are checked), bools, None
    if depth >= MAX_DEPTH:
        return {"_keys": len(value)} if isinstance(value, dict) else {"_items": len(value)}
    if isinstance(value, list):
        sub = f"{path}[]"
        argv = w.argv(value, sub)  # ["psql", "--password", "x"]
        items = [
            argv[i] if i in argv else _shape(w, item, sub, depth + 1)
            for i, item in enumerate(value[:MAX_ITEMS])
        ]
        if len(value) > MAX_ITEMS:
            items.append({"_more": len(value) - MAX_ITEMS})
        return items
    return _shape_dict(w, value, path, depth)


def _shape_dict(w: Walker, value: dict[Any, Any], path: str, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    pair = named_pair(value)
    for i, (key, item) in enumerate(value.items()):
        if i >= MAX_KEYS:
            out["_more_keys"] = len(value) - MAX_KEYS
            break
        # a key detect() found clean is its own scrubbed form (Walker.dict_key, without the call)
        known = key.__class__ is str and key in CLEAN_TEXTS and len(key) <= 200
        skey = key if known else w.dict_key(key, path)
        if pair is not None and (key == pair[0] or key == pair[2]):  # {"name": .., "value": ..}
            out[skey] = _bounded(w.pair_part(pair, key, item, f"{path}.{skey}", depth))
        elif classify(key)[0] is KeyClass.PLAIN:
            out[skey] = _shape_plain(w, key, item, f"{path}.{skey}", depth)
        else:  # key rules decide (credential, person, pseudonym, id)
            out[skey] = _bounded(w.field(key, item, f"{path}.{skey}", depth))
    return out


def _shape_plain(w: Walker, key: str, item: Any, path: str, depth: int) -> Any:
    """A value under a key without an opinion: shaped, or checked when an integer."""
    icls = item.__class__
    if icls is str and item in CLEAN_TEXTS and len(item) <= MAX_STR and item[:1] not in "{[":
        return item  # what _shape -> Walker.text returns for a string detect() found clean
    if icls is str or icls is dict or icls is list:
        return _shape(w, item, path, depth + 1)
    if icls is float and -_FLOAT_CHECKED < item < _FLOAT_CHECKED:
        return item  # a measurement; larger whole floats are judged like ints (w.field)
    if item is None or icls is bool:
        return item
    if icls is int:
        return w.keyed_number(key, item, path)
    if isinstance(item, dict | list | str):
        return _shape(w, item, path, depth + 1)
    return _bounded(w.field(key, item, path, depth))  # another scalar type


def _bounded(value: Any) -> Any:
    """Key-ruled values under SAFE_ID/PSEUDONYM keys can still be containers: bound them."""
    if value.__class__ is str and len(value) <= MAX_STR:  # the common case: a short marker
        return value
    if isinstance(value, dict):
        return {"_keys": len(value)}
    if isinstance(value, list):
        return {"_items": len(value)}
    if isinstance(value, str) and len(value) > MAX_STR:
        return value[:MAX_STR] + "…"
    return value
