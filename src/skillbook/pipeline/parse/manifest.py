"""The ``metadata.openclaw`` manifest of a skill (spec §2.5-2.6).

Input: the frontmatter string view (``metadata`` holds a JSON5 object as text).
Output: a :class:`~skillbook.model.SkillMetadata` with OpenClaw's typing rules
applied (wrong types ignored, lists normalised, unsafe install specs dropped), or
None, plus diagnostics saying what was ignored and why.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from skillbook import diagnostics as dg
from skillbook.base.js import JS_WHITESPACE, js_string, js_trim, load_json5
from skillbook.base.json5_errors import json5_problem
from skillbook.config.profile import FrontmatterRules
from skillbook.diagnostics import Diagnostic
from skillbook.model import InstallSpec, Requires, Skill, SkillMetadata
from skillbook.pipeline.parse.url import normalize_http_url

#: The manifest key OpenClaw reads, then the legacy keys skillbook also accepts.
MANIFEST_KEY = "openclaw"
LEGACY_MANIFEST_KEYS: tuple[str, ...] = ("clawdbot", "clawdis", "moltbot")
_MANIFEST_KEYS = (MANIFEST_KEY, *LEGACY_MANIFEST_KEYS)
#: The frontmatter field that holds the manifest JSON5.
DEFAULT_METADATA_KEY = "metadata"
INSTALL_KINDS: tuple[str, ...] = ("brew", "node", "go", "uv", "download")

#: JavaScript's ``\s`` / ``String.prototype.trim`` set (Python's differs: it has
#: U+001C-U+001F and U+0085 but lacks U+FEFF). As regex class content.
_HAS_JS_SPACE = re.compile(f"[{JS_WHITESPACE}]")

_BREW = re.compile(r"[A-Za-z0-9][A-Za-z0-9@+._/-]*")
_GO_MODULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._~+\-/]*(?:@[A-Za-z0-9][A-Za-z0-9._~+\-/]*)?")
_UV_PACKAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-\[\]=<>!~+,]*")
_NPM_NAME = re.compile(r"[a-z0-9][a-z0-9\-._~]*")
_NPM_SCOPED = re.compile(r"@[a-z0-9][a-z0-9\-._~]*/[a-z0-9][a-z0-9\-._~]*")
_SEMVER = re.compile(
    r"v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?"
)
_DIST_TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: The field an install spec of each kind cannot do without (``download``: ``url``).
_REQUIRED_FIELD = {"brew": "formula", "node": "package", "go": "module", "uv": "package"}


def normalize_string_list(value: Any) -> list[str]:
    """OpenClaw's ``normalizeStringList``: a list of strings, or a comma-separated string."""
    if value is None:
        return []  # the common case: the field is absent
    if isinstance(value, (list, tuple)):
        out = []
        for v in value:
            item = js_trim(v if type(v) is str else js_string(v))
            if item:
                out.append(item)
        return out
    if isinstance(value, str):
        return [item for item in map(js_trim, value.split(",")) if item]
    return []


def resolve_metadata(
    values: Mapping[str, str],
    data: Mapping[str, Any],
    *,
    path: Path | None = None,
    lines: Mapping[str, int] | None = None,
    key: str = DEFAULT_METADATA_KEY,
    rules: FrontmatterRules | None = None,
    loaded: Any = None,
) -> tuple[SkillMetadata | None, tuple[Diagnostic, ...]]:
    """Read ``metadata`` (a JSON5 object as a string) and normalise its manifest.

    ``key`` names the frontmatter field that holds the JSON5 text (OpenClaw's
    ``resolveOpenClawManifestBlock`` takes the same option). ``rules`` are a compat
    profile's (2026.9: ``install[].sha256`` validated, an empty ``skillKey`` ignored).
    ``loaded``: what parsing that text gives, when the caller already holds it (the
    parser does, for text it wrote from a value that reads back as itself); it is
    read, never changed.
    """
    del data  # the string view is what OpenClaw parses; kept for API symmetry
    raw = values.get(key)
    if not raw:
        return None, ()
    where: dict[str, Any] = {"path": path, "line": (lines or {}).get(key)}
    parsed, refused = _parsed_json5(raw, key, loaded, where)
    if refused is not None:
        return None, (refused,)
    manifest, manifest_key = _find_manifest(parsed)
    if manifest is None:
        return None, (
            dg.info(
                "parse.metadata-no-manifest",
                f"`{key}` has no `{MANIFEST_KEY}` object; the skill has no gates",
                **where,
            ),
        )
    diags: list[Diagnostic] = []
    if manifest_key != MANIFEST_KEY:
        diags.append(
            dg.info(
                "parse.metadata-legacy-key",
                f"gates were read from the legacy key `{manifest_key}`; OpenClaw reads only "
                f"`{MANIFEST_KEY}` (rename the key)",
                **where,
            )
        )
    obj: dict[str, Any] = manifest if isinstance(manifest, dict) else {}
    always, strings = _typed_fields(obj, manifest_key, rules, where, diags)
    requires_raw = obj.get("requires")
    if "setup" in obj:
        diags.append(_unused_field(manifest_key, "setup", where))
    if isinstance(requires_raw, dict) and "anyConfig" in requires_raw:
        diags.append(_unused_field(manifest_key, "requires.anyConfig", where))
    sha256 = rules is not None and rules.download_sha256
    install = _install_specs(obj.get("install"), sha256, where, diags)
    _check_shapes(obj, requires_raw, manifest_key, where, diags)
    requires: Requires | None = None
    if isinstance(requires_raw, (dict, list)):
        # An array stands for an empty object, as in JavaScript.
        req = requires_raw if isinstance(requires_raw, dict) else {}
        requires = Requires(
            _string_tuple(req.get("bins")),
            _string_tuple(req.get("anyBins")),
            _string_tuple(req.get("env")),
            _string_tuple(req.get("config")),
        )
    metadata = SkillMetadata(
        always,
        strings["emoji"],
        strings["homepage"],
        strings["skillKey"],
        strings["primaryEnv"],
        _string_tuple(obj.get("os")) or None,
        requires,
        tuple(install) if install else None,
        manifest_key,
        MappingProxyType(obj),
    )
    return metadata, tuple(diags)


