"""Helpers of the selection tests: a small workspace of real SKILL.md files, the shipped models."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from factories import write_skill as write_skill_folder

SKILLS: Mapping[str, str] = {
    "weather": "Current weather and forecasts for any city: rain, temperature, wind.",
    "pdf-merge": "Combine multiple PDF files into one or split a PDF into pages.",
    "trello": "Manage Trello boards, lists and cards via the Trello REST API.",
    "hue-lights": "Control Philips Hue lights and scenes: on, off, brightness, colour.",
    "git-worktrees": "Set up a git worktree for isolated feature work on a new branch.",
    "stripe": "Stripe payments: customers, subscriptions, invoices and refunds.",
}


def write_skill(root: Path, name: str, description: str, extra: str = "", body: str = "") -> Path:
    """``root/name/SKILL.md`` with a ``# name`` heading; ``extra`` is raw frontmatter YAML."""
    return write_skill_folder(
        root / name, description=description, raw=extra, body=f"# {name}\n\n{body}\n"
    )


def make_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for name, desc in SKILLS.items():
        write_skill(ws / "skills", name, desc)
    return ws


def env_for(tmp: Path) -> dict[str, str]:
    """An isolated environment: own HOME and state dir, so nothing reads the user's files."""
    return {
        "HOME": str(tmp / "home"),
        "SKILLBOOK_STATE_DIR": str(tmp / "state"),
        "PATH": "/usr/bin:/bin",
    }
