"""The precompiled pattern driver finds exactly what presidio's own ``analyze`` finds."""

from __future__ import annotations

from typing import Any

import pytest

from tests.corpora.gtc_commerce import build_gtc_corpus
from tracelake.scrub import analyzer

SAMPLES = [
    "최수아 고객(010-9233-9385, user0.357@example-mail.co.kr) 주문 ORD-20260725-0001",
    "card 4472-9405-5761-6982 and 4111 1111 1111 1111, rrn 841217-1518843, frn 841217-5518843",
    "brn 123-45-67890, driver 11-17-174133-01, passport M12345678 / M123A4567",
    "client 203.0.113.213 and 2001:db8::1 and 999.1.1.1; Authorization: Bearer abc.def.ghi123",
    "AKIAIOSFODNN7EXAMPLE akiaiosfodnn7example SESSION=gzw3m4fZ6hQ2ak7eghzBkOxI",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.L9b1ue8EpR5fXGMv2aJc6AFAcli71Fny",
    "서울특별시 강남구 테헤란로 179, 830호 배송 전 최수아님께 연락",
    "d41d8cd98f00b204e9800998ecf8427e and c2VjcmV0LXZhbHVlLXRoYXQtaXMtbG9uZw==",
    "pay to DE89 3704 0044 0532 0130 00 or gb82west12345698765432 via https://ops:pa55w0rd@db.internal/x",
]


def _texts() -> list[str]:
    texts = list(SAMPLES)
    events, _ = build_gtc_corpus(runs=2, seed=3)

    def strings(value: Any) -> None:
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                strings(item)
        elif isinstance(value, list):
            for item in value:
                strings(item)

    for event in events:
        strings(event)
    return sorted(set(texts))


@pytest.mark.parametrize("entity", sorted(analyzer._state()[2]))
def test_compiled_patterns_match_presidio(entity: str) -> None:
    _, by_entity, compiled = analyzer._state()
    for text in _texts():
        ours: list[tuple[int, int, str]] = []
        for pattern in compiled[entity]:
            pattern.spans(text, ours)
        theirs = [
            (r.start, r.end, r.entity_type)
            for recognizer in by_entity[entity]
            for r in recognizer.analyze(text, [entity], None)
            if r.score >= analyzer.SCORE_THRESHOLD
        ]
        assert sorted(set(ours)) == sorted(set(theirs)), (entity, text[:40])


def _gated_patterns() -> list[tuple[str, Any]]:
    _, _, compiled = analyzer._state()
    return [
        (f"{entity}/{p.regex.pattern[:30]}", p)
        for entity, patterns in compiled.items()
        for p in patterns
        if p.gate is not None
    ]


@pytest.mark.parametrize(("name", "pattern"), _gated_patterns(), ids=lambda x: str(x)[:40])
def test_a_pattern_gate_lets_through_every_text_the_pattern_matches(
    name: str, pattern: Any
) -> None:
    # texts drawn from the pattern itself: a gate that missed one would skip a real match
    from hypothesis import given, settings
    from hypothesis import strategies as st

    regex = pattern.regex

    @settings(max_examples=300, deadline=None)
    @given(st.from_regex(regex.pattern, fullmatch=False))
    def check(text: str) -> None:
        if regex.search(text) is not None:
            assert pattern.gate.search(text) is not None, (name, text)

    check()


def test_the_engine_has_a_recognizer_for_exactly_what_the_prefilter_asks_for() -> None:
    """No dead recognizer (its warm-up would cost every ``ingest``'s start: presidio's phone
    recognizer loaded nine regions' metadata for nothing) and no entity asked for without
    one (analyze would find nothing for it)."""
    from tracelake.scrub.detect import candidate_entities

    _, by_entity, compiled = analyzer._state()
    asked: set[str] = set()
    for text in _texts():
        asked |= candidate_entities(text)[0]
    assert asked == {*by_entity, *compiled}


def test_an_entity_without_a_recognizer_fails_instead_of_finding_nothing() -> None:
    with pytest.raises(KeyError):
        analyzer.analyze("call +44 20 7946 0958", ["PHONE_NUMBER"])
