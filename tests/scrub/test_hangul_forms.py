"""Hangul names in the forms a fresh-context attack found stored (issue 14, fourth attack):
any honorific + particle sequence after the name, a given name alone before a spaced
honorific, a surname written apart from the given name; and the place names and labels
that read like names but are not. Names are fresh Faker ``ko_KR`` values every run.
"""

from __future__ import annotations

import pytest
from faker import Faker

from tracelake.scrub import Scrubber
from tracelake.scrub.hangul import is_suffix

ENDINGS = [
    "님한테", "님이랑", "님하고", "님께도", "에게는", "한테는", "한테서", "네", "씨네", "님요",
    "님이세요", "님인데", "님꺼", "님댁", "님께서도", "님과의", "님이라고", "씨랑", "씨였나",
]  # fmt: skip


@pytest.fixture()
def fake() -> Faker:
    return Faker("ko_KR")


@pytest.mark.parametrize("ending", ENDINGS)
def test_any_honorific_and_particles_after_a_name(
    scrubber: Scrubber, fake: Faker, ending: str
) -> None:
    assert is_suffix(ending)
    for _ in range(5):
        name = fake.name()
        text = f"배송 지연 건 {name}{ending} 연락드렸습니다"
        out = scrubber.scrub_text(text)
        assert name not in out, (text, out)


@pytest.mark.parametrize("ending", ["네", "꺼", "아", "네가", "네는"])
def test_given_name_ending_in_a_particle_syllable_before_an_ending(
    scrubber: Scrubber, fake: Faker, ending: str
) -> None:
    """이지은네, 윤하은꺼: the name also reads as word + particle (이지 + 은), but nothing
    follows 은 in a word, so the whole word is a name (CI drew 윤하은네 and stored it)."""
    names: set[str] = set()
    while len(names) < 15:
        name = fake.name()
        if name[-1] in "은는이가을를도":
            names.add(name)
    missed = []
    for name in names:
        text = f"배송 지연 건 {name}{ending} 연락드렸습니다"
        out = scrubber.scrub_text(text)
        if name in out:
            missed.append((text, out))
    assert not missed


@pytest.mark.parametrize("honorific", ["고객님", "님", "씨", "회원님", "고객님께"])
def test_given_name_alone_before_a_spaced_honorific(
    scrubber: Scrubber, fake: Faker, honorific: str
) -> None:
    missed = []
    for _ in range(20):
        given = fake.first_name()
        text = f"{given} {honorific} 환불 처리 완료"
        out = scrubber.scrub_text(text)
        if given in out:
            missed.append((text, out))
    assert not missed


def test_surname_apart_from_the_given_name(scrubber: Scrubber, fake: Faker) -> None:
    for _ in range(20):
        last, first = fake.last_name(), fake.first_name()
        text = f"{last} {first} 고객님 주문 취소"
        out = scrubber.scrub_text(text)
        assert f"{last} {first}" not in out and first not in out, (text, out)


@pytest.mark.parametrize(
    "text",
    [
        "신규 고객님 환영합니다",
        "우수 회원님 쿠폰 발송",
        "강남구 지역 배송 지연",
        "서울시 강남구 역삼동",
        "판교역 근처 픽업",
        "고객님 주문이 취소되었습니다",
        "배송중 미배송 오배송",
    ],
)
def test_commerce_and_place_words_stay(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text


def test_person_labels_are_not_names(scrubber: Scrubber, fake: Faker) -> None:
    name = fake.name()
    for label in ("수령인", "예금주", "주문자"):
        out = scrubber.scrub_text(f"{label}: {name}")
        assert out == f"{label}: [PERSON]", out


def test_name_with_a_place_ending_before_an_honorific(scrubber: Scrubber) -> None:
    for text in ("김영구님 환불", "김영길에게 연락", "이민시 고객"):
        assert "[PERSON]" in scrubber.scrub_text(text), text
