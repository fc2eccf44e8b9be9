"""A saved selector ranks exactly as the one built (issue 22: selection in a fresh process).

In process: a selector over the corpus, saved and loaded back, gives the same
rankings, scores, channel parts, thresholds and null floors on every request of the
first labelled set. As processes: ``skillbook select`` answers a second call from the
saved selector (no click, no pipeline loader imported) with the bytes a build gives,
rebuilds after an edit, and a damaged file is rebuilt, never trusted. The models'
loaders (wordllama without its package, the multilingual weights mapped from their
uncompressed copy) give the library's own vectors, float for float.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from benchmark_scripts import benchmark_script
from hypothesis import given
from hypothesis import strategies as st
from selection_support import env_for, make_workspace, write_skill

from skillbook.cli.select_fast import select_call
from skillbook.selection import saved
from skillbook.selection.embedders import MultilingualEmbedder, WordLlamaEmbedder, unit_rows
from skillbook.selection.evaluate import load_queries
from skillbook.selection.selector import Selector, SelectorSettings

REPO = Path(__file__).resolve().parents[2]
QUERIES = REPO / "benchmarks" / "data" / "selection" / "queries.jsonl"
SRC = REPO / "src"


@pytest.fixture(scope="module")
def embedders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    cache = tmp_path_factory.mktemp("models")
    return {
        "wordllama": WordLlamaEmbedder(),
        "multilingual": MultilingualEmbedder(weights_cache=cache),
    }


def _skills(corpus: Path) -> list[Any]:
    """The corpus as the selection benchmark loads it (benchmarks/corpus_skills.py)."""
    return list(benchmark_script("corpus_skills").corpus_skills(corpus))


def _round_trip(tmp_path: Path, selectors: dict[str, Selector]) -> saved.Loaded:
    path = str(tmp_path / "x.selector")
    saved.save(path, "key", selectors, {"why": []}, {"host": "test"})
    found = saved.read_header(path, "key")
    assert found is not None
    loaded = saved.load(*found, weights_cache=tmp_path / "models")
    assert loaded is not None
    return loaded


@pytest.mark.corpus
def test_a_saved_selector_ranks_every_request_as_the_built_one(
    tmp_path: Path, corpus_dir: Path, embedders: dict[str, Any]
) -> None:
    built = Selector(_skills(corpus_dir), embedders=embedders, index_dir=tmp_path / "index")
    built.wait()
    restored = _round_trip(tmp_path, {"selector": built}).selectors["selector"]
    requests = [q.query for q in load_queries(QUERIES)]
    assert len(requests) > 400
    for request in requests:
        a, b = built.select(request), restored.select(request)
        # Every score, part, rank, threshold and floor: the same floats, not near ones.
        assert a.to_json() == b.to_json(), request
        assert [c.score for c in a.ranked] == [c.score for c in b.ranked]
    recent = ("merge these PDFs", "now the weather")
    assert (
        built.select("and in Lyon?", recent=recent).to_json()
        == restored.select("and in Lyon?", recent=recent).to_json()
    )


def test_a_restored_selector_has_every_attribute_of_a_built_one(
    tmp_path: Path, embedders: dict[str, Any]
) -> None:
    # A new attribute of Selector, LexicalChannels, Bm25Index or Tokenizer that the
    # loader does not set would fail at query time: this names it first.
    ws = make_workspace(tmp_path)
    from skillbook.pipeline.book import Loader

    book = Loader(ws, env=env_for(tmp_path), cwd=tmp_path).load()
    built = Selector(book.eligible, embedders=embedders)
    restored = _round_trip(tmp_path, {"selector": built}).selectors["selector"]
    assert set(vars(restored)) == set(vars(built))
    a, b = built._lexical, restored._lexical
    assert a is not None and b is not None
    assert set(vars(a)) == set(vars(b))
    assert a._live is not None and b._live is not None
    assert set(vars(a._live.lexical)) == set(vars(b._live.lexical))
    assert set(vars(a.tokenize)) == set(vars(b.tokenize))
    for request in ("merge two pdf files", "météo à Lyon demain", "wether in paris", "hi"):
        assert built.select(request).to_json() == restored.select(request).to_json()


def test_a_restored_selector_keeps_the_null_skill_setting(
    tmp_path: Path, embedders: dict[str, Any]
) -> None:
    """``nullSkill: false`` survives the file: the restored selector applies no floor
    (the plain path reads the same ``null_rule``), and its settings say so."""
    from skillbook.pipeline.book import Loader

    book = Loader(make_workspace(tmp_path), env=env_for(tmp_path), cwd=tmp_path).load()
    for null_skill in (True, False):
        built = Selector(
            book.eligible, settings=SelectorSettings(null_skill=null_skill), embedders=embedders
        )
        restored = _round_trip(tmp_path, {"selector": built}).selectors["selector"]
        assert restored.settings == built.settings
        request = "what is the weather in Paris"
        a, b = built.select(request), restored.select(request)
        assert a.to_json() == b.to_json()
        assert (b.floor is not None) is null_skill


def test_a_damaged_or_foreign_file_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "x.selector"
    assert saved.read_header(str(path), "key") is None  # absent
    for content in (b"", b"SBSELECT1\n", b"SBSELECT1\n\xff\xff\xff\xff\xff\xff\xff\x7f", b"junk"):
        path.write_bytes(content)
        assert saved.read_header(str(path), "key") is None
    header = {
        "format": saved.FORMAT,
        "key": "key",
        "roles": {"selector": {}},
        "arrays": [],
        "body": (0, 0),
    }
    import marshal

    blob = marshal.dumps(header)
    head = b"SBSELECT1\n" + len(blob).to_bytes(8, "little") + blob
    path.write_bytes(head + b"\0" * (-len(head) % 64))
    assert saved.read_header(str(path), "other key") is None
    found = saved.read_header(str(path), "key")
    assert found is not None
    assert saved.load(*found) is None  # a role without its parts: damaged, not a crash


# --------------------------------------------------------------------------- the models


def test_wordllama_vectors_are_the_librarys(embedders: dict[str, Any]) -> None:
    # The package's own inference, from the same weights and tokenizer files.
    import logging

    root_handlers = list(logging.getLogger().handlers)
    import wordllama
    from safetensors import safe_open
    from tokenizers import Tokenizer
    from wordllama import WordLlamaInference

    for handler in logging.getLogger().handlers[:]:  # wordllama configures the root logger
        if handler not in root_handlers:
            logging.getLogger().removeHandler(handler)
    root = Path(wordllama.__file__).parent
    with safe_open(str(root / "weights" / "l2_supercat_256.safetensors"), framework="np") as f:
        table = f.get_tensor("embedding.weight")[:, :256]
    lib = WordLlamaInference(
        table, Tokenizer.from_file(str(root / "tokenizers" / "l2_supercat_tokenizer_config.json"))
    )
    texts = [
        "merge two pdf files",
        "",
        "x" * 3000,
        "Fusionne deux PDF",
        *(f"t{i}" for i in range(300)),
    ]
    order = np.argsort([len(t) for t in texts], kind="stable")
    pooled = lib.embed([texts[i] for i in order], norm=False, batch_size=256)
    expected = np.empty_like(pooled)
    expected[order] = pooled
    assert np.array_equal(embedders["wordllama"].embed(texts), unit_rows(expected))


def test_the_mapped_multilingual_weights_are_the_librarys(tmp_path: Path) -> None:
    from skillbook.selection.multilingual import MultilingualEncoder

    texts = ["merge two pdf files", "fusionne deux fichiers pdf", "", "天気はどう"]
    library = MultilingualEncoder(workers=1)  # the library's loader, as before
    written = MultilingualEncoder(workers=1, weights_cache=tmp_path)  # writes the copy
    mapped = MultilingualEncoder(workers=1, weights_cache=tmp_path)  # maps it
    assert [p.name for p in tmp_path.iterdir()] and isinstance(mapped._w.table, np.ndarray)
    assert not mapped._w.table.flags.owndata  # a view of the mapped file, not a copy
    want = library.encode(texts, max_tokens=96)
    assert np.array_equal(written.encode(texts, max_tokens=96), want)
    assert np.array_equal(mapped.encode(texts, max_tokens=96), want)
    # A torn copy is read as absent and written again.
    (copy,) = tmp_path.iterdir()
    copy.write_bytes(copy.read_bytes()[:5000])
    again = MultilingualEncoder(workers=1, weights_cache=tmp_path)
    assert np.array_equal(again.encode(texts), library.encode(texts))
    assert copy.stat().st_size > 5000


# --------------------------------------------------------------------------- the command line


@given(st.lists(st.sampled_from(["select", "--top", "-k", "5", "0", "--json", "--backend",
                                 "bm25", "nope", "--include-ineligible", "-w", "ws", "--",
                                 "--top=3", "--color=never", "-c", "x", "--no-cache", "hi",
                                 "merge pdfs", ""]), max_size=8))  # fmt: skip
def test_select_call_parses_or_declines_any_command_line(args: list[str]) -> None:
    call = select_call(args)
    if call is not None:
        assert "select" in args and call.request in args
        assert call.request not in call.key_args[call.key_args.index("select") + 1 :]
        assert call.top is None or 1 <= call.top <= 100


def test_select_call_reads_what_the_command_accepts() -> None:
    call = select_call(["-w", "ws", "--color=never", "select", "--top", "3", "--json", "merge"])
    assert call is not None
    assert (call.request, call.top, call.as_json, call.color) == ("merge", 3, True, "never")
    assert call.key_args == ["-w", "ws", "--color", "never", "select", "--top", "3"]
    for declined in (
        ["select"],
        ["select", "a", "b"],
        ["select", "--", "-a"],
        ["select", "--top", "101", "a"],
        ["select", "--bogus", "a"],
        ["--no-cache", "select", "a"],
        ["select", "--backend", "nope", "a"],
    ):
        assert select_call(declined) is None, declined


_PROBE = (
    "import sys, runpy\n"
    "sys.argv = ['skillbook', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('skillbook', run_name='__main__')\n"
    "finally:\n"
    "    sys.stderr.write('\\nBUILT=%s\\n' % ('click' in sys.modules))\n"
    "    libs = ('sentencepiece', 'tokenizers', 'threadpoolctl')\n"
    "    sys.stderr.write('LIBS=%s\\n' % [m for m in libs if m in sys.modules])\n"
)


def _select(ws: Path, env: dict[str, str], *args: str) -> tuple[str, bool]:
    """``skillbook select`` as a process: its stdout, and whether it built (click loaded)."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, "--workspace", str(ws), "select", *args],
        env={**env, "PYTHONPATH": str(SRC)},
        cwd=ws.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    built = "BUILT=True" in proc.stderr
    if not built:
        # Ranked from the saved tables: neither tokenizer's vocabulary was loaded, nor
        # threadpoolctl (BLAS started with one thread).
        assert "LIBS=[]" in proc.stderr, (args, proc.stderr[-500:])
    return proc.stdout, built


