"""presidio imported without spaCy (``tracelake.scrub.presidio_import``) scrubs exactly as with it.

Each check runs in a fresh interpreter: the choice is made once per process, at the first
import of presidio, and pytest's own process has imported it long before.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from tests.interpreter import run_python
from tracelake.config import PRESIDIO_WITHOUT_SPACY
from tracelake.scrub import presidio_import

LOCALES = ["en_US", "ko_KR", "de_DE", "fr_FR", "ja_JP", "pt_BR", "en_GB", "it_IT", "nl_NL"]

SCRUB_FAKER_TEXTS = """
import json, sys
from faker import Faker
from tracelake.scrub import get_scrubber
scrubber = get_scrubber(b"presidio-import-test-key-0123456789")
scrubber.warm_up()
loaded = {
    name: name in sys.modules
    for name in ("spacy", "thinc", "numpy", "presidio_analyzer", "requests", "tldextract")
}
seed, locales = int(sys.argv[1]), sys.argv[2].split(",")
texts = []
for i, locale in enumerate(locales):
    fake = Faker(locale)
    fake.seed_instance(seed + i)
    for _ in range(40):
        texts.append(
            f"{fake.name()} ({fake.phone_number()}, {fake.email()}) paid with "
            f"{fake.credit_card_number()} from {fake.iban()}; ship to {fake.address()}; "
            f"client {fake.ipv4()} / {fake.ipv6()}, token {fake.sha256()} {fake.sentence()}"
        )
out = [scrubber.scrub_text(text) for text in texts]
print(json.dumps({"loaded": loaded, "out": out}))
"""


def _python(code: str, *args: str, lean: bool | None, **extra: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != PRESIDIO_WITHOUT_SPACY}
    env.update(extra)
    if lean is not None:
        env[PRESIDIO_WITHOUT_SPACY] = "1" if lean else "0"
    stdout = run_python(code, *args, env=env)
    result: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    return result


def test_lean_import_scrubs_exactly_as_the_plain_one() -> None:
    seed = random.randrange(1 << 30)
    locales = ",".join(random.sample(LOCALES, 5))
    lean = _python(SCRUB_FAKER_TEXTS, str(seed), locales, lean=True)
    plain = _python(SCRUB_FAKER_TEXTS, str(seed), locales, lean=False)
    assert lean["loaded"] == {
        "spacy": False,
        "thinc": False,
        "numpy": False,
        "presidio_analyzer": True,
        "requests": False,
        "tldextract": True,  # it validates the e-mail addresses, from its bundled list
    }
    assert plain["loaded"]["spacy"] and plain["loaded"]["presidio_analyzer"]
    assert len(lean["out"]) == 200
    for got, want in zip(lean["out"], plain["out"], strict=True):
        assert got == want, f"seed {seed}, locales {locales}"
    # the texts held personal data, and both ways replaced it
    assert sum("[EMAIL_ADDRESS]" in text for text in lean["out"]) >= 190


def test_spacy_imports_for_real_after_the_lean_import() -> None:
    code = """
import json, sys
from tracelake.scrub import get_scrubber
get_scrubber(b"presidio-import-test-key-0123456789").warm_up()
import spacy
from spacy.tokens import Doc
from spacy.vocab import Vocab
doc = Doc(Vocab(), words=["a", "b"])
print(json.dumps({"file": spacy.__file__, "words": len(doc), "type": type(spacy).__name__}))
"""
    found = _python(code, lean=True)
    assert found["file"].endswith("__init__.py") and "site-packages" in found["file"]
    assert found["words"] == 2 and found["type"] == "module"


def test_requests_imports_for_real_after_the_lean_import() -> None:
    """tldextract was given a placeholder for requests (it fetches nothing here); any later
    user of requests in the process gets the real module."""
    code = """
import json, sys
from tracelake.scrub import get_scrubber
scrubber = get_scrubber(b"presidio-import-test-key-0123456789")
scrubber.warm_up()
before = "requests" in sys.modules
import requests
session = requests.Session()
session.close()
print(json.dumps({
    "before": before, "file": requests.__file__, "session": type(session).__name__,
    "text": scrubber.scrub_text("write to kim.minjun@example.co.kr or ana@correo.es"),
}))
"""
    found = _python(code, lean=True)
    assert found["before"] is False
    assert found["file"].endswith("__init__.py") and "site-packages" in found["file"]
    assert found["session"] == "Session"
    assert found["text"] == "write to [EMAIL_ADDRESS] or [EMAIL_ADDRESS]"


def test_a_real_requests_imported_first_is_kept() -> None:
    code = """
import json, sys
import requests
first = requests
from tracelake.scrub import get_scrubber
get_scrubber(b"presidio-import-test-key-0123456789").warm_up()
import tldextract.suffix_list as suffix_list
print(json.dumps({
    "same": sys.modules["requests"] is first, "tldextract": suffix_list.requests is first,
}))
"""
    assert _python(code, lean=True) == {"same": True, "tldextract": True}


def test_a_failing_lean_import_falls_back_to_the_plain_one() -> None:
    code = """
import json, sys
from tracelake.scrub import get_scrubber, presidio_import
def broken():
    import presidio_analyzer.pattern  # half imported, then:
    raise ImportError("simulated: a presidio release that needs more of spaCy")
presidio_import._import_lean = broken
way = presidio_import.import_presidio()
text = get_scrubber(b"presidio-import-test-key-0123456789").scrub_text("mail kim@example.com")
print(json.dumps({"way": way, "spacy": "spacy" in sys.modules, "text": text}))
"""
    found = _python(code, lean=True)
    assert found == {"way": "plain", "spacy": True, "text": "mail [EMAIL_ADDRESS]"}


def test_lean_is_asked_for_and_never_taken_over_an_imported_presidio(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert not presidio_import.lean_requested({})
    assert not presidio_import.lean_requested({PRESIDIO_WITHOUT_SPACY: "0"})
    assert presidio_import.lean_requested({PRESIDIO_WITHOUT_SPACY: " yes"})
    import presidio_analyzer  # noqa: F401 - as in a process that uses presidio itself

    monkeypatch.setenv(PRESIDIO_WITHOUT_SPACY, "1")
    assert presidio_import.import_presidio() == "plain"


def test_the_tracelake_command_scrubs_without_spacy(tmp_path: Path) -> None:
    source = tmp_path / "events.jsonl"
    event = {
        "type": "plan.started",
        "plan_id": "p-1",
        "goal": "refund for kim.minjun@example.com, tel 010-9233-9385",
    }
    source.write_text(json.dumps(event) + "\n")
    code = """
import atexit, json, sys
def report():
    names = ("spacy", "presidio_analyzer")
    print(json.dumps({name: name in sys.modules for name in names}), flush=True)
atexit.register(report)
from tracelake.cli import main
sys.argv = ["tracelake", "ingest", sys.argv[1]]
main()
"""
    found = _python(
        code,
        str(source),
        lean=None,  # the command sets it
        TRACELAKE_DATABASE_URL=f"sqlite:///{tmp_path / 'tl.db'}",
        TRACELAKE_INGEST_WORKERS="1",
        TRACELAKE_PSEUDONYM_KEY="presidio-import-test-key-0123456789",
    )
    assert found == {"spacy": False, "presidio_analyzer": True}
