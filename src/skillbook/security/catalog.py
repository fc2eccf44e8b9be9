"""Every rule the scanner has: stable id, family, default severity, title and fix.

Input: nothing. Output: :data:`RULES`, the one table that the finding builder (for
the fix text), the SARIF writer (rule metadata), the docs and the tests read.
Rule *logic* lives in the family modules (``rules_*.py``); this module only names.
"""

from __future__ import annotations

from dataclasses import dataclass

from skillbook.security.findings import RULESET_OPENCLAW, RULESET_SKILLBOOK, Severity


@dataclass(frozen=True, slots=True)
class RuleInfo:
    id: str
    family: str
    severity: Severity
    title: str
    fix: str
    ruleset: str = RULESET_SKILLBOOK


_C, _H, _M, _L, _I = (
    Severity.CRITICAL,
    Severity.HIGH,
    Severity.MEDIUM,
    Severity.LOW,
    Severity.INFO,
)

_RULES = (
    # OpenClaw's own scanner (spec §8.3 step 4), same ids; severities as OpenClaw has them.
    RuleInfo("dangerous-exec", "openclaw", _C, "Shell command execution (child_process)",
             "Check what the script runs; prefer fixed argv arrays over shell strings.",
             RULESET_OPENCLAW),
    RuleInfo("dynamic-code-execution", "openclaw", _C, "Dynamic code execution (eval / new Function)",
             "Replace eval/new Function with explicit code; never evaluate fetched or decoded text.",
             RULESET_OPENCLAW),
    RuleInfo("crypto-mining", "openclaw", _C, "Crypto-mining reference",
             "Remove the miner; a skill has no reason to mine.", RULESET_OPENCLAW),
    RuleInfo("suspicious-network", "openclaw", _M, "WebSocket to a non-standard port",
             "Check the endpoint; document why the skill talks to it.", RULESET_OPENCLAW),
    RuleInfo("potential-exfiltration", "openclaw", _M, "File read combined with a network send",
             "Check which files are sent where; send only what the task needs.", RULESET_OPENCLAW),
    RuleInfo("obfuscated-code", "openclaw", _M, "Hex or large base64 payload",
             "Ship readable source; decode the payload and review it.", RULESET_OPENCLAW),
    RuleInfo("env-harvesting", "openclaw", _C, "process.env combined with a network send",
             "Read only the variables the skill declares, and never send them elsewhere.",
             RULESET_OPENCLAW),
    # skillbook: code that runs what it downloads
    RuleInfo("remote-fetch-exec", "fetch-exec", _H, "Downloaded code piped into an interpreter",
             "Do not run remote scripts; use a structured install spec (metadata.openclaw.install) "
             "with a sha256, or download, review and pin the script first."),
    RuleInfo("encoded-exec", "fetch-exec", _C, "Decoded (base64/hex) payload executed",
             "Remove the encoded payload; ship the plain commands so they can be reviewed."),
    RuleInfo("obfuscated-command", "obfuscation", _H,
             "Command name hidden (quote-split, escaped, look-alike letters, ${IFS})",
             "Write commands plainly; a hidden command name only serves to slip past review."),
    RuleInfo("assembled-exec", "obfuscation", _H,
             "Command glued together from variables and run by eval/sh -c/exec",
             "Run a fixed command; do not build the command line from pieces and evaluate it."),
    RuleInfo("raw-ip-url", "untrusted-source", _H, "URL on a raw IP address",
             "Use a named host under HTTPS that the user can verify, or remove the download."),
    RuleInfo("paste-site-url", "untrusted-source", _H,
             "URL on a paste, file-drop, tunnel or shortener host",
             "Host files in the skill or in a reviewed release with a sha256; paste sites change "
             "under you."),
    RuleInfo("lookalike-host", "untrusted-source", _H,
             "URL whose host imitates another name with look-alike letters (an IDN homograph)",
             "Write the host in plain ASCII (or its xn-- form) and check it is the one you mean; "
             "a look-alike name only serves to pass for a trusted one."),
    RuleInfo("password-archive", "evasion", _C, "Password-protected archive",
             "Ship files in clear: passwords on archives only serve to hide them from scanners."),
    RuleInfo("gatekeeper-bypass", "evasion", _H,
             "Disables Gatekeeper, quarantine, SIP or antivirus",
             "Never tell users to disable OS protections; ship signed binaries or install via a "
             "package manager."),
    RuleInfo("reverse-shell", "remote-access", _C, "Reverse shell",
             "Remove it: a reverse shell hands control of the machine to a remote host."),
    RuleInfo("credential-exfil", "exfiltration", _C, "Credential files read and sent over the network",
             "Never read SSH keys, cloud credentials, browser data, keychains or wallets; "
             "ask the user for the one secret the skill needs."),
    RuleInfo("credential-access", "exfiltration", _L, "Reads a credential file or store",
             "Declare the secret in metadata (requires.env / primaryEnv) instead of reading "
             "credential files."),
    RuleInfo("credential-prompt", "exfiltration", _H,
             "Asks for the user's password in a dialog (osascript, zenity, PromptForCredential)",
             "Never ask for the login password; let the system's own prompt (sudo, Keychain) "
             "ask when it is needed."),
    RuleInfo("env-exfil", "exfiltration", _C, "The whole environment sent over the network",
             "Send only the variables the request needs; never dump the environment."),
    RuleInfo("persistence", "persistence", _M,
             "Installs itself to run again (cron, shell rc, launchd, systemd, authorized_keys)",
             "Skills should not install autostart entries; document the step and let the user "
             "do it."),
    # skillbook: harm to the machine, quieter leaks, poisoned installs, the agent turned
    RuleInfo("destructive-command", "destruction", _C,
             "Deletes the home folder, the root or a disk; fork bomb; deletes backups",
             "Remove it: a skill never needs to delete folders it did not create, format disks "
             "or delete backups; delete only paths inside the skill's own working folder."),
    RuleInfo("privilege-escalation", "privilege", _C,
             "Gives itself root (setuid shell, sudoers/passwd edit, privileged container, kernel module)",
             "Remove it; if a step needs root, document the exact command and let the user run it "
             "with sudo themselves."),
    RuleInfo("command-hijack", "hijack", _H,
             "Replaces or wraps commands (sudo alias, LD_PRELOAD, git hooks path, hosts file, root CA)",
             "Remove it: a skill must not change what sudo, git, the resolver or TLS trust do for the "
             "rest of the system."),
    RuleInfo("defense-disable", "evasion", _C,
             "Turns off firewalls, SELinux/AppArmor, auditing, AMSI or endpoint protection",
             "Never switch protections off; if a port or permission is needed, document the narrow "
             "rule and let the user add it."),
    RuleInfo("trace-wiping", "anti-forensics", _H, "Clears shell history or system logs",
             "Remove it: history and logs are how users find out what ran."),
    RuleInfo("inline-exec", "obfuscation", _M,
             "Interpreter one-liner (node -e, python -c, perl -e) that runs a shell command",
             "Put the command in a script file, or run it directly, so it can be reviewed."),
    RuleInfo("secret-exfil", "exfiltration", _H,
             "Sends a secret (API key, token) to a host other than its vendor's, or data to a request catcher",
             "Send a key only to the API it belongs to, in its Authorization header; never to webhooks, "
             "request catchers or third-party hosts."),
    RuleInfo("dns-exfil", "exfiltration", _H, "Puts data from this machine into DNS names",
             "Remove the lookup: DNS queries built from local data leak it past firewalls."),
    RuleInfo("cloud-metadata", "exfiltration", _H,
             "Reads the cloud instance metadata service (169.254.169.254)",
             "A skill has no reason to read the machine's cloud credentials; use the SDK's own "
             "credential chain if the task truly needs cloud access."),
    RuleInfo("clipboard-capture", "exfiltration", _H,
             "Reads the clipboard where data is sent, or swaps in a wallet address",
             "Read the clipboard only when the user asks, and never send it anywhere."),
    RuleInfo("credential-dump", "exfiltration", _H,
             "Dumps keychains, browser secrets, password hashes or Windows credentials",
             "Remove it; ask the user for the one secret the skill needs (requires.env)."),
    RuleInfo("surveillance", "spyware", _H,
             "Keylogger, or screen/camera/microphone capture that is sent away",
             "Remove it: a skill must not record keystrokes, and captures belong on the user's disk, "
             "taken when they ask."),
    RuleInfo("crypto-miner", "resource-abuse", _C, "Cryptocurrency miner or mining pool (any language)",
             "Remove the miner; a skill has no reason to mine."),
    RuleInfo("typosquat-package", "supply-chain", _H,
             "Installs a package whose name is a misspelling of a popular one",
             "Check the name on the registry and install the real package (e.g. requests, not reqeusts)."),
    RuleInfo("agent-tamper", "agent", _H,
             "Writes the agent's settings/MCP config/skills, or turns its approvals off",
             "A skill must not change the agent's permissions, servers or other skills; document "
             "settings and let the user change them."),
    RuleInfo("invisible-unicode", "hidden-text", _M,
             "Invisible characters (zero-width, bidi controls, Unicode tags)",
             "Remove the invisible characters; they hide text from reviewers but not from models."),
    RuleInfo("prompt-injection", "prompt-injection", _H,
             "Instructions that override the agent or hide actions from the user",
             "Remove the override/concealment wording; a skill must not tell the model to "
             "ignore its instructions or keep things from the user."),
    RuleInfo("hidden-instructions", "prompt-injection", _H,
             "Instructions hidden in HTML comments or invisible elements",
             "Put instructions in visible text, or delete them."),
    RuleInfo("markdown-exfil", "exfiltration", _H, "Markdown image or link that leaks data in its URL",
             "Remove URLs that carry secrets or conversation data in the query string."),
    RuleInfo("homoglyph-name", "impersonation", _H, "Skill name mixes scripts or uses look-alike letters",
             "Use a plain ASCII name (a-z, 0-9, hyphens)."),
    RuleInfo("name-impersonation", "impersonation", _M, "Skill name imitates a well-known skill",
             "Pick a distinct name; install well-known skills from their real source."),
    RuleInfo("symlink-escape", "filesystem", _C, "Symbolic link pointing outside the skill folder",
             "Replace the link with a copy of the file, or remove it."),
    RuleInfo("broken-symlink", "filesystem", _L, "Symbolic link to nothing",
             "Remove the link or add its target to the skill."),
    RuleInfo("binary-file", "binaries", _H, "Executable, library or bytecode file",
             "Ship source (scripts) instead, or install the tool through an install spec."),
    RuleInfo("archive-file", "binaries", _M,
             "Archive inside the skill (zip and tar members are scanned, within limits)",
             "Ship the files unpacked so they can be reviewed and scanned."),
    RuleInfo("archive-unscanned", "limits", _M,
             "Archive (or part of one) not scanned: limits hit, unsupported or unreadable",
             "Ship the files unpacked so they can be reviewed and scanned."),
    RuleInfo("archive-path-escape", "filesystem", _H,
             "Archive member that would unpack outside its folder (zip-slip)",
             "Use relative member names without '..'; rebuild the archive."),
    RuleInfo("file-too-large", "limits", _H, "File over the scan size limit (not scanned)",
             "Keep skill files under 1 MiB; move data out of the skill."),
    RuleInfo("too-many-files", "limits", _H, "More files than the scan limit (the rest not scanned)",
             "Keep skills small (under 500 files); move vendored trees out."),
    RuleInfo("unreadable-file", "limits", _M, "File could not be read",
             "Fix the file's permissions or remove it."),
    RuleInfo("skipped-folder", "limits", _I, "Folder not scanned (.git or node_modules)",
             "Remove vendored folders from the skill, or scan them separately."),
)  # fmt: skip

#: Rule id -> its description.
RULES: dict[str, RuleInfo] = {r.id: r for r in _RULES}
