"""The lifecycle tables (issue 16): tamper evidence, crypto-shredding, retention. Part of the one
schema (``store.schema`` re-exports them); kept apart so each module stays one concept."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, LargeBinary, Table, Text

from tracelake.store.column_types import JSONDocument, Timestamp, metadata

# The hash chain over ``events`` (see ``store.chain``): one link per append transaction.
event_chain = Table(
    "event_chain",
    metadata,
    Column("last_position", BigInteger, primary_key=True, autoincrement=False),
    Column("first_position", BigInteger, nullable=False),
    Column("head", Text, nullable=False),  # hex SHA-256 chained over every event to last_position
    Column("digests", LargeBinary, nullable=False),  # 8-byte prefix of each event's digest
    Column("created_at", Timestamp, nullable=False),
)

# Where verification starts: the genesis (position 0) and one anchor per retention.
chain_anchors = Table(
    "chain_anchors",
    metadata,
    Column("position", BigInteger, primary_key=True, autoincrement=False),
    Column("head", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("detail", JSONDocument, nullable=True),
    Column("created_at", Timestamp, nullable=False),
)

# Digests of events removed by retention above the anchor (recorded before the cut, but
# positioned after an event that stays), so the chain through them still verifies.
chain_removed = Table(
    "chain_removed",
    metadata,
    Column("position", BigInteger, primary_key=True, autoincrement=False),
    Column("digest", Text, nullable=False),
)

verify_checkpoints = Table(
    "verify_checkpoints",
    metadata,
    Column("name", Text, primary_key=True),
    Column("position", BigInteger, nullable=False),  # always a link's last_position
    Column("head", Text, nullable=False),
    Column("verified_at", Timestamp, nullable=False),
)

# One random secret per pseudonymised subject; deleting it is the erasure (crypto-shredding).
subject_secrets = Table(
    "subject_secrets",
    metadata,
    Column("subject_ref", Text, primary_key=True),  # keyed hash of the value, never the value
    Column("secret", LargeBinary, nullable=False),
    Column("created_at", Timestamp, nullable=False),
)

# Erasure receipts: what was done, when, counts. No value, no subject reference.
erasures = Table(
    "erasures",
    metadata,
    Column("id", Text, primary_key=True),
    Column("erased_at", Timestamp, nullable=False),
    Column("receipt", JSONDocument, nullable=False),
)

# Present only inside a retention transaction: the append-only trigger lets DELETE through
# for events recorded before ``cut`` while a row exists (PostgreSQL: for this transaction).
retention_guard = Table(
    "retention_guard",
    metadata,
    Column("token", Text, primary_key=True),
    Column("cut", Timestamp, nullable=False),
)
