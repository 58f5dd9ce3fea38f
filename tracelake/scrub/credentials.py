"""Credentials in free text and in ids (part of :mod:`tracelake.scrub.freetext`'s pass).

* **Provider API keys** (GitHub, Slack, OpenAI, Stripe, Google, AWS, GitLab, npm, Hugging
  Face, SendGrid) by their prefix, in any letter case;
* **URL credentials** (``user:pass@``), query parameters whose name the key rules call a
  credential or personal data, and e-mail addresses percent-encoded in URLs
  (``kim%40example.com``);
* ``password=hunter2`` / ``token: abc`` pairs in text (a number under a quantity key such as
  ``token_ttl_s=3600`` stays);
* **passport numbers** after a passport word in seven languages.

:func:`credential_shaped` is the test for ids, where the generic long-token rule does not count
(:mod:`tracelake.scrub.ids`): provider keys, mixed-case tokens, AWS secret keys.
"""

from __future__ import annotations

import re

from tracelake.scrub import hints, written
from tracelake.scrub.first_chars import guard
from tracelake.scrub.keys import (
    KeyClass,
    classify,
    credential_quantity,
    is_identifier_name,
    normalize,
)
from tracelake.scrub.lowered import compile_lowered, lowered
from tracelake.scrub.pairs import key_is_spans, pairs
from tracelake.scrub.written import (
    NO_VALUE,
    NUMBER,
    cli_password_spans,
    written_value_entity,
)

Span = tuple[int, int, str]

_API_KEY = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:gh[pousr]_|github_pat_|xox[abposr]-|xapp-|sk-(?:proj-|ant-|live-)?|"
    r"sk_(?:live|test)_|rk_(?:live|test)_|pk_(?:live|test)_|whsec_|AKIA|ASIA|AIza|ya29\.|glpat-|"
    r"npm_|hf_|SG\.|shp(?:at|ss|ca|pa)_|do[opr]_v1_|sq0(?:atp|csp)-|xoxe\.|pypi-|glsa_|"
    r"figd_|lin_api_|dapi|sntrys_)[A-Za-z0-9_\-.]{12,}"
)
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]*(?::[^/\s@]*)?@")
_QUERY_PARAM = re.compile(r"([?&;])([A-Za-z0-9_.\-\[\]]{1,64})=([^&#\s\"'<>]+)")
# "password=hunter2", "token: abc" at the start of a text or after a space or bracket
KEY_VALUE: re.Pattern[str] = re.compile(
    r"(?:^|(?<=[\s,(\[{\"'=&;|]))([A-Za-z][A-Za-z0-9_.\-]{0,63})[ \t]*[=:][ \t]*([^\s&;,\"'<>]+)"
)
# The value of a credential key as far as KEY_VALUE does not read it: quoted (DB_PASSWORD="m54Z…",
# password: 'x y', YAML and .env files), or up to a blank or ";" (PGPASSWORD=&^6tf…,
# DB_PASSWORD=d0Z2!z&kq+9S#F).
_CREDENTIAL_PAIR = re.compile(
    r"(?:^|(?<=[\s,(\[{\"'=&;|]))([A-Za-z][A-Za-z0-9_.\-]{0,63})[\"']?[ \t]*[=:][ \t]*"
    r"(?:([\"'])([^\n]{1,200}?)\2|(?!//)([^\s\"';][^\s;]{0,199}))"  # not a URL's https:
)


_PASSPORT = re.compile(
    r"(?i:passport|passeport|reisepass|pasaporte|passaporto|passaporte|paszport|pasaport|paspoort|"
    r"h\u1ed9 chi\u1ebfu|ho chieu|travel document|document (?:no|number)|"
    r"여권|旅券|パスポート|护照|護照)[^A-Za-z0-9]{0,24}"
    r"(?:(?:no|number|num|nr|n°|n|번호)\.?[^A-Za-z0-9]{0,4})?([A-Z0-9]{1,3}[ -]?\d[A-Z0-9]{4,10})"
)


