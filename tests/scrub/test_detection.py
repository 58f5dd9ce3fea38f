"""Second-round detection cases, the shaped cut preview, batches and threads."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from tests.corpora.gtc_commerce import build_gtc_corpus
from tracelake.errors import ScrubError
from tracelake.scrub import ScrubbedEvent, Scrubber
from tracelake.scrub.preview import repair_cut_json


@pytest.mark.parametrize(
    ("text", "entity"),
    [
        ("passport M12345678", "PASSPORT"),
        ("여권번호 M12345678", "PASSPORT"),
        ("여권 M123A4567 확인", "PASSPORT"),
        ("call (555) 123-4567 now", "PHONE_NUMBER"),
        ("(555)123-4567", "PHONE_NUMBER"),
        ("call +1 415 555 0100 now", "PHONE_NUMBER"),
        ("+44 20 7946 0958", "PHONE_NUMBER"),
        ("최수아님께 연락", "PERSON"),
        ("홍길동 고객 문의", "PERSON"),
        ("수령인 김민수 주소 변경", "PERSON"),
        ("결제 재시도 요청: 조현우, 카드 확인", "PERSON"),
        ("no shipment for 최수아 at the address", "PERSON"),
        ("이민준", "PERSON"),
        ("김민수가 어제 주문했습니다", "PERSON"),
        ("홍길동이 주문", "PERSON"),
        ("신규 회원 이민준의 요청", "PERSON"),
    ],
)
def test_found(scrubber: Scrubber, text: str, entity: str) -> None:
    assert f"[{entity}]" in scrubber.scrub_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "order M12345678",  # a passport shape without passport context stays
        "무선 이어폰",
        "정수기 필터 교체 요청",
        "오늘 이어폰 주문",
        "한라봉 선물세트",
        "이번 주문은 한라봉 선물세트입니다",
        "오늘 이어폰을 주문했습니다",
        "장소가 변경되었습니다",
        "주문 ORD-20260725-0001 배송 조회",
        "ORD-123-456-7890",
        "2026-07-25T10:15:00+09:00",
    ],
)
def test_kept(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text


def test_repair_cut_json() -> None:
    assert repair_cut_json('{"a": 1, "b": {"c": "x", "d": "ab') == {"a": 1, "b": {"c": "x"}}
    assert repair_cut_json('{"a": 1, "b": "x, y') == {"a": 1}
    assert repair_cut_json('[{"a": 1}, {"b": 2') == [{"a": 1}]
    assert repair_cut_json('{"a": "unterminated') is None


def test_cut_output_preview_is_shaped(scrubber: Scrubber) -> None:
    body = {
        "orderNo": "ORD-20260725-0001",
        "status": "PAID",
        "receiver": {"rcvrNm": "최수아", "rcvrTelNo": "010-9233-9385"},
        "memo": "배송 전 최수아님께 010-9233-9385로 연락 바랍니다 " + "x" * 400,
    }
    cut = json.dumps(body, ensure_ascii=False)[:512]
    event = {"type": "step.completed", "plan_id": "p", "step_id": "s", "tool": "t",
             "output_preview": {"_preview": cut, "_truncated": True}}  # fmt: skip
    out = scrubber.scrub_event("graph_tool_call", "step.completed", event).payload
    shaped = out["output_preview"]["_preview"]
    assert isinstance(shaped, dict) and out["output_preview"]["_truncated"] is True
    assert shaped["orderNo"] == "ORD-20260725-0001" and shaped["status"] == "PAID"
    dumped = json.dumps(out, ensure_ascii=False)
    assert "최수아" not in dumped and "9233-9385" not in dumped


def _corpus() -> list[tuple[str, str, dict[str, Any]]]:
    events, _ = build_gtc_corpus(runs=4, seed=5)
    return [("graph_tool_call", e["type"], e) for e in events]


def _clear() -> None:
    from tracelake.scrub.scrubber import clear_caches

    clear_caches()


def test_scrub_events_matches_scrub_event(scrubber: Scrubber) -> None:
    items = _corpus()
    items.insert(3, ("graph_tool_call", "bad", {"type": "bad", "x": {1, 2}}))
    serial: list[ScrubbedEvent | ScrubError] = []
    for item in items:
        try:
            serial.append(scrubber.scrub_event(*item))
        except ScrubError as exc:
            serial.append(exc)
    _clear()
    batch = scrubber.scrub_events(items)
    assert len(batch) == len(items) and isinstance(batch[3], ScrubError)
    for a, b in zip(batch, serial, strict=True):
        if isinstance(a, ScrubbedEvent):
            assert isinstance(b, ScrubbedEvent) and (a.payload, a.report) == (b.payload, b.report)


def _work(
    scrubber: Scrubber,
    items: list[tuple[str, str, dict[str, Any]]],
    n: int,
    barrier: threading.Barrier,
    results: dict[int, list[ScrubbedEvent]],
) -> None:
    barrier.wait()
    order = items if n == 0 else items[::-1]  # the second thread goes backwards
    out = [scrubber.scrub_event(*item) for item in order]
    results[n] = out if n == 0 else out[::-1]


def test_two_threads_give_the_serial_results(scrubber: Scrubber) -> None:
    items = _corpus()
    _clear()
    serial = [scrubber.scrub_event(*item) for item in items]
    for _ in range(3):
        _clear()  # both threads start cold and race on the shared caches and the engine
        results: dict[int, list[ScrubbedEvent]] = {}
        barrier = threading.Barrier(2)

        threads = [
            threading.Thread(target=_work, args=(scrubber, items, n, barrier, results))
            for n in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for n in (0, 1):
            assert [(r.payload, r.report) for r in results[n]] == [
                (r.payload, r.report) for r in serial
            ]
