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
_VAT_FORMS = (
    ("ATU", r"\d{8}"), ("BE", r"[01]\d{9}"), ("BG", r"\d{9,10}"), ("CY", r"\d{8,9}[A-Z]"),
    ("CZ", r"\d{8,10}"), ("DE", r"\d{9}"), ("DK", r"\d{8}"), ("EE", r"\d{9}"), ("EL", r"\d{9}"),
    ("ES", r"[A-Z0-9]\d{7}[A-Z0-9]"), ("FI", r"\d{8}"), ("FR", r"[A-HJ-NP-Z0-9]{2}\d{9}"),
    ("HR", r"\d{11}"), ("HU", r"\d{8}"), ("IE", r"\d{7}[A-Z]{1,2}|\d[A-Z+*]\d{5}[A-Z]"),
    ("IT", r"\d{11}"), ("LT", r"\d{9}|\d{12}"), ("LU", r"\d{8}"), ("LV", r"\d{11}"),
    ("MT", r"\d{8}"), ("NL", r"\d{9}B\d{2}"), ("PL", r"\d{10}"), ("PT", r"\d{9}"),
    ("RO", r"\d{8,10}"), ("SE", r"\d{10,12}01"), ("SI", r"\d{8}"), ("SK", r"\d{10}"),
    ("XI", r"\d{9}"), ("GB", r"\d{3} ?\d{4} ?\d{2}(?: ?\d{3})?|GD\d{3}|HA\d{3}"),
    ("CHE", r"\d{3}\.?\d{3}\.?\d{3}"), ("NO", r"\d{9}(?:MVA)?"),
)  # fmt: skip
_VAT_SHAPE = re.compile(
    # as written (DE 123456789, BE-0318626588) ...
    _EDGE_L
    + "(?:"
    + "|".join(f"{cc}[- ]?(?:{body})" for cc, body in _VAT_FORMS)
    + ")"
    + _EDGE_R
    # ... or in any case, glued and standing alone: a word of its own (acme de391417773
    # today), not part of a path, a host or an id (/items/hr53374046140/, lt-6294…)
    + r"|(?:(?<=[\s\"'(\[,;:=])|^)(?i:"
    + "|".join(f"{cc}(?:{body})" for cc, body in _VAT_FORMS)
    + r")(?=[\s\"')\],;!?]|\.(?!\w)|$)"
)
# VAT words; not "btw", "ein", "abn", "nip", "gst", "mva" alone: English or units too (by
# the way, "ein 500-line file", "GST 7362.99 applied", an MVA in a clinic's notes)
_VAT_WORDS = (
    r"vat(?:[ _-]?(?:\(?id\)?|reg(?:istration)?\.?|no\.?|number|nr\.?|code))*|"
    r"value added tax(?: id| number)?|tax (?:id|number|reg(?:istration)?\.?(?: no\.?| number)?)|"
    r"ust\.?-?id(?:nr\.?|-nr\.?)?|ust\.?-?idnr\.?|umsatzsteuer[- ]?id(?:entifikationsnummer)?|"
    r"steuernummer|uid-?(?:nummer|nr\.?)|mwst(?:-?nr\.?)?|tva(?: intra(?:com(?:munautaire)?)?)?|"
    r"partita iva(?: n\.?)?|p\.? ?iva|iva|nif-?iva|btw-?(?:nummer|nr\.?|id|identificatienummer)|"
    r"moms(?:nr|nummer)?|mva-?nummer|alv-?(?:numero|tunnus)|di[čc]|ičo|cif|cui|pvm(?: kodas)?|"
    r"ddv|ad[óo]sz[áa]m|αφμ|ф\.?\s?н\.?|ддс(?: номер)?|gstin|gst (?:no\.?|number)|cvr(?:-nr\.?)?|"
    r"oib|kmkr|pvn|cod fiscal"
)
_VAT_LABELLED = re.compile(
    r"(?i:\b(?:" + _VAT_WORDS + r"))(?:\s*(?:no\.?|nr\.?|number|#))?"
    r"[\"']?\s*[:=#\-–]?\s*[\"']?"
    r"((?:[A-Za-z]{1,3}[ -]?)?[A-Za-z]?\d[A-Za-z0-9.-]*(?: \d[A-Za-z0-9.-]*){0,3})" + _EDGE_R
)
# an amount, a date or a year range after a VAT word: no VAT number (VAT 250.00, GST 2026-27)
_NOT_A_NUMBER = re.compile(r"\d{1,3}(?:[., ]\d{3})*[.,]\d{1,2}|\d+[.,]\d{1,2}|\d{4}[-/.]\d{2}.*")
_PLATE_WORDS = (
    r"licen[cs]e[ -]?plates?|number[ -]?plates?|plate (?:number|no\.?)|"
    r"(?:vehicle|car) registration(?: number| no\.?| plate)?|registration (?:number|no\.?|plate)|"
    r"reg\.? (?:no\.?|number)|car reg|kennzeichen|nummernschild|(?:plaque d')?immatriculation|"
    r"kenteken|tablic[aeyę] rejestracyjn\w*|numer rejestracyjny|registreringsnummer|"
    r"rekisteritunnus|rekisterikilpi|rendsz[áa]m|spz|plaka|nummerplade|госномер|номерной знак|"
    r"номер машины|πινακίδα|num[aă]r de [îi]nmatriculare|bi[eể]n s[oố](?: xe)?|"
    r"placa do carro|placa del (?:coche|auto|veh[ií]culo)|n[úu]mero de placa|matr[ií]cula|"
    # words that are other things too (a lab plate, a GPU board, a student's enrolment): only
    # with a colon
    r"(?:plate|placa|targa|registration)(?=\s*[:=#])"
)
_PLATE_GROUP = r"(?:[A-Z0-9ÄÖÜÅÆØÉÈÇŁŚŻŹĆŃŠČŽ]{1,8}|[a-z0-9]*\d[a-z0-9]*)"
_PLATE_LABELLED = re.compile(
    r"(?i:\b(?:" + _PLATE_WORDS + r"))(?:\s*(?:no\.?|number|#))?(?:\s+(?i:is|was))?"
    r"[\"']?\s*[:=#]?\s*[\"']?"
    rf"({_PLATE_GROUP}(?:[ \-•·]{_PLATE_GROUP}){{0,2}})" + _EDGE_R
)
_NOT_PLATE_GROUP = frozenset(["OF", "TO", "IN", "ON", "AT", "THE", "AND", "OR", "IS", "FOR", "BY"])
_HINT = hints.hint(
    "VAT or plate label",
    compile_lowered(r"(?:" + _VAT_LABELLED.pattern + r")|(?:" + _PLATE_LABELLED.pattern + r")"),
)
# A Venezuelan RIF (V-12345678-9: V for a person), not a build id with a date (V-20260317-8)
_RIF = re.compile(_EDGE_L + r"(?i:[JGVEP])-(\d{8})-\d" + _EDGE_R)
_DATED = re.compile(r"20[0-4]\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])")
_SHAPE_HINT = hints.hint("VAT shape", compile_lowered(_VAT_SHAPE.pattern), narrowing=True)