# An e-mail address in a URL or form body, its "@" percent-encoded (kim%40example.com)
_URLENCODED_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._+%-])[A-Za-z0-9._+-]+(?:%2[bB][A-Za-z0-9._-]+)*%40[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"
)


# A PEM private key, header to footer (or to the end of a cut text): the whole block.
_PEM_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)",
    re.DOTALL,
)


# A secret announced by a word in prose, in several languages ("비밀번호 eKXgzg2sye!",
# "PIN 033", "パスワード：abc12", "mot de passe: x", "Your verification code is 090119"):
# after ":" / "=" any value, after a space only one with a digit or a symbol ("password
# reset" keeps "reset").
SECRET_WORDS = (
    r"(?:(?i:\b(?:password|passwd|passwort|pwd|pin|cvv|cvc|otp|senha|contrase\u00f1a|"
    r"mot[ _-]de[ _-]passe|kennwort|\u043f\u0430\u0440\u043e\u043b\u044c|has(?:l|\u0142)o|wachtwoord|"
    r"(?:s|\u015f)ifre|salasana|l(?:o|\u00f6)senord|passord|adgangskode|heslo|jelsz(?:o|\u00f3)|"
    r"api[ _-]?key|access[ _-]?key|secret[ _-]?key|client[ _-]?secret|"
    r"(?:auth|access|refresh|bearer|api)[ _-]?token|token|secret|passcode|"
    r"(?:verification|security|one[ -]?time|login|sign[ -]?in|auth|authentication)"
    r"[ _-]?(?:code|passcode)|(?:2fa|mfa|sms)(?:code|passcode|[ _-](?:code|passcode)))\b)"
    r"|비밀\s?번호|비번|패스워드|암호|인증\s?번호|인증\s?코드|인증\s?키|認証コード|確認コード|"
    r"验证码|驗證碼|보안\s?키|시크릿\s?키?|(?i:api)\s?키|액세스\s?키|"
    r"토큰|パスワード|暗証番号|密码|密碼|口令)"
)
_SECRET_WORD = guard(
    re.compile(
        SECRET_WORDS
        + r"(?:[는은]|\s+(?:(?:is |was )?(?:set|changed|reset|updated) to|is|was|now|to))?([ \t]*[:=\uff1a][ \t]*|[ \t]+)"
        r"([^\s,;\"'<>]{3,64})"
    )
)
SECRET_WORD_HINT: re.Pattern[str] = re.compile(SECRET_WORDS)
_SYMBOL_OR_DIGIT = re.compile(r"[\d\W_]")


def secret_word_spans(text: str, out: list[Span]) -> None:
    """The values announced by a secret word (:data:`_SECRET_WORD`). The search goes on from
    each value, which may be a secret word announcing the next (``secret: 비밀번호 is …``)."""
    pos = 0
    while (match := _SECRET_WORD.search(text, pos)) is not None:
        pos = match.start(2)
        value = match.group(2)
        if value.startswith("[") or (
            not match.group(1).strip() and not _SYMBOL_OR_DIGIT.search(value)
        ):
            continue  # a marker already, or a plain word after a space
        out.append((match.start(2), match.end(2), "CREDENTIAL"))


# (a literal the text must contain, the pattern, the entity)
_LITERAL_GATED = (
    ("-----BEGIN", _PEM_KEY, "PRIVATE_KEY"),
    ("%40", _URLENCODED_EMAIL, "EMAIL_ADDRESS"),
)


def spans(text: str, out: list[Span], found: hints.Found | None = None) -> None:
    """Append the spans of the credentials and credential-like values in *text* (*found*:
    the hints of its lower-cased text, :func:`tracelake.scrub.hints.scan`)."""
    if found is None:
        found = hints.scan(lowered(text))
    for literal, pattern, entity in _LITERAL_GATED:
        if literal in text:
            out.extend((m.start(), m.end(), entity) for m in pattern.finditer(text))
    _hinted_spans(text, out, found)
    if _SECRET_WORD_LOW in found:
        secret_word_spans(text, out)
    written.spans(text, out, found)
    if "=" in text:
        _query_param_spans(text, out)
    if "=" in text or ":" in text:
        _key_value_spans(text, out)
    if " is " in text or " was " in text or " to " in text:
        key_is_spans(text, out)
    if " -" in text or text.startswith("-"):
        cli_password_spans(text, out)
    if _LOGIN_HINT in found:
        login_pair_spans(text, out)


