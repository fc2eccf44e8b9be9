"""Search ranks with the selector (BM25 + embeddings) and follows the catalog across processes."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from skillbook.distribution.hub.app import create_app
from skillbook.distribution.hub.http import Hub
from skillbook.distribution.hub.search import HubSearch
from skillbook.distribution.hub.server_config import HubSettings

from .helpers import BASE, eventually, make_skill, publish

SKILLS = {
    "pdf-tools": ("Merge, split and rotate PDF documents.", "Use qpdf to merge PDF files."),
    "weather": ("Get the current weather and a forecast for a city.", "Call the forecast API."),
    "git-helper": ("Clean up merged git branches and tags.", "Run git branch --merged."),
}


def _publish_all(client: TestClient, token: str, tmp_path: Path) -> None:
    for slug, (description, body) in SKILLS.items():
        publish(client, token, make_skill(tmp_path / slug, slug, description, body=body))


def _slugs(client: TestClient, query: str, **params: str) -> list[str]:
    rows = client.get("/api/v1/search", params={"q": query, **params}).json()["results"]
    return [r["slug"] for r in rows]


def test_words_rank_the_right_skill_first_and_nonsense_finds_nothing(
    client: TestClient, token: str, tmp_path: Path
) -> None:
    _publish_all(client, token, tmp_path)
    assert _slugs(client, "merge pdf files")[0] == "pdf-tools"
    assert _slugs(client, "forecast for paris")[0] == "weather"
    assert _slugs(client, "qqqzzz xyzzy") == []
    # An exact slug ranks first; exact mode returns only that.
    assert _slugs(client, "weather")[0] == "weather"
    assert _slugs(client, "git-helper", mode="exact") == ["git-helper"]
    assert len(_slugs(client, "*", limit="2")) == 2


def test_the_body_counts_not_only_the_name(client: TestClient, token: str, tmp_path: Path) -> None:
    _publish_all(client, token, tmp_path)
    assert _slugs(client, "qpdf") == ["pdf-tools"]


def test_a_second_process_sees_what_the_first_published(
    hub_settings: HubSettings, hub: Hub, client: TestClient, token: str, tmp_path: Path
) -> None:
    other = Hub.open(hub_settings)  # another replica: own engine, own search cache
    with TestClient(create_app(hub_settings, hub=other), base_url=BASE) as second:
        assert _slugs(second, "forecast") == []
        _publish_all(client, token, tmp_path)
        # Within the other replica's catalog poll delay (hub.md "Search"), not at once.
        eventually(
            lambda: _slugs(second, "forecast")[:1] == ["weather"], "the replica sees the publish"
        )
        # It may have seen the weather skill in a generation before the last publish and
        # still have one rebuild to go: wait until it searches the primary's generation.
        eventually(
            lambda: (
                _slugs(second, "forecast") is not None
                and other.search._generation == hub.db.generation()
            ),
            "the replica reaches the last generation",
        )
        rebuilds = other.search.rebuilds
        _slugs(second, "merge pdf")
        assert other.search.rebuilds == rebuilds  # no change, no rebuild
    other.db.close()


def test_hybrid_search_uses_the_embedding_models(
    hub: Hub, token: str, client: TestClient, tmp_path: Path
) -> None:
    _publish_all(client, token, tmp_path)
    hybrid = HubSearch(hub.db, backend="hybrid")
    hits = hybrid.search("combine two PDFs into one document", limit=3)
    assert hits and hits[0].entry.slug == "pdf-tools"
    # No shared word: only the embeddings can find it ("météo" is French for weather).
    assert [h.entry.slug for h in hybrid.search("prévisions météo", limit=3)][:1] == ["weather"]
    selector = hybrid._selector
    assert selector is not None and {"wordllama", "multilingual"} <= set(selector.channels)


def test_answers_are_cached_per_catalog_generation(
    hub: Hub, client: TestClient, token: str, tmp_path: Path
) -> None:
    _publish_all(client, token, tmp_path)
    search = HubSearch(hub.db, backend="bm25")
    first = search.search("merge pdf")
    selector = search._selector
    assert selector is not None
    calls = []
    original = selector.rank

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    selector.rank = counting  # type: ignore[method-assign,assignment]
    assert search.search("merge pdf") is first and calls == []
    publish(client, token, make_skill(tmp_path / "pdf-ocr", "pdf-ocr", "OCR for PDF scans."))
    again = search.search("merge pdf")
    assert len(calls) == 1 and {h.entry.slug for h in again} >= {"pdf-tools", "pdf-ocr"}
