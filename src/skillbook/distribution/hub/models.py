"""The registry's metadata tables (SQLAlchemy ORM). Blobs live in :mod:`~skillbook.distribution.hub.blobs`.

Timestamps are Unix epoch milliseconds, as every ClawHub client expects them. The
schema changes only through Alembic migrations (``migrations/versions``); a test
checks that the migrations and these classes describe the same tables.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

__all__ = [
    "AuditEntry",
    "Base",
    "CatalogState",
    "RateCounter",
    "Skill",
    "Tag",
    "Token",
    "Upload",
    "Version",
    "VersionFile",
]

#: Version states: visible, kept out of search and downloads by the scan, or deleted.
PUBLISHED = "published"
HELD = "held"
DELETED = "deleted"


class Base(DeclarativeBase):
    pass


class Skill(Base):
    __tablename__ = "skills"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(128), unique=True)
    owner_handle: Mapped[str] = mapped_column(String(64))
    display_name: Mapped[str] = mapped_column(String(256))
    summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[int] = mapped_column(BigInteger)
    downloads: Mapped[int] = mapped_column(BigInteger, default=0)
    deleted_at: Mapped[int | None] = mapped_column(BigInteger, nullable=True)

    versions: Mapped[list[Version]] = relationship(back_populates="skill")
    tags: Mapped[list[Tag]] = relationship(back_populates="skill")


class Version(Base):
    __tablename__ = "versions"
    __table_args__ = (UniqueConstraint("skill_id", "version", name="uq_versions_skill_version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    skill_id: Mapped[int] = mapped_column(ForeignKey("skills.id"), index=True)
    version: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[int] = mapped_column(BigInteger)
    changelog: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(16), index=True)
    publisher: Mapped[str] = mapped_column(String(64))
    #: The clawhub CLI's fingerprint (ICU order) and the same lines in byte order.
    fingerprint: Mapped[str] = mapped_column(String(64), index=True)
    fingerprint_bytes: Mapped[str] = mapped_column(String(64), index=True)
    archive_sha256: Mapped[str] = mapped_column(String(64), index=True)
    archive_size: Mapped[int] = mapped_column(BigInteger)
    #: SKILL.md as published: the search index reads it.
    skill_md: Mapped[str] = mapped_column(Text)
    #: The display name the publish asked for; the skill shows it once this version is
    #: public and latest (a held version's waits for its release).
    display_name: Mapped[str | None] = mapped_column(String(256), nullable=True)
    #: The scan report (``checks.ScanSummary`` as JSON) and the validation diagnostics.
    scan_json: Mapped[str] = mapped_column(Text)
    scan_worst: Mapped[str | None] = mapped_column(String(16), nullable=True)
    validation_json: Mapped[str] = mapped_column(Text, default="[]")
    #: Tags to move here when an admin releases a held version (JSON list).
    pending_tags: Mapped[str] = mapped_column(Text, default="[]")
    released_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    released_at: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    #: The request that created it (for an idempotent retry of the same publish).
    publish_key: Mapped[str] = mapped_column(String(64))
    #: The token that published it: its files count toward that token's storage quota.
    token_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)

    skill: Mapped[Skill] = relationship(back_populates="versions")
    files: Mapped[list[VersionFile]] = relationship(
        back_populates="version", order_by="VersionFile.path"
    )


class VersionFile(Base):
    __tablename__ = "version_files"
    __table_args__ = (UniqueConstraint("version_id", "path", name="uq_version_files_path"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"), index=True)
    path: Mapped[str] = mapped_column(String(1024))
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    content_type: Mapped[str] = mapped_column(String(128))

    version: Mapped[Version] = relationship(back_populates="files")


class Tag(Base):
    __tablename__ = "tags"

    skill_id: Mapped[int] = mapped_column(ForeignKey("skills.id"), primary_key=True)
    tag: Mapped[str] = mapped_column(String(64), primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"))

    skill: Mapped[Skill] = relationship(back_populates="tags")
    version: Mapped[Version] = relationship()


class Token(Base):
    __tablename__ = "tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    #: sha256 of the whole token; the token itself is shown once and never stored.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    #: The first characters, to tell tokens apart in listings.
    prefix: Mapped[str] = mapped_column(String(16))
    handle: Mapped[str] = mapped_column(String(64), index=True)
    admin: Mapped[bool] = mapped_column(Boolean, default=False)
    label: Mapped[str] = mapped_column(String(256), default="")
    created_at: Mapped[int] = mapped_column(BigInteger)
    revoked_at: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class Upload(Base):
    __tablename__ = "uploads"

    ticket: Mapped[str] = mapped_column(String(64), primary_key=True)
    token_id: Mapped[int] = mapped_column(ForeignKey("tokens.id"), index=True)
    path: Mapped[str] = mapped_column(String(1024))
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    content_type: Mapped[str] = mapped_column(String(128))
    #: The blob key once the bytes arrived (the sha256 of the content).
    storage_id: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    created_at: Mapped[int] = mapped_column(BigInteger, index=True)


class AuditEntry(Base):
    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[int] = mapped_column(BigInteger, index=True)
    actor: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(32))
    slug: Mapped[str | None] = mapped_column(String(128), nullable=True)
    version: Mapped[str | None] = mapped_column(String(128), nullable=True)
    detail: Mapped[str] = mapped_column(Text, default="{}")


class RateCounter(Base):
    __tablename__ = "rate_counters"
    # Clustered on the key in SQLite: a flush's upserts walk one B-tree, not two (0004).
    __table_args__ = (Index("ix_rate_counters_window", "window"), {"sqlite_with_rowid": False})

    key: Mapped[str] = mapped_column(String(96), primary_key=True)
    window: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    count: Mapped[int] = mapped_column(Integer)


class CatalogState(Base):
    """One row: ``generation`` grows whenever what search can see changes."""

    __tablename__ = "catalog_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    generation: Mapped[int] = mapped_column(BigInteger)