def _query_param_spans(text: str, out: list[Span]) -> None:
    """Query parameters the key rules hide, and short-named ones with a random value."""
    for match in pairs(_QUERY_PARAM, text, key=2):
        kclass, entity = classify(match.group(2))
        if kclass in (KeyClass.CREDENTIAL, KeyClass.PERSON, KeyClass.PSEUDONYM):
            out.append((match.start(3), match.end(3), entity or "CREDENTIAL"))
        elif match.group(2).lower() in _SHORT_SECRET_PARAMS and _RANDOM.search(match.group(3)):
            out.append((match.start(3), match.end(3), "CREDENTIAL"))  # ?key=z012KgUqtrd


# Query parameters whose short names carry a secret in signed, reset and OAuth links
# (?key=, ?code=, ?sig=, ?hash=, ?k=, ?s=, ?t=), when the value looks random: letters and
# digits mixed, 8 characters or more (?t=1721900000 and ?s=price are kept)
_SHORT_SECRET_PARAMS = frozenset(
    ["key", "code", "sig", "hash", "k", "s", "t", "h", "auth", "nonce", "ticket", "st", "sk"]
)
_RANDOM = re.compile(r"^(?=[^&]*[A-Za-z])(?=[^&]*\d)[A-Za-z0-9_\-.~%+/]{8,}$")


def _hinted_spans(text: str, out: list[Span], found: hints.Found) -> None:
    """Passport numbers, provider keys and URL credentials, each behind its cheap hint."""
    if _PASSPORT_LOW in found:
        _passport_numbers(text, out)
    if _API_LOW in found:
        for match in _API_KEY.finditer(text):
            out.append((match.start(), match.end(), "API_KEY"))
    if "://" in text:
        for match in _URL_USERINFO.finditer(text):
            out.append((match.end(1), match.end(), "URL_CREDENTIAL"))


# "creds admin:B7ER2N$u#5", "login with admin / commodi8937#": the part after the user
LOGIN_PAIR: re.Pattern[str] = re.compile(
    r"(?i:\b(?:creds|credentials|login(?: with)?|log in with|sign in with|account)\s*:?\s+)"
    r"(?!(?i:https?)/)[^\s:/]{1,64}\s*[:/]\s*([^\s\"'<>]{3,128})"  # not GET /login HTTP/1.1
)


def login_pair_spans(text: str, out: list[Span]) -> None:
    """The password of a user/password pair after a login word (:data:`LOGIN_PAIR`)."""
    out.extend((m.start(1), m.end(1), "CREDENTIAL") for m in LOGIN_PAIR.finditer(text))


_AUTH_SCHEMES = frozenset(("bearer", "basic", "token", "digest", "negotiate", "apikey"))
_NEXT_TOKEN = re.compile(r"[ \t]+[^\s,;\"'<>]+")


def _key_value_spans(text: str, out: list[Span]) -> None:
    """``password=hunter2``, ``token: abc``, ``user_id=kim.minjun``: the value of a
    credential, person-data or user-id key in free text, as the key rules judge the pair in a
    dict."""
    for match in pairs(KEY_VALUE, text):
        key, value = match.group(1), match.group(2)
        kclass, entity = classify(key)
        if kclass is KeyClass.CREDENTIAL:
            if not (NUMBER.fullmatch(value) and credential_quantity(key)):  # token_ttl_s=3600
                end = match.end(2)
                if value.lower() in _AUTH_SCHEMES:  # Authorization: Bearer <token>
                    scheme_value = _NEXT_TOKEN.match(text, end)
                    end = scheme_value.end() if scheme_value else end
                out.append((match.start(2), end, "CREDENTIAL"))
        elif value.lower() in NO_VALUE:
            continue
        elif kclass is KeyClass.PSEUDONYM or (
            kclass is KeyClass.PERSON
            and not value.startswith(("/", "[", "http"))  # Location: /orders/1, a marker
            and not (normalize(key) == "name" and is_identifier_name(value))
        ):
            out.append((match.start(2), match.end(2), entity))
    _quoted_credential_spans(text, out)


