"""Rules about files as files: executables, bytecode and archives in a skill.

Input: a file name and its first bytes (and, for zip archives, the path to peek
at the central directory). Output: ``(rule, severity, message)`` verdicts.
Symbolic links are judged in :mod:`skillbook.security.walk`, which sees them.
"""

from __future__ import annotations

from pathlib import Path

from skillbook.security.findings import Severity

Verdict = tuple[str, Severity, str]

#: Bytes read from the start of every file to tell text from binary.
HEAD_BYTES = 8192
#: Entries of a zip file looked at for the "encrypted" flag.
ZIP_ENTRIES_CHECKED = 2000

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x7fELF", "ELF executable or library"),
    (b"\xfe\xed\xfa\xce", "Mach-O executable"),
    (b"\xfe\xed\xfa\xcf", "Mach-O executable"),
    (b"\xce\xfa\xed\xfe", "Mach-O executable"),
    (b"\xcf\xfa\xed\xfe", "Mach-O executable"),
    (b"\xca\xfe\xba\xbe", "Mach-O universal binary or Java class"),
    (b"\x00asm", "WebAssembly module"),
)
_NATIVE_EXT = {
    ".so": "shared library", ".dylib": "shared library", ".dll": "Windows library",
    ".exe": "Windows executable", ".scr": "Windows executable", ".msi": "Windows installer",
    ".node": "native Node.js addon", ".bin": "binary blob", ".app": "macOS application",
    ".pkg": "macOS installer package", ".dmg": "macOS disk image", ".deb": "Debian package",
    ".rpm": "RPM package", ".jar": "Java archive", ".class": "Java bytecode",
    ".apk": "Android package",
}  # fmt: skip
_BYTECODE_EXT = {".pyc": "Python bytecode", ".pyo": "Python bytecode"}
_ARCHIVE_EXT = (".zip", ".tar", ".tgz", ".tar.gz", ".gz", ".bz2", ".tbz2", ".xz", ".txz", ".7z",
                ".rar", ".zst", ".lz", ".lzma", ".cab", ".iso")  # fmt: skip
_ARCHIVE_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "zip"), (b"7z\xbc\xaf\x27\x1c", "7z"), (b"Rar!\x1a\x07", "rar"),
    (b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"(\xb5/\xfd", "zstd"),
)  # fmt: skip


def is_binary(head: bytes) -> bool:
    """NUL bytes in the first block: not a text file."""
    return b"\x00" in head


def _pe(head: bytes) -> bool:
    if not head.startswith(b"MZ") or len(head) < 0x40:
        return False
    offset = int.from_bytes(head[0x3C:0x40], "little")
    return head[offset : offset + 4] == b"PE\x00\x00" if offset + 4 <= len(head) else True


def check_file(name: str, head: bytes) -> list[Verdict]:
    """Executables, libraries, bytecode and archives, by magic bytes and by extension."""
    lower = name.lower()
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return [("binary-file", Severity.HIGH, f"{what} inside the skill")]
    if _pe(head):
        return [("binary-file", Severity.HIGH, "Windows PE executable inside the skill")]
    dot = lower.rfind(".")
    ext = lower[dot:] if dot > 0 else ""
    if ext in _BYTECODE_EXT:
        return [("binary-file", Severity.HIGH,
                 f"{_BYTECODE_EXT[ext]} inside the skill (it may not match any shipped source)")]  # fmt: skip
    if ext in _NATIVE_EXT:
        return [("binary-file", Severity.HIGH, f"{_NATIVE_EXT[ext]} ({ext}) inside the skill")]
    for magic, kind in _ARCHIVE_MAGIC:
        if head.startswith(magic):
            return [("archive-file", Severity.MEDIUM, f"{kind} archive inside the skill")]
    if lower.endswith(_ARCHIVE_EXT):
        return [("archive-file", Severity.MEDIUM, "Archive inside the skill")]
    return []


def encrypted_zip(path: Path) -> bool:
    """Whether a zip file has password-protected entries (general purpose bit 0)."""
    import zipfile  # only for a file that starts like a zip (see archives.members)

    try:
        with zipfile.ZipFile(path) as archive:
            for index, info in enumerate(archive.infolist()):
                if index >= ZIP_ENTRIES_CHECKED:
                    break
                if info.flag_bits & 0x1:
                    return True
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
        return False
    return False
