"""Field policy per source and event type: keep, scrub, preview, summarise or drop.

Kept as is (after a cheap check): ids, types, tool/task/target names, step ids, durations,
sizes, counts, statuses, reason codes. Scrubbed in full: arguments, goals, error messages,
coercion changes. Previewed: outputs, results, bodies, messages. Dropped: provider raw
objects. Anything not named here goes through the generic walk (key rules + detection), so a
new field in a future runner version is scrubbed, not stored raw.
"""

from __future__ import annotations

import pickle
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import orjson

from tracelake.forksafe import renew_locks_after_fork
from tracelake.scrub import replays
from tracelake.scrub.detect import detect_int
from tracelake.scrub.ids import kept_as_id
from tracelake.scrub.keys import is_identifier_key, is_number_key, is_quantity
from tracelake.scrub.messages import message as _message
from tracelake.scrub.pseudonym import provisional_stamp, subject_key
from tracelake.scrub.replays import Replays
from tracelake.scrub.walk import MIN_CHECKED, Walker

Rule = Callable[[Walker, Any, str], Any]

_SCALARS = (bool, int, float)
TRACE_METADATA_SAFE = frozenset(
    {"collection_id", "case_id", "quality_case_id", "request_id", "failure_reason", "http_status"}
)


def keep(w: Walker, value: Any, path: str) -> Any:
    """Ids, names, counts: kept when they are plain scalars, else walked. A string under a
    key that names an id is judged as an id (kept or pseudonymised, :meth:`Walker.identifier`);
    any other is a label (:meth:`Walker.label`)."""
    cls = value.__class__
    if cls is str or isinstance(value, str):
        return _kept_text(w, value, path)
    if value is None or cls is bool:
        return value
    if cls is int or cls is float or isinstance(value, _SCALARS):
        if isinstance(value, bool) or -MIN_CHECKED < value < MIN_CHECKED:
            return value  # a count, a duration, a status: under 8 digits nothing is checked
        return _kept_number(w, path.rpartition(".")[2], value, path)
    return w.value(value, path)


def _kept_number(w: Walker, key: str, value: int | float, path: str) -> Any:
    """A whole number of 8 digits or more under a kept field (an int, or a float such as
    4328649369415725.0). Under an id key it is judged as an id (a card number as
    ``trace_metadata.case_id`` is pseudonymised, as it is in the generic walk); under any
    other kept key only a personal number's own shape is replaced (a card by its checksum, a
    resident number, a Korean mobile number that lost its leading zero), so a Windows error
    code (-2147024891) or a size stays; under a quantity key (sizes, durations) a mobile
    number's shape is taken for the quantity it is there (1073741824 bytes)."""
    if isinstance(value, float) and not value.is_integer():  # a measurement, NaN, infinity
        return value
    whole = int(value)
    if is_identifier_key(key):
        checked = w.field(key, whole, path)
        return value if checked.__class__ is int and checked == whole else checked
    entity = detect_int(whole, strict=False)
    if entity is None or (entity == "PHONE_NUMBER" and is_quantity(key)):
        return value
    w.hit(path, entity)
    return f"[{entity}]"


def _kept_text(w: Walker, value: str, path: str) -> str:
    """:func:`keep` of a string: an id under an id key, else a label."""
    key = path.rpartition(".")[2]
    if is_identifier_key(key):
        return w.identifier(value, path, number=is_number_key(key))
    if value in _PLAIN_LABELS:
        return value
    out = w.label(key, value, path, limit=256)
    # only codes: for text with spaces the result depends on the key (is_reason_key)
    if out == value and len(value) <= 256 and _WHITESPACE.search(value) is None:
        if len(_PLAIN_LABELS) >= _PLAIN_LABELS_MAX:
            _PLAIN_LABELS.clear()
        _PLAIN_LABELS.add(value)
    return out


# Labels without whitespace keep() returned unchanged with nothing to record (for those, a
# pure function of the value).
_WHITESPACE = re.compile(r"\s")
_PLAIN_LABELS: set[str] = set()
_PLAIN_LABELS_MAX = 65_536


def _kept_as_is(key: str, value: Any) -> bool:
    """Whether :func:`keep` returns *value* itself with nothing to record: a plain number,
    ``None``, or a string already judged so (as an id under an id key, else as a label)."""
    cls = value.__class__
    if cls is str:
        kind = _KEY_KINDS.get(key)
        if kind is None:
            kind = _key_kind(key)
        if kind is _LABEL:
            return value in _PLAIN_LABELS
        return kept_as_id(value, number=kind is _NUMBER_ID)
    if cls is int or cls is float:
        return bool(-MIN_CHECKED < value < MIN_CHECKED)
    return value is None or cls is bool


