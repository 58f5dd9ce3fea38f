"""VAT numbers and vehicle plates in free text (part of :mod:`freetext`'s pass).

Both name a person where the business is one person (a sole trader's VAT number is often
their tax number) or the car is theirs, and neither is caught by the digit rules: a VAT
number glues its digits to a country code (``EE906287276``), a plate mixes a few letters
and digits with spaces (``NJC 536``, ``SO 4909 WW``). Session 17's probe with Faker's
``vat_id()`` in 26 locales found 141 of 156 stored and 30 of 132 ``license_plate()`` values
after a plate word. Found here:

* a VAT number by its official shape (the EU's VIES formats, the UK, Switzerland, Norway):
  the country code, in capitals, glued to the country's digits; a Venezuelan RIF
  (``J-12345678-9``);
* any VAT number after a VAT word in 20 languages (``VAT``, ``USt-IdNr.``, ``TVA``,
  ``partita IVA``, ``BTW``, ``NIP``, ``ΑΦΜ``, ...): a value with five digits or more;
* a plate after a plate word (``license plate``, ``Kennzeichen``, ``immatriculation``,
  ``matrícula``, ``targa``, ``kenteken``, ...): up to three groups of capitals and digits,
  with a digit. Lower-case plates without spaces are found by the national-id label rule.
"""

from __future__ import annotations

import re

from tracelake.scrub import hints
from tracelake.scrub.lowered import compile_lowered

Span = tuple[int, int, str]

_EDGE_L = r"(?<![A-Za-z0-9])"
_EDGE_R = r"(?![A-Za-z0-9])"
# VIES formats (the country code, then its number; EL is Greece), GB, CHE, NO
_VAT_SHAPE = re.compile(
    _EDGE_L
    + r"(?:ATU\d{8}|BE[01]\d{9}|BG\d{9,10}|CY\d{8,9}[A-Za-z]|CZ\d{8,10}|DE\d{9}|DK\d{8}|EE\d{9}|"
    r"EL\d{9}|ES[A-Za-z0-9]\d{7}[A-Za-z0-9]|FI\d{8}|FR[A-HJ-NP-Z0-9]{2}\d{9}|HR\d{11}|HU\d{8}|"
    r"IE\d{7}[A-Za-z]{1,2}|IE\d[A-Za-z+*]\d{5}[A-Za-z]|IT\d{11}|LT(?:\d{9}|\d{12})|LU\d{8}|"
    r"LV\d{11}|MT\d{8}|NL\d{9}B\d{2}|PL\d{10}|PT\d{9}|RO\d{6,10}|SE\d{10}01|SI\d{8}|SK\d{10}|"
    r"XI\d{9}|GB(?:\d{3} ?\d{4} ?\d{2}(?: ?\d{3})?|GD\d{3}|HA\d{3})|CHE[-.]?\d{3}\.?\d{3}\.?\d{3}|NO\d{9}(?:MVA)?|"
    r"[JGVEP]-\d{8}-\d)" + _EDGE_R
)
_VAT_WORDS = (
    r"vat(?:[ _-]?(?:id|reg(?:istration)?|no\.?|number|nr\.?|code))*|value added tax(?: id| number)?|"
    r"ust-?id(?:nr\.?|-nr\.?)?|ust-?idnr\.?|umsatzsteuer[- ]?id(?:entifikationsnummer)?|"
    r"steuernummer|uid-?nummer|mwst(?:-?nr\.?)?|tva(?: intra(?:com(?:munautaire)?)?)?|"
    r"partita iva|p\.? ?iva|iva|nif-?iva|btw(?:-?(?:nummer|nr\.?|id))?|moms(?:nr|nummer)?|"
    r"mva|alv-?(?:numero|tunnus)|di[čc]|i[čc]o|nip|cif|cui|pvm(?: kodas)?|ddv|"
    r"ad[óo]sz[áa]m|afm|αφμ|ф\.?\s?н\.?|gstin|gst(?: no\.?| number)?|abn|ein"
)
_VAT_LABELLED = re.compile(
    r"(?i:\b(?:" + _VAT_WORDS + r"))(?:\s*(?:no\.?|nr\.?|number|#))?"
    r"[\"']?\s*[:=#]?\s*[\"']?"
    r"((?:[A-Za-z]{1,3}[ -]?)?[A-Za-z]?\d[A-Za-z0-9.-]*(?: \d[A-Za-z0-9.-]*){0,3})" + _EDGE_R
)
_PLATE_WORDS = (
    r"licen[cs]e[ -]?plates?|number[ -]?plates?|plates?(?: number| no\.?)?|"
    r"(?:vehicle |car )?registration(?: number| no\.?| plate)?|reg\.? (?:no\.?|number)|"
    r"kennzeichen|nummernschild|(?:plaque d')?immatriculation|matr[ií]cula|placa|targa|"
    r"kenteken|tablic[aeyę] rejestracyjn\w*|numer rejestracyjny|registreringsnummer|"
    r"rekisteritunnus|rendsz[áa]m|spz|госномер|номерной знак|車牌(?:號碼?|号码?)?|ナンバー"
)
_PLATE_LABELLED = re.compile(
    r"(?i:\b(?:" + _PLATE_WORDS + r"))(?:\s*(?:no\.?|number|#))?"
    r"[\"']?\s*[:=#]?\s*[\"']?"
    r"([A-Z0-9ÄÖÜÅÆØÉÈÇŁŚŻŹĆŃŠČŽ]{1,8}(?:[ -][A-Z0-9ÄÖÜÅÆØÉÈÇŁŚŻŹĆŃŠČŽ]{1,8}){0,2})" + _EDGE_R
)
_HINT = hints.hint(
    "VAT or plate label",
    compile_lowered(r"(?:" + _VAT_LABELLED.pattern + r")|(?:" + _PLATE_LABELLED.pattern + r")"),
)
_SHAPE_HINT = hints.hint("VAT shape", compile_lowered(_VAT_SHAPE.pattern), narrowing=True)


def spans(text: str, out: list[Span], found: hints.Found) -> None:
    """Append the spans of VAT numbers and plates in *text* (*found*: the hints of its
    lower-cased text, :func:`tracelake.scrub.hints.scan`)."""
    if _SHAPE_HINT in found:
        out.extend((m.start(), m.end(), "VAT_ID") for m in _VAT_SHAPE.finditer(text))
    if _HINT not in found:
        return
    for match in _VAT_LABELLED.finditer(text):
        if sum(c.isdigit() for c in match.group(1)) >= 5:
            out.append((match.start(1), match.end(1), "VAT_ID"))
    for match in _PLATE_LABELLED.finditer(text):
        value = match.group(1)
        if any(c.isdigit() for c in value) and sum(c.isalnum() for c in value) >= 4:
            out.append((match.start(1), match.end(1), "VEHICLE_PLATE"))


def shaped(text: str) -> bool:
    """Whether *text* holds a VAT number's shape (a code-like token that is one)."""
    return _VAT_SHAPE.search(text) is not None
