"""``behavior_fingerprint``: the same procedure gives the same hash, whatever its inputs.

Input: the steps of a procedure (tool, skill, arguments), the run's parameters and the
folders of its skills. Output: the normalised steps (one line each) and their hash.

The normalisation, step by step (``normalise_step``):

1. A step is the tool's name, the skill it ran as (``exec[weather]``), and its
   arguments, keys sorted. Only steps that ran and did not fail count, in order, at
   most :data:`MAX_STEPS` of them (OpenPocket's 25): failed attempts are pitfalls,
   not behaviour. Identical consecutive steps count once.
2. In every string value: the run's parameter values (what the user asked about:
   quoted text, paths, numbers, names, see :mod:`skillbook.experience.params`) become
   ``<param>``, except where a value is only a word inside one of the folders below; a
   skill's folder becomes ``<skill:NAME>``; paths under temporary folders (``/tmp``,
   ``/var/tmp``, ``/var/folders``, ``/dev/shm``, ``$TMPDIR``) become ``<tmp>``;
   the home folder becomes ``~``; dates and times (ISO 8601, ``HH:MM[:SS]``) become
   ``<time>``; UUIDs and hexadecimal ids of 8 or more characters become ``<id>``; any
   remaining run of digits becomes ``<n>``; runs of whitespace become one space.
3. Numbers that are arguments (``timeout``) become ``<n>``; booleans stay.

The fingerprint is the first :data:`FINGERPRINT_CHARS` hex characters of the SHA-256
of ``v1`` and the normalised steps, one per line. Nothing here does I/O.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from skillbook.experience.params import Parameter, find_value

__all__ = [
    "FINGERPRINT_CHARS",
    "MAX_STEPS",
    "behavior_fingerprint",
    "mask_text",
    "normalise_step",
]

MAX_STEPS: Final = 25
FINGERPRINT_CHARS: Final = 12
_VERSION: Final = "v1"

# Only a path that starts there: the `/tmp` of `/home/tmp/...` is a home's folder.
_TMP: Final = re.compile(
    r"(?<![\w.~/-])(?:/private)?/(?:tmp|var/tmp|var/folders|dev/shm)(?:/[^\s\"'`;|&<>()]*)?"
)
_DATETIME: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?\b"
)
_UUID: Final = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
_HEX_ID: Final = re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b")
_DIGITS: Final = re.compile(r"\d+")
_SPACE: Final = re.compile(r"\s+")
_MASKS: Final = ("<param>", "<tmp>", "<time>", "<id>", "<n>")


def mask_text(
    text: str,
    params: Sequence[Parameter] = (),
    *,
    skills: Mapping[str, str] | None = None,
    home: str | None = None,
    tmpdir: str | None = None,
) -> str:
    """One string normalised by rule 2 of the module docstring."""
    out = _mask_params(text, params, _fixed_spans(text, skills, home, tmpdir))
    for name, folder in sorted((skills or {}).items(), key=lambda kv: len(kv[1]), reverse=True):
        if folder:
            out = out.replace(folder.rstrip("/"), f"<skill:{name}>")
    if tmpdir and tmpdir.rstrip("/") not in ("", "/"):
        out = re.sub(re.escape(tmpdir.rstrip("/")) + r"(?:/[^\s\"'`;|&<>()]*)?", "<tmp>", out)
    out = _TMP.sub("<tmp>", out)
    if home and home.rstrip("/") not in ("", "/"):
        out = out.replace(home.rstrip("/"), "~")
    out = _DATETIME.sub("<time>", out)
    out = _UUID.sub("<id>", out)
    out = _HEX_ID.sub("<id>", out)
    out = _DIGITS.sub("<n>", out)
    return _SPACE.sub(" ", out).strip()


def normalise_step(
    tool: str,
    arguments: Mapping[str, Any],
    *,
    skill: str | None = None,
    params: Sequence[Parameter] = (),
    skills: Mapping[str, str] | None = None,
    home: str | None = None,
    tmpdir: str | None = None,
) -> str:
    """One step as a line: ``exec[weather] command=curl -s "wttr.in/<param>?format=<n>"``."""
    head = f"{tool}[{skill}]" if skill else tool
    parts: list[str] = []
    for key in sorted(arguments):
        if key == "skill":
            continue
        value = _normalise_value(arguments[key], params, skills, home, tmpdir)
        parts.append(f"{key}={value}")
    return " ".join([head, *parts])


def behavior_fingerprint(steps: Iterable[str]) -> str:
    """The hash of normalised steps (see :func:`normalise_step`)."""
    kept: list[str] = []
    for step in steps:
        if kept and kept[-1] == step:
            continue
        kept.append(step)
        if len(kept) >= MAX_STEPS:
            break
    digest = hashlib.sha256("\n".join([_VERSION, *kept]).encode("utf-8")).hexdigest()
    return digest[:FINGERPRINT_CHARS]


def _normalise_value(
    value: Any,
    params: Sequence[Parameter],
    skills: Mapping[str, str] | None,
    home: str | None,
    tmpdir: str | None,
) -> str:
    if isinstance(value, str):
        return mask_text(value, params, skills=skills, home=home, tmpdir=tmpdir)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return "<n>"
    if isinstance(value, Mapping):
        inner = {
            str(k): _normalise_value(v, params, skills, home, tmpdir)
            for k, v in sorted(value.items())
        }
        return json.dumps(inner, sort_keys=True, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return json.dumps(
            [_normalise_value(v, params, skills, home, tmpdir) for v in value], ensure_ascii=False
        )
    return type(value).__name__


def _fixed_spans(
    text: str, skills: Mapping[str, str] | None, home: str | None, tmpdir: str | None
) -> list[tuple[int, int]]:
    """Where the run's known folders (skills, temporary, home) stand in ``text``."""
    spans: list[tuple[int, int]] = []
    literals = [f.rstrip("/") for f in (skills or {}).values() if f.rstrip("/")]
    if home and home.rstrip("/") not in ("", "/"):
        literals.append(home.rstrip("/"))
    for literal in literals:
        at = text.find(literal)
        while at >= 0:
            spans.append((at, at + len(literal)))
            at = text.find(literal, at + 1)
    if tmpdir and tmpdir.rstrip("/") not in ("", "/"):
        pattern = re.escape(tmpdir.rstrip("/")) + r"(?:/[^\s\"'`;|&<>()]*)?"
        spans += [m.span() for m in re.finditer(pattern, text)]
    spans += [m.span() for m in _TMP.finditer(text)]
    return spans


def _mask_params(text: str, params: Sequence[Parameter], fixed: Sequence[tuple[int, int]]) -> str:
    """``text`` with each whole-word occurrence of a parameter value as ``<param>``.

    Longer values first, and never an occurrence that starts *inside* a known folder: a
    short value (``2``) may also be a word of a path (``/tmp/pytest-2/…``), and masking it
    there would break the folder's own mask in one run and not in the next, so the same
    task got two fingerprints (a path that *starts* with the folder is still a parameter).
    """
    taken: list[tuple[int, int]] = []
    for param in sorted(params, key=lambda p: len(p.value), reverse=True):
        value = param.value
        if not value or value in _MASKS:
            continue
        at = find_value(text, value)
        while at >= 0:
            end = at + len(value)
            inside = any(start < at < stop for start, stop in fixed)
            if not inside and not any(s < end and at < e for s, e in taken):
                taken.append((at, end))
            at = find_value(text, value, at + 1)
    out: list[str] = []
    last = 0
    for start, stop in sorted(taken):
        out += [text[last:start], "<param>"]
        last = stop
    out.append(text[last:])
    return "".join(out)