# What keep() makes of a string under a key: a label, an id, or a thing's number (the key
# rules' answer, a pure function of the key, looked up once per key name)
_LABEL, _ID, _NUMBER_ID = "label", "id", "number id"
_KEY_KINDS: dict[str, str] = {}


def _key_kind(key: str) -> str:
    kind = _LABEL if not is_identifier_key(key) else _NUMBER_ID if is_number_key(key) else _ID
    if len(_KEY_KINDS) >= _PLAIN_LABELS_MAX:
        _KEY_KINDS.clear()
    _KEY_KINDS[key] = kind
    return kind


def scrub(w: Walker, value: Any, path: str) -> Any:
    return w.value(value, path)


def drop(w: Walker, value: Any, path: str) -> Any:
    if value is None:
        return None
    w.act("dropped")
    return {"_dropped": True, "_type": type(value).__name__}


def error(w: Walker, value: Any, path: str) -> Any:
    """``error``: kind and exception type kept; message scrubbed; HTTP status and reason
    code lifted out of the message so projections need not parse it."""
    if not isinstance(value, dict):
        return scrub(w, value, path) if not isinstance(value, str) else _message(w, value, path)
    out: dict[str, Any] = {}
    for key, item in value.items():
        sub = f"{path}.{key}"
        if key in ("kind", "exception_type", "type", "code", "status", "http_status"):
            out[key] = keep(w, item, sub)
        elif key == "message" and isinstance(item, str):
            out.update(_message(w, item, sub, wrap=False))
        else:
            _generic(w, out, key, item, path)
    return out


def _generic(w: Walker, out: dict[str, Any], key: str, item: Any, path: str) -> None:
    """An unnamed key: scrubbed itself, and only its scrubbed form names the path a redaction
    report records (a personal value used as a key must not survive in the report)."""
    skey = w.dict_key(key, path)
    out[skey] = w.field(key, item, f"{path}.{skey}")


def trace_steps(w: Walker, value: Any, path: str) -> Any:
    """Per-step summary only: id, tool, status, duration, retries, error kind."""
    if not isinstance(value, list):
        return scrub(w, value, path)
    w.act("summarized")
    steps: list[dict[str, Any]] = []
    for step in value:
        if not isinstance(step, dict):
            steps.append({"_type": type(step).__name__})
            continue
        err = step.get("error")
        summary: dict[str, Any] = {
            "id": keep(w, step.get("id"), f"{path}[].id"),
            "tool": keep(w, step.get("tool"), f"{path}[].tool"),
            "status": "failed" if err else "ok",
            "duration_ms": keep(w, _number(step.get("duration_ms")), f"{path}[].duration_ms"),
            "retries": keep(w, _number(step.get("retries")), f"{path}[].retries"),
        }
        if isinstance(err, dict):
            summary["error_kind"] = keep(w, err.get("kind"), f"{path}[].error.kind")
        steps.append(summary)
    return steps


def _number(value: Any) -> Any:
    return value if isinstance(value, _SCALARS[1:]) and not isinstance(value, bool) else None


_META_CACHE: OrderedDict[tuple[str, bytes, str, bytes], tuple[bytes, Walker]] = OrderedDict()
_META_CACHE_SIZE = 4096
_META_LOCK = threading.Lock()
renew_locks_after_fork(globals(), "_META_LOCK")
# Results made with a provisional subject secret (a run's subject new in the ingest's chunk),
# replayed while every secret they used is still the one handed out (scrub.replays).
_PROVISIONAL: Replays[tuple[bytes, Walker]] = Replays(subject_key, _META_CACHE_SIZE)


def forget_memoised() -> None:
    """Drop every memoised trace_metadata result (after an erasure: they may hold a pseudonym
    made with the erased secret)."""
    with _META_LOCK:
        _META_CACHE.clear()
    _PROVISIONAL.clear()


# The memo key of a value: its JSON text from orjson (four times faster than pickling it),
# for JSON's own types only: dataclasses, datetimes and subclasses are refused (no memo), and
# non-string keys too. Values of equal text are equal, except that a tuple reads as a list and
# an enum or a UUID as its value: one may then be given the result of the other, which is
# the scrubbed form of the same text.
_MEMO_OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _memo_text(value: Any) -> bytes:
    return orjson.dumps(value, option=_MEMO_OPTIONS)


