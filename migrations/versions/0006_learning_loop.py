"""The learning loop (issue 9): records are facts, promotion status lives in decisions only.

* ``learning_records``: ``promotion_status`` dropped (one source of truth: the suggestion
  decisions, read by the views); ``position`` added (the event that finished the run: a record
  is written once and never updated).
* ``binding_repair_candidates``: ``status`` dropped, for the same reason.
* ``failure_taxonomy``: ``detail`` added (a stable snake_case sub-code of the reason).
* Views from ``views_0006.sql``: ``v_learning_records`` (status from decisions),
  ``v_failure_taxonomy`` (``detail``), ``v_binding_repair_evidence`` (one row per event).

Derived tables only: every projection's rows and checkpoint are deleted, so the next
``tracelake project`` rebuilds them from the log (which this migration does not touch).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL_DIR = Path(__file__).resolve().parents[2] / "tracelake" / "sql"
CHANGED_VIEWS = ("v_learning_records", "v_failure_taxonomy", "v_binding_repair_evidence")
DERIVED = (
    "runs",
    "learning_records",
    "failure_taxonomy",
    "tool_calls",
    "binding_repair_evidence",
    "binding_repair_candidates",
    "coercion_evidence",
    "data_flow_evidence",
    "suggestions",
    "projection_checkpoints",
)


def _statements(name: str) -> list[str]:
    text = "\n".join(
        line
        for line in (SQL_DIR / name).read_text(encoding="utf-8").splitlines()
        if not line.strip().startswith("--")
    )
    return [s.strip() for s in text.split(";") if s.strip()]


def _drop_views() -> None:
    for view in CHANGED_VIEWS:
        op.execute(f"DROP VIEW IF EXISTS {view}")


def upgrade() -> None:
    _drop_views()  # SQLite's batch mode copies tables: no view may depend on them meanwhile
    for table in DERIVED:
        op.execute(f"DELETE FROM {table}")  # rebuilt from the log by `tracelake project`
    with op.batch_alter_table("learning_records") as batch:
        batch.drop_column("promotion_status")
        batch.add_column(sa.Column("position", sa.BigInteger(), nullable=False))
        batch.create_index("ix_learning_records_position", ["position"])
    with op.batch_alter_table("binding_repair_candidates") as batch:
        batch.drop_column("status")
    with op.batch_alter_table("failure_taxonomy") as batch:
        batch.add_column(sa.Column("detail", sa.Text(), nullable=False))
    for statement in _statements("views_0006.sql"):
        op.execute(statement)


def downgrade() -> None:  # back to the 0004 views over the 0005 tables (rows rebuilt too)
    _drop_views()
    for table in DERIVED:
        op.execute(f"DELETE FROM {table}")
    with op.batch_alter_table("failure_taxonomy") as batch:
        batch.drop_column("detail")
    with op.batch_alter_table("binding_repair_candidates") as batch:
        batch.add_column(sa.Column("status", sa.Text(), nullable=False))
    with op.batch_alter_table("learning_records") as batch:
        batch.drop_index("ix_learning_records_position")
        batch.drop_column("position")
        batch.add_column(sa.Column("promotion_status", sa.Text(), nullable=False))
    for statement in _statements("views_0002.sql"):
        if "VIEW v_failure_taxonomy AS" in statement:
            op.execute(statement)
    for statement in _statements("views_0004.sql"):
        op.execute(statement)
