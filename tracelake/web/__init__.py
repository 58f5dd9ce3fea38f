"""``tracelake serve``: the operator's review queue, run pages, dashboard, JSON API, /metrics."""

from __future__ import annotations

from tracelake.web.app import create_app
from tracelake.web.server_config import WebConfig

__all__ = ["WebConfig", "create_app"]
