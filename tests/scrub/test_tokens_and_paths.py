"""Leak classes a fresh-context attack found (2026-12-03), with fresh Faker values each run:
numbers in URL path segments and ``key:`` tokens, national ids as whole code-like values, and
phone numbers after a name or word that starts with a quantity word (Maxime, Summer)."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from faker import Faker

from tracelake.scrub import Scrubber, digits

LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "it_IT", "es_ES", "pt_BR", "tr_TR", "ko_KR")
QUANTITY_PREFIXES = ("max", "min", "sum", "at", "exp", "cost", "count", "total", "size", "seed")


def _digits(fake: Any, rng: random.Random) -> str:
    """A phone number of the locale as a bare digit run of 8 to 12 digits."""
    while True:
        found = re.sub(r"\D", "", fake.phone_number())
        if 8 <= len(found) <= 12:
            return found
        if rng.random() < 0.2:
            return str(rng.randrange(10**8, 10**11))


def _dump(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False) + json.dumps(payload)


def _fakes(seed: int) -> list[Any]:
    Faker.seed(seed)
    return [Faker(loc) for loc in LOCALES]


@pytest.fixture()
def seed() -> int:
    return random.SystemRandom().randrange(1, 2**31)


def test_numbers_in_path_segments_and_key_tokens_are_replaced(
    scrubber: Scrubber, seed: int
) -> None:
    rng = random.Random(seed)
    fakes = _fakes(seed)
    forms = (
        "users/{v}/orders",
        "msisdn:{v}",
        "GET /api/v1/users/{v}/profile returned 404",
        "https://api.example.com/v1/customers/{v}/orders",
    )
    for _ in range(60):
        value = _digits(rng.choice(fakes), rng)
        text = rng.choice(forms).format(v=value)
        out = scrubber.scrub_text(text)
        assert value not in out, (seed, text, out)


def test_an_id_after_its_path_label_stays(scrubber: Scrubber, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(30):
        order = str(rng.randrange(10**7, 10**9))
        for text in (f"/api/v1/orders/{order}/refund", f"GET /v2/items/{order} 200"):
            assert scrubber.scrub_text(text) == text


def test_national_ids_as_whole_values_and_in_tokens(scrubber: Scrubber, seed: int) -> None:
    Faker.seed(seed)
    makers = [
        Faker("it_IT").ssn,  # codice fiscale
        Faker("zh_TW").ssn,  # Taiwan id
        Faker("es_ES").nie,
        Faker("en_GB").ssn,  # NINO (spaced or not)
    ]
    rng = random.Random(seed)
    for _ in range(40):
        value = rng.choice(makers)().replace(" ", "")
        for text in (value, f"lookup:{value}", f"citizens/{value}/profile"):
            event = {
                "type": "step.completed",
                "plan_id": "p1",
                "step_id": "s1",
                "tool": "lookupCitizen",
                "output_preview": {"q": text},
            }
            payload = scrubber.scrub_event("graph_tool_call", "step.completed", event).payload
            assert value not in _dump(payload), (seed, text, payload)


def test_a_phone_after_a_name_that_starts_like_a_quantity_word(
    scrubber: Scrubber, seed: int
) -> None:
    rng = random.Random(seed)
    fakes = _fakes(seed)
    names = {
        name
        for fake in fakes
        for name in (fake.first_name() for _ in range(300))
        if name.lower().startswith(QUANTITY_PREFIXES)
    }
    words = {"attached", "export", "express", "atualizar", "Summer", "Maxime"}
    assert names, f"no Faker first name with a quantity prefix (seed {seed})"
    for who in sorted(names | words):
        value = _digits(rng.choice(fakes), rng)
        out = scrubber.scrub_text(f"Please call {who} {value} tomorrow")
        assert value not in out, (seed, who, out)


@pytest.mark.parametrize(
    "text",
    ["max_tokens=1000000", "maxTokens 1000000", "MAX_TOKENS=1000000", "totalAmount 12500000"],
)
def test_quantity_keys_keep_their_numbers(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text


# A birth label in each language (the template); the month names and dates come from Faker.
BIRTH_LABELS = {
    "es_ES": "fecha de nacimiento: {d} de {m} de {y}",
    "pt_BR": "data de nascimento {d} de {m} de {y}",
    "it_IT": "data di nascita {d} {m} {y}",
    "nl_NL": "geboortedatum {d} {m} {y}",
    "tr_TR": "doğum tarihi {d} {m} {y}",
    "ru_RU": "дата рождения {d} {m} {y}",
}


@pytest.mark.parametrize("locale", sorted(BIRTH_LABELS))
def test_dates_of_birth_with_month_names_in_other_languages(
    scrubber: Scrubber, seed: int, locale: str
) -> None:
    import importlib

    Faker.seed(seed)
    fake = Faker(locale)
    months = list(
        importlib.import_module(f"faker.providers.date_time.{locale}").Provider.MONTH_NAMES.values()
    )
    for _ in range(25):
        born = fake.date_of_birth(minimum_age=1, maximum_age=90)
        text = BIRTH_LABELS[locale].format(d=born.day, m=months[born.month - 1], y=born.year)
        out = scrubber.scrub_text(text)
        assert str(born.year) not in out, (seed, text, out)


@pytest.mark.parametrize(
    "text",
    ["data urodzenia 27.11.2022", "дата рождения 23/02/2022", "data di nascita 2024-01-20"],
)
def test_a_recent_date_after_a_birth_word_in_other_languages(scrubber: Scrubber, text: str) -> None:
    out = scrubber.scrub_text(text)
    assert "[DATE_OF_BIRTH]" in out, out


def test_numbers_glued_to_a_lower_case_word_by_underscore_dot_or_hyphen(
    scrubber: Scrubber, seed: int
) -> None:
    """File names, dotted keys and log tokens (report_4155550123.pdf, sms.447700900123.sent,
    report-4155550123.pdf, sms-821055512345-failed):
    a digit run glued to a lower-case word is no id code; whole values and inside prose."""
    rng = random.Random(seed)
    fakes = _fakes(seed)
    forms = (
        "{w}_{v}.pdf",
        "{w}.{v}.sent",
        "u_{v}_x",
        "queued {w}.{v}.{w} for retry",
        "{w}_{v}",
        "could not open {w}-{v}.pdf",
        "{W}-{v}.pdf",
        "{W}_{v}.png",
        "dev-{v}",
        "/tmp/{w}-{w}-{v}.csv",
        "{w}-{v}-failed",
    )
    words = [  # not a word that names an id or a quantity (order_, no_, price_: kept then)
        w
        for w in Faker("en_US").words(60)
        if w.isalpha()
        and w.islower()
        and len(w) > 1  # "a" titled is "A": a one-letter code (A_8349853587.png) reads as an id
        and not digits._GLUED_ID_WORD.search(w)
        and not digits._quantity_label(w + "_")
    ]
    for _ in range(80):
        value = _digits(rng.choice(fakes), rng)
        if len(value) < 8:
            continue
        word = rng.choice(words)
        text = rng.choice(forms).format(w=word, W=word.title(), v=value)
        out = scrubber.scrub_text(text)
        assert value not in out, (seed, text, out)


@pytest.mark.parametrize(
    "text",
    [
        "ORD-20260725-0001",
        "DLV_240513871715",
        "order_123456789",
        "order-123456789",
        "backup-20260513.tar.gz",
        "build-1234567",
        "Build-1234567",
        "release-1234567",
        "invoice.4155550123",
        "img_20240513_123045.jpg",
        "ts_1721900000",
        "max_tokens_1000000",
        "sku_88812345",
    ],
)
def test_ids_and_quantities_glued_to_their_label_stay(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text
    assert scrubber.scrub_text(f"saw {text} in the log") == f"saw {text} in the log"


def test_a_phone_number_after_at_is_no_time(scrubber: Scrubber, seed: int) -> None:
    """ "at" before a number makes a time of a Unix time only (sent at 1721900000)."""
    rng = random.Random(seed)
    fakes = _fakes(seed)
    forms = ("Reach me at {v} tonight", "text me at {v}", "The customer at {v} complained")
    for _ in range(60):
        value = _digits(rng.choice(fakes), rng)
        if len(value) < 8 or re.fullmatch(r"1\d{9}(?:\d{3})?", value):
            continue
        text = rng.choice(forms).format(v=value)
        out = scrubber.scrub_text(text)
        assert value not in out, (seed, text, out)
    for kept in ("sent at 1721900000", "expired at 1721900000123", "created_at 1721900000"):
        assert scrubber.scrub_text(kept) == kept


# Phone shapes no id is written in: 3-3-4 (with or without parentheses), 0N(N)-NNN(N)-NNNN,
# and an 11-digit Korean mobile number without separators
PHONE_SHAPES = ("###-###-####", "(###)###-####", "###.###.####", "010-####-####", "0#-###-####")


def test_phone_shapes_glued_to_a_code_are_found(scrubber: Scrubber, seed: int) -> None:
    """A phone number in its written shape glued to an ALL-CAPS or camelCase code (a fifth
    fresh-context attack: SMS-…, IMG_….jpg, DETAIL-….log); ids glued to a code stay."""
    rng = random.Random(seed)
    fake = Faker(["en_US", "ko_KR", "ja_JP"])
    fake.seed_instance(seed)
    forms = ("{c}-{v}", "{c}_{v}.jpg", "sent {c}-{v} ok", "{c}.{v}.log", "{c}-{v}-2.pdf")
    for _ in range(60):
        code = rng.choice(
            [fake.lexify("???").upper(), fake.lexify("??????").upper(), fake.lexify("?????Id")]
        )
        if digits._names_an_id(code):
            continue  # ORD-123-456-7890: an id's digits (the next test)
        if rng.random() < 0.3:
            value, form = fake.numerify("010########"), rng.choice(("{c}{v}", "{c}_{v}.png"))
        else:
            value = fake.numerify(rng.choice(PHONE_SHAPES))
            if rng.random() < 0.5 and fake.locales[0] != "en_US":
                value = fake["ko_KR" if rng.random() < 0.5 else "ja_JP"].phone_number()
                if not re.fullmatch(r"0\d{1,2}-\d{3,4}-\d{4}", value):
                    continue
            form = rng.choice(forms)
        text = form.format(c=code, v=value)
        out = scrubber.scrub_text(text)
        assert re.sub(r"\D", "", value)[-7:] not in re.sub(r"\D", "", out), (seed, text, out)


@pytest.mark.parametrize(
    "text",
    [
        "ORD-20260725-0001",
        "ORD-2026-0725-0001",
        "ORD-0101234567",
        "ORD-123-456-7890",
        "INV-000123-4567",
        "SKU-12345678",
    ],
)
def test_ids_glued_to_a_code_in_other_shapes_stay(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(f"see {text} for details") == f"see {text} for details"


@pytest.mark.parametrize(
    "form",
    [
        "Your verification code is {v}",
        "Verification code: {v}. Do not share it.",
        "one-time code {v} expires in 5 minutes",
        "login code = {v}",
        "2FA code {v}",
        "the SMS code was {v}",
        "Your passcode is {v}",
        "인증코드는 {v} 입니다",
        "인증 코드: {v}",
        "認証コード：{v}",
        "验证码：{v}",
    ],
)
def test_one_time_codes_in_prose_are_found(scrubber: Scrubber, seed: int, form: str) -> None:
    fake = Faker()
    fake.seed_instance(seed)
    for _ in range(5):
        value = fake.numerify("#" * fake.random_int(4, 8))
        text = form.format(v=value)
        out = scrubber.scrub_text(text)
        assert value not in out, (seed, text, out)  # 7+ digits may read as a phone: also gone


@pytest.mark.parametrize(
    "text", ["auth code flow failed", "the verification code expired", "send a login code"]
)
def test_code_words_without_a_code_stay(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text
