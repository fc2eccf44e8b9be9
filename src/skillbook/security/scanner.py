"""Scan one folder (a skill) or one file: walk, read, run every rule, apply context.

Input: a path, :class:`ScanOptions` and optionally a :class:`ScanCache`. Output: a
:class:`ScanReport`. Hostile content never raises: unreadable, huge, binary and
special files become findings. Only a path that does not exist is an error.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from skillbook.security import (
    ScanTargetError,
    archives,
    deobfuscate,
    patterns,
    rules_agent,
    rules_exec,
    rules_exfil,
    rules_leak,
    rules_obfuscation,
    rules_persist,
    rules_sources,
    rules_system,
    rules_text,
)
from skillbook.security.cache import CachedFinding, ScanCache, content_key
from skillbook.security.catalog import RULES
from skillbook.security.context import DEMOTION_STEPS, Context
from skillbook.security.document import MARKDOWN, Document
from skillbook.security.findings import Finding, ScanReport, Severity
from skillbook.security.hit import Hit
from skillbook.security.keywords import KeywordIndex
from skillbook.security.known_names import WELL_KNOWN_NAMES
from skillbook.security.mask import excerpt
from skillbook.security.rules_files import HEAD_BYTES, check_file, encrypted_zip, is_binary
from skillbook.security.rules_names import check_name
from skillbook.security.rules_openclaw import EXTENSIONS as OPENCLAW_EXTENSIONS
from skillbook.security.rules_openclaw import MAX_FILE_BYTES as OPENCLAW_MAX_FILE_BYTES
from skillbook.security.rules_openclaw import scan_source
from skillbook.security.walk import FILE, SPECIAL, SYMLINK, walk

DEFAULT_MAX_FILES = 500
DEFAULT_MAX_FILE_BYTES = 1024 * 1024

Family = Callable[[Document], Iterable[Hit]]
#: Every text rule family, in report order.
FAMILIES: tuple[Family, ...] = (
    rules_exec.remote_fetch_exec,
    rules_exec.encoded_exec,
    rules_exec.reverse_shell,
    rules_sources.untrusted_urls,
    rules_sources.password_archives,
    rules_sources.gatekeeper_bypass,
    rules_exfil.credentials,
    rules_exfil.credential_prompt,
    rules_exfil.env_exfil,
    rules_exfil.markdown_exfil,
    rules_persist.persistence,
    rules_text.prompt_injection,
    rules_text.hidden_instructions,
    rules_obfuscation.assembled_exec,
    rules_system.destructive_command,
    rules_system.privilege_escalation,
    rules_system.command_hijack,
    rules_system.defense_disable,
    rules_system.trace_wiping,
    rules_system.inline_exec,
    rules_leak.secret_exfil,
    rules_leak.dns_exfil,
    rules_leak.cloud_metadata,
    rules_leak.clipboard_capture,
    rules_leak.credential_dump,
    rules_leak.surveillance,
    rules_leak.crypto_miner,
    rules_leak.typosquat_package,
    rules_agent.agent_tamper,
    rules_agent.covert_instructions,
)

#: The modules holding rule families (their KEYWORDS and TRIGGERS).
_MODULES = (rules_exec, rules_exfil, rules_persist, rules_sources, rules_text, rules_obfuscation,
            rules_system, rules_leak, rules_agent)  # fmt: skip


#: One automaton over the keywords of every family, built once at import.
INDEX = KeywordIndex(
    (*(w for module in _MODULES for w in module.KEYWORDS), *deobfuscate.RUNTIME_WORDS)
)


def _gates() -> tuple[tuple[Family, frozenset[str] | None, bool], ...]:
    """Per family: the keywords one of which a file must hold for it to find anything
    (``None``: no such list), and whether it reads Markdown only. A family that the
    prefilter rules out is not called at all."""
    triggers = {k: v for module in _MODULES for k, v in module.TRIGGERS.items()}
    markdown_only = {rules_text.prompt_injection, rules_text.hidden_instructions,
                     rules_exfil.markdown_exfil, rules_agent.covert_instructions}  # fmt: skip
    out = []
    for family in FAMILIES:
        words = frozenset(w.lower() for w in triggers.get(family.__name__, ()))
        # Only words the automaton finds can gate: any other is looked up by each family.
        gate = words if words and words <= INDEX.words else None
        out.append((family, gate, family in markdown_only))
    return tuple(out)


_GATES = _gates()


def _family_hits(doc: Document, *, prefilter: bool) -> Iterator[Hit]:
    """Every family's hits in ``doc``, in family order. With the prefilter, a family runs
    only when the file holds one of its keywords (found in the one automaton pass) and,
    for the Markdown families, when the file is Markdown; ``prefilter=False`` runs them
    all, as the scanner did before the gates (kept for the differential tests)."""
    if not prefilter:
        for family in FAMILIES:
            yield from family(doc)
        return
    markdown = doc.kind == MARKDOWN
    for family, gate, markdown_only in _GATES:
        if (markdown_only and not markdown) or (gate is not None and not doc.holds_any(gate)):
            continue
        yield from family(doc)


#: Words in the index only to cue a deobfuscation stage: no rule matches on them alone.
_CUE_ONLY_WORDS = INDEX.words - {w.lower() for module in _MODULES for w in module.KEYWORDS}


@dataclass(frozen=True, slots=True)
class ScanOptions:
    """Limits and switches of one scan; the defaults match OpenClaw's limits."""

    max_files: int = DEFAULT_MAX_FILES
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    #: Names that look-alike and typo names are compared with.
    known_names: frozenset[str] = WELL_KNOWN_NAMES
    #: Also run OpenClaw's own rules (JavaScript/TypeScript files only).
    openclaw_rules: bool = True
    #: Keep OpenClaw's criticals critical (so they block) instead of skillbook's rating.
    openclaw_severities: bool = False


