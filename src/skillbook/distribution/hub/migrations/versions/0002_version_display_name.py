"""versions.display_name: the name a publish asked for, shown once that version is public.

A held version must not change the skill's public name or summary; its requested
name waits here until an admin releases it. Rows from before stay NULL (the skill
keeps the name it shows).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("versions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("display_name", sa.String(length=256), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("versions", schema=None) as batch_op:
        batch_op.drop_column("display_name")
