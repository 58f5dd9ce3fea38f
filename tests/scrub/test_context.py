"""Context decides (issue 14, fourth attack): the same digits or words are personal data
under one label and a learner's data under another. Leaks: numbered fields, config and
command-line credentials, Korean secret words, URL-encoded Hangul, Korean address fragments,
passport words, single names under role keys. Over-redactions: amounts, sizes, timestamps,
carriers' tracking numbers, barcodes, digests, brands and cities, connection-string words.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from faker import Faker

from tracelake.scrub import Scrubber


def _args(scrubber: Scrubber, args: dict[str, Any]) -> dict[str, Any]:
    event = {"type": "tool.called", "args": args}
    out: dict[str, Any] = scrubber.scrub_event("graph_tool_call", "tool.called", event).payload
    return dict(out["args"])


def test_numbered_fields_are_the_parts_of_one_value(scrubber: Scrubber, fake_ko: Faker) -> None:
    phone = fake_ko.numerify("010-####-####").split("-")
    args = _args(scrubber, {"hp1": phone[0], "hp2": phone[1], "hp3": phone[2], "card4": "1111"})
    assert args == {
        "hp1": "[PHONE_NUMBER]",
        "hp2": "[PHONE_NUMBER]",
        "hp3": "[PHONE_NUMBER]",
        "card4": "[CREDIT_CARD]",
    }


@pytest.mark.parametrize(
    "key", ["MYSQL_PWD", "REDIS_AUTH", "ENCRYPTION_KEY", "signing_key", "app.jwt.key", "ADMIN_PW"]
)
def test_config_credential_keys(scrubber: Scrubber, key: str) -> None:
    assert _args(scrubber, {key: "S3cretValue9"}) == {key: "[CREDENTIAL]"}
    assert "S3cretValue9" not in scrubber.scrub_text(f"export {key}=S3cretValue9")


@pytest.mark.parametrize("key", ["primary_key", "sort_key", "cache_key", "idempotency_key"])
def test_keys_that_are_not_secrets(scrubber: Scrubber, key: str) -> None:
    assert _args(scrubber, {key: "orders:2026-07-25"}) == {key: "orders:2026-07-25"}


def test_role_keys_hold_a_person_or_a_service(scrubber: Scrubber) -> None:
    fake = Faker(["en_US", "de_DE"])
    first, last = fake.first_name(), fake.last_name()
    args = _args(scrubber, {"assignee": first, "signed_by": last, "created_by": "scheduler"})
    assert args == {"assignee": "[PERSON]", "signed_by": "[PERSON]", "created_by": "scheduler"}


def test_thing_numbers_under_their_keys_stay(scrubber: Scrubber) -> None:
    args = {"barcode": 8801234567893, "isbn": 9788912345678, "trackingNo": 512345678901}
    args |= {"views": 12345678, "token_budget": 4000}
    assert _args(scrubber, args) == args


@pytest.mark.parametrize(
    "command",
    [
        "docker login -u deploy -p {} registry.example.com",
        "redis-cli -h cache -a {}",
        "htpasswd -b users admin {}",
        "app --db-pass {}",
        "kubectl --token={} get pods",
    ],
)
def test_more_command_line_secrets(scrubber: Scrubber, command: str) -> None:
    secret = Faker().password(length=12, special_chars=False)
    assert secret not in scrubber.scrub_text(command.format(secret))


@pytest.mark.parametrize("word", ["패스워드", "비밀 번호", "API 키", "인증키", "보안키"])
def test_korean_secret_words(scrubber: Scrubber, word: str) -> None:
    secret = Faker().password(length=10, special_chars=False)
    out = scrubber.scrub_text(f"{word}: {secret}")
    assert secret not in out and out.startswith(word), out


def test_url_encoded_hangul_name(scrubber: Scrubber, fake_ko: Faker) -> None:
    name = fake_ko.name()
    for url in (f"GET /api/search?q={quote(name)}&page=1", f"/v1/customers/{quote(name)}/orders"):
        out = scrubber.scrub_text(url)
        assert quote(name) not in out and name not in out, out


@pytest.mark.parametrize(
    "text",
    [
        "배송지: 역삼동 736-64",
        "배송지: 자이아파트 108동 1303호",
        "도로명 주소: 테헤란로 427 위워크타워 10층",
        "테헤란로 427 위워크타워 10층으로 배송",
    ],
)
def test_korean_address_fragments(scrubber: Scrubber, text: str) -> None:
    out = scrubber.scrub_text(text)
    assert "[ADDRESS]" in out and not any(c.isdigit() for c in out), out


@pytest.mark.parametrize("text", ["경로 2 확인", "이동 3건", "주소 변경 요청", "배송 3건 완료"])
def test_korean_words_with_numbers_stay(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text


@pytest.mark.parametrize("word", ["hộ chiếu", "travel document", "document no."])
def test_more_passport_words(scrubber: Scrubber, word: str) -> None:
    assert "C1234567" not in scrubber.scrub_text(f"{word} C1234567")


@pytest.mark.parametrize(
    "text",
    [
        "환불금액 1250000원 처리",
        "received 10485760 bytes",
        "ts=1721900000 event=tool_end",
        "max_tokens=1000000",
        "CJ대한통운 512345678901",
        "FedEx 512345678901",
        "barcode 8801234567893",
        "commit 3f2a8c1e9b7d4c2e8f1a2b3c4d5e6f708192a3b4 deployed",
        "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "Stripe API returned 402",
        "Shipped via FedEx from Seoul to Tokyo",
        "Samsung Galaxy S24 Ultra",
    ],
)
def test_learner_data_in_text_stays(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text


def test_a_phone_next_to_a_unit_is_still_a_phone(scrubber: Scrubber, fake_ko: Faker) -> None:
    phone = fake_ko.numerify("010########")
    assert phone not in scrubber.scrub_text(f"연락처 {phone} 원")


def test_connection_string_keeps_its_words(scrubber: Scrubber) -> None:
    out = scrubber.scrub_text("Server=db;User Id=sa;Password=P@ssw0rd;")
    assert out == "Server=db;User Id=sa;Password=[CREDENTIAL]", out


def test_hex_after_a_secret_word_is_still_a_secret(scrubber: Scrubber) -> None:
    out = scrubber.scrub_text("token 3f2a8c1e9b7d4c2e8f1a2b3c4d5e6f70")
    assert "3f2a8c1e9b7d4c2e8f1a2b3c4d5e6f70" not in out


def test_report_counts_the_new_entities(scrubber: Scrubber) -> None:
    event = {"type": "tool.called", "args": {"lat": 37.5, "mac": "00:1A:2B:3C:4D:5E"}}
    report = scrubber.scrub_event("graph_tool_call", "tool.called", event).report
    assert report["entities"] == {"LOCATION": 1, "DEVICE_ID": 1}, json.dumps(report)


def test_hyphenated_first_names_under_name_keys(scrubber: Scrubber) -> None:
    fake = Faker("de_DE")
    names = [n for n in (fake.first_name() for _ in range(400)) if "-" in n][:5]
    assert names, "de_DE draws double first names (Heinz-Walter) often"
    for name in names:
        args = _args(
            scrubber, {"assignee": name, "name": name, "headers": {"name": "Content-Type"}}
        )
        assert args == {
            "assignee": "[PERSON]",
            "name": "[PERSON]",
            "headers": {"name": "Content-Type"},
        }
