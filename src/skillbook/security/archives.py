"""Read the members of an archive inside a skill, within limits, so they can be scanned.

Input: an archive's bytes (already read, at most the file size limit) and the limits.
Output: :class:`Member` values (name and at most ``max_member_bytes + 1`` bytes) and
:class:`Problem` values for what could not be read: an unsupported format (7z, rar),
a corrupt archive, encrypted members, more members, bytes or nesting than the limits
allow. Nothing is written to disk and no member is extracted: decompression reads
into memory and stops at the byte budget, so a zip bomb costs at most the budget.

Formats: zip, tar (plain, gzip, bzip2, xz) and single-file gzip/bzip2/xz.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from skillbook.security.findings import Severity

#: Members read from one archive (nested archives count against their parent's budget).
MAX_MEMBERS = 200
#: Decompressed bytes read from one top-level archive, nested ones included.
MAX_TOTAL_BYTES = 16 * 1024 * 1024
#: Archives inside archives inside the skill, this deep at most (1 = a zip in the skill).
MAX_DEPTH = 3


@dataclass(frozen=True, slots=True)
class Member:
    name: str
    data: bytes
    #: The member was larger than the limit; ``data`` is its first ``limit + 1`` bytes.
    truncated: bool = False


UNSCANNED = "archive-unscanned"
PATH_ESCAPE = "archive-path-escape"


@dataclass(frozen=True, slots=True)
class Problem:
    severity: Severity
    message: str
    rule: str = UNSCANNED


@dataclass(slots=True)
class Budget:
    """Bytes left to decompress for one top-level archive, shared with nested ones."""

    left: int = MAX_TOTAL_BYTES

    def take(self, n: int) -> None:
        self.left -= n


_TAR_MAGIC_OFFSET = 257


def kind_of(head: bytes) -> str | None:
    """The archive kind of data starting with ``head``, or ``None``."""
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if head[_TAR_MAGIC_OFFSET : _TAR_MAGIC_OFFSET + 5] == b"ustar":
        return "tar"
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"BZh"):
        return "bzip2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith(b"7z\xbc\xaf\x27\x1c"):
        return "7z"
    if head.startswith(b"Rar!\x1a\x07"):
        return "rar"
    return None


def _decompress(kind: str, data: bytes, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` decompressed bytes of a gzip/bzip2/xz stream; and whether more
    were left (the budget ran out)."""
    if kind == "gzip":
        gz = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out = gz.decompress(data, limit)
        return out, bool(gz.unconsumed_tail)
    if kind == "bzip2":
        import bz2

        bzd = bz2.BZ2Decompressor()
        out = bzd.decompress(data, max_length=limit)
        return out, not bzd.needs_input and not bzd.eof
    import lzma

    xzd = lzma.LZMADecompressor()
    out = xzd.decompress(data, max_length=limit)
    return out, not xzd.needs_input and not xzd.eof


def members(
    data: bytes, name: str, *, max_member_bytes: int, budget: Budget
) -> Iterator[Member | Problem]:
    """The members of the archive ``data`` (called ``name``), or why they cannot be read."""
    # Imported only when an archive is met: the four modules cost a scan process about
    # as much CPU as reading a tenth of the corpus, and most skills hold no archive.
    import lzma
    import tarfile
    import zipfile

    kind = kind_of(data[:512])
    try:
        if kind == "zip":
            yield from _zip(data, max_member_bytes, budget)
        elif kind == "tar":
            yield from _tar(data, max_member_bytes, budget)
        elif kind in ("gzip", "bzip2", "xz"):
            inner, more = _decompress(kind, data, max(min(budget.left, MAX_TOTAL_BYTES), 0))
            budget.take(len(inner))
            if kind_of(inner[:512]) == "tar":
                yield from _tar(inner, max_member_bytes, budget, cut=more)
            else:
                stem = name.rsplit(".", 1)[0] if "." in name else name + ".out"
                cut = more or len(inner) > max_member_bytes
                yield Member(stem, inner[: max_member_bytes + 1], truncated=cut)
        else:
            yield Problem(Severity.MEDIUM, f"{kind or 'unknown'} archives cannot be looked into")
    except (zipfile.BadZipFile, tarfile.TarError, zlib.error, OSError, EOFError, ValueError,
            lzma.LZMAError, NotImplementedError, RuntimeError) as exc:  # fmt: skip
        yield Problem(Severity.MEDIUM, f"the archive could not be read ({exc.__class__.__name__})")


def _zip(data: bytes, limit: int, budget: Budget) -> Iterator[Member | Problem]:
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = [i for i in archive.infolist() if not i.is_dir()]
        for index, info in enumerate(infos):
            if index >= MAX_MEMBERS:
                yield Problem(Severity.HIGH, f"{len(infos) - MAX_MEMBERS} members beyond the "
                                             f"limit of {MAX_MEMBERS} were not scanned")  # fmt: skip
                return
            if info.flag_bits & 0x1:
                continue  # encrypted: reported as password-archive
            if budget.left <= 0:
                yield Problem(Severity.HIGH, f"more than {MAX_TOTAL_BYTES} bytes unpacked; "
                                             "the rest was not scanned")  # fmt: skip
                return
            with archive.open(info) as stream:
                body = stream.read(min(limit + 1, budget.left))
            budget.take(len(body))
            yield Member(info.filename, body, truncated=info.file_size > len(body))


def _tar(
    data: bytes, limit: int, budget: Budget, *, cut: bool = False
) -> Iterator[Member | Problem]:
    import tarfile

    count = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            for info in archive:
                if not info.isreg():
                    if (info.issym() or info.islnk()) and _escapes(info.linkname):
                        yield Problem(Severity.HIGH,
                                      f"member {info.name} links outside the archive, to "
                                      f"{info.linkname}", PATH_ESCAPE)  # fmt: skip
                    continue
                count += 1
                if count > MAX_MEMBERS:
                    yield Problem(Severity.HIGH, f"members beyond the limit of {MAX_MEMBERS} "
                                                 "were not scanned")  # fmt: skip
                    return
                stream = archive.extractfile(info)
                if stream is None:
                    continue
                body = stream.read(limit + 1)
                yield Member(info.name, body, truncated=info.size > len(body))
    except tarfile.ReadError:
        if not cut:
            raise
    if cut:
        yield Problem(Severity.HIGH, f"more than {MAX_TOTAL_BYTES} bytes unpacked; "
                                     "the rest was not scanned")  # fmt: skip


def _escapes(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return name.startswith(("/", "\\")) or ".." in parts or (len(name) > 1 and name[1] == ":")


def escapes(name: str) -> bool:
    """Whether a member name would be written outside the folder it is unpacked into."""
    return _escapes(name)
