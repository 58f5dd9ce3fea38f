"""Ingest JSONL / JSONL.gz runner events through the one pipeline."""

from __future__ import annotations

from tracelake.ingest.ingestor import Ingestor, IngestReport
from tracelake.ingest.lines import Line, iter_lines, open_source

__all__ = ["IngestReport", "Ingestor", "Line", "iter_lines", "open_source"]
