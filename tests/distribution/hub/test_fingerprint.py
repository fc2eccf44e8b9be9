"""The fingerprint is the clawhub CLI's: ICU order, ``path:sha256`` lines, dot paths left out."""

from __future__ import annotations

import hashlib
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from skillbook.distribution.fingerprint import (
    fingerprint_bytes_order,
    fingerprint_digests,
    fingerprinted,
)

H = hashlib.sha256(b"x").hexdigest()


def _lines_hash(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def test_icu_order_puts_lowercase_folders_before_upper_case_root_files() -> None:
    pairs = [("SKILL.md", H), ("references/a.md", H)]
    # localeCompare: "references/a.md" < "SKILL.md" (case is only a tertiary difference).
    assert fingerprint_digests(pairs) == _lines_hash([f"references/a.md:{H}", f"SKILL.md:{H}"])
    assert fingerprint_bytes_order(pairs) == _lines_hash([f"SKILL.md:{H}", f"references/a.md:{H}"])


def test_underscore_sorts_before_digits_and_letters() -> None:
    pairs = [("a.md", H), ("1.md", H), ("_meta.json", H)]
    assert fingerprint_digests(pairs) == _lines_hash([f"_meta.json:{H}", f"1.md:{H}", f"a.md:{H}"])


def test_dot_paths_are_not_fingerprinted() -> None:
    assert not fingerprinted(".env") and not fingerprinted("a/.git/x") and fingerprinted("a/b.md")
    assert fingerprint_digests([("SKILL.md", H), (".env", H)]) == fingerprint_digests(
        [("SKILL.md", H)]
    )


@given(st.lists(st.from_regex(r"[A-Za-z0-9_./-]{1,12}", fullmatch=True), unique=True, max_size=8))
def test_the_order_of_the_input_never_matters(paths: list[str]) -> None:
    pairs = [(p, H) for p in paths]
    assert fingerprint_digests(pairs) == fingerprint_digests(list(reversed(pairs)))
    assert fingerprint_bytes_order(pairs) == fingerprint_bytes_order(list(reversed(pairs)))


def test_the_server_and_the_client_compute_one_fingerprint(tmp_path: Path) -> None:
    from skillbook.distribution.fingerprint import fingerprint_files

    files = [("SKILL.md", b"---\nname: a\n---\n"), ("references/a.md", b"x"), ("_meta.json", b"{}")]
    pairs = [(p, hashlib.sha256(d).hexdigest()) for p, d in files]
    assert fingerprint_digests(pairs) == fingerprint_files(files)