# --------------------------------------------------------------------------- one text


_FRONTMATTER = patterns.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)(?:\r?\n)---[ \t]*(?:\r?\n|\Z)", re.S)
_NAME_LINE = patterns.compile(r"^name[ \t]*:[ \t]*(.*?)[ \t]*\r?$", re.M)
# Every rule module is imported by now: their compiled patterns are kept for the next
# process, and patterns built per text from here on are not.
patterns.seal()


def _name_hits(doc: Document, known: frozenset[str]) -> Iterator[Hit]:
    fm = _FRONTMATTER.match(doc.text)
    if fm is None:
        return
    m = _NAME_LINE.search(doc.text, fm.start(1), fm.end(1))
    if m is None:
        return
    raw = m.group(1).strip().strip("\"'")
    clean = rules_text.STRIPPABLE.sub("", raw)
    if clean != raw:
        yield Hit("homoglyph-name", Severity.HIGH, m.start(1), m.end(1),
                  "The name holds invisible characters", demotable=False)  # fmt: skip
    for rule, severity, message in check_name(clean, known):
        yield Hit(rule, severity, m.start(1), m.end(1), message, demotable=False)


def _changed_lines_have_keywords(before: str, after: str) -> bool:
    """Whether the lines the view changed hold any rule keyword: if not, no rule can
    match there, and the second pass over the file is skipped (most changes are
    ordinary shell variables)."""
    if before == after:
        return False
    changed = [new for old, new in zip(before.split("\n"), after.split("\n"), strict=True)
               if old != new]  # fmt: skip
    return not INDEX.occurrences("\n".join(changed).lower()).keys() <= _CUE_ONLY_WORDS


