"""VAT numbers, vehicle plates and session UUIDs (``tracelake.scrub.registrations``, ``ids``).

Session 17's probe with Faker: 141 of 156 ``vat_id()`` values in 26 locales were stored (in
prose after a VAT word, and glued to their country code: ``EE906287276``), 30 of 132
``license_plate()`` values after a plate word (``NJC 536``, ``SO 4909 WW``), and
``session_<uuid>`` under an ``id`` key was kept as an id. Every value here is fresh.
"""

from __future__ import annotations

import importlib
import json
import random
import uuid
from typing import Any

import pytest
from faker import Faker
from faker.config import AVAILABLE_LOCALES

from tracelake.scrub import Scrubber

KEY = b"registrations-test-key-0123456789"


def _has_vat_id(locale: str) -> bool:
    try:
        module = importlib.import_module(f"faker.providers.ssn.{locale}")
    except ImportError:
        return False
    return hasattr(module.Provider, "vat_id")


VAT_LOCALES = sorted(loc for loc in AVAILABLE_LOCALES if _has_vat_id(loc))
VAT_TEMPLATES = [
    "invoice rejected: VAT {} is invalid",
    "customer VAT number: {}",
    "USt-IdNr. {} ungültig",
    "TVA intracommunautaire {} refusée",
    "partita IVA {} non valida",
    "BTW-nummer {} onbekend",
    '{{"vat_id": "{}"}}',
    "billing profile updated ({}) for the account",
]
PLATE_LOCALES = ["en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "pl_PL", "pt_BR"]
PLATE_TEMPLATES = [
    "towed car with license plate {} from lot",
    "plate number: {}",
    "vehicle registration {} not found",
    "Kennzeichen {} gesperrt",
    "véhicule immatriculation {} introuvable",
    "matrícula {} no encontrada",
    '{{"note": "plate: {} at gate 3"}}',
    "license plate number is {}",
]


@pytest.fixture(scope="module")
def scrubber() -> Scrubber:
    return Scrubber(KEY)


def _stored(scrubber: Scrubber, payload: dict[str, Any]) -> str:
    event = {"type": "step.failed", "run_id": "r1", "plan_id": "p", "step_id": "s1", **payload}
    out = scrubber.scrub_event("graph_tool_call", "step.failed", event).payload
    return json.dumps(out, ensure_ascii=False)


def test_there_are_vat_locales_to_try() -> None:
    assert len(VAT_LOCALES) >= 20, VAT_LOCALES


@pytest.mark.parametrize("locale", VAT_LOCALES)
def test_a_vat_number_is_never_stored(scrubber: Scrubber, locale: str) -> None:
    fake = Faker(locale)
    leaks = []
    for _ in range(3):
        vat = fake.vat_id()
        for template in [*VAT_TEMPLATES, "invoice to acme {} today", "VAT (ID): {}"]:
            written = random.choice([vat, vat.lower()])
            text = template.format(written)
            if written in scrubber.scrub_text(text):
                leaks.append(text)
        for key in ("vat_id", "vatNumber", "customer_ref", "tax_number", "company_vat", "id"):
            if vat in _stored(scrubber, {"arguments": {key: vat}}):
                leaks.append(f"{key}={vat}")
    assert not leaks, leaks[:5]


@pytest.mark.parametrize("locale", PLATE_LOCALES)
def test_a_plate_after_a_plate_word_is_never_stored(scrubber: Scrubber, locale: str) -> None:
    fake = Faker(locale)
    leaks = []
    for _ in range(4):
        plate = fake.license_plate()
        for template in PLATE_TEMPLATES:
            text = template.format(plate)
            if plate in scrubber.scrub_text(text):
                leaks.append(text)
    assert not leaks, leaks[:5]


@pytest.mark.parametrize("word", ["session", "sess", "auth", "token", "csrf", "cookie"])
@pytest.mark.parametrize("key", ["id", "ref", "request_id"])
def test_a_uuid_behind_a_credential_word_is_not_kept_as_an_id(
    scrubber: Scrubber, word: str, key: str
) -> None:
    secret = str(uuid.uuid4())
    value = f"{word}{random.choice('_-:')}{secret}"
    stored = _stored(scrubber, {"arguments": {key: value}})
    assert secret not in stored, stored


@pytest.mark.parametrize("word", ["req", "run", "trace", "msg", "order"])
def test_a_uuid_behind_an_id_word_is_still_kept(scrubber: Scrubber, word: str) -> None:
    value = f"{word}_{uuid.uuid4()}"
    while _seven_digits(value):  # a phone-like run in the groups is pseudonymised
        value = f"{word}_{uuid.uuid4()}"
    assert value in _stored(scrubber, {"arguments": {"id": value}})


def _seven_digits(value: str) -> bool:
    run = 0
    for c in value.replace("-", ""):
        run = run + 1 if c.isdigit() else 0
        if run >= 7:
            return True
    return False


@pytest.mark.parametrize(
    "text",
    [
        "order ORD12345678 shipped",  # no country code
        "build 20260725.1 passed on node-7",
        "vat rate 19% applied",
        "registration opens on 2026-07-25",
        "plate armor upgraded",
        "invoice INV-2026-0042 paid",
        "sku AB1234567 restocked",
    ],
)
def test_codes_that_are_not_registrations_are_kept(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text


def _luhn_completed(body: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(body + "0")):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return body + str((10 - total % 10) % 10)


@pytest.mark.parametrize(
    "template",
    [
        "card {} declined",
        "refund to card {}",
        "카드 {} 결제 실패",
        "account: {}",
        "Visa {} expired",
        "tarjeta {} rechazada",
        "Kreditkarte: {}",
        "cc# {}",
        "license {}",
        "passport {}",
        "birth {}",
    ],
)
def test_a_card_number_that_starts_with_a_date_is_replaced_after_a_card_word(
    scrubber: Scrubber, template: str
) -> None:
    """A 16-digit card number whose first eight digits read as a recent date (2022103041285604)
    was kept as a dated order id after "card" (session 17's recall run, seed 1526376460)."""
    fake = Faker()
    leaks = []
    for _ in range(20):
        day = fake.date_between("-4y", "today").strftime("%Y%m%d")
        card = _luhn_completed(day + fake.numerify("#######"))
        text = template.format(card)
        if card in scrubber.scrub_text(text):
            leaks.append(text)
    assert not leaks, leaks[:3]


def test_an_order_number_that_starts_with_a_date_is_still_kept(scrubber: Scrubber) -> None:
    fake = Faker()
    order = fake.date_between("-1y", "today").strftime("%Y%m%d") + fake.numerify("#####")
    text = f"order {order} shipped"
    assert scrubber.scrub_text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        # session 17's attack on the first version: all were replaced
        "gift card order {date}123 completed",
        "scorecard run {date}-0042",
        "iPhone build {date}123",
        "GST {amount}.99 applied",
        "total incl. VAT {amount}.00 EUR",
        "IVA: 12.345,67 €",
        "btw {n} tests pass",
        "ein {n}-line file",
        "nip {n} ms timeout",
        "GST 2026-27 return filed",
        "registration {year} opens next week",
        "registration API V2 endpoint",
        "plate 8 OF 11",
        "placa RTX 3070",
        "targa {n} commemorativa",
        "matrícula 2020/21",
        "build V-{date}-8 passed",
        "region RO{n} closed",
        "it will be {n}{n} seconds since epoch",
        "order no {n}{n}",
        "GET /api/items/hr{n}{n}/view",
    ],
)
def test_amounts_years_and_codes_after_these_words_are_kept(scrubber: Scrubber, text: str) -> None:
    fake = Faker()
    text = text.format(
        date=fake.date_between("-1y", "today").strftime("%Y%m%d"),
        n=random.randint(10_000, 99_999),
        year=random.randint(2000, 2030),
        amount=random.randint(10, 9_999),  # longer ones are digit runs: replaced anyway
    )
    assert scrubber.scrub_text(text) == text


@pytest.mark.parametrize(
    "form",
    ["{w}/{u}", "{w}~{u}", "{w}{u}", "{u}_{w}", "{w}_{hex}", "{W}:{u}"],
)
@pytest.mark.parametrize("word", ["session", "sess", "auth", "token", "jwt", "csrf", "sso"])
def test_credential_uuids_in_other_forms_are_not_kept(
    scrubber: Scrubber, form: str, word: str
) -> None:
    u = uuid.uuid4()
    value = form.format(w=word, W=word.upper(), u=u, hex=u.hex)
    stored = _stored(scrubber, {"arguments": {"id": value}})
    assert str(u) not in stored and u.hex not in stored, stored


@pytest.mark.parametrize("word", ["address", "email", "name", "location", "card", "contact"])
def test_a_uuid_behind_a_person_data_word_is_still_an_id(scrubber: Scrubber, word: str) -> None:
    """Ids of things named after person data (``address_<uuid>``) are no credentials."""
    value = f"{word}_{uuid.uuid4()}"
    while _seven_digits(value):
        value = f"{word}_{uuid.uuid4()}"
    assert value in _stored(scrubber, {"arguments": {"id": value}})
