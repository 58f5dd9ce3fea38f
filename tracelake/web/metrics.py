"""``/metrics`` in the Prometheus text exposition format (version 0.0.4)."""

from __future__ import annotations

from typing import Any

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _label(value: str) -> str:
    """A label value: backslash, double quote and newline escaped, as the format requires."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _family(out: list[str], name: str, kind: str, help_text: str) -> None:
    out.append(f"# HELP {name} {help_text}")
    out.append(f"# TYPE {name} {kind}")


def render(health: dict[str, Any], follower: Any = None) -> str:
    out: list[str] = []
    _family(out, "tracelake_events_stored", "gauge", "Events in the append-only log.")
    out.append(f"tracelake_events_stored {health['events']}")
    _family(out, "tracelake_events_head_position", "gauge", "Highest global position stored.")
    out.append(f"tracelake_events_head_position {health['head_position']}")
    _family(out, "tracelake_quarantined", "gauge", "Quarantined lines and events.")
    out.append(f"tracelake_quarantined {sum(health['quarantined'].values())}")
    _family(out, "tracelake_quarantined_by_reason", "gauge", "Quarantined, by reason.")
    for reason, n in sorted(health["quarantined"].items()):
        out.append(f'tracelake_quarantined_by_reason{{reason="{_label(reason)}"}} {n}')
    _family(
        out,
        "tracelake_projection_lag_events",
        "gauge",
        "Events stored after the projection's checkpoint.",
    )
    for name, n in health["lag"].items():
        out.append(f'tracelake_projection_lag_events{{projection="{_label(name)}"}} {n}')
    _family(
        out, "tracelake_projection_checkpoint", "gauge", "Last position each projection applied."
    )
    for name, n in health["checkpoints"].items():
        out.append(f'tracelake_projection_checkpoint{{projection="{_label(name)}"}} {n}')
    _family(out, "tracelake_suggestions", "gauge", "Suggestions by promotion status.")
    for status, n in health["suggestions"].items():
        out.append(f'tracelake_suggestions{{status="{_label(status)}"}} {n}')
    if follower is not None:
        state = follower.state
        _family(out, "tracelake_follower_leader", "gauge", "1 while this process's follower leads.")
        out.append(f"tracelake_follower_leader {int(state.leader)}")
        _family(out, "tracelake_follower_events_total", "counter", "Events the follower applied.")
        out.append(f"tracelake_follower_events_total {state.events}")
        _family(out, "tracelake_follower_errors_total", "counter", "Follower errors (retried).")
        out.append(f"tracelake_follower_errors_total {state.errors}")
    return "\n".join(out) + "\n"
