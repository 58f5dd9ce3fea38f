"""Nothing stored can act on the operator's terminal or break the output (generated text)."""

from __future__ import annotations

import io
import json
import re
from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from tracelake.console import display_url, dumps, markup, safe, table

UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]"
)
# Text that is likely to hurt: controls, escapes, markup, bidi, surrogates, plus anything.
HOSTILE = st.text(
    st.sampled_from(list("[]/\\=x \x1b\x9b\x07\x08\r\n\t\u202e\u2066\ufeff\ud800\udfff\x00"))
    | st.characters(),
    max_size=40,
)


@given(HOSTILE)
def test_safe_leaves_nothing_a_terminal_acts_on(text: str) -> None:
    shown = safe(text)
    assert not UNSAFE.search(shown)
    shown.encode("utf-8")  # no lone surrogates left
    if not UNSAFE.search(text):
        assert shown == text  # ordinary text is shown as it is


@settings(max_examples=200)
@given(st.lists(st.lists(HOSTILE, min_size=3, max_size=3), max_size=5), HOSTILE)
def test_tables_on_a_terminal_and_a_pipe(rows: list[list[str]], title: str) -> None:
    terminal = io.StringIO()
    console = Console(file=terminal, force_terminal=True, color_system=None, width=60)
    table(console, ("a", "b", "c"), rows, title)
    assert "\x1b" not in terminal.getvalue() and "\x9b" not in terminal.getvalue()

    piped = io.StringIO()
    table(Console(file=piped, force_terminal=False), ("a", "b", "c"), rows, title)
    lines = piped.getvalue().splitlines()
    assert len(lines) == len(rows) + 1  # one line per row: nothing wrapped or cut
    for line, row in zip(lines[1:], rows, strict=True):
        assert line.split("\t") == [safe(v) for v in row]


@given(HOSTILE)
def test_markup_is_literal(text: str) -> None:
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=False, width=500).print(f"[bold]{markup(text)}[/]")
    assert buffer.getvalue().rstrip(" \n") == safe(text).rstrip(" ")


@given(st.recursive(HOSTILE | st.integers() | st.none(), lambda c: st.lists(c, max_size=3)))
def test_json_output_round_trips_and_is_inert(data: object) -> None:
    text = dumps({"value": data})
    assert "\x1b" not in text and "\x9b" not in text and "\u202e" not in text
    assert json.loads(text) == {"value": data}


@given(
    user=st.text(st.characters(min_codepoint=0x61, max_codepoint=0x7A), min_size=1, max_size=8),
    password=st.text(min_size=6, max_size=20).filter(lambda p: p.strip() == p),
)
def test_urls_are_shown_without_their_password(user: str, password: str) -> None:
    url = f"postgresql://{user}:{quote(password, safe='')}@db.example:5432/lake"
    assert display_url(url) == f"postgresql://{user}:***@db.example:5432/lake"
