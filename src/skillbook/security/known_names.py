"""Names of skills that impostors copy: OpenClaw's and skillbook's bundled skills and
the skills of the big public collections (Anthropic, OpenAI, superpowers, Vercel).

Input: nothing. Output: :data:`WELL_KNOWN_NAMES`. The lists are facts taken from
the spec (§1, bundled skills) and from the public corpus; the scanner also adds
the names of the bundled folder it runs with.
"""

from __future__ import annotations

#: OpenClaw's bundled skills: the baseline's 53 (spec §1) plus those added by 2026.9.6.
OPENCLAW_BUNDLED = frozenset(
    """
    1password apple-notes apple-reminders bear-notes blogwatcher blucli bluebubbles camsnap
    canvas clawhub coding-agent discord eightctl gemini gh-issues gifgrep github gog goplaces
    healthcheck himalaya imsg mcporter model-usage nano-pdf node-connect notion obsidian
    openai-whisper-api openai-whisper openhue oracle ordercli peekaboo sag session-logs
    sherpa-onnx-tts skill-creator slack songsee sonoscli spotify-player summarize
    taskflow-inbox-triage taskflow things-mac tmux trello video-frames voice-call wacli weather
    xurl add-model-provider browser-automation cloud-image-bake configure-channel control-ui
    crabbox-apps diagnose-gateway diagram-maker meme-maker node-inspect-debugger
    obsidian-vault-maintainer python-debugpy spike visualize wiki-maintainer
    """.split()
)
SKILLBOOK_BUNDLED = frozenset(
    "git-housekeeping github http-api jq python-project skill-author tmux weather".split()
)
PUBLIC_COLLECTIONS = frozenset(
    """
    algorithmic-art brand-guidelines canvas-design claude-api doc-coauthoring docx
    frontend-design internal-comms mcp-builder pdf pptx slack-gif-creator theme-factory
    web-artifacts-builder webapp-testing xlsx
    create-plan gh-address-comments gh-fix-ci linear notion-knowledge-capture
    notion-meeting-intelligence notion-research-documentation notion-spec-to-implementation
    skill-installer
    brainstorming dispatching-parallel-agents executing-plans finishing-a-development-branch
    receiving-code-review requesting-code-review subagent-driven-development
    systematic-debugging test-driven-development using-git-worktrees using-superpowers
    verification-before-completion writing-plans writing-skills
    deploy-to-vercel vercel-cli-with-tokens vercel-composition-patterns
    vercel-react-native-skills vercel-react-view-transitions web-design-guidelines
    react-best-practices
    """.split()
)
WELL_KNOWN_NAMES = OPENCLAW_BUNDLED | SKILLBOOK_BUNDLED | PUBLIC_COLLECTIONS
