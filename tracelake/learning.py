"""The runner side of the learning loop: what to pass as ``query`` to graph-tool-call.

tracelake groups runs by the *scrubbed* goal (a goal with a customer's name, phone or e-mail is
grouped with the same request from every other customer), and stores and exports
graph-tool-call's fingerprint of it. A runner that calls graph-tool-call's
``apply_learning_suggestions(query, ...)`` with its raw goal gets a different fingerprint
whenever the goal holds personal data, and the learned suggestions never fire. So::

    from tracelake.learning import learning_query

    ranked = apply_learning_suggestions(learning_query(goal), candidates, suggestions,
                                        mode="promoted")

``learning_query(goal)`` is the goal exactly as tracelake stores it: it goes through the
scrubber's public API (``Scrubber.scrub_event`` on a ``plan.started`` event holding only the
goal), the very rule that scrubbed the stored goal, so the two cannot drift apart when the
scrubber's rules change. The projections compute the family and fingerprint of a stored goal
with :func:`query_family` / :func:`fingerprint` below, which are graph-tool-call's
``normalize_query_family`` and ``stable_hash`` (re-implemented because graph-tool-call is an
optional dependency; a test checks they agree). Hence, for every goal ``g``::

    fingerprint(query_family(stored goal of g)) == stable_hash(normalize_query_family(
        learning_query(g)))

Free-text detection does not depend on the pseudonym key (only id fields are pseudonymised),
so any key gives the same result; the process's ``TRACELAKE_PSEUDONYM_KEY`` is used when set.
Results are memoised (bounded LRU): a runner asks for the same goals again and again.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from functools import lru_cache

from tracelake.runners.graph_tool_call import RUN_START as GOAL_EVENT
from tracelake.runners.graph_tool_call import SOURCE

CACHE_SIZE = 16_384
_EMAIL = re.compile(r"[\w.+-]+@[\w.-]+")
_NUMBER = re.compile(r"\b\d{2,}\b")
_NON_WORD = re.compile(r"[\W_]+", flags=re.UNICODE)
_SPACES = re.compile(r"\s+")


def normalize_query_family(query: str) -> str:
    """graph_tool_call.learning.normalize_query_family (0.47), verbatim."""
    text = str(query or "").strip().lower()
    text = _EMAIL.sub(" ", text)
    text = _NUMBER.sub(" <num> ", text)
    return _SPACES.sub(" ", _NON_WORD.sub(" ", text)).strip()


def stable_hash(value: str) -> str:
    """graph_tool_call.learning.stable_hash (0.47), verbatim."""
    return hashlib.sha256(str(value or "").encode("utf-8")).hexdigest()[:16]


def query_family(stored_goal: str | None) -> str | None:
    """The query family of a goal as stored (already scrubbed); None without a goal."""
    return None if stored_goal is None else normalize_query_family(stored_goal)


def fingerprint(family: str | None) -> str | None:
    return None if family is None else stable_hash(family)


def _key() -> bytes:
    configured = os.environ.get("TRACELAKE_PSEUDONYM_KEY", "")
    return configured.encode("utf-8") if len(configured) >= 16 else _PROCESS_KEY


_PROCESS_KEY = secrets.token_bytes(32)


@lru_cache(maxsize=CACHE_SIZE)
def learning_query(text: str) -> str:
    """The ``query`` a runner passes to graph-tool-call's learning functions for a raw goal.

    Equal to the goal tracelake stores for a ``plan.started`` with this goal, so
    graph-tool-call's fingerprint of it equals the one tracelake stored and exported. Never
    returns personal data the scrubber knows; raises :class:`tracelake.errors.ScrubError`
    only if the scrubber itself fails (fail closed: pass no query rather than the raw one).
    """
    from tracelake.scrub import get_scrubber

    event = {"type": GOAL_EVENT, "goal": str(text)}
    goal = get_scrubber(_key()).scrub_event(SOURCE, GOAL_EVENT, event).payload.get("goal")
    return goal if isinstance(goal, str) else ""


def learning_fingerprint(text: str) -> str:
    """graph-tool-call's fingerprint of ``learning_query(text)``: the stored one."""
    return stable_hash(normalize_query_family(learning_query(text)))
