"""One input line to one event dict, or a ContractError naming why not."""

from __future__ import annotations

import hashlib
import hmac
import json
import math
from typing import Any

from tracelake import codec
from tracelake.errors import ContractError
from tracelake.ingest.lines import Line
from tracelake.runners import to_jsonable
from tracelake.runners.normalize import clean_text


def unstorable_id(key: bytes, value: str) -> str:
    """A stable, distinct stand-in for an id that cannot be stored as written."""
    raw = value.encode("utf-8", "surrogatepass")
    return "psn_" + hmac.new(key, b"id\x00" + raw, hashlib.sha256).hexdigest()[:24]


def _reject_constant(name: str) -> Any:
    raise ContractError("non_finite_number", f"{name} is not valid JSON (RFC 8259 has no {name})")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ContractError("non_finite_number", f"{text[:40]} is out of range for a double")
    return value


def parse_line(
    line: Line, max_bytes: int, max_depth: int, id_key: bytes | None = None
) -> dict[str, Any]:
    """The line's object, made storable (NUL and lone surrogates replaced), depth-checked.

    With ``id_key``, a top-level ``run_id``/``event_id`` that no backend can store as written
    (NUL, lone surrogates) becomes a keyed pseudonym of its exact code points instead of being
    cleaned, so two such ids never collapse into one.
    """
    if line.damage is not None:
        raise ContractError(line.damage, line.detail)
    if line.too_long:
        # in kilobytes, in words: the detail is scrubbed, and a byte count of 7 digits or more
        # reads as a phone number to its digit rule ("exceeds the limit of [PHONE_NUMBER]", a
        # fault attack saw), a number before "KiB" as a street address
        raise ContractError(
            "line_too_long",
            f"the line has {_kib(line.size)} kilobytes, over the limit of {_kib(max_bytes)} "
            "kilobytes (set TRACELAKE_MAX_LINE_BYTES)",
        )
    # The fast codec takes every line it reads exactly as the careful path below would (and
    # that needs no cleaning); anything else (NaN, huge numbers, NUL, lone surrogates, a BOM,
    # too deep, not JSON) goes the careful way, which names the reason.
    fast = codec.loads_line(line.data, max_depth)
    if fast is not None:
        return fast
    try:
        text = line.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContractError("invalid_utf8", f"byte {exc.start}: {exc.reason}") from None
    text = text.removeprefix("\ufeff")
    try:
        obj = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise ContractError("not_json", f"{exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise ContractError("too_deep", f"nesting deeper than {max_depth} levels") from None
    except ValueError as exc:  # e.g. an integer longer than Python will convert
        raise ContractError("not_json", f"a value Python cannot read ({str(exc)[:80]})") from None
    if not isinstance(obj, dict):
        raise ContractError("not_an_object", f"a JSON {type(obj).__name__}, not an object")
    if id_key is not None:
        for name in ("run_id", "event_id"):
            value = obj.get(name)
            if isinstance(value, str) and clean_text(value) != value:
                obj[name] = unstorable_id(id_key, value)
    # One walk copies, cleans and depth-checks (it stops at max_depth, so it cannot recurse deep).
    cleaned: dict[str, Any] = to_jsonable(obj, max_depth + 1)
    return cleaned


def _kib(size: int) -> int:
    return -(-size // 1024)  # rounded up: a line just over the limit is over it
