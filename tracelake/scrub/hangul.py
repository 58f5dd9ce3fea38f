"""Hangul names and Korean addresses in free text, fail-closed.

A Hangul word (a run of syllables) is a name when it is a surname (the full census set, one
or two syllables) plus one or two syllables, optionally followed by particles or an
honorific (김민수가, 홍정훈님께, 남궁민수 고객), unless that stem is an ordinary word of
Kiwi's lexicon (이어폰, 정수기, 주문자: :mod:`tracelake.scrub.lexicon_build`) or splits into
ordinary words of two or more syllables (배송+조회). A word the lexicon does not know is taken
for a name: recall does not depend on a list of names. Context decides the ambiguous cases:
after a person label (주문자, 수령인, 예금주, 이름:) or before an honorific (님, 씨, 고객) even an
ordinary-looking stem that splits as word + particle (이상+은) is a name, and so is a stem
whose given-name part is a given name Kiwi knows or is made of common given-name syllables.

Korean addresses: :mod:`tracelake.scrub.kr_address`.
"""

from __future__ import annotations

import gzip
import re
import threading
from functools import lru_cache
from importlib.resources import files

from tracelake.forksafe import renew_locks_after_fork
from tracelake.scrub.vocab import KO_SURNAMES_1, KO_SURNAMES_2

# By package, not __file__: compiled by mypyc (setup.py), this module's __file__ is not its path.
_DATA = files("tracelake.scrub").joinpath("data", "ko_words.txt.gz")
_LEX: tuple[frozenset[str], frozenset[str]] | None = None
_LOCK = threading.Lock()
renew_locks_after_fork(globals(), "_LOCK")


def load_lexicon() -> None:
    """Read the lexicon now (once per process) rather than on the first Hangul word."""
    _lexicon()


def words_lexicon() -> frozenset[str]:
    """The ordinary Hangul words of Kiwi's lexicon that start with a surname syllable."""
    return _lexicon()[0]


def _lexicon() -> tuple[frozenset[str], frozenset[str]]:
    global _LEX
    if _LEX is None:
        with _LOCK:
            if _LEX is None:
                lines = gzip.decompress(_DATA.read_bytes()).decode("utf-8").split()
                words = frozenset(w for w in lines if not w.startswith("@"))
                given = frozenset(w[1:] for w in lines if w.startswith("@"))
                _LEX = (words, given)
    return _LEX


# What follows a name inside the same word: an optional honorific, then up to three
# particles or endings (김민수가, 홍정훈님께서는, 김서준님한테, 이영희에게는, 김서준네,
# 박지민씨였나). Any such sequence counts, not a list of whole endings: every combination
# the language allows would be a long list, and a missing one was a leak.
_HONORIFICS = ("님", "씨", "군", "양", "고객님", "고객", "회원님", "회원", "귀하", "선생님")
_PARTICLE_WORDS = """이 가 은 는 을 를 의 와 과 도 로 으로 께 만 에게 한테 께서 에게서 한테서 이랑 랑 하고 처럼
    보다 부터 까지 이나 나 이며 며 이고 고 이다 다 이에요 예요 에요 입니다 이었다 였다 이었나 였나
    이세요 세요 인데 인가 인가요 요 네 꺼 거 댁 이라고 라고 이라는 라는 이라 라 조차 마저 밖에 뿐
    이야 야 아 이여 여 께요 이죠 죠 인지"""
_NAME_PARTICLES = frozenset(_PARTICLE_WORDS.split())
# The case particles alone: what may follow an ordinary word when a word is judged to split
# into ordinary words (고지+아 is not 고지 + a vocative: 고지아 is a name).
_CORE_PARTICLES = frozenset(
    _NAME_PARTICLES
    - {"아", "야", "여", "이여", "이야", "다", "고", "며", "나", "라", "거", "꺼", "댁", "네"}
)
_LONGEST_PARTICLE = max(len(p) for p in _NAME_PARTICLES)


