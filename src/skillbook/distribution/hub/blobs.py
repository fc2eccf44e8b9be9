"""Content-addressed blob storage: file contents and version archives, keyed by sha256.

Input: bytes. Output: their lowercase hex sha256, which is the key to get them back.
Two backends behind one small protocol: :class:`FolderBlobStore` (a local folder,
the default; writes are temp file + rename, so a crash leaves no half blob) and
:class:`S3BlobStore` (any S3-compatible store through ``boto3``). Because a key is
the hash of its bytes, writing the same content twice is harmless, and replicas
never disagree about what a key holds. :mod:`skillbook.distribution.hub.housekeeping` removes what a
crash left half-written and the blobs of uploads that expired unpublished.
"""

from __future__ import annotations

import hashlib
import re
import stat
from pathlib import Path
from typing import Any, Final, Protocol
from urllib.parse import parse_qs, urlsplit

from skillbook.base.atomic import write_atomic
from skillbook.distribution.hub import HubNotFound

__all__ = ["BlobStore", "FolderBlobStore", "S3BlobStore", "open_blob_store"]

_KEY: Final = re.compile(r"^[0-9a-f]{64}$")
#: The prefix of a blob being written (temp file + rename); a crash can leave one behind.
PARTIAL_PREFIX: Final = ".tmp-"


class BlobStore(Protocol):
    def put(self, data: bytes) -> str:
        """Store ``data``; returns its key (the sha256 hex)."""

    def get(self, key: str) -> bytes:
        """The bytes under ``key``; raises :class:`~skillbook.distribution.hub.HubNotFound`."""

    def exists(self, key: str) -> bool: ...

    def delete(self, key: str) -> None:
        """Remove the blob under ``key`` (nothing if there is none)."""

    def remove_partial(self, before: float) -> int:
        """Remove half-written blobs a crash left, last changed before ``before`` (epoch
        seconds); returns how many."""

    def describe(self) -> str:
        """Where blobs go, for ``doctor``-style output (no credentials)."""


def blob_key(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _checked(key: str) -> str:
    if not _KEY.match(key):
        raise HubNotFound(f"no blob {key}")
    return key


class FolderBlobStore:
    """Blobs as files ``<root>/ab/cd/<key>``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        key = _checked(key)
        return self.root / key[:2] / key[2:4] / key

    def put(self, data: bytes) -> str:
        key = blob_key(data)
        path = self._path(key)
        if path.exists():
            return key
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data, mode=0o600, prefix=PARTIAL_PREFIX, fsync=True)
        return key

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            raise HubNotFound(f"no blob {key}") from None

    def exists(self, key: str) -> bool:
        try:
            return self._path(key).is_file()
        except HubNotFound:
            return False

    def large_file(self, key: str, larger_than: int) -> Path | None:
        """The blob's file when it holds more than ``larger_than`` bytes (to stream it)."""
        try:
            path = self._path(key)
            return path if path.stat().st_size > larger_than else None
        except (HubNotFound, OSError):
            return None

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def remove_partial(self, before: float) -> int:
        removed = 0
        for path in self.root.glob(f"*/*/{PARTIAL_PREFIX}*"):
            try:
                info = path.lstat()
                if stat.S_ISREG(info.st_mode) and info.st_mtime < before:
                    path.unlink()
                    removed += 1
            except FileNotFoundError:
                continue  # its writer finished (renamed it) or another sweep took it
        return removed

    def describe(self) -> str:
        return str(self.root)


class S3BlobStore:
    """Blobs as objects ``<prefix>/<key>`` in one bucket of an S3-compatible store.

    Credentials come the way boto3 finds them (``AWS_ACCESS_KEY_ID`` …, profiles,
    instance roles); the URL names only the bucket, prefix, endpoint and region.
    """

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        region: str | None = None,
        client: Any = None,
    ) -> None:
        if client is None:
            import boto3

            client = boto3.client("s3", endpoint_url=endpoint_url, region_name=region)
        self._client = client
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.endpoint_url = endpoint_url

    def _name(self, key: str) -> str:
        key = _checked(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    def put(self, data: bytes) -> str:
        key = blob_key(data)
        if not self.exists(key):
            self._client.put_object(Bucket=self.bucket, Key=self._name(key), Body=data)
        return key

    def get(self, key: str) -> bytes:
        from botocore.exceptions import ClientError

        try:
            answer = self._client.get_object(Bucket=self.bucket, Key=self._name(key))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                raise HubNotFound(f"no blob {key}") from None
            raise
        body: bytes = answer["Body"].read()
        return body

    def exists(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self._client.head_object(Bucket=self.bucket, Key=self._name(key))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound"):
                return False
            raise
        return True

    def delete(self, key: str) -> None:
        self._client.delete_object(Bucket=self.bucket, Key=self._name(key))

    def remove_partial(self, before: float) -> int:
        # One PUT per blob: an object is whole or absent, so there is nothing half-written.
        return 0

    def describe(self) -> str:
        where = f" at {self.endpoint_url}" if self.endpoint_url else ""
        return f"s3://{self.bucket}/{self.prefix}{where}"


def open_blob_store(url: str) -> BlobStore:
    """A store for ``url``: a folder path, ``file:///path``, or ``s3://bucket/prefix?…``.

    ``s3://`` takes ``endpoint_url`` (a MinIO, Ceph or moto server) and ``region`` as
    query parameters.
    """
    parts = urlsplit(url)
    if parts.scheme == "s3":
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        return S3BlobStore(
            parts.netloc,
            parts.path,
            endpoint_url=query.get("endpoint_url"),
            region=query.get("region"),
        )
    if parts.scheme == "file":
        return FolderBlobStore(Path(parts.path))
    if parts.scheme and len(parts.scheme) > 1:
        raise ValueError(f"unsupported blob store URL {url!r}: use a folder, file:// or s3://")
    return FolderBlobStore(Path(url).expanduser())