def memoized(rule: Rule) -> Rule:
    """*rule* run once per distinct (value, path, pseudonym key); later calls replay it.

    For fields whose whole value recurs across events: ``trace_metadata`` (copied onto every
    event of a run), outputs and errors repeated by retries and by the plan-level events.
    The memo is keyed by the value's JSON text (``_memo_text``). The result is kept pickled:
    each hit unpickles a fresh copy, so two stored events never share a container; the report
    counts of the first run are added again. Bounded (LRU-ish: oldest first out). A result
    made with a provisional secret is kept apart, with the secrets it used, and replayed only
    while asking for them again gives the same ones (:mod:`tracelake.scrub.replays`).
    """
    name = rule.__name__

    def run(w: Walker, value: Any, path: str) -> Any:
        if value is None or value.__class__ is str:  # strings: the detection cache suffices
            return rule(w, value, path)
        try:
            memo_key = (name, w.key, path, _memo_text(value))
        except Exception:  # noqa: BLE001 - not encodable: no memo, the walk decides (and fails closed)
            return rule(w, value, path)
        hit = _META_CACHE.get(memo_key)
        if hit is None:
            hit = _PROVISIONAL.get(w.key, memo_key)
        if hit is None:
            stamp = provisional_stamp()
            sub = Walker(w.key)
            recording = replays.start()
            try:
                out = rule(sub, value, path)
            finally:
                used = replays.stop(recording)
            hit = (pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL), sub)
            if provisional_stamp() != stamp:  # a provisional pseudonym in it: kept apart
                _PROVISIONAL.put(memo_key, hit, used)
                w.merge(sub)
                return out
            with _META_LOCK:
                _META_CACHE[memo_key] = hit
                while len(_META_CACHE) > _META_CACHE_SIZE:
                    _META_CACHE.popitem(last=False)
        blob, sub = hit
        w.merge(sub)
        return pickle.loads(blob)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = rule.__doc__
    return run


def _trace_metadata(w: Walker, value: Any, path: str) -> Any:
    """Known-safe keys kept; ``auth_readiness`` keeps booleans and header names; the rest
    goes through the generic walk."""
    if not isinstance(value, dict):
        return scrub(w, value, path)
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in TRACE_METADATA_SAFE:
            out[key] = keep(w, item, f"{path}.{key}")
        elif key == "auth_readiness" and isinstance(item, dict):
            out[key] = _auth_readiness(w, item, f"{path}.{key}")
        else:
            _generic(w, out, key, item, path)
    return out


def _auth_readiness(w: Walker, value: dict[str, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        if isinstance(item, bool) or item is None:
            out[w.dict_key(key, path)] = item
        elif "header" in key.lower() and isinstance(item, list | str):
            skey = w.dict_key(key, path)
            names = item if isinstance(item, list) else [item]  # header *names*, not values
            sub = f"{path}.{skey}"
            out[skey] = [keep(w, n, sub) for n in names if isinstance(n, str) and len(n) < 64]
        else:
            _generic(w, out, key, item, path)
    return out


trace_metadata: Rule = memoized(_trace_metadata)


def coercion_changes(w: Walker, value: Any, path: str) -> Any:
    """``args.coerced.changes``: field and rule kept; from/to judged by the field's key rule."""
    if not isinstance(value, list):
        return scrub(w, value, path)
    out: list[Any] = []
    for change in value:
        if not isinstance(change, dict):
            out.append(scrub(w, change, f"{path}[]"))
            continue
        field_name = change.get("field")
        row: dict[str, Any] = {}
        for key, item in change.items():
            sub = f"{path}[].{key}"
            if key in ("field", "rule"):
                row[key] = keep(w, item, sub)
            elif key in ("from", "to") and isinstance(field_name, str):
                row[key] = w.field(field_name, item, f"{path}[].{field_name}")
            else:
                row[w.dict_key(key, path)] = w.field(key, item, sub)
        out.append(row)
    return out


def goal(w: Walker, value: Any, path: str) -> Any:
    """Goals feed query families: scrubbed in full, cut only when very long."""
    return w.text(value, path, limit=1000) if isinstance(value, str) else scrub(w, value, path)


def json_string(w: Walker, value: Any, path: str) -> Any:
    """A JSON document inside a string (agentlane tool-call arguments)."""
    return w.json_text(value, path) if isinstance(value, str) else scrub(w, value, path)


def apply(
    w: Walker, event: dict[str, Any], rules: dict[str, Rule], path: str = ""
) -> dict[str, Any]:
    """Apply *rules* to the fields of *event*; unnamed fields get the generic walk."""
    out: dict[str, Any] = {}
    get = rules.get
    for key, item in event.items():
        rule = get(key) if key.__class__ is str else None
        if rule is keep and _kept_as_is(key, item):
            out[key] = item  # what keep() returns for it, without the call
        elif rule is not None:
            out[key] = rule(w, item, f"{path}.{key}" if path else key)
        else:
            skey = w.dict_key(key, path)
            out[skey] = w.field(key, item, f"{path}.{skey}" if path else skey)
    return out
