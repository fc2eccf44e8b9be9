"""What the manifest keeps for installers beyond OpenClaw: sha256 and raw apt/pip entries."""

from __future__ import annotations

from pathlib import Path

from skillbook.distribution.install.fallback import raw_installers
from skillbook.model import Skill
from skillbook.pipeline.parse.manifest import parse_install_spec, resolve_metadata


def test_sha256_is_kept_trimmed_but_not_in_openclaws_shape() -> None:
    spec = parse_install_spec(
        {"kind": "download", "url": "https://e.com/t.zip", "sha256": " AB12 "}
    )
    # The 2026.4 profile's OpenClaw ignores sha256: kept as skillbook's declared digest.
    assert spec is not None and spec.sha256 is None
    assert spec.declared_sha256 == spec.expected_sha256 == "AB12"
    assert "sha256" not in spec.to_json()
    other = parse_install_spec({"kind": "download", "url": "https://e.com/t.zip", "sha256": 12})
    assert other is not None and other.expected_sha256 is None


def test_raw_apt_and_pip_entries_with_safe_names_only() -> None:
    meta, _ = resolve_metadata(
        {
            "metadata": (
                '{"openclaw": {"install": ['
                '{"id": "apt", "kind": "apt", "packages": ["vdirsyncer", "khal"], "bins": ["khal"]},'
                '{"kind": "APT", "package": "jq"},'
                '{"kind": "apt", "package": "jq; rm -rf /"},'
                '{"kind": "pipx", "package": "semgrep"},'
                '{"kind": "shell", "command": "curl x | sh"}]}}'
            )
        },
        {},
    )
    assert meta is not None and meta.install is None  # OpenClaw's parser drops them all
    skill = Skill.create("s", "d", base_dir=Path("/x"), metadata=meta)
    raws = raw_installers(skill)
    assert [(r.kind, r.id, r.packages, r.label) for r in raws] == [
        ("apt", "apt", ("vdirsyncer", "khal"), "Install vdirsyncer, khal (apt)"),
        ("apt", "APT-1", ("jq",), "Install jq (apt)"),
        ("pip", "pipx-3", ("semgrep",), "Install semgrep (pip)"),
    ]
