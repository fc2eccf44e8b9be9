"""A parsed SKILL.md as bytes and back, for the persistent parse cache.

Input: a :class:`~skillbook.model.ParsedSkillFile`. Output: compact msgpack bytes
(:func:`encode_parsed`), and the equal value again (:func:`decode_parsed`). The wire
types below mirror the model field for field with *exact* types: ``int`` stays
``int`` and ``float`` stays ``float`` (an install spec's ``stripComponents`` of 2 must
not come back as 2.0), mappings keep their key order, and ``-0.0``, NaN and infinity
survive. A value msgpack cannot carry (an integer beyond 64 bits, a lone surrogate
in a string) makes :func:`encode_parsed` return None: that file is simply not cached.

Never does I/O; :mod:`skillbook.pipeline.cache.parse_store` owns the files.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

import msgspec

from skillbook.diagnostics import Diagnostic, Severity
from skillbook.model import (
    CommandDispatch,
    Frontmatter,
    InstallSpec,
    InvocationPolicy,
    ParsedSkillFile,
    Requires,
    SkillMetadata,
)

__all__ = ["decode_parsed", "encode_parsed"]


class _Diag(msgspec.Struct, array_like=True):
    code: str
    severity: str
    message: str
    path: str | None
    line: int | None
    skill: str | None


class _Spec(msgspec.Struct, array_like=True):
    kind: str
    id: str | None
    label: str | None
    bins: tuple[str, ...]
    os: tuple[str, ...]
    formula: str | None
    package: str | None
    module: str | None
    url: str | None
    archive: str | None
    extract: bool | None
    strip_components: int | float | None
    target_dir: str | None
    sha256: str | None
    declared_sha256: str | None


class _Meta(msgspec.Struct, array_like=True):
    always: bool | None
    emoji: str | None
    homepage: str | None
    skill_key: str | None
    primary_env: str | None
    os: tuple[str, ...] | None
    #: bins, anyBins, env, config
    requires: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None
    install: tuple[_Spec, ...] | None
    manifest_key: str
    raw: dict[str, Any]


class _Parsed(msgspec.Struct, array_like=True):
    values: dict[str, str]
    data: dict[str, Any]
    yaml_ok: bool
    lines: dict[str, int]
    body: str
    body_line: int
    metadata: _Meta | None
    user_invocable: bool
    disable_model_invocation: bool
    #: tool name, kind, arg mode
    dispatch: tuple[str, str, str] | None
    diagnostics: tuple[_Diag, ...]
    had_bom: bool
    has_frontmatter: bool
    invalid: bool


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(_Parsed)
_SEVERITY = {s.value: s for s in Severity}
# Four policies cover every file: share them as parse does.
_POLICIES = {
    (user, model): InvocationPolicy(user_invocable=user, disable_model_invocation=model)
    for user in (True, False)
    for model in (True, False)
}


def _spec_out(s: InstallSpec) -> _Spec:
    return _Spec(
        s.kind,
        s.id,
        s.label,
        s.bins,
        s.os,
        s.formula,
        s.package,
        s.module,
        s.url,
        s.archive,
        s.extract,
        s.strip_components,
        s.target_dir,
        s.sha256,
        s.declared_sha256,
    )


def _meta_out(m: SkillMetadata | None) -> _Meta | None:
    if m is None:
        return None
    r = m.requires
    return _Meta(
        m.always,
        m.emoji,
        m.homepage,
        m.skill_key,
        m.primary_env,
        m.os,
        None if r is None else (r.bins, r.any_bins, r.env, r.config),
        None if m.install is None else tuple(_spec_out(s) for s in m.install),
        m.manifest_key,
        dict(m.raw),
    )


def encode_parsed(parsed: ParsedSkillFile) -> bytes | None:
    """The bytes of ``parsed``, or None when msgpack cannot carry one of its values."""
    fm = parsed.frontmatter
    inv = parsed.invocation
    dispatch = parsed.dispatch
    wire = _Parsed(
        dict(fm.values),
        dict(fm.data),
        fm.yaml_ok,
        dict(fm.lines),
        parsed.body,
        parsed.body_line,
        _meta_out(parsed.metadata),
        inv.user_invocable,
        inv.disable_model_invocation,
        None if dispatch is None else (dispatch.tool_name, dispatch.kind, dispatch.arg_mode),
        tuple(
            _Diag(d.code, d.severity.value, d.message, _path_out(d.path), d.line, d.skill)
            for d in parsed.diagnostics
        ),
        parsed.had_bom,
        parsed.has_frontmatter,
        parsed.invalid,
    )
    try:
        return _ENCODER.encode(wire)
    except (OverflowError, UnicodeError, TypeError, ValueError):
        return None


def _path_out(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _spec_in(s: _Spec) -> InstallSpec:
    return InstallSpec(
        s.kind,
        s.id,
        s.label,
        s.bins,
        s.os,
        s.formula,
        s.package,
        s.module,
        s.url,
        s.archive,
        s.extract,
        s.strip_components,
        s.target_dir,
        s.sha256,
        s.declared_sha256,
    )


def _meta_in(m: _Meta | None) -> SkillMetadata | None:
    if m is None:
        return None
    r = m.requires
    return SkillMetadata(
        m.always,
        m.emoji,
        m.homepage,
        m.skill_key,
        m.primary_env,
        m.os,
        None if r is None else Requires(r[0], r[1], r[2], r[3]),
        None if m.install is None else tuple(_spec_in(s) for s in m.install),
        m.manifest_key,
        MappingProxyType(m.raw),
    )


def decode_parsed(data: bytes | memoryview | msgspec.Raw) -> ParsedSkillFile:
    """The value :func:`encode_parsed` wrote; raises ``msgspec.DecodeError`` (a
    ``ValueError``) when the bytes are not such a value."""
    w = _DECODER.decode(data)
    dispatch = w.dispatch
    return ParsedSkillFile(
        Frontmatter(
            MappingProxyType(w.values),
            MappingProxyType(w.data),
            w.yaml_ok,
            MappingProxyType(w.lines),
        ),
        w.body,
        w.body_line,
        _meta_in(w.metadata),
        _POLICIES[w.user_invocable, w.disable_model_invocation],
        None if dispatch is None else CommandDispatch(dispatch[0], dispatch[1], dispatch[2]),
        tuple(
            Diagnostic(
                d.code,
                _SEVERITY[d.severity],
                d.message,
                None if d.path is None else Path(d.path),
                d.line,
                d.skill,
            )
            for d in w.diagnostics
        ),
        w.had_bom,
        w.has_frontmatter,
        w.invalid,
    )
