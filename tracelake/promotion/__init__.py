"""Promotion: suggestion decisions as events, and the operator's view of suggestions.

``decisions`` builds and appends ``suggestion.*`` events; ``suggestions`` reads the
``suggestions`` projection, a suggestion's history, and graph-tool-call's learning block. The
batch jobs that derive suggestions live in ``pipelines/`` (polars).
"""

from __future__ import annotations