@lru_cache(maxsize=16384)
def is_suffix(text: str, core: bool = False) -> bool:
    """*text* is what may follow a name in its word: "" or an honorific and/or particles
    (*core*: case particles only, :data:`_CORE_PARTICLES`)."""
    if not text:
        return True
    allowed = _CORE_PARTICLES if core else _NAME_PARTICLES
    for honorific in _HONORIFICS:
        if text.startswith(honorific) and _particles(text[len(honorific) :], 3, allowed):
            return True
    return _particles(text, 3, allowed)


def _particles(text: str, left: int, allowed: frozenset[str]) -> bool:
    if not text:
        return True
    if left == 0:
        return False
    for n in range(min(len(text), _LONGEST_PARTICLE), 0, -1):
        if text[:n] in allowed and _particles(text[n:], left - 1, allowed):
            return True
    return False


# Provinces and metropolitan cities, which start with surname syllables (경상북도, 전라남도).
_PLACE = re.compile(
    r"(?:서울|부산|대구|인천|광주|대전|울산|세종)(?:특별|광역|특별자치)?시|"
    r"(?:경상|전라|충청)(?:남|북)도|(?:강원|전북|제주)(?:특별자치)?도|경기도|"
    r"(?:경북|경남|전남|충북|충남)(?:도)?$"
)
# honorifics, and the dative particles used for people (에게, 한테, 께: "to" a person)
_HONORIFIC_SUFFIX = re.compile(r"(?:님|씨|고객|회원|귀하|선생|에게|한테|께)")
_NEXT_HONORIFIC = re.compile(r"\s*(?:님|씨|고객|회원|귀하|선생님|앞|귀중)")
_PERSON_LABEL = re.compile(
    r"(?:고객|고객명|수령인|수령자|수취인|수신인|받는\s?분|보내는\s?분|주문자|구매자|예금주|명의자?|"
    r"회원|회원명|담당자|이름|성명|성함|대표자?|신청인|가입자|본인|보호자|배송받는\s?분|"
    r"신청자|예약자|계약자|피보험자|보험자|투숙객|탑승객|입금자|송금인|받는\s?사람|보낸\s?사람|"
    r"(?:주문자|수령인|예금주|신청자|예약자)명|"
    r"name|Name|NAME|(?<![A-Za-z])(?i:customer|client|member|recipient|orderer|buyer|guest|"
    r"passenger|patient|mr|ms|mrs|miss|dr|dear|attn))(?:는|은)?\W{0,3}$|:\s*$"
)
# The labels that announce a person's name and nothing else: after them a surname and a
# given name that is also a word (주문자 박 지원, 수령인 이 현지) are a name
_NAME_LABEL = re.compile(
    r"(?:주문자|수령인|수령자|수취인|예금주|성명|이름|성함|신청자|예약자|계약자|피보험자|입금자|송금인)"
    r"명?(?:는|은)?\W{0,3}$|(?i:name)\s*[:=]\s*$"
)
# what a hand puts between a surname and a given name (박 승현, 박.승현, 박*승현, 박·승현)
_APART = frozenset((" ", ".", "*", "\u00b7", ". ", "-"))
# Syllables common in given names (first and second position); the two-syllable given names
# Kiwi's lexicon knows count too.
_GIVEN_FIRST = frozenset(
    "민준서연도윤하은지호수아예현우채원시다주진영정성훈희경혜석태재동유승혁빈나린소미선인상"
    "철환규찬형욱범종건가보라명병학효길순옥숙자말춘광용창기덕중세병봉두한대만금분복미향애화"
    "명상순갑을필근익은옥용원일이재종청치형혜홍광국남"
)
_GIVEN_SECOND = frozenset(
    "민준서연윤은호수아우원현진영희경혜석훈빈린율결온솔별름숙순철환규찬형욱범식용택종건성혁"
    "재주정하나미선인상한람슬래지리라동자옥남녀애란웅열만국길기구근대덕도두록룡명무문배범복봉"
    "분삼생섭송애억연옥완외우웅원월유의이일임점제조중직창천춘충치태필학해향헌협화환효후흠"
)
HANGUL_RUN = re.compile("[\uac00-\ud7a3]+")
_HAS_HANGUL = re.compile("[\uac00-\ud7a3]")


