"""The promotion policy: graph-tool-call's defaults, and the pure transform that applies it.

graph-tool-call (``_promotion_policy``): ``min_success_observations=2``,
``max_recent_failure_ratio=0.5``, ``max_attempts=50`` (its bounded window of recent attempts),
``max_suggestions=100`` (per collection, in the learning block). A suggestion is
``promotable`` when it has at least ``min_success_observations`` supporting successes and, in
the window of the ``max_attempts`` most recent attempts of its collection, family and target,
at most ``max_recent_failure_ratio`` of them failed; otherwise ``suggested``. Recent failures
hold a suggestion back and move a ``promotable`` one back to ``suggested``.

``promoted`` and ``rejected`` are decisions the policy never overrides (graph-tool-call's
``merge_learning_suggestions`` keeps them too). The policy moves promotable suggestions to
``promoted`` itself only when ``auto_promote`` is set; by default an operator approves.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import polars as pl

from tracelake.errors import ConfigError

SUGGESTED, PROMOTABLE, PROMOTED, REJECTED = "suggested", "promotable", "promoted", "rejected"
STATUSES = (SUGGESTED, PROMOTABLE, PROMOTED, REJECTED)
FINAL = (PROMOTED, REJECTED)  # decided; the policy never changes them


@dataclass(frozen=True, slots=True)
class Policy:
    name: str = "default"
    min_success_observations: int = 2
    max_recent_failure_ratio: float = 0.5
    max_attempts: int = 50
    max_suggestions: int = 100
    auto_promote: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def learning_block(self) -> dict[str, Any]:
        """The ``promotion_policy`` of graph-tool-call's collection learning block."""
        return {
            "min_success_observations": self.min_success_observations,
            "max_recent_failure_ratio": self.max_recent_failure_ratio,
            "max_attempts": self.max_attempts,
            "max_suggestions": self.max_suggestions,
        }

    @property
    def label(self) -> str:
        """``policy:<name>@<digest>``: who decided, in the event log."""
        digest = hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()
        return f"policy:{self.name}@{digest[:8]}"


def load_policy(path: str | Path | None) -> Policy:
    """Defaults, overridden by a JSON file's keys (unknown keys are an error, not ignored)."""
    if path is None:
        return Policy()
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"cannot read the policy file {path}: {exc}; give a JSON object"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"the policy file {path} must hold a JSON object")
    known = {f.name: f.type for f in fields(Policy)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ConfigError(
            f"unknown policy keys in {path}: {', '.join(unknown)}; known: {', '.join(known)}"
        )
    defaults = Policy()
    try:
        policy = Policy(
            name=str(data.get("name", Path(path).stem)),
            min_success_observations=int(
                data.get("min_success_observations", defaults.min_success_observations)
            ),
            max_recent_failure_ratio=float(
                data.get("max_recent_failure_ratio", defaults.max_recent_failure_ratio)
            ),
            max_attempts=int(data.get("max_attempts", defaults.max_attempts)),
            max_suggestions=int(data.get("max_suggestions", defaults.max_suggestions)),
            auto_promote=bool(data.get("auto_promote", defaults.auto_promote)),
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"a value in the policy file {path} has the wrong type: {exc}") from None
    if policy.min_success_observations < 1 or policy.max_attempts < 1:
        raise ConfigError("min_success_observations and max_attempts must be at least 1")
    if not 0.0 <= policy.max_recent_failure_ratio <= 1.0:
        raise ConfigError("max_recent_failure_ratio must be between 0 and 1")
    return policy


def apply_policy(suggestions: pl.LazyFrame, stats: pl.LazyFrame, policy: Policy) -> pl.LazyFrame:
    """Add ``recent_successes``, ``recent_failures``, ``recent_failure_ratio`` and
    ``policy_status`` (suggested | promotable) to each suggestion. Pure; joins on scope only,
    so evidence never crosses collections."""
    joined = suggestions.join(
        stats, on=["collection_id", "query_fingerprint", "target"], how="left"
    ).with_columns(
        pl.col("recent_successes").fill_null(0),
        pl.col("recent_failures").fill_null(0),
    )
    total = pl.col("recent_successes") + pl.col("recent_failures")
    ratio = pl.when(total > 0).then(pl.col("recent_failures") / total).otherwise(0.0)
    ok = (pl.col("observations") >= policy.min_success_observations) & (
        pl.col("recent_failure_ratio") <= policy.max_recent_failure_ratio
    )
    return joined.with_columns(recent_failure_ratio=ratio).with_columns(
        policy_status=pl.when(ok).then(pl.lit(PROMOTABLE)).otherwise(pl.lit(SUGGESTED))
    )


def next_status(current: str | None, proposed: str, policy: Policy) -> str:
    """The status the policy moves a suggestion to (``current`` None: not seen before)."""
    if current in FINAL:
        return current
    if proposed == PROMOTABLE and policy.auto_promote:
        return PROMOTED
    return proposed
