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
    rules_exec,
    rules_exfil,
    rules_names,
    rules_obfuscation,
    rules_openclaw,
    rules_persist,
    rules_sources,
    rules_text,
)
from skillbook.security.catalog import RULES

sha256: Any
try:  # CPython's own SHA-256: the same digest as hashlib's, without loading OpenSSL
    sha256 = importlib.import_module("_sha256").sha256  # (~6 ms of CPU per scan process)
except ImportError:  # pragma: no cover - other Pythons
    from hashlib import sha256

#: Bumped when a change to the code (not the patterns) alters results.
SCANNER_VERSION = 2

_MODULES = (rules_exec, rules_exfil, rules_persist, rules_sources, rules_text, rules_obfuscation,
            deobfuscate, envflow, context, hosts, mask, rules_names, rules_openclaw)  # fmt: skip


@functools.cache
def rules_version() -> str:
    """Names the scanner code and every pattern: a change invalidates cached results.
    Computed once per process (the modules it reads do not change while it runs)."""
    digest = sha256(str(SCANNER_VERSION).encode())
    for module in _MODULES:
        for value in vars(module).values():
            if isinstance(value, re.Pattern):
                digest.update(value.pattern.encode("utf-8", "surrogatepass"))
            elif isinstance(value, frozenset | tuple) and all(isinstance(v, str) for v in value):
                digest.update("\x00".join(sorted(value)).encode("utf-8", "surrogatepass"))
    for rule in RULES.values():
        digest.update(f"{rule.id}:{rule.severity}".encode())
    return f"v{SCANNER_VERSION}-{digest.hexdigest()[:12]}"