def _parsed_json5(
    raw: str, key: str, loaded: Any, where: dict[str, Any]
) -> tuple[Any, Diagnostic | None]:
    """The ``metadata`` text parsed (``loaded`` when the caller holds it), or why not:
    not JSON5, or not an object or array."""
    try:
        parsed = loaded if loaded is not None else load_json5(raw)
    except ValueError as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        found = json5_problem(reason, raw)
        if found is not None:
            spot = f"line {found.line}, column {found.column}" if "\n" in raw else ""
            spot = spot or f"column {found.column}"
            reason = f"unexpected {found.unexpected} at {spot} of its value" + (
                f"; {found.hint}" if found.hint else ""
            )
        return None, dg.warning(
            "parse.metadata-invalid",
            f"`{key}` is not valid JSON5 ({reason}); the skill has no gates",
            **where,
        )
    if not isinstance(parsed, (dict, list)):
        return None, dg.warning(
            "parse.metadata-invalid",
            f"`{key}` must be a JSON object, not {js_string(parsed)!r}; the skill has no gates",
            **where,
        )
    return parsed, None


def _find_manifest(parsed: Any) -> tuple[Any, str]:
    """The first manifest key holding an object or array, and that key (None when none)."""
    if isinstance(parsed, dict):
        for name in _MANIFEST_KEYS:
            candidate = parsed.get(name)
            if isinstance(candidate, (dict, list)):
                return candidate, name
    return None, MANIFEST_KEY


def _typed_fields(
    obj: dict[str, Any],
    manifest_key: str,
    rules: FrontmatterRules | None,
    where: dict[str, Any],
    diags: list[Diagnostic],
) -> tuple[bool | None, dict[str, str | None]]:
    """``always`` and the string fields, each None (and reported) when of a wrong type."""
    always = obj.get("always")
    if always is not None and not isinstance(always, bool):
        diags.append(_field_type(manifest_key, "always", "true or false", where))
    strings: dict[str, str | None] = {}
    for name in ("emoji", "homepage", "skillKey", "primaryEnv"):
        value = obj.get(name)
        if value is not None and not isinstance(value, str):
            diags.append(_field_type(manifest_key, name, "a string", where))
        strings[name] = value if isinstance(value, str) else None
    if rules is not None and rules.skill_key_non_empty and not strings["skillKey"]:
        strings["skillKey"] = None
    return (always if isinstance(always, bool) else None), strings


def _check_shapes(
    obj: dict[str, Any],
    requires_raw: Any,
    manifest_key: str,
    where: dict[str, Any],
    diags: list[Diagnostic],
) -> None:
    """Report the gates OpenClaw ignores for their type (``requires: "git"``,
    ``bins: 5``, ``install: {...}``): the skill then looks ready with no word why."""
    if requires_raw is not None and not isinstance(requires_raw, (dict, list)):
        diags.append(_field_type(manifest_key, "requires", "an object", where))
    req = requires_raw if isinstance(requires_raw, dict) else {}
    for name in ("bins", "anyBins", "env", "config"):
        if not _is_string_list(req.get(name)):
            diags.append(_field_type(manifest_key, f"requires.{name}", "a list of strings", where))
    if not _is_string_list(obj.get("os")):
        diags.append(_field_type(manifest_key, "os", "a list of strings", where))
    install = obj.get("install")
    if install is not None and not isinstance(install, list):
        diags.append(_field_type(manifest_key, "install", "a list of install specs", where))


