"""One input line to one event dict, or a ContractError naming why not."""

from __future__ import annotations

import json
from typing import Any

from tracelake.contracts import check_depth
from tracelake.errors import ContractError
from tracelake.ingest.lines import Line


def _reject_constant(name: str) -> Any:
    raise ContractError("non_finite_number", f"{name} is not valid JSON (RFC 8259 has no {name})")


def parse_line(line: Line, max_bytes: int, max_depth: int) -> dict[str, Any]:
    if line.too_long:
        raise ContractError("line_too_long", f"{line.size} bytes exceeds the limit of {max_bytes}")
    try:
        text = line.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContractError("invalid_utf8", f"byte {exc.start}: {exc.reason}") from None
    text = text.removeprefix("\ufeff")
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ContractError("not_json", f"{exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise ContractError("too_deep", f"nesting deeper than {max_depth} levels") from None
    if not isinstance(obj, dict):
        raise ContractError("not_an_object", f"a JSON {type(obj).__name__}, not an object")
    check_depth(obj, max_depth)
    return obj
