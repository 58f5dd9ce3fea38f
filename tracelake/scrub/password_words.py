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
    r"|\u0643\u0644\u0645\u0629\u0627\u0644\u0645\u0631\u0648\u0631|"
    r"\u0643\u0644\u0645\u0629\u0627\u0644\u0633\u0631|\u05e1\u05d9\u05e1\u05de\u05d4|"
    r"\u05e1\u05d9\u05e1\u05de\u05d0|\u0e23\u0e2b\u0e31\u0e2a\u0e1c\u0e48\u0e32\u0e19|"
    r"\u092a\u093e\u0938\u0935\u0930\u094d\u0921|"
    r"\u0631\u0645\u0632\u0639\u0628\u0648\u0631|"
    r"\u03c3\u03c5\u03bd\u03b8\u03b7\u03bc\u03b1\u03c4\u03b9\u03ba\u03cc|"
    r"\u03ba\u03c9\u03b4\u03b9\u03ba\u03cc\u03c2\u03c0\u03c1\u03cc\u03c3\u03b2\u03b1\u03c3\u03b7\u03c2|"
    r"m\u1eadtkh\u1ea9u|katasandi|parol(?:a|\u0103)|"
    r"\u043f\u0430\u0440\u043e\u043b\u0430|\u043b\u043e\u0437\u0438\u043d\u043a\u0430|"
    r"lozinka|slapta\u017eodis|parool|contrasenya"
)
_PASSWORD_WORD = re.compile(PASSWORD_WORDS)
_SEPARATORS = re.compile(r"[-_.\s]")


def is_password_word(key: str) -> bool:
    """Whether *key* is the word "password" in one of :data:`PASSWORD_WORDS`' languages: a
    word, nothing personal (``パスワード`` was taken for a name and replaced)."""
    return _PASSWORD_WORD.fullmatch(_SEPARATORS.sub("", key).lower()) is not None
