"""A quarantined line's origin is the input's path, and a user may have named the file after a
person: the path is stored scrubbed, and ``quarantine list --origin PATH`` still finds it.

Found by an attack with fresh Faker values: ``jane.doe@example.com 010-1234-5678.jsonl``
was stored as is in ``quarantine.origin``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from faker import Faker

from tracelake.cli import main


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    return int(done.value.code or 0), capsys.readouterr().out


@pytest.mark.parametrize("locale", ["en_US", "ko_KR", "de_DE"])
def test_a_personal_file_name_is_not_stored_and_still_filters(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    locale: str,
) -> None:
    fake = Faker(locale)  # fresh values every run
    email, phone = fake.email(), fake.numerify("010-####-####")
    joined = fake.random_element([".", "_", "+"]).join((fake.first_name(), fake.last_name()))
    path = tmp_path / f"{email} {phone} {joined}.jsonl"
    path.write_bytes(b"this is not json\n")
    url = f"sqlite:///{tmp_path / 'lake.db'}"
    code, _ = _cli(capsys, "ingest", str(path), "--database-url", url)
    assert code == 1  # a line was quarantined
    code, out = _cli(capsys, "quarantine", "list", "--json", "--database-url", url)
    rows = json.loads(out)
    assert len(rows) == 1
    stored = rows[0]["origin"]
    assert email not in stored and phone not in stored and phone.replace("-", "") not in stored
    if locale != "ko_KR":  # Latin-script names joined into one token (Crystal.Robinson)
        assert joined not in stored, stored
    # the directories stay readable (pytest's own directory name may read as a token)
    assert stored.endswith(".jsonl") and stored.startswith(str(tmp_path.parent) + "/")
    monkeypatch.chdir(tmp_path)
    for given in (str(path), f"./{path.name}"):
        code, out = _cli(
            capsys, "quarantine", "list", "--json", "--origin", given, "--database-url", url
        )
        assert [r["id"] for r in json.loads(out)] == [rows[0]["id"]]
    code, out = _cli(capsys, "quarantine", "list", "--json", "--origin", str(tmp_path / "other.jsonl"),
                     "--database-url", url)  # fmt: skip
    assert json.loads(out) == []
