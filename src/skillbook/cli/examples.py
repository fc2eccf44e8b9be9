"""The ``Examples:`` block at the end of each ``--help``.

A command module may set its own ``epilog`` starting with ``Examples:``; otherwise
:func:`epilog` gives the one listed here under the command's name (``""`` is the
group). Each example is a command line and what it does.
"""

from __future__ import annotations

from typing import Final

EXAMPLES: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "": (
        ("skillbook", "every skill, its status and source (same as `list`)"),
        ("skillbook check", "why a skill is not ready, not loaded or not in the prompt"),
        ("skillbook info weather", "one skill: requirements, install options, API key"),
        ("skillbook prompt --section", "the skills section exactly as the model gets it"),
        ("skillbook doctor", "which config, state dir and workspace are used, and why"),
        ("skillbook validate --mode strict skills/", "lint skills against the standard"),
        ("skillbook list -c ~/.openclaw/openclaw.json -a ops", "another config and agent"),
    ),
    "list": (
        ("skillbook list -v", "add what each skill is missing"),
        ("skillbook list --eligible --json | jq -r '.skills[].name'", "names of ready skills"),
    ),
    "info": (
        ("skillbook info weather", "status, requirements and how to set it up"),
        ("skillbook info weather --json", "the whole status entry"),
    ),
    "check": (
        ("skillbook check", "the audit: ready, missing, shadowed, cut, not loaded"),
        ("skillbook check --fail-on warning", "exit 1 in CI when any warning or error exists"),
    ),
    "prompt": (
        ("skillbook prompt", "the catalog as it goes into the system prompt"),
        ("skillbook prompt --section --read-tool read_file", "the whole section, own tool name"),
    ),
    "validate": (
        ("skillbook validate skills/", "every skill under skills/, as the loader finds them"),
        ("skillbook validate --mode strict skills/weather", "one skill, Agent Skills rules"),
        ("skillbook validate --json skills/ > report.json", "machine-readable results"),
    ),
    "watch": (
        ("skillbook watch", "print changes (and why) until Ctrl-C"),
        ("skillbook watch --once --timeout 60", "wait for one change, at most a minute"),
    ),
    "run": (
        ('skillbook run "What is the weather in Paris?"', "one request, answered by a model"),
        ('skillbook run "/weather Paris"', "a slash command (no model if it dispatches)"),
        ('skillbook run --no-learn "Clean up /tmp/build"', "record it, but draft no skill"),
    ),
    "chat": (
        ("skillbook chat", "a conversation that uses the skills"),
        ("skillbook chat --base-url http://localhost:11434/v1 -m llama3.2", "with Ollama"),
    ),
    "serve": (
        ("skillbook serve", "MCP over stdio, for a host that starts skillbook"),
        ("skillbook serve --transport http --port 8000", "streamable HTTP on 127.0.0.1"),
    ),
    "commands": (
        ("skillbook commands", "the slash commands and what each runs"),
        ("skillbook commands --channel telegram", "what fits Telegram's menu, and what not"),
    ),
    "select": (
        ('skillbook select "merge these two PDFs"', "the ranking and what each backend gave"),
        ('skillbook select "quel temps demain ?" --json', "the same as JSON"),
    ),
    "eval": (
        ("skillbook eval select --queries q.jsonl --split test", "recall and abstention"),
        ("skillbook eval trigger --queries q.jsonl --yes -j 4", "does the model read it?"),
    ),
    "doctor": (
        ("skillbook doctor", "every path and file in effect, and why"),
        ("skillbook doctor --json", "the same as JSON"),
    ),
    "new": (
        ("skillbook new release-notes", "skills/release-notes/SKILL.md in the workspace"),
        ('skillbook new deploy --mode strict --description "Deploy the app."', "strict"),
    ),
    "sessions": (
        ("skillbook sessions list", "recorded runs and chat turns, newest first"),
        ("skillbook sessions show last", "what the last run did, step by step"),
    ),
    "sessions list": (
        ("skillbook sessions list -n 5", "the five newest sessions"),
        ("skillbook sessions list --json | jq -r '.sessions[].id'", "their ids"),
    ),
    "sessions show": (
        ("skillbook sessions show last", "the newest session"),
        ("skillbook sessions show 20260105-1430 --json", "one session (by id prefix) as JSON"),
    ),
    "drafts": (
        ("skillbook drafts list", "skills learned from runs, waiting for review"),
        ("skillbook drafts promote 20260105-143000-count-words", "into skills/auto"),
    ),
    "drafts list": (
        ("skillbook drafts list", "drafts waiting for review"),
        ("skillbook drafts list --all --json", "also promoted and rejected ones, as JSON"),
    ),
    "drafts show": (
        ("skillbook drafts show 20260105-1430", "the draft's SKILL.md and its gate check"),
        ("skillbook drafts show 20260105-1430 --replay", "its replay helper"),
    ),
    "drafts diff": (
        ("skillbook drafts diff 20260105-1430", "what its last update changed"),
        ("skillbook drafts diff 20260105-1430 --with wordcount", "against a similar skill"),
    ),
    "drafts promote": (
        ("skillbook drafts promote 20260105-1430", "gate, then skills/auto and scripts/auto"),
        ("skillbook drafts promote 20260105-1430 --accept-risk", "acknowledge its risk marker"),
    ),
    "drafts reject": (
        ('skillbook drafts reject 20260105-1430 -r "duplicate of wordcount"', "archive it"),
    ),
    "drafts learn": (
        ("skillbook drafts learn last", "draft a skill from the newest session"),
        ("skillbook drafts learn 20260105-1430 --json", "what it did, as JSON"),
    ),
    "usage": (
        ("skillbook usage", "reads and runs per skill, pins, stale skills"),
        ("skillbook usage --pin deploy", "never report deploy as stale"),
    ),
    "completion": (
        ('eval "$(skillbook completion bash)"', "enable completion in this bash"),
        ("skillbook completion fish > ~/.config/fish/completions/skillbook.fish", "fish"),
    ),
    "setup": (
        ("skillbook setup jq --dry-run", "the scan and the exact commands, nothing run"),
        ("skillbook setup jq --yes", "install without asking (CI, containers)"),
        ("skillbook setup jq --yes --fallback apt", "use apt-get where brew is missing"),
    ),
    "search": (
        ("skillbook search pdf", "skills on the registry whose name or text matches"),
        ("skillbook search --limit 5 --json pdf", "the registry's answer as JSON"),
        (
            "SKILLBOOK_REGISTRY_URL=https://hub.example.com skillbook search pdf",
            "your team's registry (for every command)",
        ),
    ),
    "install": (
        ("skillbook install weather", "from the registry (doctor says which) into skills/weather"),
        ("skillbook install @steipete/weather --version 1.2.0", "one owner's, one version"),
        ("skillbook install anthropics/skills/skills/pdf", "a folder of a GitHub repository"),
        ("skillbook install https://host/repo.git --skill a --skill b", "two skills of a repo"),
        ("skillbook install ./my-skill --global", "a local folder, into the managed skills"),
        ("skillbook install skill.zip", "an archive (zip or tar.gz), checked like downloads"),
        ("skillbook install weather --site https://hub.example", "the registry the site names"),
        ("skillbook install ./my-skill --for claude-code --for codex", "where those agents look"),
        ("skillbook install owner/repo --skill pdf --for cursor -g", "one skill, Cursor's home"),
    ),
    "update": (
        ("skillbook update --all", "every installed skill; locally edited ones are left alone"),
        ("skillbook update weather --force", "replace it even though you edited it"),
        ("skillbook update --for claude-code", "what skills-lock.json records, for Claude Code"),
    ),
    "remove": (
        ("skillbook remove weather", "delete the skill and its lock entry"),
        ("skillbook uninstall weather", "the same (also: skillbook rm weather)"),
        ("skillbook remove my-skill --for claude-code", "from where Claude Code looks"),
    ),
    "use": (
        ("skillbook use weather", "the prompt handing one skill to an agent"),
        ("skillbook use my-skill --for claude-code | claude", "from Claude Code's folder, piped"),
    ),
    "restore": (
        ("skillbook restore --list", "the folders update --force kept"),
        ("skillbook restore weather", "bring back the edited weather it replaced"),
    ),
    "skills": (
        ("skillbook skills list", "OpenClaw's spelling of skillbook list"),
        ("skillbook skills install weather", "= skillbook install weather"),
    ),
    "verify": (
        ("skillbook verify", "which installed skills were edited since they were installed"),
        ("skillbook verify weather --json", "the files added, removed or changed"),
        ("skillbook verify --remote", "also ask each skill's registry to verify its version"),
    ),
    "pin": (("skillbook pin weather --reason 'audited 1.2.0'", "update --all leaves it at 1.2.0"),),
    "unpin": (("skillbook unpin weather", "let update change it again"),),
}


def epilog(name: str) -> str | None:
    """The ``Examples:`` block for a command (``""``: the group), or ``None``."""
    examples = EXAMPLES.get(name)
    if not examples:
        return None
    # "\b" keeps click from rewrapping the block.
    lines = ["\b", "Examples:"]
    lines += [f"  {command}\n      {what}" for command, what in examples]
    return "\n".join(lines)
