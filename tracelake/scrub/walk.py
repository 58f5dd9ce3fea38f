"""The recursive walk: key rules, value detection, pseudonyms, and the redaction report.

A :class:`Walker` scrubs one event. Every container it returns is new (the caller's dicts and
lists are never returned nor changed: graph-tool-call shares ``trace_metadata``,
``args_resolved`` and small ``output_preview`` dicts with the live run). It records, per
field path, how many entities of each type it replaced; never a value.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tracelake.errors import ScrubError
from tracelake.scrub.cut import whole_tokens
from tracelake.scrub.detect import CLEAN_IDS, CLEAN_TEXTS, close_label, detect, detect_int
from tracelake.scrub.ids import kept_as_id
from tracelake.scrub.keys import (
    KeyClass,
    classify,
    credential_quantity,
    is_identifier_key,
    is_identifier_name,
    is_number_key,
    is_quantity,
    is_reason_key,
    is_role_key,
    names_vocabulary,
    normalize,
)
from tracelake.scrub.password_words import is_password_word
from tracelake.scrub.pseudonym import pseudonymize
from tracelake.scrub.written import argv_credentials, named_pair

MAX_DEPTH = 24  # deeper structures are replaced by a marker, not walked
MAX_TEXT = 2000  # longer strings are scanned on a prefix and cut
# isinstance with a tuple: ``A | B`` builds a union object on every call and tests slower
_BOOL_FLOAT = (bool, float)
_INT_FLOAT = (int, float)
_STR_INT_FLOAT = (str, int, float)
# json.dumps(v, ensure_ascii=False) without building a JSONEncoder per call (same output)
_DUMPS = json.JSONEncoder(ensure_ascii=False).encode
MIN_CHECKED = 10_000_000  # detect_int checks numbers of 8 digits and more
_WHITESPACE = re.compile(r"\s")
# A quantity written as a string (token_ttl_s: "3600", session_timeout: "30s"): at most nine
# digits, so no phone or card number passes as one.
_QUANTITY_TEXT = re.compile(
    r"[+-]?\d{1,9}(?:\.\d{1,6})?\s?(?:ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?)?"
)
_JSON_PAIR = re.compile(r'"([^"\\]{1,64})"\s*:\s*("(?:[^"\\]|\\.)*(?:"|$)|-?\d+(?:\.\d+)?)')


class Walker:
    __slots__ = ("actions", "entities", "key", "paths")

    def __init__(self, key: bytes) -> None:
        self.key = key
        self.entities: dict[str, int] = {}
        self.paths: dict[str, dict[str, int]] = {}
        self.actions: dict[str, int] = {}

    # -- report -------------------------------------------------------------------------
    def hit(self, path: str, entity: str, count: int = 1) -> None:
        entities = self.entities
        entities[entity] = entities.get(entity, 0) + count
        counts = self.paths.get(path)
        if counts is None:
            self.paths[path] = {entity: count}
        else:
            counts[entity] = counts.get(entity, 0) + count

    def act(self, action: str, count: int = 1) -> None:
        self.actions[action] = self.actions.get(action, 0) + count

    def merge(self, other: Walker) -> None:
        """Add *other*'s counts (a memoized sub-walk) to this report."""
        entities = self.entities
        for entity, n in other.entities.items():
            entities[entity] = entities.get(entity, 0) + n
        paths = self.paths
        for path, counts in other.paths.items():
            mine = paths.get(path)
            if mine is None:
                paths[path] = dict(counts)
            else:
                for entity, n in counts.items():
                    mine[entity] = mine.get(entity, 0) + n
        actions = self.actions
        for action, n in other.actions.items():
            actions[action] = actions.get(action, 0) + n

    def report(self) -> dict[str, Any]:
        # The walker is discarded after this: its dicts are handed over as they are (in the
        # order the walk met them, which is deterministic for a given event).
        return {"entities": self.entities, "paths": self.paths, "actions": self.actions}

    # -- scalars ------------------------------------------------------------------------
    def text(self, value: str, path: str, *, allow_secret: bool = True, limit: int = 0) -> str:
        """Scrubbed *value*; with *limit*, cut to that many characters after scanning.

        A JSON document inside the text (a request body, ``400 Bad Request: {"password":
        ...}``) gets the key rules on its ``"key": value`` pairs first, as a parsed one would.
        """
        if '":' in value and allow_secret:
            if value.lstrip()[:1] in ("{", "["):
                return self.json_text(value.strip(), path, limit=limit)
            value = self._scrub_json_pairs(value, path)
        return self._scan(value, path, allow_secret=allow_secret, limit=limit)

    def _scan(self, value: str, path: str, *, allow_secret: bool = True, limit: int = 0) -> str:
        """The value detection of :meth:`text`, with the cut."""
        cut = limit or MAX_TEXT
        if len(value) <= cut:  # the common case: nothing to cut
            if value in (CLEAN_TEXTS if allow_secret else CLEAN_IDS):
                return value  # known clean: what detect() would return, with no entity
            clean, counts = detect(value, allow_secret)
            for entity, n in counts:
                self.hit(path, entity, n)
            if len(clean) <= cut:
                return clean
        else:
            scan = value if len(value) <= cut + 128 else whole_tokens(value[: cut + 128])
            clean, counts = detect(scan, allow_secret)
            for entity, n in counts:
                self.hit(path, entity, n)
            if len(clean) <= cut and len(scan) == len(value):
                return clean
        self.act("truncated")
        return clean[:cut] + "…"

    def number(self, value: int | float, path: str, strict: bool = True) -> int | float | str:
        """*value*, or a marker when it is a phone, card or national id number stored as an
        integer (*strict*: also any other phone-length number that is not a timestamp or
        a date-prefixed id; ids under id keys are checked with ``strict=False``)."""
        if -MIN_CHECKED < value < MIN_CHECKED:  # under 8 digits: detect_int says None
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            entity = detect_int(value, strict)
            if entity is not None:
                self.hit(path, entity)
                return f"[{entity}]"
        return value

    def keyed_number(self, key: str, value: int, path: str) -> int | float | str:
        """An integer under a plain key: a quantity key (size, count, amount, ttl, ...) keeps
        it; any other key gets the strict check of :meth:`number`."""
        if -MIN_CHECKED < value < MIN_CHECKED:  # under 8 digits: detect_int says None
            return value
        if is_quantity(key):
            entity = detect_int(value, strict=False)
            if entity is not None:
                self.hit(path, entity)
                return f"[{entity}]"
            return value
        return self.number(value, path)

    def json_text(self, value: str, path: str, *, limit: int = 0) -> str:
        """A JSON document kept as a string (tool-call arguments): parsed, scrubbed, re-dumped.

        A document that does not parse (cut by a preview limit, a streamed delta) still gets
        its ``"key": value`` pairs judged by the key rules, then the text scan.
        """
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return self._scan(self._scrub_json_pairs(value, path), path, limit=limit)
        out = _DUMPS(self.value(parsed, path))
        if limit and len(out) > limit:
            self.act("truncated")
            return out[:limit] + "…"
        return out

    def _scrub_json_pairs(self, value: str, path: str) -> str:
        def replace(match: re.Match[str]) -> str:
            key, raw = match.group(1), match.group(2)
            kclass, entity = classify(key)
            sub = f"{path}.{self.dict_key(key, path)}"  # the report names the key scrubbed
            if kclass is KeyClass.SAFE_ID and raw[:1] == '"':  # judged as when parsed
                inner = raw[1:-1] if len(raw) > 1 and raw.endswith('"') else raw[1:]
                judged = (
                    self._safe_id(key, inner, sub, 0)
                    if "\\" not in inner
                    else self.identifier(inner, sub)  # escapes: cannot be read as given
                )
                return f'"{key}": {_DUMPS(judged)}'
            if kclass is KeyClass.PLAIN or kclass is KeyClass.SAFE_ID:
                if raw[:1] != '"' and "." not in raw:  # an integer: the same check as parsed
                    number = (
                        self.keyed_number(key, int(raw), sub)
                        if kclass is KeyClass.PLAIN
                        else self.number(int(raw), sub, strict=False)
                    )
                    return f'"{key}": {json.dumps(number)}'
                return match.group(0)
            if kclass is KeyClass.PSEUDONYM:
                self.act("pseudonymized")
                return f'"{key}": "{pseudonymize(self.key, raw.strip(chr(34)))}"'
            if kclass is KeyClass.CREDENTIAL and _quantity_written(key, raw):
                return match.group(0)
            self.hit(sub, entity)
            return f'"{key}": "[{entity}]"'

        return _JSON_PAIR.sub(replace, value)

    # -- containers ---------------------------------------------------------------------
    def value(self, value: Any, path: str, depth: int = 0) -> Any:
        """Fully scrubbed copy of a JSON-compatible *value* (key rules + detection)."""
        cls = value.__class__  # exact JSON classes first; subclasses take the isinstance chain
        if cls is str:
            return self.text(value, path)
        if cls is dict and depth < MAX_DEPTH:
            return self._dict(value, path, depth)
        if cls is float:
            return self._float(value, path)
        if value is None or isinstance(value, _BOOL_FLOAT):
            return value
        if isinstance(value, str):
            return self.text(value, path)
        if isinstance(value, int):
            return self.number(value, path)
        if depth >= MAX_DEPTH:
            self.act("depth_cut")
            return "[DEPTH_LIMIT]"
        if isinstance(value, dict):
            return self._dict(value, path, depth)
        if isinstance(value, list):
            return self._list(value, path, depth)
        raise ScrubError(f"not JSON-compatible: a {type(value).__name__} at {path or '<root>'}")

    def _list(self, value: list[Any], path: str, depth: int) -> list[Any]:
        sub = f"{path}[]"
        argv = self.argv(value, sub)
        return [
            argv[i] if i in argv else self.value(item, sub, depth + 1)
            for i, item in enumerate(value)
        ]

    def argv(self, items: list[Any], path: str) -> dict[int, str]:
        """The items of a command line given as a list that hold a password, each replaced
        (``["psql", "--password", "x"]``: :func:`argv_credentials`), recorded at *path*."""
        argv = argv_credentials(items)
        if argv:
            self.hit(path, "CREDENTIAL", len(argv))
            self.act("dropped")
        return argv

    def _float(self, value: float, path: str) -> float | str:
        """A whole number of 8+ digits written as a float (4647902589113966.0: a card) is
        judged like the integer; any other float is a measurement."""
        if not _integral(value):
            return value
        checked = self.number(int(value), path)
        return value if checked.__class__ is int else checked

    def _dict(self, value: dict[Any, Any], path: str, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        field = self.field
        pair = named_pair(value)
        for k, v in value.items():
            # paths use the scrubbed key: a key can be an email (known-clean keys: see dict_key)
            sk = (
                k
                if k.__class__ is str and k in CLEAN_TEXTS and len(k) <= 200
                else self.dict_key(k, path)
            )
            sub = f"{path}.{sk}" if path else sk
            if pair is not None and (k == pair[0] or k == pair[2]):
                out[sk] = self.pair_part(pair, k, v, sub, depth)
            else:
                out[sk] = field(k, v, sub, depth)
        return out

    def pair_part(
        self, pair: tuple[str, str, str], key: str, value: Any, path: str, depth: int
    ) -> Any:
        """One part of a name/value object (:func:`named_pair`): the name is judged as a
        key's name is (scanned, not as a person's name); the value by the key rules of that
        name."""
        name_key, name, _ = pair
        if key == name_key:
            return self.dict_key(name, path)
        return self.field(name, value, path, depth)

    def dict_key(self, key: Any, path: str) -> str:
        # Every key is judged, short ones too ("Min Gu" is a name in six ASCII characters);
        # a key detect() found clean before costs a set lookup, and text() returns it as is.
        if key.__class__ is str and key in CLEAN_TEXTS and len(key) <= 200:
            return key
        if not isinstance(key, str):
            raise ScrubError(f"not JSON-compatible: a {type(key).__name__} key at {path}")
        if is_password_word(key):
            return key
        return self.text(key, path + ".<key>", limit=200)

    def field(self, key: str, value: Any, path: str, depth: int = 0) -> Any:
        """One ``key: value`` pair judged by the key rules."""
        kclass, entity = classify(key)
        if kclass is KeyClass.PLAIN:
            if value.__class__ is int:
                return self.keyed_number(key, value, path)
            if value.__class__ is float and _integral(value):
                checked = self.keyed_number(key, int(value), path)
                return value if checked.__class__ is int else checked
            return self.value(value, path, depth + 1)
        if value is None or isinstance(value, bool) or value == "":
            return value
        if kclass is KeyClass.SAFE_ID:
            return self._safe_id(key, value, path, depth)
        if kclass is KeyClass.PSEUDONYM:
            if isinstance(value, _STR_INT_FLOAT):
                self.act("pseudonymized")
                return pseudonymize(self.key, value)
            return self.value(value, path, depth + 1)
        if self._kept_despite_key(key, kclass, value):
            return value
        self.hit(path, entity)
        self.act("dropped" if kclass is KeyClass.CREDENTIAL else "redacted")
        return f"[{entity}]"

    def _safe_id(self, key: str, value: Any, path: str, depth: int) -> Any:
        """A value under a key that names an id (kept when it looks like one, else a
        pseudonym) or a label (type, status, reason: no long-token rule; prose in full)."""
        if isinstance(value, str):
            if is_identifier_key(key):
                return self.identifier(value, path, number=is_number_key(key))
            return self.label(key, value, path)
        if (  # eight digits or more under request_id, id, ...: judged like the same digits
            # written as a string (a phone or a card number stored as an integer)
            value.__class__ is int
            and value >= MIN_CHECKED
            and is_identifier_key(key)
            and not is_number_key(key)
            and not kept_as_id(str(value))
        ):
            return self.identifier(str(value), path)
        if value.__class__ is int and is_number_key(key):
            # a thing's number (barcode 8801234567893, isbn 978...): the shape of a resident
            # or card number is a coincidence here; a mobile number is not
            if detect_int(value, strict=False) == "PHONE_NUMBER":
                self.hit(path, "PHONE_NUMBER")
                return "[PHONE_NUMBER]"
            return value
        if isinstance(value, _INT_FLOAT):
            return self.number(value, path, strict=False)
        return self.value(value, path, depth + 1)

    def identifier(self, value: str, path: str, *, number: bool = False) -> str:
        """*value* under an id key: itself when it has an id's shape and holds nothing
        personal (:mod:`tracelake.scrub.ids`; *number*: the key names a thing's number),
        else a keyed pseudonym (stable: runs group and joins match as before)."""
        if kept_as_id(value, number=number):
            return value
        self.hit(path, "IDENTIFIER")
        self.act("pseudonymized")
        return pseudonymize(self.key, value)

    def label(self, key: str, value: str, path: str, limit: int = 0) -> str:
        """A label (type, status, a tool's or an agent's name, a reason): every rule but the
        long-token one (``HttpConnectionResetError2`` is a type). A reason with spaces is
        prose (a user's words can be in it) and gets that one too; capitalised words in the
        names of agents, tasks and models are the runner's vocabulary ("Fraud Escalation")."""
        if is_reason_key(key) and _WHITESPACE.search(value):
            return self.text(value, path, limit=limit)
        out = self.text(value, path, allow_secret=False, limit=limit)
        clean, counts = close_label(out, not names_vocabulary(key))
        for entity, n in counts:
            self.hit(path, entity, n)
        return clean

    @staticmethod
    def _kept_despite_key(key: str, kclass: KeyClass, value: Any) -> bool:
        if kclass is KeyClass.CREDENTIAL:
            return _credential_quantity(key, value)
        # {"name": "lookup_customer"} names a tool, {"created_by": "scheduler"} a service
        return (
            kclass is KeyClass.PERSON
            and (normalize(key) == "name" or is_role_key(key))
            and is_identifier_name(value)
        )


def _credential_quantity(key: str, value: Any) -> bool:
    """A credential key's value that is a quantity of it, not a credential (token_ttl_s: 3600
    or "3600" is a duration)."""
    number = isinstance(value, _INT_FLOAT) or (
        isinstance(value, str) and _QUANTITY_TEXT.fullmatch(value) is not None
    )
    return number and credential_quantity(key)


def _quantity_written(key: str, raw: str) -> bool:
    """:func:`_credential_quantity` of a JSON value as written (a number, or a string)."""
    return _credential_quantity(key, raw[1:-1] if raw[:1] == '"' else float(raw))


def _integral(value: float) -> bool:
    """A float holding a whole number of 8 digits or more (a phone or card number written as
    a float: 9855742123.0); smaller ones and fractions are measurements."""
    return (value >= MIN_CHECKED or value <= -MIN_CHECKED) and value.is_integer()
