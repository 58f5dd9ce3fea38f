from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.corpora.gtc_commerce import build_gtc_corpus
from tracelake.scrub import Scrubber, get_scrubber

REPO_ROOT = Path(__file__).resolve().parents[2]
# The repository is cloned with `shared/` as a sibling of its root.
AGENTLANE_DIR = REPO_ROOT.parent / "shared" / "samples" / "agentlane"
KEY = bytes.fromhex("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")


@pytest.fixture(scope="session")
def scrubber() -> Scrubber:
    return get_scrubber(KEY)


@pytest.fixture(scope="session")
def gtc_corpus() -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    return build_gtc_corpus(runs=3, seed=7)


def _agentlane_file(name: str) -> Path:
    path = AGENTLANE_DIR / name
    if not path.exists():
        pytest.skip(f"agentlane samples NOT FOUND at {path}: secret-leak tests on them skipped")
    return path


@pytest.fixture(scope="session")
def agentlane_events() -> list[dict[str, Any]]:
    lines = _agentlane_file("events.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="session")
def agentlane_secrets() -> list[str]:
    text = _agentlane_file("secrets.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]
