"""The failure classifier's derivation order, on the shapes the scrubber stores."""

from __future__ import annotations

import pytest

from tracelake.runners.failure_reasons import REASONS, classify


@pytest.mark.parametrize(
    ("error", "meta", "reason", "stage", "retryable"),
    [
        (
            {"kind": "tool", "http_status": 403, "exception_type": "HTTPStatusError"},
            None,
            "auth_failed",
            "execute",
            False,
        ),
        ({"kind": "tool", "http_status": 401}, None, "auth_failed", "execute", False),
        ({"kind": "tool", "http_status": 429}, None, "http_4xx", "execute", True),
        (
            {"kind": "tool", "exception_type": "ValueError", "message": "invalid timeout value -1"},
            None,
            "unknown",
            "execute",
            False,
        ),
        (
            {
                "kind": "tool",
                "exception_type": "RemoteProtocolError",
                "message": "Server disconnected without sending a response.",
            },
            None,
            "network_error",
            "execute",
            True,
        ),
        ({"kind": "tool", "http_status": 404}, None, "http_4xx", "execute", False),
        ({"kind": "tool", "http_status": 503}, None, "http_5xx", "execute", True),
        (
            {"kind": "tool", "exception_type": "TimeoutError", "message": "read timed out"},
            None,
            "timeout",
            "execute",
            True,
        ),
        ({"kind": "tool", "exception_type": "ReadTimeout"}, None, "timeout", "execute", True),
        (
            {"kind": "tool", "exception_type": "ConnectionError", "message": "refused"},
            None,
            "network_error",
            "execute",
            True,
        ),
        (
            {"kind": "tool", "message": "connection reset by peer"},
            None,
            "network_error",
            "execute",
            True,
        ),
        (
            {"kind": "binding", "message": "key 'order' not found in binding 's1.order'"},
            None,
            "binding_failed",
            "bind_request",
            False,
        ),
        (
            {"kind": "output_binding", "message": "terminal step produced no output"},
            None,
            "output_binding_failed",
            "bind_output",
            False,
        ),
        # an explicit reason code wins over the HTTP status
        (
            {"kind": "tool", "http_status": 401, "reason_code": "auth_profile_missing"},
            None,
            "auth_profile_missing",
            "auth_preflight",
            False,
        ),
        (
            {"kind": "tool", "http_status": 500},
            {"failure_reason": "cleanup_failed"},
            "cleanup_failed",
            "cleanup",
            False,
        ),
        ({"kind": "timeout", "message": "Tool 'x' timed out"}, None, "timeout", "execute", True),
        ({"kind": "card_declined", "message": "issuer 51"}, None, "unknown", "execute", False),
        (None, None, "unknown", "execute", False),
        ("HTTP 502 Bad Gateway", None, "unknown", "execute", False),
    ],
)
def test_derivation_order(
    error: object, meta: object, reason: str, stage: str, retryable: bool
) -> None:
    c = classify(error, meta)
    assert (c.reason, c.stage, c.retryable) == (reason, stage, retryable)
    assert c.operator_action


def test_every_reason_has_an_action_that_says_what_to_do() -> None:
    for reason, (stage, _retryable, action) in REASONS.items():
        assert stage and len(action) > 20, reason


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("403 Client Error: Forbidden for url: https://api.shop.local/orders", "auth_failed"),
        ("404 Client Error: Not Found for url: https://api.shop.local/orders/1", "http_4xx"),
        ("502 Server Error: Bad Gateway for url: https://api.shop.local/", "http_5xx"),
    ],
)
def test_requests_http_errors_are_classified_through_the_scrubber(
    message: str, reason: str
) -> None:
    """requests.HTTPError's text: the scrubber lifts the status, the classifier uses it."""
    from tracelake.scrub import get_scrubber

    event = {
        "type": "step.failed",
        "stage": "runner",
        "step_id": "s1",
        "tool": "getOrder",
        "error": {"kind": "tool", "exception_type": "HTTPError", "message": message},
    }
    stored = get_scrubber(b"k" * 32).scrub_event("graph_tool_call", "step.failed", event).payload
    assert classify(stored["error"], None).reason == reason
