from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from faker import Faker

from tests.lifecycle.helpers import LOCALES
from tracelake.store.subject_secrets import dispose_all


@pytest.fixture
def seed() -> int:
    value = random.SystemRandom().randrange(2**32)
    print(f"lifecycle test seed: {value}")  # shown when a test fails: rerun with it
    return value


@pytest.fixture
def fake(seed: int) -> Faker:
    f = Faker(LOCALES)
    f.seed_instance(seed)
    return f


@pytest.fixture
def rng(seed: int) -> random.Random:
    return random.Random(seed)


@pytest.fixture(autouse=True)
def _close_subject_secrets() -> Iterator[None]:
    yield
    dispose_all()
