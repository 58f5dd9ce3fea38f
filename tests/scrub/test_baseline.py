"""The baseline (graph-tool-call's scrub_trace_payload) leaks what issue 3 says it leaks.

Asserted on the same corpus the leak tests and the benchmark use, so the comparison in
bench/bench_scrub.py is honest: these kinds leak through the baseline and not through us.
"""

from __future__ import annotations

import json
from typing import Any

from graph_tool_call.learning import scrub_trace_payload

BASELINE_LEAKS = (
    "korean_name",
    "address",
    "ip_address",
    "aws_access_key",
    "opaque_token",
    "spring_session",
)


def _baseline_dump(events: list[dict[str, Any]]) -> str:
    return "\n".join(json.dumps(scrub_trace_payload(e), ensure_ascii=False) for e in events)


def test_baseline_leaks_what_the_issue_says(gtc_corpus: Any) -> None:
    events, planted = gtc_corpus
    dumped = _baseline_dump(events)
    for kind in BASELINE_LEAKS:
        assert any(v in dumped for v in planted[kind]), kind
    # "anything stored as a number": the coerced phone number (an int) passes through.
    assert any(v in dumped for v in planted["phone"] if v.isdigit() and not v.startswith("0"))


def test_baseline_redacts_order_numbers_and_dates(gtc_corpus: Any) -> None:
    events, _ = gtc_corpus
    dumped = _baseline_dump(events)
    assert "ORD-20260725-0001" not in dumped and "ORD-[REDACTED_PHONE]" in dumped
    started = scrub_trace_payload({"args_resolved": {"ordDt": "2026-07-25"}})
    assert started == {"args_resolved": {"ordDt": "[REDACTED_PHONE]"}}
