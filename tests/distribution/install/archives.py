"""Archive builders for the download tests: good ones and hostile ones, in memory."""

from __future__ import annotations

import io
import stat
import struct
import tarfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Entry:
    name: str
    data: bytes = b""
    kind: str = "file"  # file | dir | symlink | hardlink | chr | blk | fifo
    mode: int = 0o644
    target: str = ""


def make_zip(entries: Iterable[Entry], *, encrypted: Iterable[str] = ()) -> bytes:
    buf = io.BytesIO()
    flagged = set(encrypted)
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for e in entries:
            info = zipfile.ZipInfo(
                e.name + ("/" if e.kind == "dir" and not e.name.endswith("/") else "")
            )
            info.create_system = 3
            kind_bits = {
                "file": stat.S_IFREG,
                "dir": stat.S_IFDIR,
                "symlink": stat.S_IFLNK,
                "chr": stat.S_IFCHR,
                "fifo": stat.S_IFIFO,
            }[e.kind]
            info.external_attr = (kind_bits | e.mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, e.target.encode() if e.kind == "symlink" else e.data)
    data = buf.getvalue()
    for name in flagged:
        data = _set_encrypted_flag(data, name)
    return data


def _set_encrypted_flag(data: bytes, name: str) -> bytes:
    """Set general-purpose bit 0 (encrypted) of ``name`` in the central directory."""
    raw = bytearray(data)
    needle = name.encode()
    pos = 0
    while (pos := raw.find(b"PK\x01\x02", pos)) != -1:
        name_len = struct.unpack_from("<H", raw, pos + 28)[0]
        if bytes(raw[pos + 46 : pos + 46 + name_len]) == needle:
            flags = struct.unpack_from("<H", raw, pos + 8)[0]
            struct.pack_into("<H", raw, pos + 8, flags | 1)
        pos += 4
    return bytes(raw)


def shrink_declared_size(data: bytes, name: str, size: int) -> bytes:
    """Make ``name`` lie about its uncompressed size (local header and central directory)."""
    raw = bytearray(data)
    needle = name.encode()
    for sig, size_at, name_len_at, name_at in (
        (b"PK\x03\x04", 22, 26, 30),
        (b"PK\x01\x02", 24, 28, 46),
    ):
        pos = 0
        while (pos := raw.find(sig, pos)) != -1:
            name_len = struct.unpack_from("<H", raw, pos + name_len_at)[0]
            if bytes(raw[pos + name_at : pos + name_at + name_len]) == needle:
                struct.pack_into("<I", raw, pos + size_at, size)
            pos += 4
    return bytes(raw)


def zip_of_zeros(entries: dict[str, int]) -> bytes:
    """A zip whose entries hold that many zero bytes each (streamed, honest headers)."""
    buf = io.BytesIO()
    chunk = bytes(1024 * 1024)
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name, size in entries.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w", force_zip64=True) as sink:
                left = size
                while left > 0:
                    n = min(left, len(chunk))
                    sink.write(chunk[:n])
                    left -= n
    return buf.getvalue()


def make_tar(entries: Iterable[Entry], *, compression: str = "gz") -> bytes:
    buf = io.BytesIO()
    mode: Literal["w:gz", "w:bz2"] = "w:bz2" if compression == "bz2" else "w:gz"
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for e in entries:
            info = tarfile.TarInfo(e.name)
            info.mode = e.mode
            info.mtime = 1_700_000_000
            data: bytes | None = None
            if e.kind == "file":
                info.size = len(e.data)
                data = e.data
            elif e.kind == "dir":
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
            elif e.kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, e.target
            elif e.kind == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, e.target
            elif e.kind == "chr":
                info.type = tarfile.CHRTYPE
            elif e.kind == "blk":
                info.type = tarfile.BLKTYPE
            elif e.kind == "fifo":
                info.type = tarfile.FIFOTYPE
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()
