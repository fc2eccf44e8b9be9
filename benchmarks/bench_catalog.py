#!/usr/bin/env python
"""Speed benchmark of the skills catalog: skillbook against OpenClaw itself.

Input: command-line options (``--sizes``, ``--repeat``, ``--quick``, ...).
Output: a plain-text table of medians and ratios on stdout, and the same figures
(plus every raw sample) as JSON in ``benchmarks/out/`` (gitignored).

For every workload (generated workspaces of N skills, and the public corpus copied
into one workspace) it times, in one run:

1. skillbook in-process: cold (a new ``Loader`` with no cache: discover + parse +
   gate + prompt), warm (the same ``Loader`` again, nothing changed), edit1 (the same
   ``Loader`` after one SKILL.md changed) and disk (a new ``Loader`` on the on-disk
   parse cache, as a new process starts);
2. ``python -m skillbook prompt`` as a process, on the on-disk cache and with
   ``--no-cache``, and a Python process that only stats every SKILL.md;
3. the floors: listing the skills folder and stat-ing, or reading, every SKILL.md;
4. OpenClaw through the oracle: its in-process ``opMs`` and the process wall time;
5. pi's loader (``@mariozechner/pi-coding-agent``: ``loadSkills`` +
   ``formatSkillsForPrompt``, installed with npm on first use): its ``opMs`` and wall;

and once, ``import skillbook`` and ``skillbook --version`` against ``python -c pass``.
It checks that skillbook's prompt is byte-identical to OpenClaw's, and that every
skillbook path (warm, disk, edit, process) gives the cold prompt. Everything runs in
an isolated environment (its own HOME, state dir, empty bundled dir, and a PATH
holding only stub binaries), so nothing of the machine leaks into either side.

Usage: ``python benchmarks/bench_catalog.py [--sizes 100,1000,10000] [--repeat N]
[--quick] [--no-oracle] [--no-pi] [--no-corpus] [--profile] [--keep]``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import catalog_report  # noqa: E402

SHARED = (REPO / ".." / "shared").resolve()
CORPUS = SHARED / "corpus"
OUT_DIR = REPO / "benchmarks" / "out"
DEFAULT_ORACLE_DIR = Path("/tmp/oracle")
ORACLE_CACHE = REPO / ".cache" / "oracle"

DEFAULT_SIZES = (100, 1000, 10000)
DEFAULT_REPEAT = 5
DEFAULT_SEED = 20260413
QUICK_SIZES = (100,)
#: Raised so every generated skill loads and lands in the prompt on both sides.
BIG_LIMIT = 20000
BIG_PROMPT_CHARS = 1_000_000_000
ORACLE_TIMEOUT_S = 900.0
#: The title line the smoke test looks for; keep it stable.
TABLE_TITLE = catalog_report.TABLE_TITLE
#: The text OpenClaw's truncation note names; needed for byte-identical prompts.
OPENCLAW_CHECK_COMMAND = "openclaw skills check"
#: Start-up figures are a few ms: more rounds than the loads get.
STARTUP_ROUNDS = 15
#: A little over the parse cache's racy window (skillbook.pipeline.cache.parse_store.RACY_NS).
RACY_WAIT_S = 2.1
#: Run from a checkout without an installed skillbook: use ``src/`` (here and in children).
SRC_ON_PATH = importlib.util.find_spec("skillbook") is None

# Binaries that exist (as stubs on PATH) and ones that do not: about half the gated
# skills end up eligible, the rest are filtered out of the prompt on both sides.
PRESENT_BINS = ("git", "jq", "curl", "python3", "node", "gh", "rg", "ffmpeg", "uv", "docker")
ABSENT_BINS = ("kubectl", "terraform", "himalaya", "spogo", "op", "sag", "whisper", "gog")
PRESENT_ENV = {"BENCH_API_KEY": "x", "GITHUB_TOKEN": "y"}
ABSENT_ENV = ("OPENAI_API_KEY", "NOTION_API_KEY", "TRELLO_TOKEN", "ELEVENLABS_API_KEY")


# --------------------------------------------------------------------------- generation


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_ADJ = _words(
    "quick smart local remote cloud secure tiny async batch live daily deep easy fast "
    "green open rapid solid safe lean"
)
_NOUN = _words(
    "git mail notes calendar slack weather docker pdf image audio video search wiki "
    "budget tasks tickets deploy backup sql csv json logs metrics k8s browser spotify "
    "hue camera maps invoice"
)
_VERB = _words(
    "helper tool cli sync report review runner bot agent kit manager watch lint fmt "
    "export import check digest summary guide"
)
_SENTENCES = (
    "Use when the user asks to {v} {n} data from the command line.",
    "Handles {n} workflows end to end, including setup & teardown.",
    "Wraps the {n} API so the agent can list, read, create and delete items.",
    "Prefer this skill over ad-hoc scripts when a task mentions {n}.",
    "Reads <input> files, validates them and writes a short report.",
    "Supports dry runs; never writes without asking the user first.",
    "Works offline with cached {n} results when the network is down.",
    "Produces Markdown summaries with links back to the original {n} records.",
    "Triggers: '{v} my {n}', \"show {n}\", or any request about {n} housekeeping.",
    "Covers common errors (auth, rate limits, timeouts) and how to recover.",
    "Keeps a local index under ~/.cache so repeated lookups stay fast.",
    "Not for {n} administration; use the admin skill for that.",
)
_BODY_PARAS = (
    "This skill explains how to work with {n} safely. Read the whole file before running "
    "any command, and confirm destructive actions with the user.",
    "Run `{n}-{v} --help` first to see the available sub-commands. Most commands accept "
    "`--json` for machine-readable output; prefer it when parsing results.",
    "When a command fails with an authentication error, ask the user to refresh the token "
    "and retry once. Do not loop on failures.",
    "Large outputs should be paged: pass `--limit 50` and follow the `next` cursor until it "
    "is empty, summarising as you go.",
)


def _description(rng: random.Random, noun: str, verb: str) -> str:
    target = rng.randint(100, 400)
    parts: list[str] = []
    while sum(len(p) + 1 for p in parts) < target:
        parts.append(rng.choice(_SENTENCES).format(n=noun, v=verb))
    text = " ".join(parts)
    if len(text) > 400:
        text = text[:400].rstrip()
    return text


def _yaml_scalar(rng: random.Random, text: str) -> str:
    """A description in one of the YAML styles found in real skills."""
    style = rng.random()
    plain_ok = ": " not in text and " #" not in text and text[0] not in "'\"<&*!|>%@`{[-?,#"
    if plain_ok and style < 0.45:
        return text
    if style < 0.65 and "'" not in text:
        return "'" + text + "'"
    if style < 0.8:
        return ">-\n  " + text
    return json.dumps(text, ensure_ascii=False)


def _metadata_block(rng: random.Random, noun: str, verb: str) -> str:
    requires: dict[str, list[str]] = {}
    if rng.random() < 0.8:
        requires["bins"] = rng.sample(PRESENT_BINS + ABSENT_BINS, rng.randint(1, 2))
    if rng.random() < 0.2:
        requires["anyBins"] = rng.sample(PRESENT_BINS + ABSENT_BINS, 2)
    if rng.random() < 0.3:
        requires["env"] = [rng.choice((*PRESENT_ENV, *ABSENT_ENV))]
    meta: dict[str, Any] = {"emoji": rng.choice(("🔧", "📧", "☔", "🎨", "🧪", "📦"))}
    if requires:
        meta["requires"] = requires
    if rng.random() < 0.1:
        meta["os"] = [rng.choice(("linux", "darwin"))]
    if "env" in requires and rng.random() < 0.5:
        meta["primaryEnv"] = requires["env"][0]
    installs: list[dict[str, Any]] = []
    for kind in rng.sample(("brew", "node", "go", "uv", "download"), rng.randint(0, 2)):
        spec: dict[str, Any] = {"id": kind, "kind": kind}
        if kind == "brew":
            spec["formula"] = f"{noun}-{verb}"
        elif kind == "node":
            spec["package"] = f"@bench/{noun}-{verb}"
        elif kind == "go":
            spec["module"] = f"github.com/bench/{noun}-{verb}@latest"
        elif kind == "uv":
            spec["package"] = f"{noun}-{verb}"
        else:
            spec["url"] = f"https://example.com/{noun}/{verb}.tar.gz"
        spec["bins"] = [f"{noun}-{verb}"]
        spec["label"] = f"Install {noun}-{verb} ({kind})"
        installs.append(spec)
    if installs:
        meta["install"] = installs
    data = {"openclaw": meta}
    style = rng.random()
    if style < 0.4:
        return "metadata: " + json.dumps(data, ensure_ascii=False) + "\n"
    if style < 0.7:
        # The multi-line JSON5-ish flow style most OpenClaw skills use.
        body = json.dumps(data, ensure_ascii=False, indent=2)
        return "metadata:\n" + "".join(f"  {line}\n" for line in body.splitlines())
    return "metadata:\n" + _block_yaml(data, 1)


def _block_yaml(value: Any, depth: int) -> str:
    pad = "  " * depth
    out: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                out.append(f"{pad}{key}:\n{_block_yaml(item, depth + 1)}")
            else:
                out.append(f"{pad}{key}: {json.dumps(item, ensure_ascii=False)}\n")
    else:
        for item in value:
            if isinstance(item, dict):
                inner = _block_yaml(item, depth + 1)
                first, _, rest = inner.partition("\n")
                out.append(f"{pad}- {first.strip()}\n{rest}")
            else:
                out.append(f"{pad}- {json.dumps(item, ensure_ascii=False)}\n")
    return "".join(out)


def _body(rng: random.Random, name: str, noun: str, verb: str) -> str:
    head = f"# {name}\n\n"
    if rng.random() < 0.3:
        target = rng.randint(1500, 6000)
        chunks = [head]
        size = len(head)
        section = 1
        while size < target:
            chunk = f"## Step {section}\n\n" + rng.choice(_BODY_PARAS).format(n=noun, v=verb)
            chunk += f"\n\n```sh\n{noun}-{verb} run --step {section} --json\n```\n\n"
            chunks.append(chunk)
            size += len(chunk)
            section += 1
        return "".join(chunks)
    return head + rng.choice(_BODY_PARAS).format(n=noun, v=verb) + "\n"


def generate_skill(rng: random.Random, index: int, taken: set[str]) -> tuple[str, str]:
    """One realistic (folder name, SKILL.md text)."""
    noun, verb = rng.choice(_NOUN), rng.choice(_VERB)
    name = f"{rng.choice(_ADJ)}-{noun}-{verb}"
    if rng.random() < 0.1:
        name = name.replace("-", "_", 1)
    if name in taken:
        name = f"{name}-{index}"
    taken.add(name)
    lines = [f"name: {name}", f"description: {_yaml_scalar(rng, _description(rng, noun, verb))}"]
    if rng.random() < 0.3:
        lines.append(f"homepage: https://example.com/{noun}")
    if rng.random() < 0.1:
        lines.append("license: MIT")
    if rng.random() < 0.04:
        lines.append("disable-model-invocation: true")
    if rng.random() < 0.05:
        lines.append("user-invocable: false")
    front = "\n".join(lines) + "\n"
    if rng.random() < 0.5:
        front += _metadata_block(rng, noun, verb)
    return name, f"---\n{front}---\n\n{_body(rng, name, noun, verb)}"


def make_generated_workspace(root: Path, size: int, seed: int) -> Path:
    ws = root / f"ws-{size}"
    skills = ws / "skills"
    skills.mkdir(parents=True)
    rng = random.Random(seed + size)
    taken: set[str] = set()
    for i in range(size):
        folder, text = generate_skill(rng, i, taken)
        d = skills / folder
        d.mkdir()
        (d / "SKILL.md").write_text(text, encoding="utf-8")
    return ws


def make_corpus_workspace(root: Path, corpus: Path) -> tuple[Path, int]:
    """Copy every folder of the corpus that holds a SKILL.md into ``<ws>/skills/<slug>``."""
    ws = root / "ws-corpus"
    skills = ws / "skills"
    skills.mkdir(parents=True)
    count = 0
    for skill_md in sorted(corpus.rglob("SKILL.md")):
        src = skill_md.parent
        slug = "__".join(src.relative_to(corpus).parts) or "root"
        skill_dirs = {p.parent for p in src.rglob("SKILL.md")} - {src}

        def ignore(dirpath: str, names: list[str], nested: set[Path] = skill_dirs) -> list[str]:
            # Nested skill folders are copied on their own; do not duplicate them.
            return [n for n in names if Path(dirpath, n) in nested]

        shutil.copytree(src, skills / slug, ignore=ignore, ignore_dangling_symlinks=True)
        count += 1
    return ws, count


# --------------------------------------------------------------------------- environment


@dataclass(frozen=True, slots=True)
class Sandbox:
    """The isolated folders both sides see: home, state, bundled, stub binaries, config."""

    root: Path
    home: Path
    state: Path
    bundled: Path
    bin_dir: Path
    config_path: Path
    config: Mapping[str, Any]

    @property
    def env(self) -> dict[str, str]:
        """What skillbook reads (in-process and as a process)."""
        return {
            "HOME": str(self.home),
            "SKILLBOOK_STATE_DIR": str(self.state),
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(self.bundled),
            "PATH": str(self.bin_dir),
            "LANG": "C.UTF-8",
            **PRESENT_ENV,
        }


def make_sandbox(root: Path) -> Sandbox:
    home, state, bundled, bin_dir = (root / n for n in ("home", "state", "bundled", "bin"))
    for d in (home, state, bundled, bin_dir):
        d.mkdir(parents=True)
    for name in PRESENT_BINS:
        stub = bin_dir / name
        stub.write_text("#!/bin/sh\nexit 0\n")
        stub.chmod(0o755)
    config = {
        "skills": {
            "limits": {
                "maxCandidatesPerRoot": BIG_LIMIT,
                "maxSkillsLoadedPerSource": BIG_LIMIT,
                "maxSkillsInPrompt": BIG_LIMIT,
                "maxSkillsPromptChars": BIG_PROMPT_CHARS,
            }
        }
    }
    config_path = root / "openclaw.json"
    config_path.write_text(json.dumps(config, indent=2))
    return Sandbox(root, home, state, bundled, bin_dir, config_path, config)


def find_oracle(allow_install: bool) -> Path | str:
    """The installed oracle's folder, or a string saying why there is none."""
    if shutil.which("node") is None:
        return "node is not installed"
    candidates = [
        os.environ.get("SKILLBOOK_ORACLE_DIR"),
        str(DEFAULT_ORACLE_DIR),
        str(ORACLE_CACHE),
    ]
    for c in candidates:
        if (
            c
            and (Path(c) / "oracle.mjs").is_file()
            and (Path(c) / "node_modules" / "openclaw").is_dir()
        ):
            return Path(c)
    if not allow_install:
        return "no installed oracle (set SKILLBOOK_ORACLE_DIR, or drop --no-install)"
    sys.path.insert(0, str(REPO / "tests"))
    try:
        from oracle_support import find_or_install_oracle
    except ImportError as exc:
        return f"cannot import tests/oracle_support.py to install the oracle: {exc}"
    return find_or_install_oracle()


