"""A guarded pattern (tracelake.scrub.first_chars) matches exactly what its original matches:
at every position of texts built from the pattern's own words in random letter case, digits,
separators, case-folding oddities and any Unicode, and on Faker prose in several locales."""

from __future__ import annotations

import importlib
import pkgutil
import random
import re

import pytest
from faker import Faker
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracelake.scrub
from tracelake.scrub import first_chars
from tracelake.scrub.first_chars import _ops, _parser, guard

for _module in pkgutil.iter_modules(tracelake.scrub.__path__):  # every guard() at import time
    importlib.import_module(f"tracelake.scrub.{_module.name}")
PAIRS = list(first_chars.GUARDED)
_WORD = re.compile(r"[^\W\d_]{2,}")
# characters whose case folding differs from str.lower / str.upper (dotted and dotless i, long
# s, Kelvin and Angstrom signs, sharp s) and separators the patterns name
_ODD = ["İ", "ı", "ſ", "\u212a", "\u212b", "ß", "ẞ", "Σ", "ς", "ǅ"]
_SEPARATORS = [" ", ": ", "=", "：", " is ", " to ", "\n", "-", "[", "(", "#", ".", "\t", ", "]


def _words(pattern: re.Pattern[str]) -> list[str]:
    return sorted(set(_WORD.findall(pattern.pattern))) or ["x"]


def _case(word: str, how: int) -> str:
    return (word, word.upper(), word.title(), word.swapcase())[how % 4]


def _texts(pattern: re.Pattern[str]) -> st.SearchStrategy[str]:
    piece = st.one_of(
        st.tuples(st.sampled_from(_words(pattern)), st.integers(0, 3)).map(lambda w: _case(*w)),
        st.integers(0, 10**9).map(str),
        st.sampled_from(_SEPARATORS + _ODD),
        st.text(max_size=3),
    )
    return st.lists(piece, max_size=14).map("".join)


def _same_everywhere(original: re.Pattern[str], guarded: re.Pattern[str], text: str) -> None:
    for at in range(len(text) + 1):
        a, b = original.match(text, at), guarded.match(text, at)
        assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())), (text, at)
    assert [m.span() for m in original.finditer(text)] == [m.span() for m in guarded.finditer(text)]


def _guards_every_alternative(original: re.Pattern[str], guarded: re.Pattern[str]) -> bool:
    """The lookahead comes first and the original (after its global flags) is one group after
    it: every top-level alternative is guarded (else the engine still tries the others at
    every position)."""
    flags = re.match(r"(?:\(\?[aiLmsux]+\))+", original.pattern)
    rest = original.pattern[flags.end() if flags else 0 :]
    ops = [op for op, _ in _parser.parse(guarded.pattern, guarded.flags)]
    return ops[0] is _ops.ASSERT and guarded.pattern.endswith((f"(?:{rest})", f"(?:{rest}\n)"))


def test_the_scrubber_guards_its_costly_alternations() -> None:
    assert len(PAIRS) >= 7
    for original, guarded in PAIRS:
        assert guarded is not original and _guards_every_alternative(original, guarded)
        assert guarded.groupindex == original.groupindex and guarded.groups == original.groups


@pytest.mark.parametrize("index", range(len(PAIRS)))
def test_a_guarded_pattern_matches_as_its_original(index: int) -> None:
    original, guarded = PAIRS[index]

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(text=_texts(original))
    def check(text: str) -> None:
        _same_everywhere(original, guarded, text)

    check()


def test_on_prose_with_the_patterns_words_planted() -> None:
    fake = Faker(["en_US", "de_DE", "fr_FR", "es_ES", "ko_KR", "ja_JP", "tr_TR", "pl_PL"])
    seed = random.randrange(1 << 30)
    fake.seed_instance(seed)
    rng = random.Random(seed)
    for original, guarded in PAIRS:
        words = _words(original)
        for _ in range(40):
            planted = [_case(rng.choice(words), rng.randrange(4)) for _ in range(3)]
            text = " ".join([fake.sentence(), *planted, str(rng.randrange(10**8)), fake.text(80)])
            _same_everywhere(original, guarded, text)


@pytest.mark.parametrize(
    ("source", "flags"),
    [
        ("(?i)\U00010400x|ab", 0),  # a capital beyond the BMP: CPython's folded class misses it
        (r"(?u:(?i:k))", re.ASCII),  # a Unicode group in an ASCII pattern
        (r"(?ai)(?u:k)", 0),
        (r"(?x) (?i) abc", 0),  # global flags after a blank or a comment
        (r"(?#note)(?i)abc", 0),
    ],
)
def test_no_guard_where_the_lookahead_could_read_differently(source: str, flags: int) -> None:
    pattern = re.compile(source, flags)
    assert guard(pattern) is pattern


@pytest.mark.parametrize(
    "source", [r"\w+x", r".abc", r"[^a]b", r"a?", r"(a)?\1x", r"\d{3}", r"(?i:a|)", r"\s*token"]
)
def test_no_guard_where_a_match_may_start_anywhere_or_be_empty(source: str) -> None:
    pattern = re.compile(source)
    assert guard(pattern) is pattern


@pytest.mark.parametrize(
    ("source", "flags", "text"),
    [
        (r"(?i)ab|cd", 0, "xAB Cd"),  # the lookahead before both alternatives
        ("[가-힣]+x|(?i:foo)", 0, "가가x FOO"),
        (" a b # a comment", re.VERBOSE, "ab"),  # the closing paren not commented out
        (r"(?:\bsecret|[ \t]*token)=\w+", 0, "secret=1  token=2"),
        (r"(?i:İd|ſk)", 0, "id ſK İD SK"),
    ],
)
def test_guarded_forms(source: str, flags: int, text: str) -> None:
    original = re.compile(source, flags)
    guarded = guard(original)
    assert guarded is not original and _guards_every_alternative(original, guarded)
    _same_everywhere(original, guarded, text)
    assert original.search(text)