def _splits_into_words(text: str, words: frozenset[str]) -> bool:
    """*text* is ordinary words of 2+ syllables, optionally ending in particles."""
    n = len(text)
    ok = [False] * (n + 1)
    ok[0] = True
    for i in range(n):
        if not ok[i]:
            continue
        if is_suffix(text[i:], core=True):
            return True
        for j in range(i + 2, min(n, i + 6) + 1):
            if text[i:j] in words:
                ok[j] = True
    return ok[n]


def _stems(run: str) -> list[tuple[str, str]]:
    """``(stem, suffix)`` splits of *run* where stem = surname + 1-2 syllables."""
    out: list[tuple[str, str]] = []
    surname = 2 if run[:2] in KO_SURNAMES_2 else 1 if run[0] in KO_SURNAMES_1 else 0
    if not surname:
        return out
    for given in (2, 1):
        stem = run[: surname + given]
        if len(stem) < surname + given:
            continue
        suffix = run[len(stem) :]
        if is_suffix(suffix):
            out.append((stem, suffix))
    return out


def _given_like(given: str, known: frozenset[str]) -> bool:
    if given in known:
        return True
    return len(given) == 2 and given[0] in _GIVEN_FIRST and given[1] in _GIVEN_SECOND


@lru_cache(maxsize=16384)
def _word_verdict(run: str) -> tuple[int, int]:
    """``(length of the name stem or 0 if this word cannot be a name, strength)``:
    strength 2 = a name without context, 1 = a name only with context (the first such
    split wins)."""
    words, given_names = _lexicon()
    best = (0, 0)
    if _PLACE.match(run):
        return best
    for stem, suffix in _stems(run):
        strength = _stem_strength(run, stem, suffix, words, given_names)
        if strength == 2:
            return (len(stem), 2)
        if strength == 1 and best[1] == 0:
            best = (len(stem), 1)
    return best


def _surname_length(stem: str) -> int:
    if stem[:2] in KO_SURNAMES_2 and len(stem) >= 4:
        return 2
    if stem[:2] in KO_SURNAMES_2 and len(stem) == 3 and stem[0] not in KO_SURNAMES_1:
        return 2
    return 1  # 황보람: 황 + 보람 reads as a name as well as 황보 + 람


def _stem_strength(
    run: str, stem: str, suffix: str, words: frozenset[str], given_names: frozenset[str]
) -> int:
    """2: *stem* is a name; 1: a name only with context; 0: not a name."""
    surname = _surname_length(stem)
    given = stem[surname:]
    if stem in _LABEL_WORDS:
        return 0  # 수령인, 예금주: the label of a name
    if stem in words or run in words:
        # an ordinary word (이어폰, 주문자) that is also a name (이지원): with context only,
        # and only when its given part reads as a given name
        return 1 if len(given) == 2 and _given_like(given, given_names) else 0
    if len(given) == 1:  # 이준님: two syllables are a name only before an honorific
        return 1 if _HONORIFIC_SUFFIX.match(suffix) else 0
    looks_given = _given_like(given, given_names)
    if _splits_into_words(stem, words) and is_suffix(suffix, core=True):
        # ordinary words (+ particles), 이상+은: a name only with context. The other reading
        # must explain the whole word: 윤하은네, 이지은아 are not 윤하 + 은 + 네, 이지 + 은 + 아
        return 1 if looks_given else 0
    if stem[:-1] in words or (surname == 1 and stem[1:] in words):
        # a word + one syllable (주문+일, 배송+지) or surname + a word: a name only if the
        # given part reads as a given name (이정+웅, 이영+식), else with context only
        return 2 if looks_given else 1
    return 2


