"""OpenClaw 2026.9.6's host environment policy, read from its npm package's ``dist``.

The policy is compiled into one chunk of the bundle (``//#region src/infra/host-env-
security-policy.json``: a JavaScript object literal of five string lists), and the two
regular expressions that complete it sit in ``host-env-security.ts`` (Cargo's per-target
linker and runner) and ``src/skills/runtime/env-overrides.ts`` (``OPENSSL_CONF``).
:func:`read_policy` returns them in the shape of the checked-in snapshot
(``openclaw_2026_9_6_host_env_policy.json``), so a test can compare the two.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).with_name("openclaw_2026_9_6_host_env_policy.json")

_POLICY_REGION = "//#region src/infra/host-env-security-policy.json"
_POLICY_START = re.compile(r"var \w+ = \{")
_CARGO = re.compile(r"const CARGO_TARGET_EXECUTABLE_OVERRIDE_ENV_KEY = /(.+?)/(\w*);")
_SKILL = re.compile(r"const SKILL_ALWAYS_BLOCKED_ENV_PATTERNS = \[(.*?)\];")
_REGEX_LITERAL = re.compile(r"/(.+?)/(\w*)(?:,|$)")


def load_snapshot() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    return data


def _chunk_with(dist: Path, marker: str) -> str:
    for path in sorted(dist.glob("*.mjs")):
        text = path.read_text(encoding="utf-8")
        if marker in text:
            return text
    raise AssertionError(f"no chunk of {dist} holds {marker!r}")


def read_policy(dist: Path) -> dict[str, Any]:
    """The policy lists and patterns of the package whose ``dist`` folder is given."""
    text = _chunk_with(dist, _POLICY_REGION)
    region = text[text.index(_POLICY_REGION) :]
    start = _POLICY_START.search(region)
    assert start is not None, "the policy object literal moved"
    body = region[start.end() - 1 : region.index("\n};", start.end()) + 2]
    # The literal's keys are bare identifiers, its values arrays of JSON strings.
    lists = json.loads(re.sub(r"^(\s*)(\w+):", r'\1"\2":', body, flags=re.M))
    cargo = _CARGO.search(text)
    assert cargo is not None, "the Cargo linker/runner pattern moved"
    skill = _SKILL.search(_chunk_with(dist, "SKILL_ALWAYS_BLOCKED_ENV_PATTERNS"))
    assert skill is not None, "the skill-only patterns moved"
    return {
        "version": json.loads((dist.parent / "package.json").read_text())["version"],
        **{key: lists[key] for key in sorted(lists)},
        "overridePatterns": [[cargo.group(1), cargo.group(2)]],
        "skillPatterns": [
            [m.group(1), m.group(2)] for m in _REGEX_LITERAL.finditer(skill.group(1).strip())
        ],
    }
