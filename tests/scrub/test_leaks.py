"""No planted value survives scrubbing, raw or JSON-\\u-escaped; safe values survive."""

from __future__ import annotations

import json
from typing import Any

from tests.corpora.gtc_commerce import SAFE_VALUES, all_planted
from tracelake.scrub import Scrubber


def _dumps(payload: dict[str, Any]) -> tuple[str, str]:
    return json.dumps(payload, ensure_ascii=False), json.dumps(payload, ensure_ascii=True)


def _escaped(value: str) -> str:
    return json.dumps(value)[1:-1]  # the \\u-escaped form as it appears inside a JSON string


def _leaks(dumps: tuple[str, str], values: list[str]) -> list[str]:
    raw, ascii_ = dumps
    return [v for v in values if v in raw or v in ascii_ or _escaped(v) in ascii_]


def test_gtc_corpus_has_no_planted_value(scrubber: Scrubber, gtc_corpus: Any) -> None:
    events, planted = gtc_corpus
    values = all_planted(planted)
    assert len(events) > 50 and len(values) > 30
    for event in events:
        out = scrubber.scrub_event("graph_tool_call", event["type"], event)
        leaked = _leaks(_dumps(out.payload), values)
        assert not leaked, (event["type"], len(leaked))


def test_agentlane_samples_have_no_planted_secret(
    scrubber: Scrubber, agentlane_events: list[dict[str, Any]], agentlane_secrets: list[str]
) -> None:
    assert len(agentlane_events) == 832 and len(agentlane_secrets) >= 70
    for lineno, event in enumerate(agentlane_events, 1):
        out = scrubber.scrub_event("agentlane", event["type"], event)
        leaked = _leaks(_dumps(out.payload), agentlane_secrets)
        assert not leaked, (lineno, event["type"], len(leaked))


def test_unknown_source_is_scrubbed_generically(scrubber: Scrubber, gtc_corpus: Any) -> None:
    events, planted = gtc_corpus
    values = all_planted(planted)
    for event in events:
        out = scrubber.scrub_event("unknown", event["type"], event)
        assert not _leaks(_dumps(out.payload), values)


def test_safe_values_survive(scrubber: Scrubber, gtc_corpus: Any) -> None:
    events, _ = gtc_corpus
    stored = "\n".join(
        _dumps(scrubber.scrub_event("graph_tool_call", e["type"], e).payload)[0] for e in events
    )
    for value in SAFE_VALUES:
        assert value in stored, value


def test_projection_fields_are_kept(scrubber: Scrubber, gtc_corpus: Any) -> None:
    events, _ = gtc_corpus
    for event in events:
        out = scrubber.scrub_event("graph_tool_call", event["type"], event).payload
        for key in (
            "type",
            "plan_id",
            "step_id",
            "tool",
            "duration_ms",
            "field_name",
            "recovered_path",
            "failed_step",
            "attempt",
            "max_attempts",
        ):
            if key in event:
                assert out[key] == event[key], key
        if isinstance(event.get("error"), dict):
            assert out["error"]["kind"] == event["error"]["kind"]
            if "exception_type" in event["error"]:
                assert out["error"]["exception_type"] == event["error"]["exception_type"]
        if event["type"] == "plan.started":
            assert "주문 ORD-20260725-" in out["goal"] and "[PERSON]" in out["goal"]
        if event["type"] == "args.coerced":
            rules = {c["field"]: c["rule"] for c in out["changes"]}
            assert rules == {"contact": "cast", "rcvrTelNo": "cast", "channel": "enum"}
            assert {"field": "channel", "from": "SMS ", "to": "sms", "rule": "enum"} in out[
                "changes"
            ]
        if event["type"] in ("plan.completed", "plan.aborted"):
            for step, orig in zip(out["trace_steps"], event["trace_steps"], strict=True):
                assert step["id"] == orig["id"] and step["tool"] == orig["tool"]
                assert "args_resolved" not in step and "output" not in step
    failed = [
        scrubber.scrub_event("graph_tool_call", e["type"], e).payload
        for e in events
        if e["type"] == "step.failed"
    ]
    assert {"http_status": 404, "reason_code": "unsatisfied_field"}.items() <= failed[0][
        "error"
    ].items()


def test_agentlane_projection_fields_are_kept(
    scrubber: Scrubber, agentlane_events: list[dict[str, Any]]
) -> None:
    for event in agentlane_events:
        payload = event["payload"]
        out = scrubber.scrub_event("agentlane", event["type"], event).payload["payload"]
        for key in ("ok", "is_root", "task_id", "parent_task_id", "boundary", "target_name"):
            if key in payload:
                assert out[key] == payload[key], key
        if isinstance(payload.get("tool_call"), dict):
            fn, out_fn = payload["tool_call"]["function"], out["tool_call"]["function"]
            assert out_fn["name"] == fn["name"]
            json.loads(out_fn["arguments"])  # still a JSON document, scrubbed
        if isinstance(payload.get("error"), dict) and "kind" in payload["error"]:
            assert out["error"]["kind"] == payload["error"]["kind"]
