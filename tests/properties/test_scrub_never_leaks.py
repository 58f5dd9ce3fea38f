"""Properties of ``Scrubber.scrub_event``: it never leaks a planted value, never mutates its input.

Hypothesis draws arbitrary nested JSON (dicts, lists, scalars, any depth) under a field of a
graph-tool-call, agentlane or unknown event, and plants fresh Faker values in it (Faker seeded
from hypothesis, so a failure reproduces from hypothesis' seed): as a whole string, inside a
sentence, or as a dict key. No planted value may appear in the scrubbed payload, raw or
``\\u``-escaped, nor in the repr of the result; and the event passed in must be unchanged.

Planted kinds: what the scrubber promises to find anywhere (README, "What it cannot promise"
lists the exceptions): e-mail addresses, phone numbers, card numbers, Korean resident numbers,
US social security numbers, IBANs, provider API keys (lower-case ones too), AWS secret keys,
IP addresses, full names, postal addresses. Not planted: passport
numbers (found only after a passport word) and integers (judged by their key).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.corpora.pii import LOCALES, Planted, _Gen, leaked
from tests.properties.strategies import storable_text
from tracelake.scrub import Scrubber, get_scrubber

KEY = bytes.fromhex("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
KINDS = (
    "email",
    "phone",
    "card",
    "rrn",
    "iban",
    "api_key",
    "id_shaped_secret",
    "us_ssn",
    "ip",
    "name",
    "address",
)
# Where a planted value sits: the runner field holding the drawn JSON.
FIELDS = {
    "graph_tool_call": ("args_resolved", "output", "error", "goal", "trace_metadata", "extra"),
    "agentlane": ("arguments", "output", "text", "task", "extra"),
    "unknown": ("data", "note", "extra"),
}
SENTENCES = (
    "please contact {} today",
    "{}",
    "고객 {} 님께 환불 안내",
    "ship to: {} (urgent)",
    "error while calling {}: timeout",
)


class Plant:
    """A placeholder in the drawn JSON, replaced by a Faker value after drawing."""

    def __init__(self, sentence: str) -> None:
        self.sentence = sentence


TEXT = storable_text(10)
# Keys that say nothing, and keys that name an id (an id is kept only when it looks like one
# and holds nothing personal: tracelake.scrub.ids). A key that names a time keeps a number.
PLAIN_KEYS = ["data", "items", "value", "x", "info", "메모", "内容", "k1"]
ID_KEYS = ["request_id", "traceId", "id", "run_id", "correlation_id", "case_id", "orderNo"]
KEYS = st.sampled_from(PLAIN_KEYS + ID_KEYS) | st.text(
    st.characters(categories=("Nd", "Lo", "Pd")), max_size=4
)
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
    st.builds(Plant, st.sampled_from(SENTENCES)),
)
JSON = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(KEYS | st.builds(Plant, st.just("{}")), inner, max_size=4)
    ),
    max_leaves=12,
)

_GEN: list[_Gen] = []


def _faker(seed: int) -> _Gen:
    """One generator (eight Faker locales are slow to build), reseeded for each example."""
    if not _GEN:
        _GEN.append(_Gen(seed))
    gen = _GEN[0]
    gen.rng.seed(seed)
    for i, fake in enumerate(gen.fakers.values()):
        fake.seed_instance(seed + i)
    return gen


def _value(gen: _Gen, kind: str, loc: str) -> str:
    values = {
        "email": lambda: str(gen.fakers[loc].email()),
        "phone": lambda: gen.phone(loc),
        "card": lambda: gen.card(loc),
        "rrn": lambda: gen.rrn()[1],
        "iban": lambda: gen.iban(loc),
        "api_key": lambda: gen.api_key()[1],
        "id_shaped_secret": lambda: gen.id_shaped_secret()[1],
        "us_ssn": lambda: str(gen.fakers["en_US"].ssn()),
        "ip": lambda: gen.ip(loc),
        "name": lambda: gen.name(loc)[1],
        "address": lambda: gen.address(loc),
    }
    return values[kind]()


def _fill(node: Any, plant: Any) -> Any:
    """The drawn JSON with every Plant replaced by plant(sentence)."""
    if isinstance(node, Plant):
        return plant(node.sentence)
    if isinstance(node, list):
        return [_fill(item, plant) for item in node]
    if isinstance(node, dict):
        return {
            (plant(k.sentence) if isinstance(k, Plant) else k): _fill(v, plant)
            for k, v in node.items()
        }
    return node


def _has_plant(node: Any) -> bool:
    if isinstance(node, Plant):
        return True
    if isinstance(node, list):
        return any(_has_plant(item) for item in node)
    if isinstance(node, dict):
        return any(isinstance(k, Plant) or _has_plant(v) for k, v in node.items())
    return False


@st.composite
def planted_events(draw: st.DrawFn) -> tuple[str, dict[str, Any], list[Planted]]:
    source = draw(st.sampled_from(sorted(FIELDS)))
    tree = draw(JSON.filter(_has_plant))
    gen = _faker(draw(st.integers(0, 2**32 - 1)))
    planted: list[Planted] = []

    def plant(sentence: str) -> str:
        kind = draw(st.sampled_from(KINDS))
        loc = draw(st.sampled_from(LOCALES))
        value = _value(gen, kind, loc)
        planted.append(Planted(kind, loc, value))
        return sentence.format(value)

    body = _fill(tree, plant)
    field = draw(st.sampled_from(FIELDS[source]))
    if source == "agentlane":
        return source, {"type": "tool_call", "payload": {field: body}}, planted
    return source, {"type": "step.completed", field: body}, planted


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=planted_events())
# Found by this property: a personal value in a *key* of `error` or `trace_metadata` was
# scrubbed in the payload but kept in the redaction report's field path (stored on disk).
@example(
    drawn=(
        "graph_tool_call",
        {"type": "step.completed", "error": {"agweon@example.org": "x"}},
        [Planted("email", "ko_KR", "agweon@example.org")],
    )
)
# Found by this property (seed 1005050370): a key of six ASCII characters or fewer skipped
# detection, so the name "Min Gu" used as a key was stored.
@example(
    drawn=(
        "agentlane",
        {"type": "tool_call", "payload": {"arguments": {"Min Gu": None}}},
        [Planted("name", "zh_CN", "Min Gu")],
    )
)
def test_scrub_never_leaks_a_planted_value_and_never_mutates_its_input(
    drawn: tuple[str, dict[str, Any], list[Planted]],
) -> None:
    source, event, planted = drawn
    scrubber: Scrubber = get_scrubber(KEY)
    before = copy.deepcopy(event)
    out = scrubber.scrub_event(source, event["type"], event)
    assert event == before, "scrub_event changed its input"
    raw = json.dumps(out.payload, ensure_ascii=False) + "\n" + repr(out)
    escaped = json.dumps(out.payload) + "\n" + ascii(out)
    found = [(p.category, p.locale, p.value) for p in planted if leaked(p, (raw, escaped))]
    assert not found, f"planted values in the scrubbed event: {found}"