def _deobfuscated_hits(
    doc: Document, found: list[tuple[Document, Hit]], *, prefilter: bool = True
) -> Iterator[tuple[Document, Hit]]:
    """What the rules find once quote-split words, look-alike letters, escapes and shell
    variables are undone (:mod:`~skillbook.security.deobfuscate`), plus one
    ``obfuscated-command`` hit per line whose trick hid a command name."""
    runtime = doc.keywords_present(deobfuscate.RUNTIME_WORDS)
    if prefilter and not deobfuscate.may_change(doc.text, runtime):
        return
    view = deobfuscate.view(doc.text, runtime=runtime, non_ascii=doc.non_ascii)
    if not view.tricks and view.text == doc.text:
        return
    undone = Document(view.text, doc.name, doc.kind, index=INDEX, literals=prefilter)
    have = {(h.rule, where.line_of(h.start)) for where, h in found}
    how_by_line: dict[int, list[deobfuscate.Trick]] = {}
    for trick in view.tricks:
        how_by_line.setdefault(trick.line, []).append(trick)
    # A trick on a line that also does something dangerous is critical: hiding is intent.
    dangerous_lines = {where.line_of(h.start) for where, h in found
                       if h.severity.at_least(Severity.HIGH) and h.ruleset == "skillbook"}  # fmt: skip
    if _changed_lines_have_keywords(doc.text, view.text):
        for h in _family_hits(undone, prefilter=prefilter):
            line = undone.line_of(h.start)
            if (h.rule, line) in have:
                continue
            have.add((h.rule, line))
            kinds = sorted({t.kind for t in how_by_line.get(line, ())}) or ["shell variables"]
            if h.severity.at_least(Severity.HIGH):
                dangerous_lines.add(line)
            yield (
                undone,
                replace(h, message=f"{h.message} (seen after undoing {', '.join(kinds)})"),
            )
    for line, tricks in sorted(how_by_line.items()):
        hiding = [t for t in tricks if t.hides_command]
        if not hiding:
            continue
        start, end = doc.lines_span(line, line)
        indent = len(doc.text[start:end]) - len(doc.text[start:end].lstrip())
        severity = Severity.CRITICAL if line in dangerous_lines else Severity.HIGH
        revealed = ", ".join(dict.fromkeys(t.revealed for t in hiding))
        how = ", ".join(sorted({t.kind for t in hiding}))
        why = "; the command it hides is itself a finding" if line in dangerous_lines else ""
        yield doc, Hit("obfuscated-command", severity, start + indent, end,
                       f"Command hidden by {how}: reads as {revealed}{why}")  # fmt: skip


def analyze(
    text: str,
    name: str,
    *,
    openclaw: bool = False,
    options: ScanOptions | None = None,
    prefilter: bool = True,
) -> tuple[CachedFinding, ...]:
    """Every finding in one file's text; ``name`` is the file name (it sets the kind).

    ``prefilter=False`` calls every rule family and the deobfuscation on every file,
    whatever keywords it holds, and tries each pattern at every offset of its regions
    (not only where its leading literals occur): the same findings, more slowly (for tests that prove
    the prefilter only skips work that finds nothing)."""
    options = options or ScanOptions()
    doc = Document(text, name, index=INDEX, literals=prefilter)
    hits: list[tuple[Document, Hit]] = [(doc, h) for h in rules_text.invisible_unicode(doc)]
    # Zero-width characters must not split a keyword past the other rules.
    rule_doc = doc
    if hits:
        rule_doc = Document(rules_text.STRIPPABLE.sub("", text), name, doc.kind, index=INDEX,
                            literals=prefilter)  # fmt: skip
    hits.extend((rule_doc, h) for h in _family_hits(rule_doc, prefilter=prefilter))
    hits.extend(list(_deobfuscated_hits(rule_doc, hits, prefilter=prefilter)))
    if doc.is_skill_md:
        hits.extend((doc, h) for h in _name_hits(doc, options.known_names))
    if openclaw and options.openclaw_rules:
        rerate = not options.openclaw_severities
        hits.extend((doc, h) for h in scan_source(text, rerate=rerate))
    contexts: dict[int, Context] = {}
    out: list[CachedFinding] = []
    for where, hit in hits:
        ctx = contexts.setdefault(id(where), Context(where))
        out.append(_finalize(where, doc, hit, ctx))
    out.sort(key=lambda f: (f.line or 0, f.column or 0, f.rule))
    return tuple(out)


