from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_agentlane_samples
from tests.corpora.gtc_commerce import build_gtc_corpus
from tracelake.scrub import Scrubber, get_scrubber

KEY = bytes.fromhex("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")


@pytest.fixture(scope="session")
def scrubber() -> Scrubber:
    return get_scrubber(KEY)


@pytest.fixture(scope="session")
def gtc_corpus() -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    return build_gtc_corpus(runs=3, seed=7)


def _agentlane_file(name: str) -> Path:
    return require_agentlane_samples() / name


@pytest.fixture(scope="session")
def agentlane_events() -> list[dict[str, Any]]:
    lines = _agentlane_file("events.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="session")
def agentlane_secrets() -> list[str]:
    text = _agentlane_file("secrets.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


@pytest.fixture()
def fake_ko() -> Any:
    """A fresh Korean Faker (new values every run)."""
    from faker import Faker

    return Faker("ko_KR")
