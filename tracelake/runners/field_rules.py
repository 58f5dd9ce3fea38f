"""The vocabulary of a runner's field policy: which rule the scrubber applies to which field.

A runner adapter declares its policy as data (rule *names* and nested tables); the scrubber
(``tracelake.scrub.sources``) resolves each name to its implementation in ``scrub.policy``.
So the runner modules say *what* each field is, the scrubber says *how* it is made safe, and
neither imports the other's internals. Fields no table names go through the scrubber's generic
walk (key rules + detection): a new field in a future runner version is scrubbed, not stored raw.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

KEEP = "keep"  # ids, types, names, counts, durations: kept when plain scalars, else walked
SCRUB = "scrub"  # the generic walk
DROP = "drop"  # replaced by a marker (provider raw objects)
PREVIEW = "preview"  # a bounded, scrubbed preview (outputs, results, messages)
ERROR = "error"  # kind/type kept, message scrubbed, HTTP status and reason code lifted out
GOAL = "goal"  # free text scrubbed in full, cut only when very long
TRACE_STEPS = "trace_steps"  # a per-step summary only
TRACE_METADATA = "trace_metadata"  # known-safe keys kept, the rest walked
COERCION_CHANGES = "coercion_changes"  # field/rule kept, from/to judged by the field's key rule
JSON_STRING = "json_string"  # a JSON document inside a string
LENGTH_ONLY = "length_only"  # a fragment (stream delta): only its length is kept

RULE_NAMES = frozenset(
    {
        KEEP,
        SCRUB,
        DROP,
        PREVIEW,
        ERROR,
        GOAL,
        TRACE_STEPS,
        TRACE_METADATA,
        COERCION_CHANGES,
        JSON_STRING,
        LENGTH_ONLY,
    }
)


@dataclass(frozen=True, slots=True)
class Text:
    """Free text (or a JSON document when it starts with ``{`` / ``[``), cut at ``limit``."""

    limit: int


@dataclass(frozen=True, slots=True)
class Fields:
    """A nested object: ``rules`` for its fields; a value that is not an object gets
    ``otherwise``."""

    rules: Mapping[str, FieldRule]
    otherwise: FieldRule = SCRUB


FieldRule: TypeAlias = "str | Text | Fields"
Rules: TypeAlias = Mapping[str, FieldRule]


@dataclass(frozen=True, slots=True)
class FieldPolicy:
    """The rules for an event's top-level fields; ``by_type`` replaces them for some types."""

    fields: Rules
    by_type: Mapping[str, Rules] = field(default_factory=dict)


def rule_names(rules: Rules) -> set[str]:
    """Every rule name a table uses, nested tables included (for checks and tests)."""
    names: set[str] = set()
    for rule in rules.values():
        if isinstance(rule, str):
            names.add(rule)
        elif isinstance(rule, Fields):
            names |= rule_names(rule.rules) | rule_names({"": rule.otherwise})
    return names
