"""Each adapter's page in ``docs/integrations`` runs as ``python file.py`` against a
scripted OpenAI-compatible server, and its agent reads the skill it was asked to use.

Kept apart from the adapters' own test files (the fast lane): those import their
frameworks at collection, several seconds of CPU for each pytest-xdist worker, and this
file's subprocesses are all the rest lane needs of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scripted_openai import GREETING, ScriptedOpenAI, greet_script, run_docs_example

pytestmark = pytest.mark.subprocess

#: Page -> the modules its example imports (the extra it documents).
PAGES = {
    "openai-agents.md": ("agents",),
    "langchain.md": ("langchain.agents", "langchain_openai"),
    "pydantic-ai.md": ("pydantic_ai",),
}


@pytest.mark.parametrize("page", list(PAGES))
def test_docs_example_runs(page: str, tmp_path: Path) -> None:
    for module in PAGES[page]:
        pytest.importorskip(module, reason=f"needs the extra {page} documents")
    seen: dict[str, str] = {}
    with ScriptedOpenAI(greet_script(seen)) as server:
        out = run_docs_example(page, tmp_path, server)
    assert out.strip() == GREETING
    assert "## Skills (mandatory)" in seen["system"] and "<name>greet</name>" in seen["system"]
    assert seen["user"] == 'Use the "greet" skill for this request.\n\nUser input:\nAda'
    assert seen["read"].startswith("---\nname: greet\n")
    assert len(server.requests) == 3
