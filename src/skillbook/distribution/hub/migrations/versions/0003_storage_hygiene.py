"""Storage hygiene: which token published a version (for the per-token quota), and the
indexes the sweep of expired uploads looks blobs up by.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("versions", schema=None) as batch_op:
        # Versions published before this revision belong to no token (they count for none).
        batch_op.add_column(sa.Column("token_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_versions_token_id"), ["token_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_versions_archive_sha256"), ["archive_sha256"], unique=False
        )
    with op.batch_alter_table("version_files", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_version_files_sha256"), ["sha256"], unique=False)
    with op.batch_alter_table("uploads", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_uploads_storage_id"), ["storage_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_uploads_token_id"), ["token_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("uploads", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_uploads_token_id"))
        batch_op.drop_index(batch_op.f("ix_uploads_storage_id"))
    with op.batch_alter_table("version_files", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_version_files_sha256"))
    with op.batch_alter_table("versions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_versions_archive_sha256"))
        batch_op.drop_index(batch_op.f("ix_versions_token_id"))
        batch_op.drop_column("token_id")
