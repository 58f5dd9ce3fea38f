"""Normalise whatever a runner hands us into a fresh JSON-compatible tree.

Invariant 5 (the caller's objects are never mutated) starts here: every container is copied,
so nothing downstream can reach back into graph-tool-call's live dicts. The same walk enforces
the nesting limit, so a cyclic or hostile object cannot exhaust the stack.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import math
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from tracelake.errors import ContractError

JSONValue = Any  # dict[str, JSONValue] | list[JSONValue] | str | int | float | bool | None


def to_jsonable(obj: Any, max_depth: int) -> JSONValue:
    """A deep, JSON-compatible copy of ``obj``.

    Objects with ``to_dict()`` (agentlane events) are asked for it first, whatever else they are
    (agentlane's events are also dataclasses); other dataclasses become dicts (like
    ``dataclasses.asdict``), pydantic models are dumped. Non-finite floats become ``None`` (JSON
    has no NaN), bytes become a size marker (raw bytes are never kept), anything else its ``str``.
    Raises :class:`ContractError` ``too_deep`` beyond ``max_depth`` levels.
    """
    return _walk(obj, max_depth, 0)


_SCALARS = frozenset({int, bool, type(None)})
MAX_INT_DIGITS = 4000  # longer ints are cut (Python refuses to print ints past ~4,300 digits)
_INT_LIMIT = 10**MAX_INT_DIGITS


def _long_int(value: int) -> str:
    """Its first digits (Python refuses ``str()`` past ~4,300 digits: then only its size)."""
    try:
        return str(value)[:32] + "…"
    except ValueError:
        return f"[an integer of about {int(value.bit_length() * 0.30103) + 1} digits]"


def clean_text(text: str) -> str:
    """Text every backend can store: NUL (PostgreSQL rejects it in text and jsonb) and lone
    surrogates (not encodable as UTF-8) become U+FFFD. Plain ASCII without NUL is returned as is.
    """
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _too_deep(max_depth: int) -> ContractError:
    return ContractError("too_deep", f"nesting deeper than {max_depth} levels")


def _walk(obj: Any, max_depth: int, depth: int) -> JSONValue:
    kind = type(obj)
    if kind is str:
        return obj if obj.isascii() and "\x00" not in obj else clean_text(obj)
    if kind in _SCALARS:  # the common cases first, without ABC isinstance checks
        if kind is int and not -_INT_LIMIT < obj < _INT_LIMIT:
            return _long_int(obj)
        return obj
    if kind is dict:
        if depth >= max_depth:
            raise _too_deep(max_depth)
        return _walk_dict(obj, max_depth, depth + 1)
    if kind is list:
        if depth >= max_depth:
            raise _too_deep(max_depth)
        return [_walk(v, max_depth, depth + 1) for v in obj]
    return _walk_object(obj, max_depth, depth)


def _walk_dict(obj: dict[Any, Any], max_depth: int, depth: int) -> dict[str, JSONValue]:
    """A dict's copy; plain ASCII str keys and values are taken without a call (most of an
    event's nodes; ~1 us a call on a slow machine)."""
    out: dict[str, JSONValue] = {}
    for k, v in obj.items():
        if type(k) is not str or not k.isascii() or "\x00" in k:
            k = clean_text(str(k))
        if type(v) is str and v.isascii() and "\x00" not in v:
            out[k] = v
        else:
            out[k] = _walk(v, max_depth, depth)
    return out


# Dataclass types -> their field names (a runner emits a few
# dozen types; ``dataclasses.fields()`` rebuilt this tuple on every event, ~40% of the walk).
_FIELDS: dict[type, tuple[str, ...]] = {}


def _dataclass_fields(kind: type) -> tuple[str, ...] | None:
    names = _FIELDS.get(kind)
    if names is None:
        if not hasattr(kind, "__dataclass_fields__"):
            return None
        if len(_FIELDS) > 4096:  # classes made on the fly: keep the cache bounded
            _FIELDS.clear()
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return names


def _walk_fields(obj: Any, names: tuple[str, ...], max_depth: int, depth: int) -> JSONValue:
    if depth >= max_depth:
        raise _too_deep(max_depth)
    out: dict[str, JSONValue] = {}
    for name in names:
        v = getattr(obj, name)
        if type(v) is str and v.isascii() and "\x00" not in v:
            out[name] = v
        else:
            out[name] = _walk(v, max_depth, depth + 1)
    return out


def _walk_object(obj: Any, max_depth: int, depth: int) -> JSONValue:
    """Anything that is not exactly a str, int, bool, None, dict or list."""
    if not isinstance(obj, type):
        # An object that says how it serialises itself (agentlane's events are dataclasses
        # *and* have to_dict(), whose output carries the wire ``type``) is asked first.
        to_dict = getattr(obj, "to_dict", None)
        if callable(to_dict):
            if depth >= max_depth:
                raise _too_deep(max_depth)
            return _walk(to_dict(), max_depth, depth)
        names = _dataclass_fields(type(obj))
        if names is not None:
            return _walk_fields(obj, names, max_depth, depth)
    if isinstance(obj, str | int | float) or obj is None:
        return _scalar(obj, max_depth, depth)
    if depth >= max_depth:
        raise _too_deep(max_depth)
    if isinstance(obj, Mapping):
        return _walk_dict(dict(obj.items()), max_depth, depth + 1)
    if isinstance(obj, list | tuple | set | frozenset):
        return [_walk(v, max_depth, depth + 1) for v in obj]
    return _walk_other(obj, max_depth, depth)


def _scalar(obj: str | int | float | None, max_depth: int, depth: int) -> JSONValue:
    """Subclasses of str, int (IntEnum and friends; bool is kept), float."""
    if isinstance(obj, str):
        return clean_text(str(obj))
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, int) and not isinstance(obj, bool) and type(obj) is not int:
        return _walk(int(obj), max_depth, depth)
    return obj


def _walk_other(obj: Any, max_depth: int, depth: int) -> JSONValue:
    model_dump = getattr(obj, "model_dump", None)
    if callable(model_dump):
        return _walk(model_dump(mode="json"), max_depth, depth)
    if isinstance(obj, enum.Enum):
        return _walk(obj.value, max_depth, depth)
    if isinstance(obj, dt.datetime | dt.date | dt.time):
        return obj.isoformat()
    if isinstance(obj, Decimal | uuid.UUID):
        return str(obj)
    if isinstance(obj, bytes | bytearray | memoryview):
        return f"<{len(obj)} bytes>"
    return str(obj)