def spans(text: str, out: list[Span], found: hints.Found) -> None:
    """Append the spans of VAT numbers and plates in *text* (*found*: the hints of its
    lower-cased text, :func:`tracelake.scrub.hints.scan`)."""
    if _SHAPE_HINT in found:
        out.extend((m.start(), m.end(), "VAT_ID") for m in _VAT_SHAPE.finditer(text))
    if "-" in text:
        out.extend(
            (m.start(), m.end(), "VAT_ID")
            for m in _RIF.finditer(text)
            if not _DATED.fullmatch(m.group(1))
        )
    if _HINT not in found:
        return
    for match in _VAT_LABELLED.finditer(text):
        if _vat_number(match.group(1)):
            out.append((match.start(1), match.end(1), "VAT_ID"))
    for match in _PLATE_LABELLED.finditer(text):
        if _plate(match.group(1)):
            out.append((match.start(1), match.end(1), "VEHICLE_PLATE"))


def _vat_number(value: str) -> bool:
    """Five digits or more, with a letter or eight digits, and not an amount or a date."""
    digits = sum(c.isdigit() for c in value)
    if digits < 5 or _NOT_A_NUMBER.fullmatch(value.rstrip(".-")):
        return False
    return digits >= 8 or any(c.isalpha() for c in value)


def _plate(value: str) -> bool:
    """Letters and two digits or more (one in a plate of groups) or five digits in groups,
    4-10 characters, not a count written with a word."""
    words = value.split(" ")  # 8 OF 11: a count (not Spain's CA 2394 OF, nor 19-VF-OF)
    if any(
        w.upper() in _NOT_PLATE_GROUP and a.isdigit() and b.isdigit()
        for a, w, b in zip(words, words[1:], words[2:], strict=False)
    ):
        return False
    groups = re.split(r"[ \-•·]", value)
    alnum = sum(c.isalnum() for c in value)
    digits = sum(c.isdigit() for c in value)
    if not any(c.isalpha() for c in value):  # 193-051: digits in groups
        return len(groups) >= 2 and 5 <= digits <= 10
    enough = digits >= 2 or (digits == 1 and len(groups) >= 2)  # M-A 1, MOS-GL-3
    return 4 <= alnum <= 10 and enough


def shaped(text: str) -> bool:
    """Whether *text* holds a VAT number's shape (a code-like token that is one)."""
    if _VAT_SHAPE.search(text) is not None:
        return True
    return any(not _DATED.fullmatch(m.group(1)) for m in _RIF.finditer(text))
