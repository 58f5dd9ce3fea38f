"""Packaging beyond pyproject.toml: map the repository's top-level ``pipelines/`` and
``migrations/`` into the ``tracelake`` namespace of the wheel.

The repository keeps them at the top level (that is where developers and alembic expect
them); an installed tracelake has them as ``tracelake.pipelines`` and ``tracelake/migrations``
(no generic top-level ``pipelines`` package). ``tracelake.store.migrate`` finds migrations in
either place. Everything else is in pyproject.toml.

The scrubber's modules, the codec and the rest of a line's path through ``ingest`` are
compiled with mypyc when a wheel is built: the same typed code, run as C, with less CPU per
ingested line (BENCHMARKS.md, session 14) and byte for byte the same output (tests/scrub,
tests/ingest and tests/codec run against the installed wheel in .ci/wheel.sh).
Editable installs (``pip install -e .``, ``make``) stay pure Python, so an edit takes effect
without a rebuild. ``TRACELAKE_MYPYC=0`` builds a pure-Python wheel, ``=1`` compiles an
editable install too; without a C compiler the build falls back to pure Python.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from setuptools import find_namespace_packages, setup

MAPPED = {
    "tracelake.pipelines": "pipelines",
    "tracelake.migrations": "migrations",
    "tracelake.migrations.versions": "migrations/versions",
}

# Hot, self-contained, strictly typed: what one ingested line spends its CPU in.
COMPILED = [
    "tracelake/admission.py",
    "tracelake/codec.py",
    "tracelake/run_identity.py",
    "tracelake/runners/inbound.py",
    "tracelake/store/column_keys.py",
    "tracelake/store/copy_format.py",
    *(
        f"tracelake/scrub/{name}.py"
        for name in (
            "credentials", "cut", "dates", "detect", "digits", "email_forms", "freetext", "hangul",
            "ids", "keys", "kr_address", "latin", "lowered", "messages", "national_ids", "pairs",
            "password_words", "policy", "registrations", "street_lines",
            "preview", "sources", "visible", "walk", "written",
        )
    ),
]  # fmt: skip


def _compiled() -> list[Any]:
    choice = os.environ.get("TRACELAKE_MYPYC", "auto")
    editable = any(arg in ("editable_wheel", "develop") for arg in sys.argv)
    if choice == "0" or (choice == "auto" and editable):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        if choice == "1":
            raise
        return []
    # Third-party modules are not installed in an isolated build: typed as Any there.
    options = ["--config-file=", "--ignore-missing-imports"]
    extensions: list[Any] = mypycify(
        options + COMPILED, opt_level="3", group_name="tracelake.compiled"
    )
    for extension in extensions:
        extension.optional = choice != "1"  # no C compiler: a pure-Python wheel, not a failure
    return extensions


setup(
    ext_modules=_compiled(),
    # the data directories (sql/, scrub/data/, web/...) are packages too: setuptools warns
    # that it will stop shipping importable directories that are not listed
    packages=sorted(
        find_namespace_packages(include=["tracelake", "tracelake.*"], exclude=["*.__pycache__"])
        + list(MAPPED)
    ),
    package_dir=MAPPED,
    package_data={
        "tracelake": ["py.typed"],
        "tracelake.sql": ["*.sql"],
        "tracelake.scrub.data": ["*.gz"],
        "tracelake.web.templates": ["*.html"],
        "tracelake.web.static": ["*"],
        "tracelake.migrations": ["script.py.mako"],
    },
)
