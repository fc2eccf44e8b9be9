"""Initial schema: skills, versions and their files, tags, tokens, uploads, audit, rate counters.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.Column("actor", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("slug", sa.String(length=128), nullable=True),
        sa.Column("version", sa.String(length=128), nullable=True),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_audit_log_at"), ["at"], unique=False)

    catalog_state = op.create_table(
        "catalog_state",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("generation", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.bulk_insert(catalog_state, [{"id": 1, "generation": 0}])
    op.create_table(
        "rate_counters",
        sa.Column("key", sa.String(length=96), nullable=False),
        sa.Column("window", sa.BigInteger(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("key", "window"),
    )
    with op.batch_alter_table("rate_counters", schema=None) as batch_op:
        batch_op.create_index("ix_rate_counters_window", ["window"], unique=False)

    op.create_table(
        "skills",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(length=128), nullable=False),
        sa.Column("owner_handle", sa.String(length=64), nullable=False),
        sa.Column("display_name", sa.String(length=256), nullable=False),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.Column("downloads", sa.BigInteger(), nullable=False),
        sa.Column("deleted_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("slug"),
    )
    op.create_table(
        "tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("handle", sa.String(length=64), nullable=False),
        sa.Column("admin", sa.Boolean(), nullable=False),
        sa.Column("label", sa.String(length=256), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("revoked_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tokens_handle"), ["handle"], unique=False)

    op.create_table(
        "uploads",
        sa.Column("ticket", sa.String(length=64), nullable=False),
        sa.Column("token_id", sa.Integer(), nullable=False),
        sa.Column("path", sa.String(length=1024), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=True),
        sa.Column("content_type", sa.String(length=128), nullable=False),
        sa.Column("storage_id", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["token_id"],
            ["tokens.id"],
        ),
        sa.PrimaryKeyConstraint("ticket"),
    )
    with op.batch_alter_table("uploads", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_uploads_created_at"), ["created_at"], unique=False)

    op.create_table(
        "versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("skill_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("changelog", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("publisher", sa.String(length=64), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("fingerprint_bytes", sa.String(length=64), nullable=False),
        sa.Column("archive_sha256", sa.String(length=64), nullable=False),
        sa.Column("archive_size", sa.BigInteger(), nullable=False),
        sa.Column("skill_md", sa.Text(), nullable=False),
        sa.Column("scan_json", sa.Text(), nullable=False),
        sa.Column("scan_worst", sa.String(length=16), nullable=True),
        sa.Column("validation_json", sa.Text(), nullable=False),
        sa.Column("pending_tags", sa.Text(), nullable=False),
        sa.Column("released_by", sa.String(length=64), nullable=True),
        sa.Column("released_at", sa.BigInteger(), nullable=True),
        sa.Column("publish_key", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["skill_id"],
            ["skills.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("skill_id", "version", name="uq_versions_skill_version"),
    )
    with op.batch_alter_table("versions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_versions_fingerprint"), ["fingerprint"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_versions_fingerprint_bytes"), ["fingerprint_bytes"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_versions_skill_id"), ["skill_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_versions_status"), ["status"], unique=False)

    op.create_table(
        "tags",
        sa.Column("skill_id", sa.Integer(), nullable=False),
        sa.Column("tag", sa.String(length=64), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["skill_id"],
            ["skills.id"],
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["versions.id"],
        ),
        sa.PrimaryKeyConstraint("skill_id", "tag"),
    )
    op.create_table(
        "version_files",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("path", sa.String(length=1024), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("content_type", sa.String(length=128), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["versions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("version_id", "path", name="uq_version_files_path"),
    )
    with op.batch_alter_table("version_files", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_version_files_version_id"), ["version_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("version_files", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_version_files_version_id"))

    op.drop_table("version_files")
    op.drop_table("tags")
    with op.batch_alter_table("versions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_versions_status"))
        batch_op.drop_index(batch_op.f("ix_versions_skill_id"))
        batch_op.drop_index(batch_op.f("ix_versions_fingerprint_bytes"))
        batch_op.drop_index(batch_op.f("ix_versions_fingerprint"))

    op.drop_table("versions")
    with op.batch_alter_table("uploads", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_uploads_created_at"))

    op.drop_table("uploads")
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tokens_handle"))

    op.drop_table("tokens")
    op.drop_table("skills")
    with op.batch_alter_table("rate_counters", schema=None) as batch_op:
        batch_op.drop_index("ix_rate_counters_window")

    op.drop_table("rate_counters")
    op.drop_table("catalog_state")
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_audit_log_at"))

    op.drop_table("audit_log")
