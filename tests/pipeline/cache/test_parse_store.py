"""The persistent parse cache (skillbook.pipeline.cache.parse_store) and its codec (skillbook.pipeline.cache.parse_codec).

What must hold: a stored file comes back equal to a fresh parse; a changed, racy or
foreign entry is never used; damaged files heal; several processes may share one
folder; the folder stays bounded; one switch (Python, env, config, CLI) turns it off.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillbook.config.profile import OPENCLAW_2026_9
from skillbook.model import ParsedSkillFile
from skillbook.pipeline.book import Loader
from skillbook.pipeline.cache.footprint import RACY_NS
from skillbook.pipeline.cache.parse_codec import decode_parsed, encode_parsed
from skillbook.pipeline.cache.parse_store import SHARDS, ParseStore, cache_folder, store_namespace
from skillbook.pipeline.parse.skill_file import parse_skill_text

REPO = Path(__file__).resolve().parents[3]
#: Stored "in the future": entries count as older than the racy window.
LATER_NS = 10 * RACY_NS


def later_clock() -> int:
    return time.time_ns() + LATER_NS


def same(a: ParsedSkillFile, b: ParsedSkillFile) -> bool:
    """Equal field for field, with exact types (2 is not 2.0, -0.0 is not 0.0) and NaN
    equal to NaN: the reprs of every field, those equality leaves out included."""
    return repr(a) == repr(b)


TRICKY = [
    "---\nname: plain\ndescription: A plain skill.\n---\n# Title\nBody.\n",
    "\ufeff---\nname: bom\ndescription: 'quoted: yes'\n---\nbody",
    "---\nname: nums\ndescription: d\nversion: 2.0\nneg: -0.0\nbig: 123456789012\n"
    "inf: .inf\nnan: .nan\nflag: true\nnothing: null\n---\n",
    '---\nname: gated\ndescription: d\nmetadata: {"openclaw": {"emoji": "x", "requires": '
    '{"bins": ["git"], "env": ["TOKEN"]}, "primaryEnv": "TOKEN", "os": ["linux"], "install": '
    '[{"kind": "download", "url": "https://example.com/a.tgz", "stripComponents": 2, '
    '"sha256": "' + "a" * 64 + '"}, {"kind": "brew", "formula": "jq", "bins": ["jq"]}]}}\n---\n',
    "---\nname: json5\ndescription: d\nmetadata:\n  {\n    openclaw: { always: true, },\n  }\n---\n",
    "---\nname: dispatch\ndescription: d\ncommand-dispatch: tool\ncommand-tool: run\n"
    "command-arg-mode: weird\nuser-invocable: false\ndisable-model-invocation: true\n---\n",
    "---\nname: broken\ndescription: a: b: c\nkey: [unclosed\n---\n",
    "---\nname: dup\nname: twice\ndescription: d\n---\n",
    "no frontmatter at all\n",
    "---\nname: open\ndescription: never closed\n",
    "---\nname: nested\ndescription: d\ndata:\n  list: [1, 2.5, 'three', {a: b}]\n"
    "  '10': ten\n  '2': two\n---\n",
    "---\nname: ctrl\ndescription: has \x07 bell\n---\n",
]


@pytest.mark.parametrize("text", TRICKY)
@pytest.mark.parametrize("profile", [None, OPENCLAW_2026_9])
def test_codec_round_trip_is_exact(text: str, profile: object) -> None:
    rules = OPENCLAW_2026_9.frontmatter if profile is not None else None
    parsed = parse_skill_text(text, path=Path("/skills/x/SKILL.md"), rules=rules)
    blob = encode_parsed(parsed)
    assert blob is not None
    back = decode_parsed(blob)
    assert same(parsed, back)
    assert type(back.frontmatter.values).__name__ == "mappingproxy"


def test_codec_keeps_int_and_float_apart() -> None:
    text = (
        '---\nname: n\ndescription: d\nmetadata: {"openclaw": {"install": [{"kind": '
        '"download", "url": "https://e.com/a.tgz", "stripComponents": 2}, {"kind": "download",'
        ' "url": "https://e.com/b.tgz", "stripComponents": 1.5}]}}\n---\n'
    )
    back = decode_parsed(encode_parsed(parse_skill_text(text)) or b"")
    assert back.metadata is not None and back.metadata.install is not None
    first, second = back.metadata.install
    assert type(first.strip_components) is int and first.to_json()["stripComponents"] == 2
    assert second.strip_components == 1.5


def test_codec_refuses_values_msgpack_cannot_carry() -> None:
    big = parse_skill_text(
        "---\nname: b\ndescription: d\nhuge: 123456789012345678901234567890\n---\n"
    )
    assert encode_parsed(big) is None
    lone = parse_skill_text(
        '---\nname: s\ndescription: d\nmetadata: {"openclaw": {"emoji": "\\ud800"}}\n---\n'
    )
    assert lone.metadata is not None and lone.metadata.emoji == "\ud800"
    assert encode_parsed(lone) is None


def test_codec_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        decode_parsed(b"\x93\x01\x02")


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.text(st.characters(categories=("L", "N")), min_size=1, max_size=8),
        st.one_of(
            st.integers(-(2**63), 2**63 - 1),
            st.floats(allow_nan=True),
            st.booleans(),
            st.none(),
            st.text(max_size=20),
        ),
        max_size=6,
    )
)
def test_codec_round_trips_any_frontmatter(fields: dict[str, object]) -> None:
    lines = "".join(f"{k}: {json.dumps(v)}\n" for k, v in fields.items() if k not in ("name",))
    text = f"---\nname: p\ndescription: d\n{lines}---\nbody\n"
    parsed = parse_skill_text(text)
    blob = encode_parsed(parsed)
    if blob is None:  # a value msgpack cannot carry: not cached, nothing to compare
        return
    back = decode_parsed(blob)
    assert back == parsed
    for key, value in parsed.frontmatter.data.items():
        got = back.frontmatter.data[key]
        assert type(got) is type(value)
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(got)


# --------------------------------------------------------------------------- the store


def write(root: Path, name: str, description: str, extra: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\nBody.\n")
    return path


def identity(path: Path) -> tuple[int, ...]:
    s = os.stat(path)
    return (s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)


def test_store_answers_a_new_process_for_the_same_identity(tmp_path: Path) -> None:
    md = write(tmp_path / "skills", "alpha", "First.")
    parsed = parse_skill_text(md.read_bytes(), path=md)
    first = ParseStore(tmp_path / "cache", namespace="ns", clock=later_clock)
    first.store(str(md), identity(md), parsed)
    assert first.flush() == 1
    second = ParseStore(tmp_path / "cache", namespace="ns")
    got = second.lookup(str(md), identity(md))
    assert got is not None and same(got, parsed)
    assert second.hits == 1


def test_store_never_answers_for_another_identity_or_namespace(tmp_path: Path) -> None:
    md = write(tmp_path / "skills", "alpha", "First.")
    old = identity(md)
    store = ParseStore(tmp_path / "cache", namespace="ns", clock=later_clock)
    store.store(str(md), old, parse_skill_text(md.read_bytes()))
    store.flush()
    write(tmp_path / "skills", "alpha", "Second, longer.")
    assert ParseStore(tmp_path / "cache", namespace="ns").lookup(str(md), identity(md)) is None
    assert ParseStore(tmp_path / "cache", namespace="other").lookup(str(md), old) is None
    assert ParseStore(tmp_path / "cache", namespace="ns").lookup(str(md), old) is not None


def test_store_does_not_trust_racily_clean_entries(tmp_path: Path) -> None:
    md = write(tmp_path / "skills", "alpha", "First.")
    now = identity(md)[4]  # stored the moment the file changed: same tick possible
    store = ParseStore(tmp_path / "cache", namespace="ns", clock=lambda: now)
    store.store(str(md), identity(md), parse_skill_text(md.read_bytes()))
    store.flush()
    reader = ParseStore(tmp_path / "cache", namespace="ns")
    assert reader.lookup(str(md), identity(md)) is None
    assert reader.racy == 1


def _loader(ws: Path, env: dict[str, str], **kw: object) -> Loader:
    return Loader(ws, env=env, cwd=ws, **kw)  # type: ignore[arg-type]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "HOME": str(tmp_path / "home"),
        "PATH": "/nonexistent",
        "SKILLBOOK_STATE_DIR": str(tmp_path / "state"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "bundled"),
    }


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    skills = tmp_path / "ws" / "skills"
    for i in range(24):
        write(skills, f"skill-{i:02d}", f"Skill number {i}.", f"version: {i}\n")
    return tmp_path / "ws"


def _store(env: dict[str, str], *, clock: object = later_clock) -> ParseStore:
    folder = Path(env["SKILLBOOK_STATE_DIR"]) / "cache" / "skills"
    return ParseStore(folder, namespace=store_namespace("openclaw-2026.4", "openclaw"), clock=clock)  # type: ignore[arg-type]


def test_loader_keeps_parsed_files_for_the_next_process(ws: Path, env: dict[str, str]) -> None:
    cold = _loader(ws, env, cache=_store(env))
    book = cold.load()
    assert cold.cache.misses == 24
    assert sorted(p.name for p in cold.cache_dir.iterdir() if p.suffix == ".bin")  # type: ignore[union-attr]
    fresh = _loader(ws, env)  # the default store of the state dir: what a new process uses
    again = fresh.load()
    assert fresh.cache.misses == 0 and fresh.cache.store_hits == 24
    assert again.prompt == book.prompt
    plain = _loader(ws, env, cache=False).load()
    assert [same(a.parsed, b.parsed) for a, b in zip(again.skills, plain.skills, strict=True)]
    assert all(same(a.parsed, b.parsed) for a, b in zip(again.skills, plain.skills, strict=True))


def test_loader_reparses_only_the_changed_file(ws: Path, env: dict[str, str]) -> None:
    _loader(ws, env, cache=_store(env)).load()
    write(ws / "skills", "skill-03", "Changed description, longer than before.")
    loader = _loader(ws, env, cache=_store(env))
    book = loader.load()
    assert loader.cache.misses == 1 and loader.cache.store_hits == 23
    assert "Changed description" in book.prompt
    third = _loader(ws, env, cache=_store(env))
    assert "Changed description" in third.load().prompt and third.cache.misses == 0


@pytest.mark.parametrize("damage", ["garbage", "truncate", "empty", "foreign"])
def test_damaged_cache_files_heal(ws: Path, env: dict[str, str], damage: str) -> None:
    expected = _loader(ws, env, cache=False).load().prompt
    _loader(ws, env, cache=_store(env)).load()
    folder = Path(env["SKILLBOOK_STATE_DIR"]) / "cache" / "skills"
    files = sorted(folder.glob("*.bin"))
    assert files
    for f in files:
        data = f.read_bytes()
        f.write_bytes(
            {
                "garbage": os.urandom(64),
                "truncate": data[: len(data) // 2],
                "empty": b"",
                "foreign": json.dumps({"not": "ours"}).encode(),
            }[damage]
        )
    hurt = _loader(ws, env, cache=_store(env))
    assert hurt.load().prompt == expected
    assert hurt.cache.misses == 24
    assert hurt.cache.disk is not None and hurt.cache.disk.corrupt >= 1
    healed = _loader(ws, env, cache=_store(env))
    assert healed.load().prompt == expected
    assert healed.cache.misses == 0


def test_a_damaged_payload_is_a_miss_not_an_error(ws: Path, env: dict[str, str]) -> None:
    import msgspec

    from skillbook.pipeline.cache import parse_store as ps

    _loader(ws, env, cache=_store(env)).load()
    folder = Path(env["SKILLBOOK_STATE_DIR"]) / "cache" / "skills"
    for f in folder.glob("*.bin"):
        shard = msgspec.msgpack.decode(f.read_bytes(), type=ps._ShardFile)
        for key, entry in list(shard.entries.items()):
            shard.entries[key] = ps._Entry(entry.identity, entry.stored_at, msgspec.Raw(b"\xc1"))
        f.write_bytes(msgspec.msgpack.encode(shard))
    loader = _loader(ws, env, cache=_store(env))
    assert loader.load().prompt == _loader(ws, env, cache=False).load().prompt
    assert loader.cache.misses == 24


def test_entries_of_deleted_skills_are_dropped(tmp_path: Path) -> None:
    import zlib

    import msgspec

    from skillbook.pipeline.cache import parse_store as ps

    root = tmp_path / "skills"
    files = [write(root, f"s{i:02d}", f"Skill {i}.") for i in range(40)]
    by_shard: dict[int, list[Path]] = {}
    for md in files:
        by_shard.setdefault(zlib.crc32(str(md).encode()) % SHARDS, []).append(md)
    crowded = max(by_shard.values(), key=len)
    assert len(crowded) >= 2
    store = ParseStore(tmp_path / "cache", namespace="ns", clock=later_clock)
    for md in files:
        store.store(str(md), identity(md), parse_skill_text(md.read_bytes()))
    store.flush()
    keep, *gone = crowded
    for md in gone:
        md.unlink()
    write(root, keep.parent.name, "Edited: this shard is written again.")
    again = ParseStore(tmp_path / "cache", namespace="ns", clock=later_clock)
    again.store(str(keep), identity(keep), parse_skill_text(keep.read_bytes()))
    again.flush()
    keys: set[str] = set()
    for f in (tmp_path / "cache").glob("*.bin"):
        shard = msgspec.msgpack.decode(f.read_bytes(), type=ps._ShardFile)
        if str(keep) in shard.entries:
            keys = set(shard.entries)
    assert keys == {str(keep)}


def test_the_folder_stays_under_its_bound(tmp_path: Path) -> None:
    store = ParseStore(tmp_path / "cache", namespace="ns", max_bytes=4000, clock=later_clock)
    for r in range(30):
        md = write(tmp_path / f"root{r}", "alpha", "x" * 200)
        store.store(str(md), identity(md), parse_skill_text(md.read_bytes()))
        store.flush()
        time.sleep(0.002)
    total = sum(p.stat().st_size for p in (tmp_path / "cache").glob("*.bin"))
    assert 0 < total <= 4000


def test_stale_temporary_files_are_removed(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    stale, fresh = folder / ".x.bin.1.aa.tmp", folder / ".y.bin.2.bb.tmp"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"half")
    old = time.time() - 2 * 3600
    os.utime(stale, (old, old))
    md = write(tmp_path / "skills", "alpha", "First.")
    store = ParseStore(folder, namespace="ns")
    store.store(str(md), identity(md), parse_skill_text(md.read_bytes()))
    store.flush()
    assert not stale.exists() and fresh.exists()


def test_an_unwritable_folder_turns_the_store_off(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    md = write(tmp_path / "skills", "alpha", "First.")
    store = ParseStore(blocker / "cache", namespace="ns")
    store.store(str(md), identity(md), parse_skill_text(md.read_bytes()))
    assert store.flush() == 0
    assert store.disabled
    assert store.lookup(str(md), identity(md)) is None


def test_profiles_and_modes_have_their_own_entries(ws: Path, env: dict[str, str]) -> None:
    _loader(ws, env).load()
    other = _loader(ws, env, compat="openclaw-2026.9")
    other.load()
    assert other.cache.store_hits == 0
    strict = _loader(ws, env, mode="strict")
    strict.load()
    assert strict.cache.store_hits == 0


# --------------------------------------------------------------------------- the switch


def test_cache_folder_precedence(tmp_path: Path) -> None:
    state = tmp_path / "state"
    default = state / "cache" / "skills"
    assert cache_folder(None, env={}, configured=None, state_dir=state) == (default, "the default")
    assert cache_folder(False, env={}, configured=True, state_dir=state)[0] is None
    assert (
        cache_folder(tmp_path / "x", env={}, configured=False, state_dir=state)[0] == tmp_path / "x"
    )
    assert (
        cache_folder(None, env={"SKILLBOOK_CACHE": "0"}, configured=True, state_dir=state)[0]
        is None
    )
    assert (
        cache_folder(None, env={"SKILLBOOK_CACHE": "on"}, configured=False, state_dir=state)[0]
        == default
    )
    assert (
        cache_folder(True, env={"SKILLBOOK_CACHE": "off"}, configured=None, state_dir=state)[0]
        == default
    )
    assert cache_folder(None, env={}, configured=False, state_dir=state)[0] is None
    moved = {"SKILLBOOK_CACHE_DIR": str(tmp_path / "elsewhere")}
    assert (
        cache_folder(None, env=moved, configured=None, state_dir=state)[0] == tmp_path / "elsewhere"
    )


def _cache_files(env: dict[str, str]) -> list[Path]:
    return sorted((Path(env["SKILLBOOK_STATE_DIR"]) / "cache").rglob("*.bin"))


def test_off_in_python_env_and_config(ws: Path, env: dict[str, str], tmp_path: Path) -> None:
    _loader(ws, env, cache=False).load()
    _loader(ws, {**env, "SKILLBOOK_CACHE": "off"}).load()
    config = tmp_path / "openclaw.json"
    config.write_text(json.dumps({"skills": {"cache": False}}))
    loader = _loader(ws, env, config=config)
    loader.load()
    assert loader.cache_dir is None and loader.cache_reason == "skills.cache is false"
    assert _cache_files(env) == []
    _loader(ws, env).load()
    assert _cache_files(env)


def test_cli_no_cache_switch(ws: Path, env: dict[str, str]) -> None:
    from click.testing import CliRunner

    from skillbook.cli.app import cli

    runner = CliRunner()
    result = runner.invoke(cli, ["--workspace", str(ws), "--no-cache", "prompt"], env=env)
    assert result.exit_code == 0, result.output
    assert "skill-01" in result.output
    result = runner.invoke(cli, ["prompt", "--no-cache", "--workspace", str(ws)], env=env)
    assert result.exit_code == 0, result.output
    assert _cache_files(env) == []
    result = runner.invoke(cli, ["--workspace", str(ws), "prompt"], env=env)
    assert result.exit_code == 0
    assert _cache_files(env)


# --------------------------------------------------------------------------- processes

_WORKER = """
import json, sys, time
from pathlib import Path
from skillbook.pipeline.book import Loader
ws, state, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
env = {"HOME": state + "/home", "PATH": "/nonexistent", "SKILLBOOK_STATE_DIR": state,
       "SKILLBOOK_BUNDLED_SKILLS_DIR": state + "/bundled"}
