"""Provisional subject secrets: handed out before they are stored, on one thread.

The ingest scrubs a chunk of lines before it stores the secrets of the subjects it met for the
first time (one statement per chunk instead of a round trip per subject: see
``store.subject_secrets``, ``SubjectSecrets.defer``/``settle``). Until then each new subject
has a provisional secret. One may lose to a secret another process stored first, so a
provisional secret is never cached, every hand-out changes the stamp that memos check
(``scrub.pseudonym.note_provisional``: nothing made with one is kept), and :attr:`used`
records which subjects a stretch of work used, so that only those lines are scrubbed again.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable

from tracelake.scrub.pseudonym import note_provisional


class Provisional:
    """The provisional secrets of one deferral (not thread-safe: its owner's lock guards
    :meth:`start` and :meth:`take`; :meth:`secret_for` runs on the deferring thread only)."""

    def __init__(self, ref: Callable[[str], str]) -> None:
        self._ref = ref  # a subject's text -> the reference its secret is stored under
        self.thread: int | None = None  # the deferring thread, None when not deferring
        self._pending: dict[str, tuple[str, bytes]] = {}  # ref -> (text, secret)
        self._by_text: dict[str, bytes] = {}
        self.used: list[str] = []  # every text handed a secret, in order

    def start(self) -> None:
        self.thread = threading.get_ident()
        self._pending, self._by_text = {}, {}
        self.used.clear()

    def active_here(self) -> bool:
        return self.thread == threading.get_ident()

    def secret_for(self, text: str) -> bytes:
        secret = self._by_text.get(text)
        if secret is None:
            secret = self._by_text[text] = secrets.token_bytes(32)
            self._pending[self._ref(text)] = (text, secret)
        self.used.append(text)
        note_provisional()
        return secret

    def take(self) -> dict[str, tuple[str, bytes]]:
        """The secrets to store (ref -> (text, secret)); the deferral ends (``used`` stays
        readable until the next :meth:`start`)."""
        pending, self._pending, self._by_text, self.thread = self._pending, {}, {}, None
        return pending
