"""Personal data in machine-written text, loosely written e-mail addresses, short birth
dates, coordinates and digit runs with unusual separators (issue 14, fourth attack). Fresh
Faker values every run; each assertion shows the input and the output.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from faker import Faker

from tracelake.scrub import Scrubber


@pytest.fixture()
def fake() -> Faker:
    return Faker(["en_US", "en_GB", "de_DE", "fr_FR", "ko_KR"])


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


@pytest.mark.parametrize(
    "form",
    ["/Users/{}/dev/agent/main.py", "C:\\Users\\{}\\AppData\\Local\\log.txt", "/home/{}/.config"],
)
def test_user_names_in_home_directories(scrubber: Scrubber, fake: Faker, form: str) -> None:
    for _ in range(10):
        name = fake.first_name() + fake.last_name()
        out = scrubber.scrub_text(f"FileNotFoundError: {form.format(name)}")
        assert name not in out, out


def test_service_accounts_and_resources_stay(scrubber: Scrubber) -> None:
    for text in ("/home/runner/work/x", "GET /api/v1/users/42/profile", "/Users/Shared/data"):
        assert scrubber.scrub_text(text) == text


def test_mac_addresses(scrubber: Scrubber, fake: Faker) -> None:
    for _ in range(10):
        mac = fake.mac_address()
        for form in (mac, mac.upper().replace(":", "-")):
            out = scrubber.scrub_text(f"device MAC {form} rejected")
            assert form not in out and "[" in out, out


def test_ipv4_in_host_names(scrubber: Scrubber, fake: Faker) -> None:
    for _ in range(10):
        dashed = fake.ipv4_public().replace(".", "-")
        for text in (f"ssh ubuntu@ip-{dashed}", f"ec2-{dashed}.compute-1.amazonaws.com timed out"):
            out = scrubber.scrub_text(text)
            assert dashed not in out, out


def test_passport_mrz_line(scrubber: Scrubber) -> None:
    fake = Faker(["en_US", "de_DE", "fr_FR"])
    # an MRZ is written in A-Z and "<" only (ICAO 9303: other letters and spaces become "<")
    last = re.sub("[^A-Z]", "<", fake.last_name().upper())
    first = re.sub("[^A-Z]", "<", fake.first_name().upper())
    mrz = f"P<USA{last}<<{first}".ljust(44, "<")
    out = scrubber.scrub_text(f"MRZ read: {mrz}")
    assert last not in out and first not in out, out


def test_webhook_secret_paths(scrubber: Scrubber, fake: Faker) -> None:
    secret = fake.pystr(min_chars=24, max_chars=24)
    url = f"https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/{secret}"
    assert secret not in scrubber.scrub_text(f"posting to {url}")


@pytest.mark.parametrize(
    "form",
    ["reply to {u}@localhost", "{u} @ {d}", "{u}&commat;{d}", "{u}%2540{d}", "{u}@{w}\uff0ecom"],
)
def test_loosely_written_emails(scrubber: Scrubber, fake: Faker, form: str) -> None:
    for _ in range(5):
        user = fake.user_name()
        text = form.format(u=user, d=fake.domain_name(), w=fake.domain_word())
        out = scrubber.scrub_text(text)
        assert user not in out, (text, out)


def test_idn_email(scrubber: Scrubber) -> None:
    assert "kim.minjun" not in scrubber.scrub_text("kim.minjun@예제.한국 으로 발송")


def test_package_versions_and_decorators_stay(scrubber: Scrubber) -> None:
    for text in ("react@18.2.0 installed", "@app.route failed", "HEAD@{1}"):
        assert scrubber.scrub_text(text) == text


@pytest.mark.parametrize(
    "form",
    [
        "생년월일 {yy}{mm}{dd} 본인확인",
        "생년월일: {yy}.{mm}.{dd}",
        "DOB {dd}/{mm}/{yy}",
        "생일 {m}월 {d}일",
        "DOB {mm}/{dd}/{yy}",  # US order, two-digit year
        "born on {m}/{d}/{yy}",
        "DOB {dd}-{mon}-{yyyy}",
        "birthday {dd}-{mon}-{yy}",
    ],
)
def test_short_birth_dates(scrubber: Scrubber, fake: Faker, form: str) -> None:
    born = fake.date_of_birth(minimum_age=18, maximum_age=90)
    parts = {
        "yy": f"{born.year % 100:02d}",
        "yyyy": str(born.year),
        "mm": f"{born.month:02d}",
        "dd": f"{born.day:02d}",
        "m": str(born.month),
        "d": str(born.day),
        "mon": born.strftime("%b"),
    }
    text = form.format(**parts)
    out = scrubber.scrub_text(text)
    assert "[DATE_OF_BIRTH]" in out and not re.search(r"\d", out), (text, out)


def test_order_dates_without_birth_word_stay(scrubber: Scrubber) -> None:
    assert scrubber.scrub_text("주문일 3월 14일 배송") == "주문일 3월 14일 배송"


def test_coordinates_and_device_ids_under_their_keys(scrubber: Scrubber, fake: Faker) -> None:
    lat, lng = float(fake.latitude()), float(fake.longitude())
    event: dict[str, Any] = {
        "type": "tool.called",
        "args": {"delivery": {"lat": lat, "lng": lng, "geo": {"coordinates": [lng, lat]}}},
    }
    dump = json.dumps(scrubber.scrub_event("graph_tool_call", "tool.called", event).payload)
    assert str(lat) not in dump and str(lng) not in dump, dump


@pytest.mark.parametrize("sep", ["  ", "|", "~", ":", "\uff0f", " , ", "*"])
def test_phone_and_card_with_any_separator(scrubber: Scrubber, fake: Faker, sep: str) -> None:
    phone = fake.numerify("010-####-####").split("-")
    card = fake.credit_card_number(card_type="visa16")
    card_groups = [card[i : i + 4] for i in range(0, 16, 4)]
    for groups in (phone, card_groups):
        text = f"연락 {sep.join(groups)} 확인"
        out = scrubber.scrub_text(text)
        assert groups[-1] not in out and groups[-2] not in out, (text, out)


@pytest.mark.parametrize(
    ("form", "entity"),
    [
        ("phone_{p}", "PHONE_NUMBER"),
        ("HP{p}", "PHONE_NUMBER"),
        ("card_{c}", "CREDIT_CARD"),
        ("cc-{c}", "CREDIT_CARD"),
        ("contact acct_{a} for the refund", "BANK_ACCOUNT"),
        ("A/C.{a}", "BANK_ACCOUNT"),
    ],
)
def test_numbers_glued_to_a_personal_label(
    scrubber: Scrubber, fake: Faker, form: str, entity: str
) -> None:
    values = {
        "p": fake.numerify("010########"),
        "c": fake.credit_card_number(card_type="visa16"),
        "a": fake.numerify("###-###-######"),
    }
    text = form.format(**values)
    out = scrubber.scrub_text(text)
    assert f"[{entity}]" in out and len(_digits(out)) < 7, (text, out)


def test_a_long_number_after_a_recent_date(scrubber: Scrubber, fake: Faker) -> None:
    account = fake.numerify("###-###-######")
    out = scrubber.scrub_text(f"20240115 {account} 환불")
    assert account not in out and out.startswith("20240115"), out


@pytest.mark.parametrize(
    "text",
    [
        "ORD-20260725-0001",
        "20260725-0001",
        "ORD-0101234567",
        "call_1234567 ok",
        "| 200 | 150 | 3000 | 4000 |",
        "2026-07-25 12:30:45",
        "DLV240513871715",
    ],
)
def test_ids_and_tables_stay(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text