prompts = []
for i in range(rounds):
    if sys.argv[4] == "edit":
        (ws / "skills" / f"skill-{i % 24:02d}" / "SKILL.md").write_text(
            f"---\\nname: skill-{i % 24:02d}\\ndescription: Edited {i}.\\n---\\nBody.\\n")
    prompts.append(Loader(ws, env=env, cwd=ws).load().prompt)
print(json.dumps(prompts[-1]))
"""


@pytest.mark.subprocess
def test_several_processes_share_one_cache_folder(ws: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "shared-state")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(ws), state, "6", "read"],
            stdout=subprocess.PIPE,
            env=env,
        )
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=120)[0] for p in readers]
    assert all(p.returncode == 0 for p in readers)
    plain_env = {
        "HOME": state + "/home",
        "PATH": "/nonexistent",
        "SKILLBOOK_STATE_DIR": state,
        "SKILLBOOK_BUNDLED_SKILLS_DIR": state + "/bundled",
    }
    expected = Loader(ws, env=plain_env, cwd=ws, cache=False).load().prompt
    assert {json.loads(o) for o in outs} == {expected}
    # Writers and readers at once: every process sees exactly what is on disk at the end.
    mixed = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(ws), state, "5", kind],
            stdout=subprocess.PIPE,
            env=env,
        )
        for kind in ("edit", "read", "read")
    ]
    for p in mixed:
        p.communicate(timeout=120)
        assert p.returncode == 0
    final = Loader(ws, env=plain_env, cwd=ws, cache=False).load().prompt
    check = Loader(ws, env=plain_env, cwd=ws)
    assert check.load().prompt == final
    # Every cache file the processes left is whole and readable.
    store = ParseStore(Path(state) / "cache" / "skills", namespace="any")
    for f in (Path(state) / "cache" / "skills").glob("*.bin"):
        import msgspec

        from skillbook.pipeline.cache import parse_store as ps

        msgspec.msgpack.decode(f.read_bytes(), type=ps._ShardFile)
    assert store.corrupt == 0


def test_the_code_fingerprint_stats_every_parser_module_that_exists() -> None:
    """A moved parser module must not fall out of the key (the entry would outlive an edit)."""
    from skillbook.pipeline.cache import parse_store

    package = Path(parse_store.__file__).resolve().parents[2]
    listed = {package / name for name in parse_store._PARSER_MODULES}
    missing = sorted(str(p.relative_to(package)) for p in listed if not p.is_file())
    assert missing == []
    parse_stage = set((package / "pipeline" / "parse").glob("[!_]*.py"))
    assert parse_stage <= listed, sorted(p.name for p in parse_stage - listed)
    assert ":-" not in parse_store.code_fingerprint()