def _finalize(where: Document, original: Document, hit: Hit, ctx: Context) -> CachedFinding:
    line = where.line_of(hit.start)
    column = where.column_of(hit.start)
    severity = hit.severity
    demoted_from, demotion = hit.demoted_from, hit.demotion
    if demoted_from is None and hit.ruleset == "skillbook":
        reason = ctx.demotion(hit)
        if reason is not None:
            lowered = severity.lowered(DEMOTION_STEPS, floor=hit.floor)
            if lowered is not severity:
                demoted_from, demotion, severity = severity, reason, lowered
    shown = hit.excerpt if hit.excerpt is not None else original.line_text(line)
    return CachedFinding(
        rule=hit.rule,
        severity=severity,
        line=line,
        column=column,
        message=hit.message,
        excerpt=excerpt(shown, column=column),
        ruleset=hit.ruleset,
        demoted_from=demoted_from,
        demotion=demotion,
    )


# --------------------------------------------------------------------------- one folder


def _finding(rule: str, severity: Severity, path: Path, message: str, line: int | None = None,
             shown: str = "") -> Finding:  # fmt: skip
    return Finding(rule=rule, severity=severity, file=path, line=line, message=message,
                   excerpt=shown, fix=RULES[rule].fix)  # fmt: skip


def _attach(path: Path, found: Iterable[CachedFinding]) -> list[Finding]:
    return [
        Finding(
            rule=f.rule,
            severity=f.severity,
            file=path,
            line=f.line,
            message=f.message,
            excerpt=f.excerpt,
            fix=RULES[f.rule].fix,
            column=f.column,
            ruleset=f.ruleset,
            demoted_from=f.demoted_from,
            demotion=f.demotion,
        )
        for f in found
    ]