# Person labels and credential words that read as surname + given name (수 + 령인, 인 + 증키)
_LABELS = (
    "수령인 수령자 수취인 수신인 주문자 구매자 예금주 명의자 담당자 신청인 가입자 보호자 성명 성함 대표자"
    " 고객명 회원명 발송인 발신인 송하인 수하인 인증키 인증번호 보안키 시크릿키 배송지 수령지 배달지"
    " 거주지 주소지 배송중 운송장 송장 배송비 주문서 교환중 반품중 결제중 처리중 확인중 준비중 검수중"
)
_LABEL_WORDS = frozenset(_LABELS.split())
# Words that say which customers, before 고객님/회원님 (우수 회원님, 해당 고객님)
_MODIFIER_WORDS = (
    "우수 해당 대상 모든 전체 기존 신규 일반 휴면 소중한 일부 다른 이번 선택 개인 법인 탈퇴 정회원 준회원"
    " 본인 특정 각 해외 국내 온라인 오프라인 매장 방문 단골 첫 구매 주문 예약 이벤트 당첨 무료 유료"
)
_MODIFIERS = frozenset(_MODIFIER_WORDS.split())
# The last syllable of a district, a town, a road or a station (강남구, 수원시, 판교역)
_PLACE_ENDINGS = frozenset("구시군읍면로길역")
_SPACED_HONORIFIC = re.compile(
    r"\s+(?:고객님|고객|회원님|님|씨|선생님|귀하)(?![가-힣])|\s+(?:고객|회원)님?[께의이은을]"
)


def _spaced_name(text: str, runs: list[re.Match[str]], i: int) -> tuple[int, int] | None:
    """A name written apart from its honorific or surname: 지우 고객님 (a given name alone),
    송 민준 고객님 (surname, space, given name), and after a person label or among non-Hangul
    words also without an honorific (주문자 김 정호, 수령인: 정호 김, Dear 김 정호,)."""
    match = runs[i]
    run = match.group(0)
    nxt = runs[i + 1] if i + 1 < len(runs) else None
    apart = nxt is not None and text[match.end() : nxt.start()] in _APART
    if len(run) == 1 and run in KO_SURNAMES_1 and nxt is not None:
        return _surname_then_given(text, runs, i) if apart else None
    if nxt is not None and apart and _given_then_surname(text, runs, i):
        return (match.start(), nxt.end())
    words = _lexicon()[0]
    if (
        2 <= len(run) <= 3
        and run not in _MODIFIERS
        and (run not in words or _given_like(run, _lexicon()[1]))
        and _SPACED_HONORIFIC.match(text, match.end())
    ):
        return (match.start(), match.end())
    return None


def _surname_then_given(text: str, runs: list[re.Match[str]], i: int) -> tuple[int, int] | None:
    """송 민준 고객님, 주문자 김 정호, 주문자는 이 재현입니다 (the name, then its particles)."""
    match, nxt = runs[i], runs[i + 1]
    given = nxt.group(0)
    labelled = _name_labelled(text, match.start())
    if len(given) > 2 and is_suffix(given[2:]) and labelled:
        given = given[:2]
    if not 1 <= len(given) <= 2 or (given in _lexicon()[0] and not labelled):
        return None
    if _SPACED_HONORIFIC.match(text, nxt.end()) or (
        _two_syllable_given(given) and _labelled(text, runs, i, i + 1)
    ):
        return (match.start(), nxt.start() + len(given))
    return None


def _given_then_surname(text: str, runs: list[re.Match[str]], i: int) -> bool:
    """정호 김 after a label: a given name, then a one-syllable surname."""
    run = runs[i].group(0)
    return (
        _two_syllable_given(run)
        and runs[i + 1].group(0) in KO_SURNAMES_1
        and run not in _lexicon()[0]
        and _labelled(text, runs, i, i + 1)
    )


