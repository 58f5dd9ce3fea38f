"""Failure reasons: one stable reason, stage, retryability and operator action per failure.

The taxonomy behind the ``failure_taxonomy`` projection (``projections.failure_taxonomy``).

Reads only what the scrubber keeps in stored payloads: ``error.kind``, ``error.exception_type``,
``error.http_status`` / ``error.reason_code`` (lifted from the message by the scrubber), the
scrubbed message, and ``trace_metadata.failure_reason`` / ``http_status``.

Derivation order (issue 4):

1. an explicit reason code in the error (``reason_code``, ``reason``, ``code``, or an error
   ``kind`` that is itself a known reason) or in ``trace_metadata.failure_reason``;
2. an HTTP status: 401/403 -> ``auth_failed``, other 4xx (429 too) -> ``http_4xx``,
   5xx -> ``http_5xx``;
3. the exception type and message: timeouts -> ``timeout``, connection errors ->
   ``network_error``;
4. the error kind: binding errors -> a binding reason from graph-tool-call's message
   (``unsatisfied_field`` when the run's input could not fill the argument, ``binding_failed``
   when an upstream step's output could not, ``missing_required_argument``,
   ``output_binding_failed``; see ``runners.binding_causes``).

Every classification also has a ``detail``: a stable snake_case sub-code of the reason
(``binding_causes`` documents each with the message pattern it comes from).

Anything else is ``unknown``: stored, never dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from tracelake.runners.binding_causes import BindingCause, binding_cause, detail_of

# seed 002's adapter reason codes, graph-tool-call's failure taxonomy, and what we derive.
REASONS: dict[str, tuple[str, bool, str]] = {
    # reason: (stage, retryable, operator_action)
    "auth_context_required": (
        "auth_preflight",
        False,
        "the run had no user/session context: pass it in input_context before running",
    ),
    "auth_profile_missing": (
        "auth_preflight",
        False,
        "the collection needs auth but has no auth profile: configure one for the collection",
    ),
    "auth_header_resolution_failed": (
        "auth_preflight",
        False,
        "building the execution headers failed: check the auth profile and header templates",
    ),
    "auth_failed": (
        "execute",
        False,
        "the downstream API answered 401/403: check credentials, token expiry and auth readiness",
    ),
    "http_4xx": (
        "execute",
        False,
        "the downstream API rejected the request: check the step's args_resolved against "
        "the API's schema (429: back off and retry later)",
    ),
    "http_5xx": (
        "execute",
        True,
        "the downstream API failed: check its health; configure a RetryPolicy if this recurs",
    ),
    "timeout": (
        "execute",
        True,
        "the tool call timed out: check the API's latency and the executor's timeout",
    ),
    "network_error": (
        "execute",
        True,
        "the API was unreachable: check DNS, host allowlists and the network path",
    ),
    "binding_failed": (
        "bind_request",
        False,
        "a required producer value is missing: inspect the step's args bindings and the "
        "upstream step's output_preview",
    ),
    "unsatisfied_field": (
        "bind_request",
        False,
        "a required input could not be filled: supply it in input_context or fix the plan",
    ),
    "missing_required_argument": (
        "bind_request",
        False,
        "a required tool argument is missing: check the plan step's args against the tool schema",
    ),
    "output_binding_failed": (
        "bind_output",
        False,
        "the plan's output_binding could not be resolved: check it against the terminal "
        "step's output_preview",
    ),
    "cleanup_failed": (
        "cleanup",
        False,
        "mutation cleanup failed: check the cleanup step and revert the mutation by hand",
    ),
    "unknown": (
        "execute",
        False,
        "no reason could be derived from the stored error: read the failing events with "
        "`tracelake runs show RUN_ID --json` and the executor logs",
    ),
}

_TIMEOUT_TYPE = re.compile(r"(?i)timeout|timed_?out|deadline")
# "timed out", "timeout after 5s", "read timeout", "deadline exceeded"; not "invalid timeout value"
_TIMEOUT_MSG = re.compile(
    r"(?i)\btimed?[\s_-]?out\b(?!\s+(?:value|setting|parameter|argument|must|should))"
    r"(?<!invalid timeout)(?<!invalid time out)|deadline exceeded"
)
_NETWORK_TYPE = re.compile(
    r"(?i)connect|network|socket|dns|gaierror|unreachable|remotedisconn|remoteprotocol"
)
_NETWORK_MSG = re.compile(
    r"(?i)connection (?:refused|reset|aborted|error|closed)|network (?:is )?unreachable"
    r"|name or service not known|temporary failure in name resolution|no route to host"
    r"|server disconnected"
)
_UNSATISFIED = re.compile(r"(?i)unsatisf|could not (?:be )?(?:fill|satisf)|no value for input")


@dataclass(frozen=True, slots=True)
class Classification:
    stage: str
    reason: str
    retryable: bool
    operator_action: str
    http_status: int | None = None
    exception_type: str | None = None
    error_kind: str | None = None
    detail: str = "unknown"
    field_name: str | None = None  # the input or output key a binding failure names


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def http_status_of(error: dict[str, Any], metadata: dict[str, Any]) -> int | None:
    for key in ("http_status", "status", "status_code", "code"):
        status = _int(error.get(key))
        if status is not None and 100 <= status <= 599:
            return status
    status = _int(metadata.get("http_status"))
    return status if status is not None and 100 <= status <= 599 else None


def explicit_reason(error: dict[str, Any], metadata: dict[str, Any]) -> str | None:
    for value in (error.get("reason_code"), error.get("reason"), error.get("code")):
        reason = _str(value)
        if reason in REASONS and reason != "unknown":
            return reason
    kind = _str(error.get("kind"))
    if kind in REASONS and kind != "unknown":
        return kind  # agentlane's ToolError.kind may itself be a stable reason ("timeout")
    reason = _str(metadata.get("failure_reason"))
    return reason if reason in REASONS and reason != "unknown" else None


def classify(error: Any, metadata: Any = None, *, default_stage: str = "execute") -> Classification:
    """Classify one stored (scrubbed) error object; never raises, never returns nothing."""
    err = _as_error(error)
    meta: dict[str, Any] = metadata if isinstance(metadata, dict) else {}
    kind = _str(err.get("kind"))
    exc_type = _str(err.get("exception_type")) or _str(err.get("type"))
    message = _str(err.get("message")) or ""
    status = http_status_of(err, meta)

    reason = explicit_reason(err, meta) or _status_reason(status)
    cause: BindingCause | None = None
    # binding messages name keys ("timeout" can be one): judged before the message rules
    if reason is None and kind in ("binding", "output_binding"):
        cause = _binding_cause(kind, message)
        reason = cause.reason
    reason = reason or _transport_reason(exc_type, message) or "unknown"
    stage, retryable, action = REASONS[reason]
    if reason == "unknown":
        stage = default_stage
    if status == 429:
        retryable = True  # rate limited: retrying later is the right move
    detail = cause.detail if cause is not None else detail_of(reason, status)
    field_name = cause.field_name if cause is not None else None
    return Classification(
        stage, reason, retryable, action, status, exc_type, kind, detail, field_name
    )


def _as_error(error: Any) -> dict[str, Any]:
    if isinstance(error, str):
        return {"message": error}
    return error if isinstance(error, dict) else {}


def _status_reason(status: int | None) -> str | None:
    """401/403 -> ``auth_failed``, other 4xx -> ``http_4xx``, 5xx -> ``http_5xx``."""
    if status is None or status < 400:
        return None
    if status in (401, 403):
        return "auth_failed"
    return "http_4xx" if status < 500 else "http_5xx"


def _binding_cause(kind: str, message: str) -> BindingCause:
    cause = binding_cause(kind, message)
    if cause.detail == "binding_unresolved" and _UNSATISFIED.search(message):
        return replace(cause, reason="unsatisfied_field", detail="input_unsatisfied")
    return cause


def _transport_reason(exc_type: str | None, message: str) -> str | None:
    """``timeout`` or ``network_error`` from the exception type or the message."""
    if (exc_type and _TIMEOUT_TYPE.search(exc_type)) or _TIMEOUT_MSG.search(message):
        return "timeout"
    if (exc_type and _NETWORK_TYPE.search(exc_type)) or _NETWORK_MSG.search(message):
        return "network_error"
    return None
