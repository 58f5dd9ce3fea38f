"""Views report the event-sourced promotion status (suggestions) where a suggestion exists.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL_DIR = Path(__file__).resolve().parents[2] / "tracelake" / "sql"


def _statements(name: str) -> list[str]:
    text = "\n".join(
        line
        for line in (SQL_DIR / name).read_text(encoding="utf-8").splitlines()
        if not line.strip().startswith("--")
    )
    return [s.strip() for s in text.split(";") if s.strip()]


def upgrade() -> None:
    for statement in _statements("views_0004.sql"):
        op.execute(statement)


def downgrade() -> None:  # back to the 0002 definitions of the two views
    op.execute("DROP VIEW IF EXISTS v_learning_records")
    op.execute("DROP VIEW IF EXISTS v_binding_repair_evidence")
    for statement in _statements("views_0002.sql"):
        if (
            "VIEW v_learning_records AS" in statement
            or "VIEW v_binding_repair_evidence AS" in statement
        ):
            op.execute(statement)
