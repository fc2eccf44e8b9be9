"""Helpers of the selection tests: a small workspace of real SKILL.md files, the shipped models."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

SKILLS: Mapping[str, str] = {
    "weather": "Current weather and forecasts for any city: rain, temperature, wind.",
    "pdf-merge": "Combine multiple PDF files into one or split a PDF into pages.",
    "trello": "Manage Trello boards, lists and cards via the Trello REST API.",
    "hue-lights": "Control Philips Hue lights and scenes: on, off, brightness, colour.",
    "git-worktrees": "Set up a git worktree for isolated feature work on a new branch.",
    "stripe": "Stripe payments: customers, subscriptions, invoices and refunds.",
}


def write_skill(root: Path, name: str, description: str, extra: str = "", body: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n\n{body}\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return folder


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
