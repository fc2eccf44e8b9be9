"""The name of the scanner's code and patterns, which keys cached scan results.

Input: nothing (the rule modules as imported). Output: :func:`rules_version`, a
string that changes when :data:`SCANNER_VERSION` is bumped or any rule's pattern,
keyword list or severity changes. It lives below both :mod:`~skillbook.security.cache`
(which files its entries under it) and :mod:`~skillbook.security.scanner` (which
fills the cache), so neither imports the other for it.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

from skillbook.security import (
    context,
    deobfuscate,
    envflow,
    hosts,
    mask,
    rules_agent,
    rules_exec,
    rules_exfil,
    rules_leak,
    rules_names,
    rules_obfuscation,
    rules_openclaw,
    rules_persist,
    rules_sources,
    rules_system,
    rules_text,
)
from skillbook.security.catalog import RULES

sha256: Any
try:  # CPython's own SHA-256: the same digest as hashlib's, without loading OpenSSL
    sha256 = importlib.import_module("_sha256").sha256  # (~6 ms of CPU per scan process)
except ImportError:  # pragma: no cover - other Pythons
    from hashlib import sha256

#: Bumped when a change to the code (not the patterns) alters results.
#: 3: API credentials sent through a raw socket or a webhook are critical; frontmatter
#: values and words inside inline code no longer demote a finding as an example.
SCANNER_VERSION = 3

#: Every module whose patterns decide findings (the scanner's rule families and their
#: helpers; tests/security/test_layout.py checks that none is left out).
MODULES = (rules_exec, rules_exfil, rules_persist, rules_sources, rules_text, rules_obfuscation,
           rules_system, rules_leak, rules_agent, deobfuscate, envflow, context, hosts, mask,
           rules_names, rules_openclaw)  # fmt: skip


def _feed(digest: Any, value: object) -> None:
    """Add a module-level value to ``digest``: patterns and strings, also inside the
    tables of tuples most rules keep (``(words, pattern, ...)`` rows)."""
    if isinstance(value, re.Pattern):
        digest.update(value.pattern.encode("utf-8", "surrogatepass"))
    elif isinstance(value, str):
        digest.update(value.encode("utf-8", "surrogatepass"))
    elif isinstance(value, frozenset) and all(isinstance(v, str) for v in value):
        digest.update("\x00".join(sorted(value)).encode("utf-8", "surrogatepass"))
    elif isinstance(value, tuple):
        for item in value:
            _feed(digest, item)
            digest.update(b"\x00")
    elif isinstance(value, bool | int | float):
        digest.update(repr(value).encode())


@functools.cache
def rules_version() -> str:
    """Names the scanner code and every pattern: a change invalidates cached results.
    Computed once per process (the modules it reads do not change while it runs)."""
    digest = sha256(str(SCANNER_VERSION).encode())
    for module in MODULES:
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern | frozenset | tuple):
                digest.update(name.encode())
                _feed(digest, value)
    for rule in RULES.values():
        digest.update(f"{rule.id}:{rule.severity}".encode())
    return f"v{SCANNER_VERSION}-{digest.hexdigest()[:12]}"
