"""One redactor for everything the experience engine writes or prints.

Input: every secret value skillbook knows of (:func:`known_secrets`). Output: a
:class:`Redactor` that replaces each of them with ``***`` in a string, a JSON-like
value, a :class:`~skillbook.experience.record.SessionRecord` or a
:class:`~skillbook.experience.draft.Draft`. Nothing here writes.

The known secrets (values shorter than :data:`MIN_SECRET_CHARS` are left alone, or
``1`` would eat every digit; a command's own skill secrets are kept whatever their
length, as ``exec`` does):

* ``skills.entries.*.apiKey``: plain strings, ``${ENV}`` templates and ``env`` or
  ``file`` SecretRefs (an ``exec`` SecretRef is not run just to learn its value: when a
  command uses it, the command's secrets join the redactor);
* ``skills.entries.*.env`` values that are secrets: the key looks secret (``*_KEY``,
  ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*AUTH*``, ``*CREDENTIAL*``…), is the skill's
  ``primaryEnv``, or is refused by the skill environment rules (blocked), or the value
  looks like a token (20+ characters of letters and digits, no ``/`` or space). Other
  values (``UNITS=metric``) stay readable: the replay helper sets them;
* the values of the environment's variables with sensitive names
  (``SENSITIVE_ENV_PATTERNS``: ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``*_TOKEN``,
  ``CLAWHUB_TOKEN``…) and of the blocked credential variables (``DATABASE_URL``,
  ``AWS_ACCESS_KEY_ID``…), in the environment commands start from and the process's;
* registry tokens in the ``clawhub`` CLI's config files;
* the API key of the model the agent talks to, and any value given as ``extra``.

A URL's password is a secret of its own. Each value is also found **URL-encoded**, **base64-encoded** (the whole value, standard
and URL-safe alphabets) and **split**: with quotes, backslashes or white space between
its characters (``"sk-ab""cd…"``, a value wrapped over two lines). Every occurrence of
any of them is covered, also where two secrets overlap.
"""

from __future__ import annotations

import base64
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, quote_plus, unquote, urlsplit

from skillbook.config.file import Config, SecretRef
from skillbook.runtime import SecretError
from skillbook.runtime.env import ALWAYS_BLOCKED_ENV_KEYS, is_always_blocked, is_sensitive
from skillbook.runtime.secrets import REDACTED, SecretLookup, SecretResolver, template_ref

if TYPE_CHECKING:
    from skillbook.experience.draft import Draft
    from skillbook.experience.record import SessionRecord
    from skillbook.model import Skill
    from skillbook.pipeline.book import SkillBook

__all__ = [
    "CREDENTIAL_ENV_KEYS",
    "MIN_SECRET_CHARS",
    "Redactor",
    "book_redactor",
    "known_secrets",
    "secret_name",
]

#: Shorter values are not redacted (``1`` would eat every digit).
MIN_SECRET_CHARS: Final = 4
#: Values this long or longer are also found split by quotes, backslashes or white space
#: (up to SPLIT_MAX_CHARS: a longer one, such as a certificate, is only found whole).
SPLIT_MIN_CHARS: Final = 8
SPLIT_MAX_CHARS: Final = 512
#: At most this many such characters between two characters of a split value.
_GAP: Final = 8
#: Blocked host variables that hold credentials but match no sensitive-name pattern.
CREDENTIAL_ENV_KEYS: Final = frozenset(
    {
        "AWS_ACCESS_KEY_ID",
        "AWS_SECURITY_TOKEN",
        "AZURE_CLIENT_SECRET",
        "DATABASE_URL",
        "REDIS_URL",
        "MONGODB_URI",
        "AMQP_URL",
        "NPM_TOKEN",
        "NODE_AUTH_TOKEN",
        "GITLAB_TOKEN",
    }
)
#: Names of configured variables that hold secrets (broader than the host patterns:
#: a skill's configured ``MAPS_KEY`` is as secret as an ``API_KEY``).
_SECRET_NAME: Final = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|PWD|PASSPHRASE|CREDENTIAL|AUTH(?!OR)|COOKIE|SESSION|PRIVATE"
    r"|SIGNATURE|DSN",
    re.IGNORECASE,
)
_TOKENISH: Final = re.compile(r"(?=[^/\s]*[A-Za-z])(?=[^/\s]*\d)[^/\s]{20,}\Z")
#: The placeholder key local model servers get; not a secret.
PLACEHOLDER_KEYS: Final = frozenset({"not-needed"})


