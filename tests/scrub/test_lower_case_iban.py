"""IBANs written in lower case in free text (session 15's attack: ``refund to nl91abna…`` was
stored). Lower case is checked by ISO 13616's checksum, so look-alike tokens are kept."""

from __future__ import annotations

import random

import pytest
from faker import Faker

from tracelake.scrub import Scrubber
from tracelake.scrub.analyzer import iban_checksum_ok

LOCALES = ["de_DE", "nl_NL", "nl_BE", "fr_FR", "en_GB", "es_ES", "it_IT", "pl_PL", "de_AT"]
MESSAGES = [
    "please refund to {} thanks",
    "transfer failed: account {}.",
    "GET /payouts?iban={}&amount=12",
    "환불 계좌 {} 로 보내주세요",
]


@pytest.fixture(scope="module")
def scrubber() -> Scrubber:
    return Scrubber(b"lower-case-iban-test-key-0123456789")


@pytest.mark.parametrize("locale", LOCALES)
def test_a_lower_case_iban_in_a_message_is_never_stored(scrubber: Scrubber, locale: str) -> None:
    fake = Faker(locale)
    leaks = []
    for _ in range(10):
        iban = fake.iban().lower()
        for template in MESSAGES:
            message = template.format(iban)
            if iban in scrubber.scrub_text(message):
                leaks.append(message)
    assert not leaks, leaks[:3]


def test_look_alike_tokens_without_a_valid_checksum_are_kept(scrubber: Scrubber) -> None:
    rng = random.Random()
    kept = 0
    for _ in range(50):
        token = "".join(rng.choice("abcdef") for _ in range(2)) + str(rng.randint(10, 99))
        token += "".join(rng.choice("0123456789abcdef") for _ in range(16))
        if iban_checksum_ok(token):
            continue
        text = f"sha {token} kept"
        kept += scrubber.scrub_text(text) == text
    assert kept >= 40  # others may hold a phone-like digit run
