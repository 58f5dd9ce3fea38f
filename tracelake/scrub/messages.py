"""Error messages: scrubbed, with the HTTP status and the reason code lifted out of them, so
projections need not parse the text (the ``error`` rule of :mod:`tracelake.scrub.policy`)."""

from __future__ import annotations

import re
from typing import Any

from tracelake.scrub.walk import Walker

REASON_CODES = (
    "auth_context_required",
    "auth_profile_missing",
    "auth_header_resolution_failed",
    "auth_failed",
    "http_4xx",
    "http_5xx",
    "unsatisfied_field",
    "cleanup_failed",
)
_REASON_RE = re.compile(
    r"\b(" + "|".join(REASON_CODES) + r")\b|\breason(?:_code)?\s*[=:]\s*([a-z][a-z0-9_]{2,48})"
)
_HTTP_RE = re.compile(
    r"(?i)\b(?:http(?:\s*status)?|status(?:[\s_-]*code)?|code)\s*[:=]?\s*([1-5]\d{2})\b"
    r"|\b([1-5]\d{2})\s+(?:Bad Request|Unauthorized|Forbidden|Not Found|Conflict|"
    r"Too Many Requests|Internal Server Error|Bad Gateway|Service Unavailable|Gateway Timeout|"
    r"Client Error|Server Error)\b"  # the last two: requests.HTTPError's "403 Client Error: ..."
)


def message(w: Walker, text: str, path: str, *, wrap: bool = True) -> dict[str, Any]:
    """The message scrubbed, with the HTTP status and the reason code lifted out of it.

    The reason code is read from the *scrubbed* text: ``reason=<a secret>`` or ``reason:
    <an e-mail>`` must not copy the value the message lost into ``reason_code``. A reason
    past the message's cut is read from a scrubbed copy of the text around it (a scratch
    walker: its finds are not counted twice)."""
    message = w.text(text, path, limit=_MESSAGE_LIMIT)
    out: dict[str, Any] = {"message": message}
    http = _HTTP_RE.search(text)  # three digits, 100-599: nothing personal
    if http:
        out["http_status"] = int(http.group(1) or http.group(2))
    reason = _REASON_RE.search(message)
    if reason is None and len(text) > _MESSAGE_LIMIT:
        raw = _REASON_RE.search(text, _MESSAGE_LIMIT - 64)
        if raw is not None:
            around = text[max(0, raw.start() - 64) : raw.end() + 64]
            reason = _REASON_RE.search(Walker(w.key).text(around, path, limit=len(around)))
    if reason:
        out["reason_code"] = reason.group(1) or reason.group(2)
    return out


_MESSAGE_LIMIT = 500