def secret_name(key: str) -> bool:
    """Whether a *configured* variable's name says it holds a secret."""
    return is_sensitive(key) or key.upper() in CREDENTIAL_ENV_KEYS or bool(_SECRET_NAME.search(key))


class Redactor:
    """Replaces every known secret value (and its encodings) with ``***``."""

    def __init__(self, values: Iterable[str] = (), *, min_chars: int = MIN_SECRET_CHARS) -> None:
        self._values: set[str] = set()
        #: One pattern per form of each value (compiled once: ``add`` runs per command).
        self._patterns: dict[str, re.Pattern[str]] = {}
        self._memo: dict[str, str] = {}
        self.add(values, min_chars=min_chars)

    @property
    def values(self) -> frozenset[str]:
        return frozenset(self._values)

    def __bool__(self) -> bool:
        return bool(self._values)

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and value in self._values

    def add(self, values: Iterable[str], *, min_chars: int = MIN_SECRET_CHARS) -> None:
        """Also redact ``values`` (and their encodings) from now on."""
        given = list(values)
        # A URL's password is a secret of its own (DATABASE_URL=postgres://u:PASSWORD@h/db).
        given += [p for v in given if (p := _url_password(v)) is not None]
        fresh = {v for v in given if v and len(v) >= min_chars and v not in self._values}
        fresh -= PLACEHOLDER_KEYS
        if not fresh:
            return
        self._values |= fresh
        for form in sorted({f for value in fresh for f in _forms(value)}):
            if form not in self._patterns:
                self._patterns[form] = _pattern(form)
        self._memo.clear()

    def text(self, text: str) -> str:
        """``text`` with every occurrence of a secret (in any of its forms) as ``***``."""
        if not self._patterns or not text:
            return text
        hit = self._memo.get(text)
        if hit is not None:
            return hit
        spans: list[tuple[int, int]] = []
        for pattern in self._patterns.values():
            spans += [m.span() for m in pattern.finditer(text)]
        out = text
        if spans:
            pieces: list[str] = []
            last = 0
            for start, end in _merged(spans):
                pieces += [text[last:start], REDACTED]
                last = end
            pieces.append(text[last:])
            out = "".join(pieces)
        if len(self._memo) > 4096:
            self._memo.clear()
        self._memo[text] = out
        return out

    def value(self, value: Any) -> Any:
        """A JSON-like value with every string (keys too) redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def record(self, record: SessionRecord) -> SessionRecord:
        """``record`` with every string redacted (its path kept)."""
        from skillbook.experience.record import SessionRecord

        if not self:
            return record
        lines = [self.value(line) for line in record.to_lines()]
        return replace(SessionRecord.from_lines(lines, record.path), path=record.path)

    def draft(self, draft: Draft) -> Draft:
        """``draft`` with every string redacted."""
        from skillbook.experience.draft import Draft

        if not self:
            return draft
        return Draft.from_json(self.value(draft.to_json()))


def known_secrets(
    config: Config,
    env: Mapping[str, str] | None = None,
    *,
    home: Path | str | None = None,
    skills: Iterable[Skill] = (),
    resolver: SecretLookup | None = None,
    extra: Iterable[str] = (),
) -> Redactor:
    """A redactor of every secret skillbook knows of (the module docstring lists them).

    ``env`` is the environment commands start from and ``${ENV}`` refs read (the
    process's is always read too); ``home`` finds the registry CLI's config files.
    """
    environ: Mapping[str, str] = os.environ if env is None else env
    found: list[str] = list(extra)
    for base in (environ, os.environ):
        found += [v.strip() for k, v in base.items() if _host_secret(k)]
    found += _config_secrets(config, environ, skills, resolver)
    found += _registry_tokens(environ, home)
    return Redactor(found)


def book_redactor(
    book: SkillBook, *, env: Mapping[str, str] | None = None, extra: Iterable[str] = ()
) -> Redactor:
    """:func:`known_secrets` for a loaded book (``env``: the process's by default)."""
    return known_secrets(book.config, env, home=book.paths.home, skills=book.skills, extra=extra)


def model_secrets(model: object) -> list[str]:
    """The API key a chat model's client holds (OpenAI's and Anthropic's keep ``api_key``)."""
    found = []
    for holder in (model, getattr(model, "client", None)):
        key = getattr(holder, "api_key", None)
        if isinstance(key, str) and key.strip():
            found.append(key.strip())
    return found


# ---------------------------------------------------------------------- sources


def _host_secret(key: str) -> bool:
    return is_sensitive(key) or key.upper() in CREDENTIAL_ENV_KEYS


def _config_secrets(
    config: Config,
    env: Mapping[str, str],
    skills: Iterable[Skill],
    resolver: SecretLookup | None,
) -> list[str]:
    lookup: SecretLookup = resolver if resolver is not None else SecretResolver(config, env=env)
    primary: dict[str, str] = {}
    for skill in skills:
        meta = skill.metadata
        if meta is not None and meta.primary_env:
            primary[skill.skill_key] = meta.primary_env.strip()
    found: list[str] = []
    for key, entry in config.skills.entries.items():
        api_key = _api_key(entry.api_key, f"skills.entries.{key}.apiKey", lookup)
        if api_key:
            found.append(api_key)
        for name, value in entry.env.items():
            name = name.strip()
            if not isinstance(value, str) or not value.strip():
                continue
            if (
                secret_name(name)
                or name == primary.get(key)
                or is_always_blocked(name)
                or name.upper() in ALWAYS_BLOCKED_ENV_KEYS
                or _TOKENISH.match(value.strip())
            ):
                found.append(value.strip())
    return found


def _api_key(value: str | SecretRef | None, key: str, resolver: SecretLookup) -> str | None:
    if value is None:
        return None
    ref = value if isinstance(value, SecretRef) else template_ref(value)
    if ref is None:
        return value.strip() if isinstance(value, str) else None
    if ref.source not in ("env", "file"):
        return None  # an exec provider is not run just for this (see the module docstring)
    try:
        return resolver.resolve(ref, key=key).reveal()
    except SecretError:
        return None  # unresolvable: no value to leak


def _registry_tokens(env: Mapping[str, str], home: Path | str | None) -> list[str]:
    from skillbook.distribution.registry.endpoint import config_tokens

    where = Path(home) if home is not None else Path(env.get("HOME") or Path.home())
    try:
        return config_tokens(env, where, sys.platform)
    except (OSError, ValueError):
        return []


# ---------------------------------------------------------------------- matching


def _url_password(value: str) -> str | None:
    if "://" not in value or "@" not in value:
        return None
    try:
        password = urlsplit(value.strip()).password
    except ValueError:
        return None
    return unquote(password) if password else None


def _forms(value: str) -> set[str]:
    """The value and the encodings it is also found in."""
    raw = value.encode("utf-8")
    forms = {
        value,
        quote(value, safe=""),
        quote_plus(value, safe=""),
        base64.b64encode(raw).decode("ascii").rstrip("="),
        base64.urlsafe_b64encode(raw).decode("ascii").rstrip("="),
    }
    return {f for f in forms if len(f) >= min(len(value), MIN_SECRET_CHARS)}


def _pattern(form: str) -> re.Pattern[str]:
    """``form`` literally, or for a long one with a few quotes, backslashes or white space
    between its characters; ``%2F`` also as ``%2f``."""
    if not SPLIT_MIN_CHARS <= len(form) <= SPLIT_MAX_CHARS:
        return re.compile(re.escape(form))
    noise = "".join(c for c in " \t\r\n\"'\\" if c not in form)
    gap = f"[{re.escape(noise)}]{{0,{_GAP}}}" if noise else ""
    pieces: list[str] = []
    i = 0
    while i < len(form):
        hexa = re.fullmatch(r"%[0-9A-F]{2}", form[i : i + 3])
        if hexa is not None:
            pieces.append("%(?i:" + re.escape(form[i + 1 : i + 3]) + ")")
            i += 3
        else:
            pieces.append(re.escape(form[i]))
            i += 1
    return re.compile(gap.join(pieces))


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
