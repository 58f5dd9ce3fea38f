"""Street addresses in any letter case, and the postcode written after one (part of
:mod:`freetext`'s pass).

The Latin name rule (:mod:`tracelake.scrub.latin`) finds an address by its capitalised words,
so one typed in lower case or shouted in capitals was stored: session 17's probe with Faker's
``street_address()``, ``postcode()`` and ``city()`` in 11 locales stored all 88 lower-case
addresses (``50567 crystal divide, 28072 west marissa``, ``hendrikpad 2, 8055xq``) and a
postcode beside a replaced address (``[ADDRESS], H8B8B1``). Found here, case-insensitively:

* a house number, one to three name words, then a street type (``70214 johnson trace apt.
  243``, ``6 sally extension``): the English order; number words of a quantity are no name
  (``30 minute drive``);
* a street type, one to four name words, then a house number (``rue de la paix 12``,
  ``via roma, 9``, ``pl. narutowicza 41``, ``rambla miriam palomo 99``), or a number first
  (``933, avenue de leroy``): the continental orders;
* a street name glued to its type, then a number (``magnus-drub-platz 28-39``,
  ``hendrikpad 2``); types that end ordinary words too (``-pad``, ``-ring``, ``-hof``,
  ``-park``, ``-weg``: ``notepad 2``, ``string 3``) only with a signal (below);
* with any of these, a postcode after it (``, 8055xq``, ``, m5 6rt``, ``, 52-262``).

Numbers beside street words are everywhere in a trace (``skip 1 header row``, ``8 event
loop``, ``route par défaut 3``: the first version replaced 1,200 of 1,584 such phrases a
fresh-context attack generated). So every form but the glued one, and an English one ending
in a word that names nothing but a street (``street``, ``avenue``, ...), needs a signal: an
address word shortly before (``ship to``, ``address``, ``배송지``), a unit with its number
(``apt. 243``), or a postcode after a comma. The same attack's corpora afterwards: 16 of
1,584 generated phrases, 2 of 8,181 PyPI descriptions, 0 of 30,000 source lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tracelake.scrub import hints
from tracelake.scrub.lowered import compile_lowered
from tracelake.scrub.vocab import COMMON_WORDS

Span = tuple[int, int, str]

# English street types (USPS Publication 28's common suffixes and their abbreviations)
_EN_TYPES = (
    r"street|st|road|rd|lane|ln|drive|dr|avenue|ave|av|boulevard|blvd|court|ct|place|pl|square|"
    r"sq|squares|way|terrace|ter|crescent|cres|close|grove|parkway|pkwy|highway|hwy|circle|cir|"
    r"trail|trl|expressway|freeway|turnpike|alley|row|mews|walk|gardens|gdns|heights|hts|ridge|"
    r"loop|pike|plaza|crossing|junction|landing|meadows?|shores?|springs?|station|summit|"
    r"trace|track|valley|villages?|divide|extension|extensions|fork|forks|branch|bypass|"
    r"causeway|cliffs?|commons?|corners?|cove|creek|crest|dale|estates?|falls|ferry|fields?|"
    r"flats?|ford|forest|gateway|glen|greens?|harbou?rs?|haven|hollow|islands?|isle|knolls?|"
    r"lakes?|lights?|lodge|manors?|mills?|mission|motorway|mount|mountains?|neck|orchard|oval|"
    r"overpass|passage|path|pines?|plains?|prairie|ranch|rapids?|rest|river|route|skyway|spur|"
    r"streets|stream|tunnel|underpass|unions?|viaduct|views?|vistas?|wells?|riverway|hills?|"
    r"ports?|points?|brooks?|burgs?|camp|canyon|cape|centers?|centres?|circles?|courts?|coves?|"
    r"crossroad|curve|drives?|ways|keys?|locks?|loaf|mall|parks?|radial|roads?|routes|squares|"
    r"stravenue|throughway|trafficway|walks?|ville|ridges|cul-de-sac|front|parade|esplanade|"
    r"promenade|quay|wharf|rise|vale|wynd|gate|approach|broadway|chase|croft|drove|fold|garth|"
    r"foreshore|sound|forges?|circuit|concourse|glade|grange|heath|retreat|outlook|ramble|"
    r"boulevarde|dam|grn|mnr|pt|trce|xing|jct|cswy|expy|frwy|tpke|interchange|alleyway|amble|"
    r"anchorage|arcade|basin|beach|bend|brae|brow|byway|circlet|circus|colonnade|copse|"
    r"courtyard|crossway|dell|driveway|fairway|footway|frontage|gardens?|gates|glens|groves|"
    r"gully|highroad|inlet|intersection|junctions|laneway|lookout|meander|nook|parklands|"
    r"parkways|pathway|plateau|quadrant|quays|ridgeway|riviera|roadway|rotary|shoals?|strand|"
    r"tarn|thoroughfare|tollway|tor|villas|walkway|valleys|fords|land|ground|wade|run|club|ramp|"
    r"brace|access|wall|course|bridge|spurs|rosebowl"
)
# ("via", "place", "route", "square" and "passage" are English words too: "sent via email, 2
# files"; capitalised, the Latin rule finds those streets)
_CONTINENTAL_TYPES = (
    r"rue|avenue|av\.|allée|allee|chemin|boulevard|bd|impasse|quai|cours|sentier|voie|"
    r"rond-point|faubourg|viale|piazza|piazzale|piazzetta|corso|vicolo|strada|contrada|borgo|"
    r"rotonda|incrocio|stretto|canale|rione|lungomare|calle|avenida|avda\.?|plaza|paseo|pasaje|"
    r"camino|carretera|ronda|rambla|traves[ií]a|glorieta|callej[oó]n|cuesta|ca[ñn]ada|vial|"
    r"acceso|urbanizaci[oó]n|carrer|bulevar|pasadizo|pra[çc]a|rua|travessa|alameda|estrada|rodovia|"
    r"viela|ladeira|ulica|ul\.|aleja|al\.|plac|pl\.|osiedle|os\.|rondo|skwer|bulwar|straat|"
    r"laan|plein|gracht|kade|dreef|singel|steeg|c/|c\.|condom[ií]nio|quadra|setor|jardim"
)
_GLUED_TYPES = (
    r"stra(?:ss|ß)e|str\.|platz|allee|gasse|damm|ufer|chaussee|steig|straat|laan|plein|gracht|"
    r"kade|singel|dreef|steeg|dijk|boulevard|kanaal|markt"
)
_RISKY_GLUED = r"pad|ring|hof|park|weg|pfad|berg|feld|tal|baan"
# a word starts a token and is at most 40 characters long: a regex that may start inside
# one ("a-a-a-…", 10,000 characters) would walk it again from every letter (7 s, found by
# session 17's attack)
_WORD = r"(?<![\w'’.-])[^\W\d_][\w'’.-]{0,40}"
# a street's name word: not a function word (a phone number's last group "at" a street)
_NAME_WORD = rf"(?!(?:at|in|on|to|for|of|from|by|and|or|the|a|an|is|was|near|via|per|x)\b){_WORD}"
_NUMBER = r"\d{1,5}[a-z]?(?:\s?[-/]\s?\d{1,5}[a-z]?)?"
_UNIT = (
    r"(?:\s*,?\s*(?:(?:apt|apartment|suite|ste|unit|flat|fl|floor|puerta|piso|piano|app|"
    r"appartamento|interno|int|scala|bus|étage|etage)\b\.?|#)\s*[a-z0-9-]{1,6}\b)?"
)
# Words that make a number a quantity, not a house number (30 minute drive, 2 way street)
_QUANTITY = (
    r"(?!(?:min|mins|minute|minutes|hour|hours|hr|hrs|mile|miles|km|kms|lane|way|one|two|three)\b)"
)
_POSTCODE = (
    r"(?:\s*,\s*|\s+)("
    r"\d{5}(?:-\d{4})?|\d{4}\s?[a-z]{2}|[a-z]{1,2}\d[a-z\d]?\s\d[a-z]{2}|[a-z]\d[a-z]\s?\d[a-z]\d|"
    r"\d{2}-\d{3}|\d{3}\s\d{2}|\d{4}"
    r")(?![\w-])"
)
# English: 70214 johnson trace apt. 243
_ENGLISH_START = re.compile(
    rf"(?i:(?<![\w.,-])\d{{1,6}}[a-z]?(?:/\d{{1,5}})?\s+{_QUANTITY}"
    rf"((?:{_NAME_WORD}\s+){{1,3}}[^\W\d_][\w'’-]{{0,20}}))"
)
_NEXT_WORD = re.compile(r"\s*(\S+)")
_TYPE_END = re.compile(rf"(?i:\.?{_UNIT})")
_FUNCTION_WORDS = frozenset(
    "at in on to for of from by and or the a an is was near via per x".split()  # noqa: SIM905
)


def _expand(alternatives: str) -> frozenset[str]:
    """The words of a ``a|bs?|harbou?rs?`` alternation (a ``?`` after one letter only)."""
    words: set[str] = set()
    for alt in alternatives.split("|"):
        forms = [""]
        for i, c in enumerate(alt):
            if c == "?":
                continue
            optional = i + 1 < len(alt) and alt[i + 1] == "?"
            forms = [f + c for f in forms] + (forms if optional else [])
        words.update(forms)
    return frozenset(words)


_EN_TYPE_WORDS = _expand(_EN_TYPES)


def _english(text: str) -> Iterator[tuple[int, int, str]]:
    """``70214 johnson trace apt. 243``: (start, end, type) of each house number, one to three
    name words and an English street type (a set lookup: the alternation of 200 types was
    6% of a worker's CPU as a regex)."""
    for match in _ENGLISH_START.finditer(text):
        words = list(re.finditer(r"\S+", match.group(1)))
        for k in range(1, len(words)):
            if words[k - 1].group(0).lower() in _FUNCTION_WORDS:
                break
            if words[k].group(0).rstrip(".").lower() in _EN_TYPE_WORDS:
                end = match.start(1) + words[k].end()
                if words[k].group(0).endswith("."):
                    end -= 1
                unit = _TYPE_END.match(text, end)
                yield match.start(), unit.end() if unit else end, words[k].group(0).rstrip(".")
                break


# continental: rue de la paix 12; via roma, 9; a number first: 933, avenue de leroy
_CONTINENTAL = re.compile(
    rf"(?i:\b(?:{_CONTINENTAL_TYPES})\s+(?:{_WORD}\s+){{0,4}}?{_WORD},?\s+(?:n[º°o]\.?\s*)?"
    rf"{_NUMBER}\b{_UNIT}|(?<![\w.,-])\d{{1,5}}(?:\s?(?:bis|ter))?,?\s+(?:{_CONTINENTAL_TYPES})\s+"
    rf"(?:{_WORD}\s+){{0,2}}{_WORD}\b)"
)
# glued: magnus-drub-platz 28-39 (a street by its word alone)
_GLUED = re.compile(rf"(?i:(?:{_NAME_WORD}\s+){{0,2}}{_WORD}(?:{_GLUED_TYPES})\s+{_NUMBER}\b)")
# English types that name nothing but a street (not "drive", "court", "key", "loop", "row",
# "view", "point", ...: "3 external hard drive", "skip 1 header row", "4 page views")
_STREET_ONLY = frozenset(
    [
        "street",
        "avenue",
        "ave",
        "boulevard",
        "blvd",
        "parkway",
        "pkwy",
        "highway",
        "hwy",
        "terrace",
        "crescent",
        "cul-de-sac",
    ]
)
# What says an address comes (within 48 characters before it): without it, or a unit word or
# a postcode after a comma, "3 primary key", "route par défaut 3", "corso di formazione 2024"
# are ordinary text
_CUE = re.compile(
    r"(?i:ship(?:ped|ping)?\s+to|deliver(?:ed|y|ing)?|sen[dt]\s+to|mail(?:ed)?\s+to|address|"
    r"\baddr\b|adresse|anschrift|direcci[oó]n|indirizzo|endere[çc]o|\badres\b|located\s+at|"
    r"liv(?:es?|ing)\s+at|resid(?:es?|ing|ence)|domicil|moved\s+to|"
    r"주소|배송지|수령지|住所|地址|收货)"
)
_UNIT_WORD = re.compile(
    r"(?i:(?:\b(?:apt|apartment|suite|ste|unit|flat|puerta|piso|appartamento)\b\.?|#)\s*"
    r"\d+[a-z]?\b(?!\.\d))"
)
# Street types that are English words too: a street when no name word after it is English
_AMBIGUOUS = re.compile(
    rf"(?i:\b(?:via|place|route|square|passage|campo|largo)\s+((?:{_WORD}\s+){{0,3}}{_WORD}),?\s+"
    rf"(?:n[º°o]\.?\s*)?{_NUMBER}\b{_UNIT})"
)
_RISKY = re.compile(rf"(?i:(?:{_NAME_WORD}\s+){{0,2}}{_WORD}(?:{_RISKY_GLUED})\s+{_NUMBER}\b)")
_AFTER = re.compile(rf"(?i:{_POSTCODE})")
_COMMA_POSTCODE = re.compile(rf"(?i:\s*,{_POSTCODE})")
# The hints (on the lower-cased text): most texts with a number hold a street type word, so
# the regexes that need a signal run only where one is
_HINT = hints.hint(
    "street type",
    compile_lowered(
        rf"(?:{_EN_TYPES}|{_CONTINENTAL_TYPES}|{_RISKY_GLUED}|via|place|route|square|passage|"
        r"campo|largo)(?!\w)"  # not \b: "ul. ", "c/ " end in no word character
    ),
)
_GLUED_HINT = hints.hint("glued street type", compile_lowered(rf"(?:{_GLUED_TYPES})\s+\d"))
# what the two costliest forms cannot match without (each ran on two of three texts with a
# number: 6 of street_lines' 8 us a line on the bench corpus)
_CONTINENTAL_HINT = hints.hint(
    "continental street type", compile_lowered(rf"\b(?:{_CONTINENTAL_TYPES})\s")
)
_RISKY_HINT = hints.hint(
    "glued street type with an ordinary ending", compile_lowered(rf"(?:{_RISKY_GLUED})\s+\d")
)
_STREET_ONLY_HINT = hints.hint(
    "street word", compile_lowered(rf"\b(?:{'|'.join(sorted(_STREET_ONLY))})\b")
)
_SIGNAL_HINT = hints.hint(
    "address signal",
    compile_lowered(
        rf"{_CUE.pattern}|{_UNIT_WORD.pattern}|"
        r",[\s,]*(?:\d{4}|\d{2}-\d|\d{3}\s\d|[a-z]{1,2}\d)"
    ),
)


def spans(text: str, out: list[Span], found: hints.Found) -> None:
    """Append the spans of street addresses in *text*, each with the postcode written after
    it (*found*: the hints of its lower-cased text)."""
    _after_marks(text, out)
    if _GLUED_HINT in found:
        _add(text, out, _GLUED.finditer(text))
    if _HINT not in found:
        return
    signal = _SIGNAL_HINT in found
    if signal or _STREET_ONLY_HINT in found:
        _english_spans(text, out, signal=signal)
    if signal:
        _signalled_spans(text, out, found)


def _signalled_spans(text: str, out: list[Span], found: hints.Found) -> None:
    """The continental, ambiguous and risky glued forms (in a text with a signal)."""
    if _CONTINENTAL_HINT in found:
        _add(text, out, (m for m in _CONTINENTAL.finditer(text) if _signalled(text, m)))
    _add(text, out, (m for m in _AMBIGUOUS.finditer(text) if _ambiguous_ok(text, m)))
    if _RISKY_HINT in found:
        _add(text, out, (m for m in _RISKY.finditer(text) if _signalled(text, m, unit=False)))


def _english_spans(text: str, out: list[Span], *, signal: bool) -> None:
    """English addresses: a ``street``/``avenue``... always, any other type when *signal*."""
    for start, end, kind in _english(text):
        if kind.lower() in _STREET_ONLY or (signal and _signalled_at(text, start, end)):
            out.append((start, _with_postcode(text, end), "ADDRESS"))


def _add(text: str, out: list[Span], matches: Iterator[re.Match[str]]) -> None:
    out.extend((m.start(), _with_postcode(text, m.end()), "ADDRESS") for m in matches)


def _ambiguous_ok(text: str, match: re.Match[str]) -> bool:
    """``via``/``place``/``route``...: a street when signalled and no name word is English."""
    words = match.group(1).split()
    return _signalled(text, match) and not any(w.lower() in COMMON_WORDS for w in words)


def _signalled(text: str, match: re.Match[str], *, unit: bool = True) -> bool:
    """An address word before *match*, a postcode after it behind a comma, or a unit in it."""
    return _signalled_at(text, match.start(), match.end(), unit=unit)


def _signalled_at(text: str, start: int, end: int, *, unit: bool = True) -> bool:
    if _CUE.search(text, max(0, start - 48), start) is not None:
        return True
    if _COMMA_POSTCODE.match(text, end) is not None:
        return True
    return unit and _UNIT_WORD.search(text, start, end) is not None


def _with_postcode(text: str, end: int) -> int:
    after = _AFTER.match(text, end)
    return after.end() if after is not None else end


def attach_postcodes(text: str, spans: list[Span]) -> None:
    """Extend every ADDRESS span in *spans* (whichever rule found it: the Latin name rule's
    ``49252 Jones Fall Apt. 769``) over the postcode written right after it."""
    for i, (start, end, entity) in enumerate(spans):
        if entity == "ADDRESS":
            longer = _with_postcode(text, end)
            if longer > end:
                spans[i] = (start, longer, entity)


_MARK = re.compile(r"\[ADDRESS\]")
# what an address replaced before can leave after its mark: the street of an English
# address on the next line (Flat 3\nAndrews Hill: the Korean address rule took "Flat 3")
_STREET_AFTER_MARK = re.compile(rf"(?i:\s+(?:{_NAME_WORD}\s+){{0,3}}(?:{_EN_TYPES})\b\.?{_UNIT})")


def _after_marks(text: str, out: list[Span]) -> None:
    """The street and the postcode left beside an address replaced before
    (``[ADDRESS], H8B8B1``, ``[ADDRESS]\nandrews hill, w51 7lu``)."""
    if "[ADDRESS]" not in text:
        return
    for mark in _MARK.finditer(text):
        end = mark.end()
        street = _STREET_AFTER_MARK.match(text, end)
        if street is not None:
            end = street.end()
        end = _with_postcode(text, end)
        if end > mark.end():
            out.append((mark.end(), end, "ADDRESS"))
