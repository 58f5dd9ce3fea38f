"""Regenerate ``data/ko_words.txt.gz`` from kiwipiepy's model (dev only: needs kiwipiepy).

    .venv/bin/python -m tracelake.scrub.lexicon_build

It also writes ``data/en_words.txt.gz`` (:func:`build_english`, needs faker).

The Korean name rule (:mod:`tracelake.scrub.hangul`) needs to know whether a Hangul word
that starts with a surname syllable (이어폰, 정수기, 주문자, 고구마) is an ordinary word. Kiwi's
tagger cannot say so reliably: in measurements it tagged Faker names as common nouns
(전시우/NNG, 심영미/NNG), split others (박영+길, 안+미숙) and costs ~0.7 ms per string. Its
lexicon can: every morpheme of the model with a tag other than NNP (proper noun) is an
ordinary word. This writes those Hangul forms of 2-6 syllables that start with a surname
(about 56,000), one per line, plus the two-syllable forms the model knows only as NNP (given
names such as 민수, 영희), prefixed with ``@``. The list is read at run time: no model is
loaded while scrubbing.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from tracelake.scrub.vocab import KO_SURNAMES_1, KO_SURNAMES_2

OUT = Path(__file__).with_name("data") / "ko_words.txt.gz"


def _hangul(form: str) -> bool:
    return all("\uac00" <= c <= "\ud7a3" for c in form)


def build() -> tuple[list[str], list[str]]:
    from kiwipiepy import Kiwi  # type: ignore[import-not-found,unused-ignore]

    kiwi = Kiwi()
    common: set[str] = set()
    proper: set[str] = set()
    index = 0
    while True:
        try:
            morph = kiwi.morpheme(index)
        except ValueError:  # past the last morpheme
            break
        index += 1
        form = morph.form
        if not (2 <= len(form) <= 6 and _hangul(form)):
            continue
        (proper if str(morph.tag).startswith("NNP") else common).add(form)
    words = sorted(w for w in common if w[0] in KO_SURNAMES_1 or w[:2] in KO_SURNAMES_2)
    given = sorted(w for w in proper if len(w) == 2 and w not in common)
    return words, given


def main() -> None:
    words, given = build()
    text = "\n".join(words) + "\n" + "\n".join("@" + g for g in given) + "\n"
    OUT.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    print(f"{OUT}: {len(words)} words, {len(given)} given-name forms")


EN_OUT = Path(__file__).with_name("data") / "en_words.txt.gz"


def build_english() -> list[str]:
    """Common English words (Faker's ``en_US`` lorem list, about 970 words) that are not a
    first or last name in any of Faker's locales: more of the allow-list of
    :mod:`tracelake.scrub.latin` (a word kept there is never taken for a name)."""
    from faker import Faker  # type: ignore[import-not-found,unused-ignore]
    from faker.config import AVAILABLE_LOCALES  # type: ignore[import-not-found,unused-ignore]
    from faker.providers.lorem.en_US import (  # type: ignore[import-not-found,unused-ignore]
        Provider,
    )

    names: set[str] = set()
    for locale in AVAILABLE_LOCALES:
        person = Faker(locale).provider("faker.providers.person")
        for attr in ("first_names", "last_names", "first_names_male", "first_names_female"):
            values = getattr(person, attr, None) or ()
            names.update(str(v).lower() for v in values)
    return sorted({w.lower() for w in Provider.word_list} - names)


def main_english() -> None:
    words = build_english()
    text = "\n".join(words) + "\n"
    EN_OUT.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    print(f"{EN_OUT}: {len(words)} words")


if __name__ == "__main__":
    main()
    main_english()