def _quoted_credential_spans(text: str, out: list[Span]) -> None:
    """The values of credential keys that KEY_VALUE does not read (see _CREDENTIAL_PAIR), and
    quoted values of person-data keys (name='jennifer gonzalez', "customer_name": "…")."""
    for match in pairs(_CREDENTIAL_PAIR, text):
        group = 3 if match.group(3) is not None else 4
        entity = written_value_entity(match.group(1), match.group(group), group == 3)
        if entity is not None:
            out.append((match.start(group), match.end(group), entity))


_LOGIN_HINT = hints.hint("login", re.compile(r"creds|credentials|login|log in|sign in|account"))


def sensitive_key(key: str) -> bool:
    """Whether the key rules hide the value of *key* (a credential, person data, a user id)."""
    return classify(key)[0] in (KeyClass.CREDENTIAL, KeyClass.PERSON, KeyClass.PSEUDONYM)


PASSPORT_HINT: re.Pattern[str] = re.compile(
    r"(?i:pas[sz]|pasaport|paspoort|h\u1ed9 chi|ho chieu|travel doc|document n)|[Rr]eisepass|"
    r"여권|旅券|パスポート|护照|護照"
)


def passport_spans(text: str, out: list[Span]) -> None:
    """Passport numbers after a passport word (:data:`_PASSPORT`)."""
    if PASSPORT_HINT.search(text):
        _passport_numbers(text, out)


def _passport_numbers(text: str, out: list[Span]) -> None:
    out.extend((m.start(1), m.end(1), "PASSPORT") for m in _PASSPORT.finditer(text))


API_HINT: re.Pattern[str] = re.compile(
    r"(?i:gh[pousr]_|github_pat_|xox|xapp-|sk[-_]|[rp]k_|whsec_|AKIA|ASIA|AIza|ya29\.|glpat-|npm_|"
    r"hf_|SG\.|shp(?:at|ss|ca|pa)_|do[opr]_v1_|sq0|pypi-|glsa_|figd_|lin_api_|dapi|sntrys_)"
)
_LONG_TOKEN = re.compile(r"[A-Za-z0-9]{20,}")


def provider_key(text: str) -> bool:
    """Whether *text* holds a known provider's key (GitHub, Slack, OpenAI, Stripe, AWS, ...),
    in any letter case."""
    return api_hinted(text) and _API_KEY.search(text) is not None


def api_hinted(text: str) -> bool:
    """Whether *text* may hold a provider's key (:data:`API_HINT`), asked of the lower-cased
    text: the case-insensitive alternation took 2.7 us on a 15-character id, 0.7 this way
    (every id judged and every token of the free-text pass asks)."""
    return _API_LOW.pattern.search(lowered(text)) is not None


# An AWS secret access key: 40 characters of base64 without padding, "/" and "+" included.
_B64_40 = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_UPPER4 = re.compile(r"(?:[^A-Z]*[A-Z]){4}")
_LOWER4 = re.compile(r"(?:[^a-z]*[a-z]){4}")
_HEX_ONLY = re.compile(r"[0-9a-f]+")


def aws_secret_shaped(token: str) -> bool:
    """A 40-character base64 token mixing cases with a digit, "/" or "+": an AWS secret key
    (a URL path of words, a hex digest or a lower-case slug is not)."""
    return (
        _B64_40.fullmatch(token) is not None
        and _UPPER4.match(token) is not None
        and _LOWER4.match(token) is not None
        and any(c.isdigit() or c in "/+" for c in token)
    )


