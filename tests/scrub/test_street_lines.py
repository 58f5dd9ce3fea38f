"""Street addresses in lower and upper case, and postcodes beside an address
(``tracelake.scrub.street_lines``). Session 17's probe stored all 88 lower-case Faker
addresses in 11 locales and left postcodes beside ``[ADDRESS]`` (``[ADDRESS], H8B8B1``).
Fresh Faker values every run."""

from __future__ import annotations

import random
import re

import pytest
from faker import Faker

from tracelake.scrub import Scrubber

# Locales whose street types the rule knows in full (Faker's own lists): nothing may leak.
FULL = ["de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL"]
# English locales: Faker draws from USPS's 200 street suffixes, of which the rule leaves out
# those that are ordinary words after a number ("3 dry run", "2 online course"): a bound.
ENGLISH = ["en_US", "en_GB", "en_CA"]
TEMPLATES = ["please ship to {} tomorrow", "배송지: {}", "address updated to {}."]


@pytest.fixture(scope="module")
def scrubber() -> Scrubber:
    return Scrubber(b"street-lines-test-key-0123456789")


def _leaked(scrubber: Scrubber, fake: Faker, case: str) -> tuple[int, list[str]]:
    street, postcode, city = fake.street_address(), fake.postcode(), fake.city()
    cased = [v.lower() if case == "lower" else v.upper() if case == "upper" else v
             for v in (street, postcode, city)]  # fmt: skip
    text = random.choice(TEMPLATES).format(f"{cased[0]}, {cased[1]} {cased[2]}")
    out = scrubber.scrub_text(text)
    words = set(re.findall(r"[^\W\d_]{4,}", out))
    parts = [cased[1]] if cased[1] in out else []
    parts += [w for w in re.findall(r"[^\W\d_]{4,}", cased[0]) if w in words and not _kind(fake, w)]
    return (1, [f"{text!r} -> {out!r}"]) if parts else (0, [])


def _kind(fake: Faker, word: str) -> bool:
    """Whether *word* is a street type or a unit word in Faker's own lists for the locale
    (Hill, Calle, Flat), not a name."""
    lists: set[str] = set()
    for provider in fake.providers:
        for attr in (
            "street_suffixes",
            "street_prefixes",
            "street_titles",
            "secondary_address_formats",
        ):
            for value in getattr(provider, attr, ()) or ():
                lists.update(w.lower() for w in re.findall(r"[^\W\d_]+", str(value)))
    return word.lower() in lists | {"flat", "studio", "apt", "suite", "puerta", "piso", "piano"}


@pytest.mark.parametrize("case", ["lower", "upper", "as written"])
@pytest.mark.parametrize("locale", FULL)
def test_an_address_in_any_case_is_never_stored(scrubber: Scrubber, locale: str, case: str) -> None:
    fake = Faker(locale)
    leaks: list[str] = []
    for _ in range(12):
        leaks += _leaked(scrubber, fake, case)[1]
    assert not leaks, leaks[:3]


@pytest.mark.parametrize("case", ["lower", "upper"])
@pytest.mark.parametrize("locale", ENGLISH)
def test_english_addresses_in_any_case_are_replaced(
    scrubber: Scrubber, locale: str, case: str
) -> None:
    """Measured at 2-7% left over 150 each (all of them before the rule)."""
    fake = Faker(locale)
    leaks: list[str] = []
    for _ in range(60):
        leaks += _leaked(scrubber, fake, case)[1]
    assert len(leaks) <= 9, leaks[:5]


@pytest.mark.parametrize("locale", ["en_CA", "en_GB", "nl_NL", "pl_PL"])
def test_the_postcode_after_a_replaced_address_goes_with_it(
    scrubber: Scrubber, locale: str
) -> None:
    fake = Faker(locale)
    leaks = []
    for _ in range(12):
        postcode = fake.postcode()
        text = f"ship to {fake.street_address()}, {postcode} {fake.city()}"
        out = scrubber.scrub_text(text)
        if "[ADDRESS]" in out and postcode in out:
            leaks.append(f"{text!r} -> {out!r}")
    assert not leaks, leaks[:3]


PHRASES = [
    "retry {n} of the {w} step",
    "processed {n} rows in {n} ms via api",
    "step {n}: drive the {w} tool",
    "{n} minute drive from the office",
    "route {n} failed with 503",
    "sent via email, {n} attachments",
    "placed {n} orders in the last hour",
    "batch {n} court records synced",
    "found {n} open issues on the {w} project",
    "ring buffer {n} full",
    "string {n} too long",
    "keypad {n} pressed",
    "chunk {n} of {n} (plaza api)",
    "{n} test cases passed",
    "{n} ways to improve",
    "cached {n} view models",
    "{n} spring boot services",
    "{n} court cases",
    "mount {n} volumes",
    "{n} key rotations",
    "square {n} of the grid",
    "place {n} bets on the {w} market",
    # session 17's attack on the first version: all were replaced
    "step {n} stack trace",
    "skip {n} header row",
    "rotate {n} api keys",
    "found {n} data points",
    "{n} event loop",
    "top {n} most common words",
    "x = {n} if loop.is_running()",
    "/home/app/{n} main st.txt",
    "-- {n} unique keys",
    "WARN pool {n} connections close idle",
    "terraform: {n} nat gateway, {n} internet gateway",
    "chmod 0755 cannot close the file",
    "{n} unit tests pass",
    "{n} external hard drive",
    "acceso denegado {n}",
    "le chemin du fichier ligne {n}",
    "corso di formazione {n}",
    "route par défaut {n}",
    "place disponible {n}",
    "via python {n}",
    "total 3 1024",  # ls -l (a 7-digit run is a phone number to the digit rule)
    "keyring 1 2024",
    "shipped as a PEP {n} namespace extension",
]


@pytest.mark.parametrize("phrase", PHRASES)
def test_numbers_beside_street_words_in_ordinary_prose_are_kept(
    scrubber: Scrubber, phrase: str
) -> None:
    fake = Faker()
    text = phrase.replace("{w}", fake.word())
    while "{n}" in text:
        text = text.replace("{n}", str(random.randint(1, 999)), 1)  # house-number sized
    assert scrubber.scrub_text(text) == text
