"""The word "password" in other languages: a credential key, and nothing personal as a key."""

from __future__ import annotations

import re

# "password" in other languages, as a normalised key spells it (lower case, no separators):
# a credential key (``tracelake.scrub.keys``); the free-text forms are in
# ``tracelake.scrub.credentials.SECRET_WORDS``.
PASSWORD_WORDS = (
    r"passwort|kennwort|senha|contrase(?:n|\u00f1)a|motdepasse|\u043f\u0430\u0440\u043e\u043b\u044c|"
    r"has(?:l|\u0142)o|wachtwoord|(?:s|\u015f)ifre|salasana|l(?:o|\u00f6)senord|passord|"
    r"adgangskode|heslo|jelsz(?:o|\u00f3)|\ube44\ubc00\ubc88\ud638|\ube44\ubc88|\ud328\uc2a4\uc6cc\ub4dc|"
    r"\u30d1\u30b9\u30ef\u30fc\u30c9|\u5bc6\u7801|\u5bc6\u78bc|\u53e3\u4ee4|\u6697\u8a3c\u756a\u53f7"
)
_PASSWORD_WORD = re.compile(PASSWORD_WORDS)
_SEPARATORS = re.compile(r"[-_.\s]")


def is_password_word(key: str) -> bool:
    """Whether *key* is the word "password" in one of :data:`PASSWORD_WORDS`' languages: a
    word, nothing personal (``パスワード`` was taken for a name and replaced)."""
    return _PASSWORD_WORD.fullmatch(_SEPARATORS.sub("", key).lower()) is not None