def credential_shaped(text: str) -> bool:
    """A known provider's key shape; a token of 20+ letters and digits in both cases, of 32+
    letters in both cases, or of 32+ lower-case letters and digits that is not hex (how API
    tokens look; UUIDs, ULIDs,
    hex digests and short slugs do not); an AWS secret key. For ids, where the generic
    high-entropy rule does not count (:mod:`tracelake.scrub.ids`)."""
    if provider_key(text):
        return True
    for token in _LONG_TOKEN.findall(text):
        if token.isupper():
            continue
        if not any(c.isdigit() for c in token):
            if len(token) >= 32 and not token.islower():  # 32+ letters in both cases
                return True
            continue
        if not token.islower() or (len(token) >= 32 and not _HEX_ONLY.fullmatch(token)):
            return True
    return len(text) >= 40 and any(aws_secret_shaped(m.group(0)) for m in _B64_40.finditer(text))


# the hints above, for the lower-cased text
_API_LOW = hints.hint("provider key", compile_lowered(API_HINT.pattern))
_PASSPORT_LOW = hints.hint("passport", compile_lowered(PASSPORT_HINT.pattern))
_SECRET_WORD_LOW = hints.hint("secret word", compile_lowered(SECRET_WORD_HINT.pattern))


_PSEUDONYM = re.compile(r"psn_[0-9a-f]{20,24}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_UUID_IN_TEXT = re.compile(rf"(?<![0-9A-Za-z-]){_UUID.pattern}(?![0-9A-Za-z-])")


def outside_uuids(text: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """*spans* without those that cover part of a UUID of *text* (its groups hold digit runs
    and "cc", "ph", "m" that digit and label rules would otherwise read: 7e8cc6019270). A
    span of the whole UUID stays (``api key: <uuid>``)."""
    if "-" not in text:
        return spans
    uuids = [m.span() for m in _UUID_IN_TEXT.finditer(text)]
    if not uuids:
        return spans
    return [
        s for s in spans if not any(a <= s[0] and s[1] <= b and (a, b) != s[:2] for a, b in uuids)
    ]


_DIGIT, _UPPER, _LOWER = re.compile("[0-9]"), re.compile("[A-Z]"), re.compile("[a-z]")
# The object ids of model APIs a runner logs about a call: Anthropic's (msg_01…, toolu_01…,
# req_011C…: "01" after the prefix) and OpenAI's chat completions (chatcmpl-…). Narrow on
# purpose: a short prefix alone (pi_, sub_, run_) kept secrets written after it (an attack:
# "my stripe_key is pi_roYh…" was stored); credentials start sk-, sk_, rk_, whsec_, ...
_PROVIDER_OBJECT_ID = re.compile(
    r"(?:msg|toolu|srvtoolu|req|msgbatch)_01[A-Za-z0-9]{18,30}|chatcmpl-[A-Za-z0-9]{20,40}"
)


def mixed_enough(text: str) -> bool:
    """A long token looks like a secret only if it mixes letters and digits (not a word): the
    long-token recognizers' check (``scrub.analyzer``).

    A URL path is judged segment by segment: ``/api/v1/orders/ORD-20260725-0001/refund``
    holds no secret, ``/reset/4f9a...e1`` does."""
    if "/" in text:
        if aws_secret_shaped(text):
            return True
        return any(len(part) >= 24 and mixed_enough(part) for part in text.split("/"))
    if _PSEUDONYM.fullmatch(text):
        return False  # our own keyed pseudonym (a quarantined line judged pair by pair)
    if _PROVIDER_OBJECT_ID.fullmatch(text):
        return False  # an API's object id (msg_01…, chatcmpl-…): no key (sk_, whsec_)
    if _UUID.fullmatch(text):
        return False  # a request, trace or object id (a secret after a secret word is found
        # by the free-text pass: "token: <uuid>")
    has_digit, has_upper, has_lower = _kinds(text)
    return (has_digit and (has_upper or has_lower)) or (has_upper and has_lower and len(text) >= 32)


def _kinds(text: str) -> tuple[bool, bool, bool]:
    """Whether *text* has a digit, an upper-case and a lower-case letter."""
    if text.isascii():  # the recognizers' tokens: str.isdigit/isupper/islower are [0-9A-Za-z]
        return (
            _DIGIT.search(text) is not None,
            _UPPER.search(text) is not None,
            _LOWER.search(text) is not None,
        )
    return (
        any(c.isdigit() for c in text),
        any(c.isupper() for c in text),
        any(c.islower() for c in text),
    )
