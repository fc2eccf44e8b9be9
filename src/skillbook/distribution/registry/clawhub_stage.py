"""Fetch a registry skill into a staged tree: choose the version, ask the registry whether
the release may be installed, download it (or follow its GitHub hand-off), unpack it.

Input: a :class:`~skillbook.distribution.registry.refs.RegistryRef` and a
:class:`~skillbook.distribution.registry.staging.StageContext`. Output: a
:class:`~skillbook.distribution.registry.staging.Staged` tree with what its ``origin.json`` and lock
entry will say, or a :class:`~skillbook.distribution.registry.RegistryError` that left the
workdir as it was.

The steps (clawhub-api.md §3, OpenClaw 2026.9's ``performClawHubSkillInstall`` and the
``clawhub`` CLI's install, merged):

1. ``GET /api/v1/skills/<slug>``: not found, moderation (malware blocks; suspicious
   needs ``--force``), the latest version or the ``--tag``'s;
2. no version named and none latest: ``GET …/install``, which gives an archive URL or a
   GitHub hand-off (``{repo, path, commit}``);
3. an archive release goes through the registry's security verdict
   (:mod:`skillbook.distribution.registry.trust`): blocked is refused always, "review required"
   without ``--force``, pending/stale scans are warnings, a registry without the route
   is noted and the install goes on (skillbook's own scan still runs); official skills
   on https://clawhub.ai skip it, as in OpenClaw 2026.9;
4. download: ``/api/v1/download`` or the resolved ``downloadUrl``; a GitHub hand-off is
   ``<codeload>/<owner>/<repo>/zip/<commit>`` (``CLAWHUB_GITHUB_CODELOAD_BASE_URL``
   overrides the host), fetched without the token, and its folder ``path`` is the skill;
5. ``GET …/verify`` for the snapshot OpenClaw 2026.9 keeps in the lock entry (a failure
   is a warning, a registry without the route records none).

A ``skills-sh:<owner>/<repo>/<slug>`` reference skips 1-3: ``/install?reference=…`` must
give a GitHub commit in trust state ``not-scanned-by-clawhub`` (a warning says so), the
folder must hash to the resolver's ``contentHash`` (the ``clawhub`` CLI's check, which
OpenClaw 2026.9 does not make), and ``requestedReference``/``trustState`` are recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final
from urllib.parse import quote, urlsplit

from skillbook.distribution import InstallError
from skillbook.distribution.archives.layout import ROOT_MARKERS, find_marker, find_skill_root
from skillbook.distribution.fingerprint import github_content_hash, integrity
from skillbook.distribution.netguard import NetworkPolicy
from skillbook.distribution.registry import RegistryError, RegistryNotFound, api
from skillbook.distribution.registry.client import Downloaded, RegistryClient
from skillbook.distribution.registry.endpoint import DEFAULT_REGISTRY
from skillbook.distribution.registry.lockfile import CLAWHUB_DIR
from skillbook.distribution.registry.refs import RegistryRef
from skillbook.distribution.registry.staging import StageContext, Staged, adopt, scratch, unpack
from skillbook.distribution.registry.trust import TrustVerdict, check_release, fetch_verification
from skillbook.distribution.registry.trust import verification_snapshot as snapshot

__all__ = [
    "CODELOAD_VARS",
    "DEFAULT_CODELOAD",
    "SKILLS_SH_LABEL",
    "SKILLS_SH_TRUST",
    "stage_registry",
]

DEFAULT_CODELOAD: Final = "https://codeload.github.com"
#: OpenClaw 2026.9's trust state and label of a skills.sh install.
SKILLS_SH_TRUST: Final = "not-scanned-by-clawhub"
SKILLS_SH_LABEL: Final = "Not scanned by ClawHub"
#: Where GitHub hand-offs are downloaded from (OpenClaw 2026.9 and the CLI; the CLI also
#: reads the second).
CODELOAD_VARS: Final = (
    "CLAWHUB_GITHUB_CODELOAD_BASE_URL",
    "OPENCLAW_CLAWHUB_GITHUB_CODELOAD_BASE_URL",
)


def stage_registry(
    ctx: StageContext,
    ref: RegistryRef,
    *,
    version: str | None,
    tag: str | None,
    registry: str | None = None,
    allow_suspicious: bool = False,
) -> Staged:
    """Download ``ref`` from the registry (``registry``: a tracked skill's recorded one)."""
    warnings: list[str] = []
    with ctx.client(registry) as client:
        if ref.reference is not None:
            owner, remote, target = None, ref.slug, _skills_sh(client, ref, version, tag)
            warnings.append(f"{ref.reference}: not scanned by {client.endpoint.label}")
        else:
            detail = api.fetch_detail(client, ref.slug, owner=ref.owner)
            _moderation(detail, ref.slug, allow_suspicious, client.endpoint.label)
            owner = ref.owner or detail.owner
            remote = ref.slug if ref.owner else detail.slug
            target = _target(client, detail, remote, owner, version, tag)
            if target.github is None:
                official = client.endpoint.base_url == DEFAULT_REGISTRY and (
                    detail.official or target.official
                )
                verdict = check_release(
                    client, remote, target.version, owner=owner, official=official
                )
                warnings += _judge(
                    verdict, ref.slug, target.version, allow_suspicious, client.endpoint.label
                )
        with scratch(ctx, ref.slug) as work:
            archive = work / f"{ref.slug}.zip"
            got = _download(ctx, client, ref.slug, remote, owner, target, archive)
            unpack(archive, work / "x", "zip", ctx.limits)
            root = _github_root(work / "x", target.github) if target.github else None
            staged = adopt(ctx, ref.slug, root or find_skill_root(work / "x"))
        if ref.reference is not None and target.github is not None:
            _check_content_hash(staged, target.github, warnings)
        verification = _verification(client, remote, owner, ref.reference, target, warnings)
    head: dict[str, Any] = {"version": 1, "registry": client.endpoint.base_url, "slug": remote}
    tail: dict[str, Any] = {}
    if owner:
        head["ownerHandle"] = tail["ownerHandle"] = owner
    if ref.reference is not None:
        # OpenClaw 2026.9's record of a skills.sh install (its update re-resolves it).
        tracked = {"requestedReference": ref.reference, "trustState": SKILLS_SH_TRUST}
        head.update(tracked)
        tail.update(tracked)
    extra: dict[str, Any] = {}
    source_url = target.github.source_url if target.github else None
    source_url = source_url or _verified_source_url(verification)
    if source_url:
        extra["sourceUrl"] = source_url
    extra["artifact"] = {
        "kind": "archive",
        "sha256": got.sha256,
        "integrity": integrity(got.sha256),
    }
    return Staged(
        name=ref.slug,
        path=staged,
        folder=CLAWHUB_DIR,
        key=ref.slug,
        version=target.version,
        kind="clawhub",
        origin_head=head,
        lock_tail=tail,
        warnings=warnings,
        origin_extra=extra,
        verification=verification,
    )


def _target(
    client: RegistryClient,
    detail: api.SkillDetail,
    remote: str,
    owner: str | None,
    version: str | None,
    tag: str | None,
) -> api.InstallTarget:
    """``--version``, else the ``--tag``'s, else the latest, else what ``/install`` says."""
    chosen = version
    if chosen is None and tag is not None:
        chosen = detail.tags.get(tag)
        if chosen is None:
            raise RegistryError("registry.no-version", f'Skill "{remote}" has no tag "{tag}".')
    chosen = chosen or detail.latest_version
    if chosen:
        return api.InstallTarget(chosen, None)
    return api.install_target(client, remote, owner=owner)


def _skills_sh(
    client: RegistryClient, ref: RegistryRef, version: str | None, tag: str | None
) -> api.InstallTarget:
    """A skills.sh reference: ``/install?reference=…`` must give an unscanned GitHub commit
    (OpenClaw 2026.9's rule); there is no version to choose."""
    if version or tag:
        raise RegistryError(
            "registry.invalid-ref", "--version is not supported for skills-sh references."
        )
    target = api.install_target(client, ref.slug, reference=ref.reference)
    if target.github is None or target.trust_state != SKILLS_SH_TRUST:
        raise RegistryError(
            "registry.no-version",
            f'Skill "{ref.slug}" did not resolve to an unscanned, commit-pinned GitHub source.',
        )
    return target


def _check_content_hash(staged: Path, github: api.GitHubSource, warnings: list[str]) -> None:
    """The ``clawhub`` CLI's check of a skills.sh folder against the resolver's hash."""
    from skillbook.distribution.registry.skillfiles import list_skill_files

    if github.content_hash is None:
        warnings.append("the registry sent no contentHash for this skills.sh folder")
        return
    files = list_skill_files(staged).hashes
    rows = [(path, (staged / path).stat().st_size, digest) for path, digest in files.items()]
    if github_content_hash(rows) != github.content_hash:
        from skillbook.distribution.swap import remove_tree

        remove_tree(staged)
        raise RegistryError(
            "registry.content-mismatch",
            "Downloaded skills.sh folder hash does not match the registry resolver's approved hash",
        )


def _moderation(detail: api.SkillDetail, slug: str, allow_suspicious: bool, where: str) -> None:
    if detail.malware_blocked:
        raise RegistryError(
            "registry.moderation-blocked",
            "This skill has been flagged as malware and cannot be installed.",
        )
    if detail.suspicious and not allow_suspicious:
        raise RegistryError(
            "registry.moderation-suspicious",
            f'"{slug}" is flagged for security review on {where}; use --force to install it anyway',
        )


def _judge(verdict: TrustVerdict, slug: str, version: str, force: bool, where: str) -> list[str]:
    """Refuse a blocked release (always) or one that needs review (without ``force``);
    the warnings to show otherwise. ``where`` names the registry that judged."""
    label = f"{slug}@{version}"
    if verdict.disposition == "blocked":
        raise RegistryError(
            "registry.trust-blocked",
            f"{where} blocked this release of {label}; it was not downloaded: {verdict.summary()}",
        )
    if verdict.disposition == "review-required":
        if not force:
            raise RegistryError(
                "registry.trust-review",
                f"The security audit of {label} on {where} needs review: {verdict.summary()}. "
                "Read it; --force installs it anyway.",
            )
        return [f"installing {label} despite the audit on {where}: {verdict.summary()}"]
    if verdict.disposition == "review-recommended":
        return [f"the audit of {label} on {where}: {verdict.summary()}"]
    if verdict.disposition == "unavailable":
        return [f"{verdict.note} for {label}; relying on skillbook's own scan"]
    return []


def _download(
    ctx: StageContext,
    client: RegistryClient,
    slug: str,
    remote: str,
    owner: str | None,
    target: api.InstallTarget,
    archive: Path,
) -> Downloaded:
    github, url = target.github, target.download_url
    if github is not None:
        url = _codeload_url(ctx.env, github)
        ctx.say(f"Downloading {slug}@{target.version[:12]} from GitHub…")
    else:
        ctx.say(f"Downloading {slug}@{target.version} from {client.endpoint.label}…")
    if url is not None:
        _check_elsewhere(client, url, ctx.network)
    with archive.open("wb") as sink:
        try:
            if github is not None and url is not None:
                label = f"{github.repo}@{github.commit[:12]}"
                return client.download(
                    url, None, sink, label=label, progress=ctx.progress, auth=False
                )
            return api.download_archive(
                client, remote, target.version, sink, owner=owner, url=url, progress=ctx.progress
            )
        except RegistryNotFound:
            raise RegistryNotFound(
                "registry.not-found",
                f'Version "{target.version}" of skill "{slug}" not found on '
                f"{client.endpoint.label}.",
            ) from None


def _codeload_url(env: dict[str, str], github: api.GitHubSource) -> str:
    base = next((env[n].strip() for n in CODELOAD_VARS if env.get(n, "").strip()), "")
    base = base.rstrip("/") or DEFAULT_CODELOAD
    repo = "/".join(quote(part, safe="") for part in github.repo.split("/"))
    return f"{base}/{repo}/zip/{github.commit}"


def _github_root(extracted: Path, github: api.GitHubSource) -> Path:
    """The skill folder of a GitHub archive: ``path`` inside its single top folder."""
    import os
    import stat

    top = extracted / "package" if (extracted / "package").is_dir() else extracted
    if top is extracted and find_marker(extracted) is None:
        dirs = [n for n in os.listdir(extracted) if stat.S_ISDIR(os.lstat(extracted / n).st_mode)]
        if len(dirs) != 1:
            raise RegistryError(
                "registry.archive-layout", f"unexpected archive layout (dirs: {', '.join(dirs)})"
            )
        top = extracted / dirs[0]
    folder = top
    for part in github.path.split("/") if github.path else ():
        folder = folder / part
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                raise OSError
        except OSError:
            raise RegistryError(
                "registry.archive-layout", f"GitHub archive did not contain {github.path}"
            ) from None
    if find_marker(folder) is None:
        raise RegistryError(
            "registry.archive-layout",
            f"{github.path or 'the repository root'} holds none of {', '.join(ROOT_MARKERS)}",
        )
    return folder


def _check_elsewhere(client: RegistryClient, url: str, network: NetworkPolicy) -> None:
    """A URL on another host than the registry passes the download guard
    (``skills.install.policy``), as any URL a server hands out would."""
    from skillbook.distribution.netguard import resolve_pinned

    target, base = urlsplit(client.url(url) if "://" not in url else url), urlsplit(client.url(""))
    if (target.scheme, target.netloc) == (base.scheme, base.netloc):
        return
    if target.scheme not in ("http", "https") or not target.hostname:
        raise RegistryError("install.download-failed", f"Invalid download URL: {url}")
    port = target.port or (443 if target.scheme == "https" else 80)
    try:
        resolve_pinned(target.hostname, port, network)
    except InstallError as exc:
        raise RegistryError(exc.code, f"{exc.message} ({url})") from None


def _verification(
    client: RegistryClient,
    slug: str,
    owner: str | None,
    reference: str | None,
    target: api.InstallTarget,
    warnings: list[str],
) -> dict[str, Any] | None:
    version = None if target.github else target.version
    try:
        envelope = fetch_verification(
            client, slug, version=version, owner=owner, reference=reference
        )
        return snapshot(envelope)
    except RegistryNotFound:
        return None
    except RegistryError as exc:
        warnings.append(f"Skill verification for {slug} failed: {exc.message}")
        return None


def _verified_source_url(verification: dict[str, Any] | None) -> str | None:
    """The GitHub tree URL of a server-resolved GitHub import (OpenClaw 2026.9)."""
    import re

    provenance = (verification or {}).get("provenance")
    if not isinstance(provenance, dict):
        return None
    if provenance.get("source") != "server-resolved-github-import":
        return None
    repo, commit = provenance.get("repo"), provenance.get("commit")
    if not isinstance(repo, str) or not isinstance(commit, str):
        return None
    parts = repo.strip().split("/")
    if len(parts) != 2 or not all(re.fullmatch(r"[A-Za-z0-9._-]+", p) for p in parts):
        return None
    if not re.fullmatch(r"[0-9a-fA-F]{40}", commit.strip()):
        return None
    raw_path = provenance.get("path")
    sub = [
        p
        for p in (raw_path if isinstance(raw_path, str) else "").replace("\\", "/").split("/")
        if p
    ]
    if any(p in (".", "..") for p in sub):
        return None
    segments = [*parts, "tree", commit.strip(), *sub]
    return "https://github.com/" + "/".join(quote(s, safe="") for s in segments)