# --------------------------------------------------------------------------- measurements


def _median_ms(samples: Sequence[float]) -> float | None:
    return statistics.median(samples) * 1000 if samples else None


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def _timed_both(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall and CPU seconds: CPU time barely moves when other processes compete."""
    gc.collect()
    c0, t0 = time.process_time(), time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, time.process_time() - c0, value


@dataclass(slots=True)
class Workload:
    label: str
    workspace: Path
    files: int
    loaded: int = 0
    in_prompt: int = 0
    prompt_chars: int = 0
    samples: dict[str, list[float]] = field(default_factory=dict)
    identical: bool | None = None
    cli_matches: bool | None = None
    warm_matches: bool | None = None
    #: The on-disk cache and the one-edit rebuild give the prompt a cold build gives.
    disk_matches: bool | None = None
    edit_matches: bool | None = None
    first_difference: str | None = None
    openclaw_meta: dict[str, Any] = field(default_factory=dict)
    #: OpenClaw's op in CPU ms, estimated: oracle process CPU minus an empty workspace's.
    openclaw_op_cpu_ms: float | None = None
    pi_skills: int | None = None
    notes: list[str] = field(default_factory=list)

    def median(self, key: str) -> float | None:
        return _median_ms(self.samples.get(key, []))

    def add(self, key: str, seconds: float) -> None:
        self.samples.setdefault(key, []).append(seconds)


def _loader(ws: Path, sb: Sandbox, *, cache: bool = False) -> Any:
    """A Loader as OpenClaw is compared with; ``cache`` keeps parsed files on disk (in
    the sandbox's state dir), as every process does by default."""
    from skillbook.pipeline.book import Loader

    return Loader(
        ws,
        config=sb.config_path,
        env=sb.env,
        cwd=sb.root,
        check_command=OPENCLAW_CHECK_COMMAND,
        legacy_manifest_keys=False,
        cache=cache,
    )


def _load_new(ws: Path, sb: Sandbox, *, cache: bool = False) -> tuple[Any, Any]:
    loader = _loader(ws, sb, cache=cache)
    return loader, loader.load()


def skill_files(ws: Path) -> list[Path]:
    return sorted(p for p in (ws / "skills").glob("*/SKILL.md"))


def settle(paths: Sequence[Path]) -> None:
    """Wait until every file is older than the parse cache's racy window (a file
    changed within 2 s of being cached is read again, see skillbook.pipeline.cache.parse_store)."""
    newest = max((p.stat().st_ctime for p in paths), default=0.0)
    time.sleep(max(0.0, newest + RACY_WAIT_S - time.time()))


def bench_cold_warm(w: Workload, sb: Sandbox) -> str:
    """One round in-process: cold (a new Loader, no cache at all) then warm (the same
    Loader again, nothing changed); returns the cold prompt."""
    seconds, cpu, (loader, book) = _timed_both(lambda: _load_new(w.workspace, sb))
    w.add("sb_cold", seconds)
    w.add("sb_cold_cpu", cpu)
    prompt: str = book.prompt
    w.loaded, w.in_prompt, w.prompt_chars = len(book.skills), len(book.eligible), len(prompt)
    seconds, cpu, again = _timed_both(loader.load)
    w.add("sb_warm", seconds)
    w.add("sb_warm_cpu", cpu)
    w.warm_matches = (w.warm_matches is not False) and again.prompt == prompt
    return prompt


def bench_edits(w: Workload, sb: Sandbox, repeat: int) -> None:
    """The same (warm) Loader after one SKILL.md changed, a different file each round;
    the files are restored afterwards."""
    loader, _ = _load_new(w.workspace, sb)
    loader.load()
    files = skill_files(w.workspace)
    originals: dict[Path, bytes] = {}
    rng = random.Random(7)
    book: Any = None
    try:
        for n in range(repeat):
            target = files[rng.randrange(len(files))]
            originals.setdefault(target, target.read_bytes())
            text = target.read_text(encoding="utf-8")
            target.write_text(text.replace("\ndescription: ", f"\ndescription: Edit {n}. ", 1))
            seconds, book = _timed(loader.load)
            w.add("sb_edit1", seconds)
        w.edit_matches = book.prompt == _load_new(w.workspace, sb)[1].prompt
        # The same, told which file changed: what a SkillSession's watcher hands its
        # Loader (without it, every SKILL.md must be stat-ed: the stat floor bounds it).
        from skillbook.pipeline.cache.change_hint import ChangeHint
        from skillbook.runtime._watch_parts import IGNORED_SEGMENTS

        skills_root = [str(w.workspace / "skills")]
        for n in range(repeat):
            target = files[rng.randrange(len(files))]
            originals.setdefault(target, target.read_bytes())
            text = target.read_text(encoding="utf-8")
            target.write_text(text.replace("\ndescription: ", f"\ndescription: Hint {n}. ", 1))
            hint = ChangeHint.of([str(target)], skills_root, IGNORED_SEGMENTS)
            seconds, book = _timed(lambda hint=hint: loader.load(hint=hint))
            w.add("sb_edit1_hinted", seconds)
        same = book.prompt == _load_new(w.workspace, sb)[1].prompt
        w.edit_matches = bool(w.edit_matches) and same
    finally:
        for path, data in originals.items():
            path.write_bytes(data)


def prime_disk_cache(w: Workload, sb: Sandbox) -> None:
    """Write the on-disk parse cache as a first run does, once no file is racy."""
    settle(skill_files(w.workspace))
    _load_new(w.workspace, sb, cache=True)


def bench_disk(w: Workload, sb: Sandbox, repeat: int, prompt: str) -> None:
    """New Loaders on the primed on-disk cache: a new process's work after imports."""
    same = True
    for _ in range(repeat):
        seconds, _cpu, (_, book) = _timed_both(lambda: _load_new(w.workspace, sb, cache=True))
        w.add("sb_disk", seconds)
        same = same and book.prompt == prompt
    w.disk_matches = same


def _process_env(sb: Sandbox) -> dict[str, str]:
    env = dict(sb.env)
    if SRC_ON_PATH:
        env["PYTHONPATH"] = str(REPO / "src")
    return env


def bench_cli(w: Workload, sb: Sandbox, repeat: int) -> None:
    """``skillbook prompt`` as a process on the primed on-disk caches (see
    :func:`prime_disk_cache`; the CLI uses skillbook's defaults, so its entries are
    its own: the first call writes them, and the whole result) and with
    ``--no-cache``, and a Python process that stats every SKILL.md (the floor of any
    process that notices a change). The output is checked against the same Loader
    in-process with the CLI's defaults (skillbook's check command, legacy keys)."""
    from skillbook.pipeline.book import Loader

    prompt = Loader(w.workspace, config=sb.config_path, env=sb.env, cwd=sb.root).load().prompt
    env = _process_env(sb)
    cmd = [sys.executable, "-m", "skillbook", "--workspace", str(w.workspace)]
    cmd += ["--config", str(sb.config_path), "prompt"]
    stat_cmd = [sys.executable, "-c", STAT_FLOOR_SCRIPT, str(w.workspace / "skills")]
    matches = w.cli_matches is not False
    # "Unchanged skills": a first run keeps the whole result (skillbook.pipeline.cache.result_store)
    # once nothing it read is racy; the timed runs then check it and print it.
    settle([*skill_files(w.workspace), sb.config_path])
    subprocess.run(cmd, env=env, cwd=sb.root, capture_output=True, check=False)
    for _ in range(repeat):
        for key, argv in (
            ("sb_process", cmd),
            ("sb_process_nocache", [*cmd[:-1], "--no-cache", "prompt"]),
            ("stat_process", stat_cmd),
        ):
            t0 = time.perf_counter()
            proc = subprocess.run(argv, env=env, cwd=sb.root, capture_output=True, check=False)
            w.add(key, time.perf_counter() - t0)
            if proc.returncode != 0:
                w.notes.append(f"{key} exited {proc.returncode}: {proc.stderr[-300:]!r}")
                matches = False
            elif key != "stat_process":
                out = proc.stdout.decode("utf-8")
                matches = matches and out == prompt + ("\n" if prompt else "")
    w.cli_matches = matches


#: A Python process that lists the skills folder and stats every SKILL.md.
STAT_FLOOR_SCRIPT = (
    "import os, sys\n"
    "for e in os.scandir(sys.argv[1]):\n"
    "    try: os.stat(e.path + '/SKILL.md')\n"
    "    except OSError: pass\n"
)


def bench_floors(w: Workload, repeat: int) -> None:
    """In-process floors: list the skills folder and stat, or read, every SKILL.md
    (discovery does not look inside a skill folder, so neither do these)."""
    root = str(w.workspace / "skills")

    def stat_all() -> None:
        for entry in os.scandir(root):
            with contextlib.suppress(OSError):
                os.stat(entry.path + "/SKILL.md")

    def read_all() -> None:
        for entry in os.scandir(root):
            try:
                with open(entry.path + "/SKILL.md", "rb") as fh:
                    fh.read()
            except OSError:
                pass

    for _ in range(repeat):
        w.add("stat_floor", _timed(stat_all)[0])
        w.add("read_floor", _timed(read_all)[0])
        for key, bound in lower_bounds(root).items():
            w.add(key, _timed_both(bound)[1])


def lower_bounds(root: str) -> dict[str, Callable[[], None]]:
    """The cold catalog's lower bounds (issue 22), each a strict superset of the one
    before, timed in CPU seconds: (a) read every ``SKILL.md`` (the read floor, here in
    CPU), (b) that plus decoding it and splitting off its frontmatter as the pipeline
    does, (c) that plus parsing the frontmatter with the fastest YAML parser there is:
    the pipeline's own (its fast path for plain rows, its full loader for the rest), and
    PyYAML's libyaml ``CSafeLoader`` (what the full loader is built on) for comparison.
    The whole catalog (d) is ``sb_cold_cpu``."""
    import yaml

    from skillbook.pipeline.parse.text import decode_text, split_frontmatter
    from skillbook.pipeline.parse.yaml_core import YamlError, load_core_with_lines
    from skillbook.pipeline.parse.yaml_simple import simple_block

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    def blocks() -> list[str | None]:
        out: list[str | None] = []
        for entry in os.scandir(root):
            try:
                with open(entry.path + "/SKILL.md", "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            out.append(split_frontmatter(decode_text(data)[0])[0])
        return out

    def read_all() -> None:
        for entry in os.scandir(root):
            try:
                with open(entry.path + "/SKILL.md", "rb") as fh:
                    fh.read()
            except OSError:
                pass

    def pipeline_yaml() -> None:
        for block in blocks():
            if block and simple_block(block) is None:
                with contextlib.suppress(YamlError):
                    load_core_with_lines(block, fast=False)

    def libyaml() -> None:
        for block in blocks():
            if block:
                with contextlib.suppress(yaml.YAMLError):
                    yaml.load(block, Loader=loader)  # a safe loader (CSafeLoader)

    return {
        "lb_read_cpu": read_all,
        "lb_split_cpu": blocks,
        "lb_yaml_cpu": pipeline_yaml,
        "lb_libyaml_cpu": libyaml,
    }


def print_lower_bounds(results: Sequence[Workload]) -> None:
    """The lower bounds against the read floor, medians of CPU ms of the same rounds."""
    rows = [
        ("(a) read every SKILL.md", "lb_read_cpu"),
        ("(b) (a) + decode, split the frontmatter", "lb_split_cpu"),
        ("(c) (b) + YAML, the pipeline's parsers", "lb_yaml_cpu"),
        ("(c') (b) + YAML, PyYAML's CSafeLoader", "lb_libyaml_cpu"),
        ("(d) the whole cold catalog", "sb_cold_cpu"),
    ]
    print("\nLower bounds of the cold catalog (CPU ms, medians; ratio to (a), same rounds):")
    print(f"{'':42s}" + "".join(f"{w.label:>18s}" for w in results))
    for label, key in rows:
        cells = []
        for w in results:
            ms, floor = w.median(key), w.median("lb_read_cpu")
            cells.append(f"{'-':>18s}" if ms is None or not floor
                         else f"{ms:9.0f} {ms / floor:6.1f}x ")  # fmt: skip
        print(f"{label:42s}" + "".join(cells))


def bench_pi(w: Workload, repeat: int, entry: Path, scratch: Path) -> None:
    import pi_peer

    got = pi_peer.run(entry, w.workspace, scratch, repeat)
    if got.error is not None:
        w.notes.append(got.error)
        return
    w.samples["pi_op"] = got.op_s
    w.samples["pi_wall"] = got.wall_s
    w.pi_skills = got.skills


def oracle_request(w: Workload, sb: Sandbox) -> dict[str, Any]:
    return {
        "op": "prompt",
        "workspace": str(w.workspace),
        "home": str(sb.home),
        "stateDir": str(sb.state),
        "bundledDir": str(sb.bundled),
        "path": [str(sb.bin_dir)],
        "env": dict(PRESENT_ENV),
        "config": sb.config,
        # OpenClaw logs nothing per skill for a plain prompt; keep the log reading short.
        "logLevel": "warn",
        "timeoutMs": int(ORACLE_TIMEOUT_S * 1000),
    }


def _children_cpu() -> float:
    """User + system CPU seconds of waited-for children (and theirs: the oracle's child)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bench_openclaw(w: Workload, sb: Sandbox, repeat: int, oracle: Path) -> str | None:
    """One oracle process per repeat (a cold OpenClaw each time); returns its prompt."""
    request = json.dumps(oracle_request(w, sb))
    prompt: str | None = None
    for _ in range(repeat):
        cpu0, t0 = _children_cpu(), time.perf_counter()
        proc = subprocess.run(
            ["node", str(oracle / "oracle.mjs")],
            input=request,
            capture_output=True,
            text=True,
            timeout=ORACLE_TIMEOUT_S,
            check=False,
        )
        wall = time.perf_counter() - t0
        w.add("oc_cpu", _children_cpu() - cpu0)
        try:
            out = json.loads(proc.stdout)
        except json.JSONDecodeError:
            w.notes.append(
                f"oracle output unreadable (exit {proc.returncode}): {proc.stderr[-300:]}"
            )
            return None
        if not out.get("ok"):
            w.notes.append(f"oracle failed: {json.dumps(out.get('error'))[:300]}")
            return None
        w.add("oc_op", float(out["opMs"]) / 1000)
        w.add("oc_wall", wall)
        meta = out.get("meta", {})
        w.add("oc_import", float(meta.get("importMs", 0)) / 1000)
        w.openclaw_meta = {k: meta.get(k) for k in ("openclawVersion", "node", "layout")}
        prompt = out["result"]["prompt"]
    return prompt


def bench_second_openclaw_call(w: Workload, sb: Sandbox, oracle: Path) -> None:
    """OpenClaw's own second call in one process (its caches warm), for reference."""
    req = oracle_request(w, sb)
    proc = subprocess.run(
        ["node", str(oracle / "oracle.mjs")],
        input=json.dumps([req, {**req, "id": 2}]),
        capture_output=True,
        text=True,
        timeout=ORACLE_TIMEOUT_S * 2,
        check=False,
    )
    try:
        out = json.loads(proc.stdout)
        w.add("oc_op_second", float(out["results"][1]["opMs"]) / 1000)
    except (json.JSONDecodeError, KeyError, IndexError, TypeError):
        w.notes.append("oracle batch (second call) failed")


def _first_difference(a: str, b: str) -> str:
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return f"at char {i}: skillbook {a[max(0, i - 60) : i + 60]!r} vs OpenClaw {b[max(0, i - 60) : i + 60]!r}"


def bench_import(repeat: int) -> dict[str, Any]:
    """``import skillbook`` (-X importtime's cumulative figure and a wall-time difference)
    and the start-up of ``skillbook --version`` against a bare ``python -c pass``."""
    env = dict(os.environ)
    if SRC_ON_PATH:
        env["PYTHONPATH"] = str(REPO / "src")
    py = sys.executable
    script = Path(py).with_name("skillbook")
    version_cmd = [str(script)] if script.is_file() else [py, "-m", "skillbook"]
    version_cmd.append("--version")
    cumulative: list[float] = []
    wall_import: list[float] = []
    wall_pass: list[float] = []
    wall_version: list[float] = []
    heavy: set[str] = set()
    for _ in range(max(repeat, STARTUP_ROUNDS)):
        proc = subprocess.run(
            [py, "-X", "importtime", "-c", "import skillbook"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        for line in proc.stderr.splitlines():
            if not line.startswith("import time:") or "|" not in line:
                continue
            parts = [p.strip() for p in line[len("import time:") :].split("|")]
            if len(parts) == 3 and parts[2] == "skillbook":
                cumulative.append(int(parts[1]) / 1e6)
            module = parts[2].strip() if len(parts) == 3 else ""
            if module.split(".")[0] in {"yaml", "json5", "click", "rich", "msgspec"}:
                heavy.add(module.split(".")[0])
        for argv, bucket in (
            ([py, "-c", "import skillbook"], wall_import),
            ([py, "-c", "pass"], wall_pass),
            (version_cmd, wall_version),
        ):
            t0 = time.perf_counter()
            subprocess.run(argv, env=env, capture_output=True, check=False)
            bucket.append(time.perf_counter() - t0)
    return {
        "importtime_ms": _median_ms(cumulative),
        "wall_diff_ms": (statistics.median(wall_import) - statistics.median(wall_pass)) * 1000,
        "python_startup_ms": _median_ms(wall_pass),
        "version_ms": _median_ms(wall_version),
        "version_command": " ".join(
            Path(a).name if i == 0 else a for i, a in enumerate(version_cmd)
        ),
        "heavy_modules_imported": sorted(heavy),
    }


def profile_loads(w: Workload, sb: Sandbox, top: int = 25) -> str:
    """cProfile of one cold and one warm in-process load: where the time goes."""
    import cProfile
    import io
    import pstats

    buf = io.StringIO()
    loader = _loader(w.workspace, sb)
    for label in ("cold", "warm"):
        prof = cProfile.Profile()
        prof.enable()
        loader.load()
        prof.disable()
        buf.write(f"\n===== {label} load of [{w.label}] =====\n")
        stats = pstats.Stats(prof, stream=buf)
        stats.sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumulative").print_stats(top)
    return buf.getvalue()


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument(
        "--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="comma-separated skill counts"
    )
    p.add_argument(
        "--repeat", type=int, default=DEFAULT_REPEAT, help="repeats per measurement (median)"
    )
    p.add_argument(
        "--quick", action="store_true", help="smoke run: 100 skills, 1 repeat, no corpus"
    )
    p.add_argument(
        "--no-oracle", action="store_true", help="skip OpenClaw (skillbook figures only)"
    )
    p.add_argument(
        "--no-install", action="store_true", help="never install the oracle (use it if found)"
    )
    p.add_argument("--no-corpus", action="store_true", help="skip the public corpus workload")
    p.add_argument("--no-pi", action="store_true", help="skip pi's loader (the npm peer)")
    p.add_argument(
        "--no-cli", action="store_true", help="skip timing `skillbook prompt` as a process"
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="print a cProfile of a cold and a warm load of the largest workload",
    )
    p.add_argument(
        "--check", action="store_true", help="exit 1 when a prompt differs from OpenClaw's"
    )
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="where to generate workspaces (default: a temp dir)",
    )
    p.add_argument("--keep", action="store_true", help="keep the generated workspaces")
    p.add_argument("--out", type=Path, default=OUT_DIR, help="folder for the JSON results")
    args = p.parse_args(argv)
    if args.quick:
        args.sizes, args.repeat, args.no_corpus = ",".join(map(str, QUICK_SIZES)), 1, True
        args.no_pi = True
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if SRC_ON_PATH:
        sys.path.insert(0, str(REPO / "src"))
    sizes = [int(s) for s in str(args.sizes).split(",") if s.strip()]
    repeat = max(1, int(args.repeat))

    oracle: Path | None = None
    if not args.no_oracle:
        found = find_oracle(allow_install=not args.no_install)
        if isinstance(found, str):
            print(f"OpenClaw oracle unavailable, timing skillbook only: {found}", flush=True)
        else:
            oracle = found

    pi_entry: Path | None = None
    if not args.no_pi:
        import pi_peer

        got = pi_peer.find_or_install(allow_install=not args.no_install)
        if isinstance(got, str):
            print(f"pi unavailable, skipping it: {got}", flush=True)
        else:
            pi_entry = got

    # Other processes skew every figure: rounds pair the figures each ratio divides, and
    # the load average is saved with the results.
    load_start = os.getloadavg()
    root = Path(tempfile.mkdtemp(prefix="skillbook-bench-", dir=args.workdir))
    results: list[Workload] = []
    profile_text = ""
    try:
        sb = make_sandbox(root)
        workloads: list[Workload] = []
        for n in sizes:
            workloads.append(Workload(str(n), make_generated_workspace(root, n, args.seed), n))
        if not args.no_corpus:
            if CORPUS.is_dir():
                ws, count = make_corpus_workspace(root, CORPUS)
                workloads.append(Workload("corpus", ws, count))
            else:
                print(f"corpus not found at {CORPUS}; skipping it", flush=True)
        baseline_cpu: float | None = None
        if oracle is not None:
            print("[empty] OpenClaw (oracle) on an empty workspace, for its fixed CPU cost ...")
            empty = Workload("empty", root / "ws-empty", 0)
            (empty.workspace / "skills").mkdir(parents=True)
            if bench_openclaw(empty, sb, repeat, oracle) is not None:
                baseline_cpu = empty.median("oc_cpu")
        for w in workloads:
            print(f"[{w.label}] {w.files} skills: {repeat} paired rounds ...", flush=True)
            _load_new(w.workspace, sb)  # one-off lazy imports (YAML, JSON5) out of the rounds
            prime_disk_cache(w, sb)
            if not args.no_cli:
                bench_cli(w, sb, 1)  # the CLI's own entries (skillbook's check command)
            theirs: str | None = None
            prompt = ""
            for n in range(repeat):
                # One of everything per round, so each ratio pairs figures taken together.
                print(f"[{w.label}]   round {n + 1}/{repeat}", flush=True)
                prompt = bench_cold_warm(w, sb)
                bench_floors(w, 1)
                if not args.no_cli:
                    bench_cli(w, sb, 1)
                if pi_entry is not None:
                    bench_pi(w, 1, pi_entry, root / "pi-scratch")
                if oracle is not None:
                    theirs = bench_openclaw(w, sb, 1, oracle)
            print(f"[{w.label}] one edit, and the on-disk cache in-process ...", flush=True)
            bench_edits(w, sb, repeat)
            prime_disk_cache(w, sb)
            bench_disk(w, sb, repeat, prompt)
            if oracle is not None:
                cpu = w.median("oc_cpu")
                if cpu is not None and baseline_cpu is not None:
                    w.openclaw_op_cpu_ms = max(0.0, cpu - baseline_cpu)
                if theirs is not None:
                    w.identical = theirs == prompt
                    if not w.identical:
                        w.first_difference = _first_difference(prompt, theirs)
                    bench_second_openclaw_call(w, sb, oracle)
            results.append(w)
        if args.profile and workloads:
            biggest = max(workloads, key=lambda x: x.files)
            profile_text = profile_loads(biggest, sb)
    finally:
        if args.keep:
            print(f"workspaces kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)

    print("measuring start-up ...", flush=True)
    imports = bench_import(repeat)
    print()
    print(catalog_report.render(results, imports))
    print_lower_bounds(results)
    busy = max(load_start[0], os.getloadavg()[0]) > (os.cpu_count() or 1)
    print(
        f"\nmachine: {os.cpu_count()} CPUs, load average {load_start[0]:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} at end"
        + (" (above the CPU count: wall times are inflated)" if busy else "")
    )
    if profile_text:
        print("\ncProfile of the largest workload:\n" + profile_text)

    args.out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out_file = args.out / f"bench_catalog-{stamp}{'-quick' if args.quick else ''}.json"
    payload = {
        "created": stamp,
        "argv": list(sys.argv[1:] if argv is None else argv),
        "repeat": repeat,
        "machine": {
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "oracle": str(oracle) if oracle else None,
            "pi": str(pi_entry) if pi_entry else None,
            "loadavg_start": load_start,
            "loadavg_end": os.getloadavg(),
        },
        "import": imports,
        "workloads": [catalog_report.summary(w) | {"samples_s": w.samples} for w in results],
    }
    out_file.write_text(json.dumps(payload, indent=2, default=str))
    print(
        f"\nresults saved to {out_file.relative_to(REPO) if out_file.is_relative_to(REPO) else out_file}"
    )
    differs = any(w.identical is False for w in results)
    return 1 if args.check and differs else 0


if __name__ == "__main__":
    sys.exit(main())