def _read(path: Path, limit: int) -> bytes:
    """Up to ``limit + 1`` bytes of a regular file, never following a symlink or blocking."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path.name} is not a regular file")
        chunks: list[bytes] = []
        size = 0
        # The first read asks for the size the file has (plus one byte, to see the end):
        # asking for 1 MiB allocated and released that much for every small file.
        want = min(info.st_size + 1, 1 << 20)
        while size <= limit:
            chunk = os.read(fd, min(want, limit + 1 - size))
            want = 1 << 20
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _inside(root_real: str, target: str) -> bool:
    return target == root_real or target.startswith(root_real.rstrip(os.sep) + os.sep)


class _FolderScan:
    """The state of one :func:`scan_path` call."""

    def __init__(self, root: Path, options: ScanOptions, cache: ScanCache | None) -> None:
        self.root = root
        self.options = options
        self.cache = cache
        self.findings: list[Finding] = []
        self.scanned = 0
        self.skipped = 0
        self.cache_hits = 0
        self.openclaw_files = 0
        self.skill_name: str | None = None

    def file(self, path: Path, rel: str, *, openclaw: bool) -> None:
        opts = self.options
        try:
            data = _read(path, opts.max_file_bytes)
        except OSError as exc:
            self.skipped += 1
            self.findings.append(_finding("unreadable-file", Severity.MEDIUM, path,
                                          f"Could not read {rel}: {exc.strerror or exc}"))  # fmt: skip
            return
        self._content(path, rel, path.name, data, openclaw=openclaw, depth=0)
        if path.name == "SKILL.md" and path.parent == self.root:
            self.skill_name = _frontmatter_name(data)

    def _content(self, path: Path, rel: str, name: str, data: bytes, *, openclaw: bool,
                 depth: int, budget: archives.Budget | None = None) -> None:  # fmt: skip
        """Judge one file's bytes (``depth`` > 0: a member of an archive, shown as
        ``archive.zip/member``)."""
        opts = self.options
        head = data[:HEAD_BYTES]
        for rule, severity, message in check_file(name, head):
            self.findings.append(_finding(rule, severity, path, message))
        if depth == 0 and head.startswith(b"PK\x03\x04") and encrypted_zip(path):
            self.findings.append(_finding("password-archive", Severity.CRITICAL, path,
                                          "Zip archive with password-protected entries"))  # fmt: skip
        if archives.kind_of(head[:512]) is not None:
            opened = self._archive(path, rel, name, data, depth=depth, budget=budget)
            # Text that merely starts like an archive ("BZh…", "ustar" at 257) and cannot be
            # opened is still read as text: a magic prefix must not hide a script.
            if opened or is_binary(head):
                self.skipped += depth == 0  # not text itself; its members were scanned
                return
        if is_binary(head):
            self.skipped += depth == 0
            return
        if len(data) > opts.max_file_bytes:
            self.skipped += depth == 0
            self.findings.append(_finding("file-too-large", Severity.HIGH, path,
                                          f"{rel} is larger than {opts.max_file_bytes} bytes; not scanned"))  # fmt: skip
            return
        openclaw = openclaw and len(data) <= OPENCLAW_MAX_FILE_BYTES
        self.openclaw_files += openclaw
        self.scanned += depth == 0
        found = None
        key = ""
        if self.cache is not None:  # without a cache, no key: hashing is a pass of its own
            known = opts.known_names if name == "SKILL.md" else frozenset()
            key = content_key(
                data,
                name if name == "SKILL.md" else os.path.splitext(name)[1].lower(),
                "#!" if data.startswith(b"#!") else "",
                f"openclaw={int(openclaw and opts.openclaw_rules)}:{int(opts.openclaw_severities)}",
                "\x00".join(sorted(known)),
            )
            found = self.cache.get(key)
        if found is not None:
            self.cache_hits += 1
        else:
            found = analyze(data.decode("utf-8", "replace"), name, openclaw=openclaw, options=opts)
            if self.cache is not None:
                self.cache.put(key, found)
        self.findings.extend(_attach(path, found))

    def _archive(self, path: Path, rel: str, name: str, data: bytes, *, depth: int,
                 budget: archives.Budget | None) -> bool:  # fmt: skip
        """Scan the members of an archive like files of the skill, within the limits of
        :mod:`~skillbook.security.archives`; what is left unscanned is a finding. Returns
        whether the archive could be opened at all."""

        def unscanned(severity: Severity, why: str, rule: str = archives.UNSCANNED) -> None:
            self.findings.append(_finding(rule, severity, path, f"{rel}: {why}"))

        if len(data) > self.options.max_file_bytes:
            unscanned(Severity.HIGH, f"larger than {self.options.max_file_bytes} bytes; its "
                                     "members were not scanned")  # fmt: skip
            return True
        if depth >= archives.MAX_DEPTH:
            unscanned(Severity.HIGH, f"archive nested {depth + 1} deep; not looked into "
                                     f"(limit {archives.MAX_DEPTH})")  # fmt: skip
            return True
        budget = budget if budget is not None else archives.Budget()
        opened = False
        for item in archives.members(data, name, max_member_bytes=self.options.max_file_bytes,
                                     budget=budget):  # fmt: skip
            if isinstance(item, archives.Problem):
                unscanned(item.severity, item.message, item.rule)
                continue
            opened = True
            member = item.name.replace("\\", "/")
            if archives.escapes(member):
                unscanned(Severity.HIGH, f"member {member} would unpack outside its folder "
                                         "(path traversal)", archives.PATH_ESCAPE)  # fmt: skip
            safe = "/".join(p for p in member.split("/") if p not in ("", ".", "..")) or "member"
            shown = path / safe
            member_rel = f"{rel}/{safe}"
            if item.truncated:
                self.findings.append(_finding("file-too-large", Severity.HIGH, shown,
                                              f"{member_rel} is larger than "
                                              f"{self.options.max_file_bytes} bytes; not scanned"))  # fmt: skip
                continue
            self._content(shown, member_rel, safe.rsplit("/", 1)[-1], item.data, openclaw=False,
                          depth=depth + 1, budget=budget)  # fmt: skip
        return opened

    def symlink(self, path: Path, rel: str, root_real: str) -> None:
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        real = os.path.realpath(path)
        shown = f"{rel} -> {target}"
        if not _inside(root_real, real):
            self.findings.append(_finding("symlink-escape", Severity.CRITICAL, path,
                                          f"{rel} points outside the skill, to {real}", shown=shown))  # fmt: skip
        elif not os.path.exists(path):
            self.findings.append(_finding("broken-symlink", Severity.LOW, path,
                                          f"{rel} points to nothing ({target})", shown=shown))  # fmt: skip


def _frontmatter_name(data: bytes) -> str | None:
    text = data[:65536].decode("utf-8", "replace")
    fm = _FRONTMATTER.match(text)
    if fm is None:
        return None
    m = _NAME_LINE.search(text, fm.start(1), fm.end(1))
    return m.group(1).strip().strip("\"'") or None if m else None


def scan_path(
    path: Path, *, options: ScanOptions | None = None, cache: ScanCache | None = None
) -> ScanReport:
    """Scan a skill folder (or any folder, or one file) and report every finding.

    Raises:
        ScanTargetError: ``path`` does not exist.
    """
    options = options or ScanOptions()
    root = Path(os.path.abspath(path))
    if not os.path.lexists(root):
        raise ScanTargetError(f"no such file or folder: {path}")
    if not root.is_dir():
        return _scan_single_file(root, options, cache)
    state = _FolderScan(root, options, cache)
    root_real = os.path.realpath(root)
    listing = walk(root, max_files=options.max_files)
    for entry in listing.entries:
        if entry.kind == FILE:
            state.file(entry.path, entry.rel, openclaw=entry.openclaw)
        elif entry.kind == SYMLINK:
            state.symlink(entry.path, entry.rel, root_real)
        elif entry.kind == SPECIAL:
            state.skipped += 1
            state.findings.append(_finding("unreadable-file", Severity.MEDIUM, entry.path,
                                           f"{entry.rel} is not a regular file (FIFO, device or socket)"))  # fmt: skip
    for folder in listing.skipped_dirs:
        state.findings.append(_finding("skipped-folder", Severity.INFO, folder,
                                       f"{folder.name}/ was not scanned"))  # fmt: skip
    if listing.over_limit:
        state.findings.append(_finding("too-many-files", Severity.HIGH, root,
                                       f"{listing.over_limit} files beyond the limit of "
                                       f"{options.max_files} were not scanned"))  # fmt: skip
    for folder, error in listing.errors:
        state.findings.append(_finding("unreadable-file", Severity.MEDIUM, folder,
                                       f"Could not list {folder}: {error}"))  # fmt: skip
    if state.skill_name is not None and root.name != state.skill_name:
        for rule, severity, message in check_name(root.name, options.known_names):
            state.findings.append(_finding(rule, severity, root, "Folder: " + message))
    return ScanReport(
        root=root,
        findings=tuple(state.findings),
        files_scanned=state.scanned,
        files_skipped=state.skipped,
        skill_name=state.skill_name,
        cache_hits=state.cache_hits,
        openclaw_files=state.openclaw_files,
    )


def _scan_single_file(path: Path, options: ScanOptions, cache: ScanCache | None) -> ScanReport:
    state = _FolderScan(path.parent, options, cache)
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        state.symlink(path, path.name, os.path.realpath(path.parent))
    elif stat.S_ISREG(mode):
        ext = os.path.splitext(path.name)[1].lower()
        state.file(path, path.name, openclaw=ext in OPENCLAW_EXTENSIONS)
    else:
        state.skipped += 1
        state.findings.append(_finding("unreadable-file", Severity.MEDIUM, path,
                                       f"{path.name} is not a regular file"))  # fmt: skip
    return ScanReport(
        root=path,
        findings=tuple(state.findings),
        files_scanned=state.scanned,
        files_skipped=state.skipped,
        skill_name=state.skill_name,
        cache_hits=state.cache_hits,
        openclaw_files=state.openclaw_files,
    )