def _is_string_list(value: Any) -> bool:
    # What normalize_string_list reads: absent, a list, or a comma-separated string.
    return value is None or isinstance(value, (list, str))


def _install_specs(
    install_raw: Any, sha256: bool, where: dict[str, Any], diags: list[Diagnostic]
) -> list[InstallSpec]:
    """The valid install specs; each dropped one is reported with its reason."""
    install: list[InstallSpec] = []
    for index, entry in enumerate(install_raw if isinstance(install_raw, list) else ()):
        spec, reason = _install_spec(entry, sha256=sha256)
        if spec is not None and not sha256 and spec.kind == "download" and "sha256" in entry:
            diags.append(
                dg.info(
                    "parse.newer-field",
                    f"`install[{index}].sha256` is checked by OpenClaw 2026.9 "
                    "(`--compat openclaw-2026.9`); this profile keeps it unused",
                    **where,
                )
            )
        if spec is None:
            diags.append(
                dg.warning(
                    "parse.install-dropped",
                    f"`install[{index}]` was dropped: {reason}",
                    **where,
                )
            )
        else:
            install.append(spec)
    return install


def _string_tuple(value: Any) -> tuple[str, ...]:
    """:func:`normalize_string_list` as a tuple (an absent field without a list)."""
    return () if value is None else tuple(normalize_string_list(value))


def _unused_field(manifest_key: str, field_name: str, where: dict[str, Any]) -> Diagnostic:
    return dg.info(
        "parse.newer-field",
        f"`metadata.{manifest_key}.{field_name}` is kept but not used: neither "
        "OpenClaw 2026.4.12 nor 2026.9.6 reads it"
        + (" (a setup script never runs while loading)" if field_name == "setup" else ""),
        **where,
    )


def _field_type(manifest: str, name: str, wanted: str, where: dict[str, Any]) -> Diagnostic:
    return dg.warning(
        "parse.field-type", f"`metadata.{manifest}.{name}` must be {wanted}; ignored", **where
    )


def parse_install_spec(raw: Any, *, sha256: bool = False) -> InstallSpec | None:
    """OpenClaw's ``parseInstallSpec``: a validated spec, or None when it is dropped.

    ``sha256`` (2026.9): a download spec's ``sha256`` must be 64 hex digits."""
    return _install_spec(raw, sha256=sha256)[0]


_SHA256 = re.compile(r"[a-f0-9]{64}")


def _kept_sha256(raw: Any) -> str | None:
    value = raw.get("sha256")
    return (js_trim(value) or None) if isinstance(value, str) else None


def _install_spec(raw: Any, *, sha256: bool = False) -> tuple[InstallSpec | None, str]:
    if not isinstance(raw, dict):
        return None, "an install spec must be an object"
    kind = _install_kind(raw)
    if kind not in INSTALL_KINDS:
        return None, f"unknown kind {kind!r} (use one of {', '.join(INSTALL_KINDS)})"
    digest, problem = _checked_digest(raw, kind, sha256=sha256)
    if problem:
        return None, problem
    spec = _spec_of(raw, kind, digest, kept_sha256=not sha256 and "sha256" in raw)
    field_name = _REQUIRED_FIELD.get(kind, "url")
    if getattr(spec, field_name) is None:
        given = raw.get("cask" if field_name == "formula" and "formula" not in raw else field_name)
        if given is None:
            return None, f"a `{kind}` spec needs `{field_name}`"
        return None, f"unsafe or invalid `{field_name}` {js_string(given)!r} for kind `{kind}`"
    return spec, ""


def _checked_digest(raw: dict[str, Any], kind: str, *, sha256: bool) -> tuple[str | None, str]:
    """2026.9's check of a download's ``sha256``: (the digest, "") or (None, why it drops
    the spec); (None, "") when the profile or the spec has none to check."""
    if not (sha256 and kind == "download" and "sha256" in raw):
        return None, ""
    value = raw["sha256"]
    digest = js_trim(value).lower() if isinstance(value, str) else None
    if digest is None or not _SHA256.fullmatch(digest):
        return None, f"`sha256` {js_string(value)!r} is not 64 hexadecimal digits"
    return digest, ""


