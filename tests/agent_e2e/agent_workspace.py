"""The workspace both agent-loop integration tests drive: a weather skill and a stub curl."""

from __future__ import annotations

import os
import re
from pathlib import Path

from factories import skill_text, stub_bins, write_skill

from skillbook.pipeline.book import SkillBook

CANNED = "Shanghai: ☀️ +21°C"
COMMAND = 'curl -s "wttr.in/Shanghai?format=3"'
WEATHER = skill_text(
    "weather",
    "Current weather for a city.",
    metadata={"openclaw": {"requires": {"bins": ["curl"]}}},
    body=f'# Weather\n\nRun `{COMMAND}` (city in the URL) with exec, passing skill "weather", '
    "and report it.\n",
)


def weather_workspace(tmp: Path) -> tuple[dict[str, str], Path]:
    home, bins = tmp / "home", tmp / "bin"
    write_skill(home / "ws" / "skills" / "weather", text=WEATHER)
    stub_bins(bins, ["curl"], f"#!/bin/sh\necho '{CANNED}'\n")
    (tmp / "bundled").mkdir()
    env = {
        "HOME": str(home),
        "PATH": f"{bins}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp / "bundled"),
        "SKILLBOOK_STATE_DIR": str(tmp / "state"),
    }
    return env, home / "ws"


def location(book: SkillBook, name: str) -> str:
    found = re.search(rf"<name>{name}</name>.*?<location>(.*?)</location>", book.prompt, re.S)
    assert found is not None, book.prompt
    return found.group(1)
