"""Packaging beyond pyproject.toml: map the repository's top-level ``pipelines/`` and
``migrations/`` into the ``tracelake`` namespace of the wheel.

The repository keeps them at the top level (that is where developers and alembic expect
them); an installed tracelake has them as ``tracelake.pipelines`` and ``tracelake/migrations``
(no generic top-level ``pipelines`` package). ``tracelake.store.migrate`` finds migrations in
either place. Everything else is in pyproject.toml.
"""

from __future__ import annotations

from setuptools import find_packages, setup

MAPPED = {
    "tracelake.pipelines": "pipelines",
    "tracelake.migrations": "migrations",
    "tracelake.migrations.versions": "migrations/versions",
}

setup(
    packages=sorted(find_packages(include=["tracelake", "tracelake.*"]) + list(MAPPED)),
    package_dir=MAPPED,
    package_data={
        "tracelake": [
            "sql/*.sql",
            "py.typed",
            "scrub/data/*.gz",
            "web/templates/*.html",
            "web/static/*",
        ],
        "tracelake.migrations": ["script.py.mako"],
    },
)
