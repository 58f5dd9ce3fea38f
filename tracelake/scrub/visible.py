"""Text as a reader sees it, before detection (:func:`tracelake.scrub.detect.detect`).

Written forms hide a value from patterns but not from a reader: invisible characters inside
it, unusual spaces, HTML character references (numeric and named: ``&#64;``, ``&commat;``),
full-width letters and digits, JSON escapes left in a text (``\\u0040``), percent-encoded
separators and UTF-8 letters (``%2B82%2010...``, ``%EA%B9%80``). They are decoded; the
scrubbed text is stored in its visible form.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

# Characters that split a value without showing: zero-width spaces and joiners, the soft
# hyphen, word joiners, bidirectional marks, the byte-order mark (985\u200b574\u200b2123 is a
# phone number); removed before detection. Spaces other than U+0020 (no-break, thin,
# ideographic): read as a space, so "Carl\u00a0Mora" is two words.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


# Written forms that hide a value from the patterns but not from a reader: numeric HTML
# character references (escott&#64;example.org, &#48;&#49;&#48;...) are decoded, and
# full-width digits, Latin letters, "@" and the full-width hyphen read as their ASCII forms
# (escott\uff20example.org); other full-width punctuation (CJK text) is left as written.
_HTML_REF = re.compile(r"&#(?:[xX]([0-9a-fA-F]{1,6})|(\d{1,7}));")
_FULL_WIDTH = re.compile("[\uff0d\uff0e\uff10-\uff19\uff20-\uff3a\uff41-\uff5a]")
_FULL_TO_ASCII = {
    c: c - 0xFEE0 for c in (0xFF0D, 0xFF0E, *range(0xFF10, 0xFF1A), *range(0xFF20, 0xFF3B))
}
_FULL_TO_ASCII.update({c: c - 0xFEE0 for c in range(0xFF41, 0xFF5B)})


def _html_char(match: re.Match[str]) -> str:
    code = int(match.group(1), 16) if match.group(1) else int(match.group(2))
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else match.group(0)


# JSON escapes left in a text (kim\u0040example.org, a payload quoted twice) and the
# percent-encoded separators of a number or an address in a URL (%2B82%2010%201234%205678,
# 2001%3Adb8%3A%3A1) read as the characters they stand for.
# The named references that spell an address or a number (&commat; &period; &plus; ...)
_NAMED = {
    "commat": "@",
    "period": ".",
    "plus": "+",
    "hyphen": "-",
    "dash": "-",
    "num": "#",
    "lpar": "(",
    "rpar": ")",
    "colon": ":",
    "nbsp": " ",
    "amp": "&",
    "lowbar": "_",
    "quot": '"',  # HTML-escaped JSON: &quot;password&quot;: &quot;...&quot;
    "apos": "'",
    "lt": "<",  # HTML-escaped XML: &lt;password&gt;...
    "gt": ">",
}
_NAMED_REF = re.compile(
    r"&(commat|period|plus|hyphen|dash|num|lpar|rpar|colon|nbsp|amp|lowbar|quot|apos|lt|gt);"
)


def _named_char(match: re.Match[str]) -> str:
    return _NAMED[match.group(1)]


_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_PERCENT = re.compile(
    r"%25(?=[0-9A-Fa-f]{2})|%2[Bb](?=\d)|(?<=\d)%20(?=[\d+(])|(?<=\d)%2[Dd](?=\d)|(?<=[0-9A-Fa-f])%3[Aa](?=[0-9A-Fa-f%])"
)
_PERCENT_CHAR = {"25": "%", "2b": "+", "20": " ", "2d": "-", "3a": ":"}


# Percent-encoded ASCII punctuation: a URL inside a URL's query (?next=%2Faccount%3Femail%3D
# kim%40example.com, state=%7B%22password%22%3A...) is read as the URL it is, so its own
# parameters meet the key rules (a sixth attack: 98 of 100 e-mails, 95 of 200 phones leaked)
_PERCENT_ASCII = re.compile(r"%(2[0-9A-Fa-f]|3[A-Fa-f]|40|5[B-Fb-f]|60|7[B-Eb-e])")


def _ascii_char(match: re.Match[str]) -> str:
    return chr(int(match.group(1), 16))


# Percent-encoded UTF-8 letters (a Hangul name in a search URL: %EA%B9%80%EB%AF%BC%EC%88%98)
_PERCENT_UTF8 = re.compile(r"(?:%[C-Fc-f][0-9A-Fa-f](?:%[89ABab][0-9A-Fa-f]){1,3})+")


def _utf8_chars(match: re.Match[str]) -> str:
    try:
        return unquote(match.group(0), errors="strict")
    except UnicodeDecodeError:
        return match.group(0)


# A form-encoded query value (application/x-www-form-urlencoded: ?q=Gregory+Chambers,
# ?q=0113+496+0771) writes a space as "+": read so, a name or a phone number in a search URL
# is words and digit groups again (found by an attack: 35 of 48 names, 15 of 48 phone numbers
# kept). A "+" right after "=" stays, as a phone number's country prefix (?q=+44+20+7946+0958).
# Also in a fragment (#q=...), in a form body (q=...&page=1, a pair at the start or after a
# space when the text has a "?", "&" or "#"), under keys such as filter:name, and "++".
_FORM_VALUE = re.compile(r"(?:(?<=[?&;#])|(?<!\S))([\w.~\-\[\]:]{1,64}=)([^&#\s]*\+[^&#\s]*)")
_FORM_PLUS = re.compile(r"(?<!^)\++(?=[^\W_])")


def _form_value(match: re.Match[str]) -> str:
    return match.group(1) + _FORM_PLUS.sub(" ", match.group(2))


def _json_char(match: re.Match[str]) -> str:
    code = int(match.group(1), 16)
    return match.group(0) if 0xD800 <= code <= 0xDFFF or code < 0x20 else chr(code)


def _percent_char(match: re.Match[str]) -> str:
    return _PERCENT_CHAR[match.group(0)[1:].lower()]


def _percent_decoded(text: str) -> str:
    """The percent-encoded characters of :func:`visible` read as what they stand for."""
    for _ in range(3):  # %252540: encoded twice or three times (a redirect in a redirect)
        before = text
        text = _PERCENT.sub(_percent_char, text)
        if _PERCENT_ASCII.search(text):
            text = _PERCENT_ASCII.sub(_ascii_char, text)
        if text == before or "%" not in text:
            break
    if _PERCENT_UTF8.search(text):
        text = _PERCENT_UTF8.sub(_utf8_chars, text)
    return text


def visible(text: str) -> str:
    """*text* as a reader sees it (see :data:`_INVISIBLE`, :data:`_HTML_REF`,
    :data:`_JSON_ESCAPE`, :data:`_PERCENT`); ASCII text without a character reference or an
    escape is returned as is."""
    if "&#" in text:
        text = _HTML_REF.sub(_html_char, text)
    if "&" in text and ";" in text:
        text = _NAMED_REF.sub(_named_char, text)
    if "\\u" in text:
        text = _JSON_ESCAPE.sub(_json_char, text)
    if '\\"' in text:  # JSON quoted twice: {\"password\": \"...\"} is read as JSON
        text = text.replace('\\"', '"')
    if "%" in text:
        text = _percent_decoded(text)
    if "+" in text and "=" in text and ("?" in text or "&" in text or "#" in text):
        text = _FORM_VALUE.sub(_form_value, text)
    if text.isascii():
        return text
    if _FULL_WIDTH.search(text):
        text = text.translate(_FULL_TO_ASCII)
    return _SPACES.sub(" ", _INVISIBLE.sub("", text))
