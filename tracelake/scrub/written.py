"""Secrets and personal data written in structured text or structures: one-time codes in a
message, capability tokens in URL paths, XML elements and attributes, and name/value objects
(``{"name": "DB_PASSWORD", "value": ...}``) judged by the key rules of the name they carry.

Each form was found by a fresh-context attack (issue 14, session 13); the tests are in
``tests/scrub/test_structured_secrets.py``.
Command lines too: a password given as a flag, in a line of text or in a list of arguments.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

from tracelake.scrub import hints
from tracelake.scrub.first_chars import guard
from tracelake.scrub.keys import (
    KeyClass,
    classify,
    credential_quantity,
    is_identifier_name,
    normalize,
)
from tracelake.scrub.lowered import compile_lowered

Span = tuple[int, int, str]

NUMBER: re.Pattern[str] = re.compile(r"-?\d+(?:\.\d+)?")
NO_VALUE: frozenset[str] = frozenset(
    ["none", "null", "nil", "n/a", "na", "-", "unknown", "empty", "true", "false"]
)


# One-time codes in the forms a message writes them (a sixth fresh-context attack: 4-8 digits
# after or before their word, in brackets, in other languages). A word that names such a code
# by itself ("verification code", "인증번호", "código de verificación") takes the number after
# it; a bare "code"/"código"/"kod" only after "your" (in the message's language) or before
# "is"/":" at the start ("Code: 441598"), so "error code 10061" stays.
_OTP_WORDS = (
    r"(?:verification|security|one[ -]?time|log[ -]?in|sign[ -]?in|auth|authentication|"
    r"confirmation|access|2fa|mfa|sms|otp|passcode)[ -]?(?:code|pin|number)|otp|passcode|"
    r"c[oó]digo de (?:verificaci[oó]n|verifica[cç][aã]o|seguridad|seguran[cç]a|acesso|acceso)|"
    r"codice di (?:verifica|sicurezza|accesso)|code de (?:v[eé]rification|s[eé]curit[eé]|"
    r"confirmation)|(?:best[aä]tigungs|sicherheits|verifizierungs|einmal)code|verificatiecode|"
    r"kod weryfikacyjny|do[gğ]rulama kodu(?:nuz)?|m[aã] (?:x[aá]c (?:th[uự]c|nh[aậ]n)|otp)|"
    r"인증\s?번호|인증\s?코드|확인\s?코드|확인\s?번호|보안\s?코드|認証コード|確認コード|認証番号|"
    r"验证码|驗證碼|校验码"
)
# (not a postal, order, booking, error, ... code: those are data)
_NOT_SECRET_CODE = (
    r"(?!(?:postal|zip|post|order|booking|reservation|promo|discount|coupon|voucher|gift|"
    r"referral|invite|product|item|area|country|dialing|error|status|exit|response|return|"
    r"tracking|reference|source|program|color|colour|bar|qr|station|airport|currency)\b)"
)
_YOUR_CODE = (
    r"(?:your|the|tu|su|seu|sua|o seu|votre|ton|ihr|dein|il tuo|il suo|je|uw|tw[oó]j|twoj|"
    rf"của bạn|kodunuz)\s+(?:{_NOT_SECRET_CODE}\w+\s+){{0,2}}?(?:code|c[oó]digo|codice|kod|m[aã])"
    r"|^(?:code|c[oó]digo|codice|kod|kodunuz|m[aã])"
)
# a number with a unit after it is a quantity (the code is 1024 lines long)
_NO_UNIT = r"(?!\d)(?!\s*(?i:lines?|bytes?|chars?|characters?|ms|seconds?|px|%|kb|mb|times))"
_OTP_AFTER = guard(
    re.compile(
        rf"(?i:(?:{_OTP_WORDS})(?:[는은이가]|\s*(?:is|es|é|è|est|ist|lautet|to|là|:|：|=|-))?"
        rf"|(?:{_YOUR_CODE})\s*(?:is|es|é|è|est|ist|lautet|to|là|:|：))"
        rf"\s*[\[(（【「<]?\s*(?:[A-Z]-)?(\d{{4,8}}){_NO_UNIT}",
        re.MULTILINE,
    )
)
# "483378 is your verification code", "G-678698 is your Google code", "Use 461092 to verify"
# (5+ digits before "to ...": "use 8080 to log in via the proxy" names a port)
_OTP_BEFORE = re.compile(
    r"(?<![\d-])(?:[A-Z]-)?(?:(\d{4,8})\s+(?i:is your\b[^.\n]{0,40}?\b(?:code|pin|otp|passcode)\b"
    r"|(?:est|es|é|è|ist) (?:votre|tu|seu|sua|il tuo|ihr)\b)"
    r"|(\d{5,8})\s+(?i:to (?:verify|log ?in|sign ?in|confirm|complete|reset|activate)\b))"
)
OTP_HINT: re.Pattern[str] = re.compile(
    rf"(?i:{_OTP_WORDS}|code|c[oó]digo|codice|kod|m[aã]|is your|to (?:verify|log|sign|confirm|"
    r"complete|reset|activate)|est votre|es tu|é seu|è il tuo|ist ihr)"
)


# A capability token in a URL path after the word that says what it opens (a sixth attack:
# /reset-password/0rRj1k0ARjPNDSV0, /magic/d79b43e8929ed067, /key/dK3jd9Xk2mP9qRtY7uV3wZ;
# the long-token rule starts at 24 characters, secrets.token_urlsafe(16) is 22)
PATH_SECRET: re.Pattern[str] = re.compile(
    r"/(?i:(?:reset|forgot|change|set|new)[-_]?password|password[-_]?reset|reset|recover(?:y)?|"
    r"magic(?:[-_]?links?)?|verify(?:[-_]?email)?|verification|confirm(?:ation)?|invites?|"
    r"invitations?|activate|activation|unsubscribe|tokens?|keys?|share|shared|secrets?|access|"
    r"one[-_]?time|otp|sso|login(?:[-_]?link)?|webhooks?)"
    r"[/#]([A-Za-z0-9_\-]{4,128})(?![A-Za-z0-9_\-])"
)
_LETTER_AND_DIGIT = re.compile(r"(?=[^0-9]*[0-9])(?=[^A-Za-z]*[A-Za-z])")
_CODE_DIGITS = re.compile(r"\d{4,8}")
_CODE_PATH_WORD = re.compile(r"(?i:verif|otp|confirm|reset|magic|login|activat|one[-_]?time)")


_CHAR_CLASS = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "a" * 26 + "A" * 26 + "0" * 10,
)


def _random_short(token: str) -> bool:
    """12-15 characters that switch between lower case, upper case and digits six times or
    more (AoCn3FxQ58gl: nine), as random tokens do; words and ids switch less
    (report2024Q3: three, key_01HZX9ABCD: four)."""
    if not 12 <= len(token) <= 15:
        return False
    classes = token.translate(_CHAR_CLASS).replace("-", "").replace("_", "")
    return sum(a != b for a, b in pairwise(classes)) >= 6


def path_secret_spans(text: str, out: list[Span]) -> None:
    """The token of :data:`PATH_SECRET`: 16+ characters with letters and digits both (a word
    or an id such as ORD-2024-0001 is no token), or a 4-8 digit code (/verify/482913)."""
    for match in PATH_SECRET.finditer(text):
        token = match.group(1)
        if (
            (len(token) >= 16 and _LETTER_AND_DIGIT.match(token))
            or _random_short(token)
            or (_CODE_DIGITS.fullmatch(token) and _CODE_PATH_WORD.search(match.group(0)))
        ):
            out.append((match.start(1), match.end(1), "SECRET"))


# An XML element whose name the key rules know (<password>x</password>, <customerName>...)
# Element names in any script, combining marks included (<şifre>, <пароль>, <รหัสผ่าน>).
XML_ELEMENT = re.compile(
    r"<([^\W\d_][^\s<>/=\"']{0,63})(?:\s[^<>]{0,256})?>(?:<!\[CDATA\[)?([^<\]]{1,512})(?:\]\]>)?</\1\s*>"
)
# a setting in attributes or named by one: <add key="DbPassword" value="…"/>, <property
# name="db.password" value="…"/>, <param name="password">…</param>
_XML_ATTR_PAIR = re.compile(
    r"<[^\W\d_][^\s<>/=\"']*\s[^<>]{0,128}?\b(?:key|name)\s*=\s*[\"']([^\"'<>]{1,64})[\"']"
    r"[^<>]{0,128}?\bvalue\s*=\s*[\"']([^\"'<>]{0,256})[\"']"
)
_XML_NAMED = re.compile(
    r"<([^\W\d_][^\s<>/=\"']{0,63})\s[^<>]{0,128}?\bname\s*=\s*[\"']([^\"'<>]{1,64})[\"'][^<>]{0,128}>"
    r"(?:<!\[CDATA\[)?([^<\]]{1,512})(?:\]\]>)?</\1\s*>"
)


def xml_element_spans(text: str, out: list[Span]) -> None:
    """The text of XML elements judged by their names' key rules, as a dict's values are (the
    element's name, or its ``name``/``key`` attribute)."""
    for pattern, key_group, value_group in (
        (XML_ELEMENT, 1, 2),
        (_XML_ATTR_PAIR, 1, 2),
        (_XML_NAMED, 2, 3),
    ):
        for match in pattern.finditer(text):
            key = match.group(key_group).rpartition(":")[2]
            entity = written_value_entity(key, match.group(value_group), True)
            if entity is not None and match.group(value_group):
                out.append((match.start(value_group), match.end(value_group), entity))


def written_value_entity(key: str, value: str, delimited: bool) -> str | None:
    """The marker for *value* written under *key* in text (None: kept): a credential's unless
    it is a quantity of it (token_ttl_s=3600); person data and pseudonymised keys only for a
    value whose end is known (*delimited*: quoted, an element's text), not a marker, path or
    URL, and not a tool's name under ``name``."""
    kclass, entity = classify(key)
    if kclass is KeyClass.CREDENTIAL:
        return None if NUMBER.fullmatch(value) and credential_quantity(key) else "CREDENTIAL"
    if (
        delimited
        and (kclass is KeyClass.PERSON or kclass is KeyClass.PSEUDONYM)
        and value.lower() not in NO_VALUE
        and not value.startswith(("/", "[", "http", "psn_"))  # a marker, a pseudonym
        and not (normalize(key) == "name" and is_identifier_name(value))
    ):
        return entity
    return None


def otp_spans(text: str, out: list[Span]) -> None:
    """One-time codes after or before their word (:data:`_OTP_AFTER`, :data:`_OTP_BEFORE`)."""
    for match in _OTP_AFTER.finditer(text):
        out.append((match.start(1), match.end(1), "CREDENTIAL"))
    for match in _OTP_BEFORE.finditer(text):
        group = 1 if match.group(1) is not None else 2
        out.append((match.start(group), match.end(group), "CREDENTIAL"))


_OTP_LOW = hints.hint("one-time code", compile_lowered(OTP_HINT.pattern))
_DIGITS4 = re.compile(r"\d{4}")


def spans(text: str, out: list[Span], found: hints.Found) -> None:
    """One-time codes (behind their hint), capability tokens in URL paths and XML."""
    if _OTP_LOW in found and _DIGITS4.search(text):
        otp_spans(text, out)
    if "/" in text:
        path_secret_spans(text, out)
        if "</" in text or "/>" in text:
            xml_element_spans(text, out)


# A setting or header written as a name/value object (HAR headers, Kubernetes env, Postman
# variables, CloudFormation parameters): {"name": "DB_PASSWORD", "value": "..."}. The value
# is judged as if the name were its key; the name, when the key rules know it, is a key's name
# ("Authorization", "Cookie"), not a person's.
_PAIR_VALUES = (
    "value", "Value", "ParameterValue", "OptionValue", "val", "v", "secretValue", "default",
    "defaultValue", "currentValue",
)  # fmt: skip
_PAIR_NAMES = (
    "name", "Name", "key", "Key", "ParameterKey", "OptionName", "header", "variable", "field",
    "label", "param", "k", "id",
)  # fmt: skip


def named_pair(value: dict[Any, Any]) -> tuple[str, str, str] | None:
    """``(name key, name, value key)`` of a name/value object whose name the key rules have
    an opinion on (credential, person data, pseudonym, id), else None."""
    if len(value) > 8:
        return None
    for value_key in _PAIR_VALUES:
        if value_key in value:
            break
    else:
        return None
    for name_key in _PAIR_NAMES:
        name = value.get(name_key)
        if (
            name.__class__ is str
            and 0 < len(name) <= 64
            and classify(name)[0] is not KeyClass.PLAIN
        ):
            return name_key, name, value_key
    return None


# A password given on a command line: --password=x, --password x, -p x for sshpass, and the
# glued -px of mysql/mariadb clients (mysql -uroot -pS3cret db); PGPASSWORD=x is a key=value.
CLI_PASSWORD: re.Pattern[str] = re.compile(
    r"(?<!\S)--?(?i:[a-z._-]*(?:password|passwd|pass|pwd|secret|token))(?:=|\s+)([^\s\"']{1,128})"
    r"|(?<!\S)-p([^\s\"']{3,128})"
    r"|(?<!\S)(?:-u|--user|-U)\s*([^\s:\"']+[:%][^\s\"']+)"  # curl -u u:pw, smbclient -U u%pw
    r"|(?i:sshpass|docker\s+login|podman\s+login|redis-cli|htpasswd\s+-b\w*(?:\s+\S+){2})"
    r"(?:\s+-[^\s]+(?:\s+[^-\s]\S*)?)*?\s+-[pa]\s*([^\s\"']+)"
    r"|(?i:htpasswd)\s+-\w*b\w*\s+\S+\s+\S+\s+([^\s\"']+)"
    # quoted: --db-password "C@Qs8r#K", --token='x y' (no backreference: the pattern is part
    # of the credential trigger's hint, where group numbers are the combined pattern's)
    r"|(?<!\S)--?(?i:[a-z-]*(?:password|passwd|pass|pwd|secret|token))(?:=|\s+)"
    r"(?:\"([^\"\n]{1,128})\"|'([^'\n]{1,128})')"
)
_CLI_HINT = re.compile(r"(?i:mysql|mariadb|mysqldump|mysqladmin)|(?<!\S)-u\S")


def cli_password_spans(text: str, out: list[Span]) -> None:
    """Passwords on a command line (:data:`CLI_PASSWORD`); ``-p`` glued to its value only
    in a MySQL/MariaDB/sshpass command or next to ``-u`` (elsewhere ``-p8080`` is a port)."""
    glued_ok = _CLI_HINT.search(text) is not None
    for match in CLI_PASSWORD.finditer(text):
        for group in (1, 3, 4, 5, 6, 7):
            if match.group(group) is not None:
                out.append((match.start(group), match.end(group), "CREDENTIAL"))
        if match.group(2) is not None and glued_ok:
            out.append((match.start(2), match.end(2), "CREDENTIAL"))


def argv_credentials(items: list[Any]) -> dict[int, str]:
    """A command line given as a list (``["psql", "--password", "x"]``, ``["mysql", "-u",
    "root", "-pS3cret"]``): the items :func:`cli_password_spans` finds a password in, read
    as one line, each with its password replaced (``{3: "-p[CREDENTIAL]"}``). Empty unless
    every item is a string and one is a flag."""
    if len(items) < 2 or len(items) > 256:
        return {}
    if not all(i.__class__ is str for i in items) or not any(i[:1] == "-" for i in items):
        return {}
    line = " ".join(items)
    spans: list[Span] = []
    cli_password_spans(line, spans)
    if not spans:
        return {}
    out: dict[int, str] = {}
    start = 0
    for index, item in enumerate(items):
        end = start + len(item)
        cut = [(a - start, b - start) for a, b, _ in spans if a < end and b > start]
        if cut:
            text = item
            for a, b in sorted(cut, reverse=True):
                text = text[: max(a, 0)] + "[CREDENTIAL]" + text[min(b, len(item)) :]
            out[index] = text
        start = end + 1
    return out