def _spec_of(
    raw: dict[str, Any], kind: str, digest: str | None, *, kept_sha256: bool
) -> InstallSpec:
    spec_id, label, archive, extract, target_dir = _optional_fields(raw)
    # Each check runs only for a field the spec has (an absent one is None, or () for a
    # list): a spec names three or four of the dozen (issue 22).
    formula = _safe_brew(raw["formula"]) if "formula" in raw else None
    if formula is None and "cask" in raw:
        formula = _safe_brew(raw["cask"])
    package_check = _PACKAGE_CHECKS.get(kind)
    return InstallSpec(
        kind,
        spec_id,
        label,
        _string_tuple(raw["bins"]) if "bins" in raw else (),
        _string_tuple(raw["os"]) if "os" in raw else (),
        formula,
        package_check(raw["package"]) if package_check and "package" in raw else None,
        _safe_go(raw["module"]) if "module" in raw else None,
        _safe_url(raw["url"]) if "url" in raw else None,
        archive,
        extract,
        _js_number_value(raw["stripComponents"]) if "stripComponents" in raw else None,
        target_dir,
        # 2026.9 reads and checks a download's sha256 (a bad one drops the spec); under
        # 2026.4 skillbook still keeps it (OpenClaw ignores it) for the installer to check.
        digest,
        _kept_sha256(raw) if kept_sha256 else None,
    )


def _install_kind(raw: dict[str, Any]) -> str:
    """``kind`` (else the older ``type``), trimmed and lower-cased; "" when neither is text."""
    kind_raw = raw.get("kind")
    if not isinstance(kind_raw, str):
        kind_raw = raw.get("type")
    return js_trim(kind_raw).lower() if isinstance(kind_raw, str) else ""


def _optional_fields(
    raw: dict[str, Any],
) -> tuple[str | None, str | None, str | None, bool | None, str | None]:
    """``id``, ``label``, ``archive``, ``extract`` and ``targetDir``, each None when
    absent or of a wrong type (``id`` and ``label`` also when empty)."""
    spec_id, label = raw.get("id"), raw.get("label")
    archive, extract, target_dir = raw.get("archive"), raw.get("extract"), raw.get("targetDir")
    return (
        spec_id if isinstance(spec_id, str) and spec_id else None,
        label if isinstance(label, str) and label else None,
        archive if isinstance(archive, str) else None,
        extract if isinstance(extract, bool) else None,
        target_dir if isinstance(target_dir, str) else None,
    )


def _js_number_value(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)  # JS has one number type: 2.0 is 2
    return value


def _trimmed(raw: Any) -> str | None:
    if not isinstance(raw, str):
        return None
    value = js_trim(raw)
    return value if value and not value.startswith("-") else None


def _safe_brew(raw: Any) -> str | None:
    value = _trimmed(raw)
    if value is None or "\\" in value or ".." in value or not _BREW.fullmatch(value):
        return None
    return value


def _safe_go(raw: Any) -> str | None:
    value = _trimmed(raw)
    if value is None or "\\" in value or "://" in value or not _GO_MODULE.fullmatch(value):
        return None
    return value


def _safe_uv(raw: Any) -> str | None:
    value = _trimmed(raw)
    if value is None or "\\" in value or "://" in value or not _UV_PACKAGE.fullmatch(value):
        return None
    return value


def _safe_npm(raw: Any) -> str | None:
    """A registry spec: ``name`` or ``name@<exact version | dist-tag>``, nothing else."""
    spec = _trimmed(raw)
    if spec is None or _HAS_JS_SPACE.search(spec):
        return None
    if "://" in spec or "#" in spec or ":" in spec:
        return None
    at = spec.rfind("@")
    name, selector = (spec[:at], spec[at + 1 :]) if at > 0 else (spec, None)
    pattern = _NPM_SCOPED if name.startswith("@") else _NPM_NAME
    if not pattern.fullmatch(name):
        return None
    if selector is None:
        return spec
    if not selector or "/" in selector or "\\" in selector:
        return None
    if _SEMVER.fullmatch(selector) or _DIST_TAG.fullmatch(selector):
        return spec
    return None


def _safe_url(raw: Any) -> str | None:
    if not isinstance(raw, str):
        return None
    value = js_trim(raw)
    if not value or _HAS_JS_SPACE.search(value):
        return None
    return normalize_http_url(value)


#: The package check of the kinds whose spec names a package.
_PACKAGE_CHECKS: dict[str, Callable[[Any], str | None]] = {"node": _safe_npm, "uv": _safe_uv}

__all__ = [
    "DEFAULT_METADATA_KEY",
    "INSTALL_KINDS",
    "LEGACY_MANIFEST_KEYS",
    "MANIFEST_KEY",
    "normalize_string_list",
    "parse_install_spec",
    "resolve_metadata",
]


def without_legacy_manifest(skill: Skill, keys: tuple[str, ...] = (MANIFEST_KEY,)) -> Skill:
    """Drop gates read from a manifest key OpenClaw does not read (``keys``: the compat
    profile's; 2026.4 reads only ``openclaw``, 2026.9 also ``clawdbot``)."""
    meta = skill.metadata
    if meta is None or meta.manifest_key in keys:
        return skill
    return dataclasses.replace(skill, parsed=dataclasses.replace(skill.parsed, metadata=None))
