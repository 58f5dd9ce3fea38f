"""The second fresh-context attack of this round (issue 14): lower-case names after a person
label, plates and driver's licences, MAC addresses in every notation, passwords in prose,
short-named secret query parameters, compact birth dates, more provider tokens, numbers after
weak id words; and the learner's data it found replaced (Korean endings after numbers,
commerce words, timestamps, class names, amounts). Fresh Faker values where a value is drawn.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from faker import Faker

from tracelake.scrub import Scrubber


@pytest.fixture()
def fake() -> Faker:
    return Faker(["en_US", "es_ES", "it_IT", "de_DE", "id_ID"])


@pytest.mark.parametrize(
    "form",
    [
        "name: {f} {l}",
        "customer {f} {l} called about the refund",
        "From: {f} {l} <someone@example.com>",
        "수령인 {f} {l} 확인 부탁드립니다",
        "Contact: {f} {l}\nPhone: none",
        "dear {f}, thanks",
    ],
)
def test_lower_case_names_after_a_person_label(scrubber: Scrubber, fake: Faker, form: str) -> None:
    for _ in range(10):
        first, last = fake.first_name().lower(), fake.last_name().lower()
        text = form.format(f=first, l=last)
        out = scrubber.scrub_text(text)
        assert f"{first} {last}" not in out and "[PERSON]" in out, (text, out)


@pytest.mark.parametrize(
    "text",
    [
        "customer complained about the delay",
        "customer wants a refund",
        "customer service team",
        "Please contact the Customer Service Team",
        "Customer Success Manager will reach out",
        "Hi Customer Care Team,",
        "Client: Mobile App",
        "User Not Found",
        "the customer requested cancellation",
        "Summarize the delivery status",
        "Duplicate request ignored.",
        "HTTP 422 Unprocessable Entity",
        "ERROR 1062 (23000): Duplicate entry",
    ],
)
def test_sentences_without_a_name_stay(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("차량번호 12가3456", "12가3456"),
        ("plate: XMF-6A69", "XMF-6A69"),
        ("driver's license: D8474776", "D8474776"),
        ("DL=B57252060", "B57252060"),
        ("ae:1f:ff:8e:b8:40", "ae:1f:ff:8e:b8:40"),
        ("device 5c64.bee4.62a5 joined", "5c64.bee4.62a5"),
        ("declined for 36:d5:1c:4a:c9:1b: insufficient funds", "36:d5:1c:4a:c9:1b"),
        ("new password set to quibusdam4308#", "quibusdam4308#"),
        ("login with admin / commodi8937#", "commodi8937#"),
        ("creds admin:B7ER2N$u#5", "B7ER2N$u#5"),
        ("https://example.com/reset?key=z012KgUqtrd", "z012KgUqtrd"),
        ("080915생", "080915"),
        ("dop_v1_e99694ce1234567890abcdef", "e99694ce1234567890abcdef"),
        ("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", "0c28021695a7f6101426ca16e7c66d4c"),
        ("고객 요청: 080-9859-8559 확인 후 처리", "9859-8559"),
        ("case: 020 7946 0958", "7946 0958"),
        ("geo:37.5665,126.9780", "37.5665"),
    ],
)
def test_labelled_and_shaped_values(scrubber: Scrubber, text: str, value: str) -> None:
    out = scrubber.scrub_text(text)
    assert value not in out, out


@pytest.mark.parametrize(
    "text",
    [
        "환불 금액은 129000원입니다.",
        "오후 6시까지입니다.",
        "요청하신 상품은 현재 품절입니다.",
        "배송중",
        "status: 배송중",
        "운송장",
        "[25/Jul/2026:10:15:00 +0900]",
        "at: 2026-07-21 13:34:28",
        "order_id,error\nORD-1001,ValueError",
        "SKU SKU-77661 was processed",
        "total $96749.04",
        "took 77418598 ns입니다",
        "request_id 50900154-4bc8-4098-9ff1-fd214d503194",
        "운송장번호는 4536457554입니다.",
        "주문번호: #7741526",
        "?t=1721900000&s=price",
        "요청번호 12345678",
    ],
)
def test_learner_data_found_replaced_stays(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text


def test_numbers_under_abbreviated_keys(scrubber: Scrubber, fake: Faker) -> None:
    account = int(fake.numerify("1#############"))
    event: dict[str, Any] = {
        "type": "tool.called",
        "args": {
            "acctNum": account,
            "bday": 13091952,
            "note": account,
            "nationalId": 8350769409281,
            "licensePlate": "12가3456",
            "gps": [37.566535, 126.977969],
            "nitems": 12345678,
        },
    }
    out = scrubber.scrub_event("graph_tool_call", "tool.called", event).payload["args"]
    dump = json.dumps(out)
    for value in (str(account), "13091952", "8350769409281", "37.566535"):
        assert value not in dump, dump
    assert out["nitems"] == 12345678


@pytest.mark.parametrize(
    "prefix", ["shpat_", "dop_v1_", "sq0atp-", "pypi-", "glsa_", "figd_", "lin_api_", "sntrys_"]
)
def test_provider_prefixes_with_a_lower_case_body(scrubber: Scrubber, prefix: str) -> None:
    body = Faker().pystr(min_chars=24, max_chars=24).lower()
    out = scrubber.scrub_text(f"rotated {prefix}{body} today")
    assert body not in out, out


def _common_word_names() -> tuple[list[str], list[str]]:
    """Faker's first and last names, every locale, that are common English words (Max, Will,
    Rose; Field, Page, Price): the capitalised pass cannot tell them from prose."""
    import importlib
    import pkgutil

    import faker.providers.person

    from tracelake.scrub.vocab import COMMON_WORDS

    found: dict[str, set[str]] = {"first_names": set(), "last_names": set()}
    for module in pkgutil.iter_modules(faker.providers.person.__path__):
        provider = importlib.import_module(f"faker.providers.person.{module.name}").Provider
        for attr, names in found.items():
            values = provider.__dict__.get(attr, ())
            names.update(
                n
                for n in (values if isinstance(values, dict | list | tuple) else ())
                if n.isalpha() and n[:1].isupper() and n.lower() in COMMON_WORDS
            )
    return sorted(found["first_names"]), sorted(found["last_names"])


@pytest.mark.parametrize(
    "form",
    [
        "Customer: {f} {l} called about the refund",
        "Dear {f} {l}, your parcel is on its way",
        "customer {f} {l} asked for a refund",
        "Hi {f} {l}, thanks for waiting",
        "recipient {f} {l} was not at home",
        "passenger {f} {l} missed the flight",
        "Customer:  {f}  {l} called",  # two blanks
        "Dear {f}-Kate {l},",  # a hyphenated first name
        "Hi {f} van de {l}, thanks",  # particles
    ],
)
def test_names_of_common_words_after_a_person_label(scrubber: Scrubber, form: str) -> None:
    import random

    firsts, lasts = _common_word_names()
    assert len(firsts) > 5 and len(lasts) > 20, (firsts, lasts)
    rng = random.Random()
    for _ in range(15):
        first, last = rng.choice(firsts), rng.choice(lasts)
        text = form.format(f=first, l=last)
        out = scrubber.scrub_text(text)
        assert f"{first} {last}" not in out and "[PERSON]" in out, (text, out)