def _settle(ws: Path) -> None:
    """Past the footprint's racy window: a build reading files this fresh keeps nothing."""
    from skillbook.pipeline.cache.footprint import RACY_NS

    newest = max(p.stat().st_ctime_ns for p in ws.rglob("*"))
    time.sleep(max(0.0, (newest + RACY_NS) / 1e9 - time.time() + 0.1))


@pytest.mark.e2e
def test_a_fresh_select_process_answers_from_the_saved_selector(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    write_skill(
        ws / "skills", "apple-notes", "Search and edit Apple Notes.", 'os: ["darwin-only"]\n'
    )
    env = env_for(tmp_path)
    _settle(ws)
    requests = ["merge two pdf files", "météo à Lyon demain", "search my notes", "hello there"]
    saved_for: set[tuple[str, ...]] = set()
    for turn, flags in enumerate(
        ((), ("--json",), ("--json", "--include-ineligible"), ("--top", "2"))
    ):
        # A saved selector answers any request and either output format of its options.
        key = tuple(f for f in flags if f != "--json")
        for i, request in enumerate(requests):
            first, built = _select(ws, env, *flags, request)
            assert built == (key not in saved_for), (flags, request)
            saved_for.add(key)
            if (i + turn) % 2:
                # A process that builds costs seconds: each request is built afresh
                # under two of the four options, each option for two of the requests.
                continue
            plain, _ = _select(ws, {**env, "SKILLBOOK_CACHE": "0"}, *flags, request)
            assert first == plain, (flags, request)
            if "--json" in flags:
                json.loads(first)
    # An edit: the next call rebuilds (and ranks the new text), then loads again.
    write_skill(ws / "skills", "weather", "Tide tables and surf forecasts for beaches.")
    _settle(ws)
    out, built = _select(ws, env, "--json", "surf forecast at the beach")
    assert built and json.loads(out)["ranked"][0]["name"] == "weather"
    again, built = _select(ws, env, "--json", "surf forecast at the beach")
    assert not built and again == out


@pytest.mark.e2e
def test_a_damaged_saved_selector_is_rebuilt_not_trusted(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    env = env_for(tmp_path)
    _settle(ws)
    want, built = _select(ws, env, "--json", "merge two pdf files")
    assert built
    (file,) = (tmp_path / "state" / "cache" / "selection").glob("*.selector")
    raw = bytearray(file.read_bytes())
    raw[-4096:] = b"\x7f" * 4096  # the arrays: vectors and BM25 scores
    file.write_bytes(bytes(raw))
    out, built = _select(ws, env, "--json", "merge two pdf files")
    assert built and out == want  # the checksum failed: rebuilt, not ranked with junk
    file.write_bytes(b"SBSELECT1\n" + os.urandom(200))
    out, built = _select(ws, env, "--json", "merge two pdf files")
    assert built and out == want  # unreadable: rebuilt and saved again
    out, built = _select(ws, env, "--json", "merge two pdf files")
    assert not built and out == want