def _two_syllable_given(word: str) -> bool:
    """Two syllables that read as a given name (지은, 하은) or are no word + particle (정호;
    not 상품은: "이 상품은" is "this product")."""
    return len(word) == 2 and (word[1] not in _NAME_PARTICLES or _given_like(word, _lexicon()[1]))


def _name_labelled(text: str, start: int) -> bool:
    """A label that names a person and nothing else ends right before *start*."""
    return _NAME_LABEL.search(text[max(0, start - 12) : start]) is not None


def _labelled(text: str, runs: list[re.Match[str]], first: int, last: int) -> bool:
    """Runs *first*..*last* follow a person label, or stand among non-Hangul words (no
    Hangul in the two words before them nor in the two after)."""
    start, end = runs[first].start(), runs[last].end()
    if _PERSON_LABEL.search(text[max(0, start - 12) : start]):
        return True
    before = text[:start].split()[-2:]
    after = text[end:].split()[:2]
    return not any(_HAS_HANGUL.search(w) for w in (*before, *after))


_PLACE_UNIT = re.compile(r"[가-힣]{1,8}(?:특별시|광역시|시|도|구|군|읍|면|동)$")
_PLACE_NOUN = re.compile(
    r"\s*(?:지역|일대|근처|소재|방면|쪽|관내|관할|지점|점|센터|매장|물류|권역|전역|인근|주변|일원)"
)


def _place_context(text: str, runs: list[re.Match[str]], i: int) -> bool:
    """The word at *i* sits among place names (서울시 강남구, 강남구 역삼동) or before a place
    noun (강남구 지역, 판교역 근처), and no honorific follows it."""
    match = runs[i]
    if _NEXT_HONORIFIC.match(text, match.end()) or _HONORIFIC_SUFFIX.search(match.group(0)):
        return False
    if _PLACE_NOUN.match(text, match.end()):
        return True
    neighbours = [runs[j].group(0) for j in (i - 1, i + 1) if 0 <= j < len(runs)]
    return any(_PLACE_UNIT.match(w) for w in neighbours)


def name_spans(text: str) -> list[tuple[int, int]]:
    """Spans of Hangul names in *text* (the stem only: particles stay)."""
    spans: list[tuple[int, int]] = []
    runs = list(HANGUL_RUN.finditer(text))
    for i, match in enumerate(runs):
        run = match.group(0)
        if match.start() and text[match.start() - 1].isdigit():
            continue  # 129000원입니다, 6시까지, 3건: a unit or counter after a number
        if len(run) < 3:
            spaced = _spaced_name(text, runs, i)
            if spaced is not None:
                spans.append(spaced)
                continue
        if len(run) < 2:
            continue
        length, strength = _word_verdict(run)
        if not length:
            spaced = _spaced_name(text, runs, i)
            if spaced is not None:
                spans.append(spaced)
            continue
        start = match.start()
        if strength == 1 and not _in_context(text, runs, i, run[length:]):
            continue
        if run[length - 1] in _PLACE_ENDINGS and _place_context(text, runs, i):
            continue  # 서울시 강남구 역삼동, 강남구 지역: a district, not 강 남구
        spans.append((start, start + length))
    return spans


def _in_context(text: str, runs: list[re.Match[str]], i: int, suffix: str) -> bool:
    match = runs[i]
    if _HONORIFIC_SUFFIX.match(suffix) or _NEXT_HONORIFIC.match(text, match.end()):
        return True
    if _PERSON_LABEL.search(text[max(0, match.start() - 12) : match.start()]):
        return True
    # alone among non-Hangul text ("Write to 김민수 <a@b.c>", a whole value): no Hangul in the
    # two words before nor in the two after
    before = text[: match.start()].split()[-2:]
    after = text[match.end() :].split()[:2]
    return not any(_HAS_HANGUL.search(w) for w in (*before, *after))
