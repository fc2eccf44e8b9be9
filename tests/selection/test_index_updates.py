"""The embedding index keeps each model's vectors apart, and an edit re-embeds only
the edited skill while the selector ranks exactly as a fresh one."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from skillbook.model import Skill
from skillbook.selection.embedders import unit_rows
from skillbook.selection.index import EmbeddingIndex
from skillbook.selection.selector import Selector, SelectorSettings


class _Hashing:
    """A model of a fixed id whose vector of a text is drawn from the text's hash;
    it counts the texts it embeds."""

    def __init__(self, model: str) -> None:
        self._id, self.embedded = model, 0

    @property
    def id(self) -> str:
        return self._id

    def embed(self, texts: Sequence[str]) -> Any:
        self.embedded += len(texts)
        rows = [
            np.random.default_rng(list(hashlib.sha256(f"{self._id}|{t}".encode()).digest())).normal(
                size=16
            )
            for t in texts
        ]
        return unit_rows(rows)


class _Documents(_Hashing):
    """Reads skill texts as their first word only."""

    def embed_documents(self, texts: Sequence[str]) -> Any:
        return self.embed([t.split(" ")[0] for t in texts])


def _keys(texts: list[str]) -> list[str]:
    return [hashlib.sha256(t.encode()).hexdigest() for t in texts]


def test_index_keeps_each_model_apart(tmp_path: Path) -> None:
    texts = ["merge pdf", "weather"]
    one, other = _Hashing("model-a"), _Hashing("model-b/v2")
    a = EmbeddingIndex(one, tmp_path)
    va = a.vectors(_keys(texts), texts)
    a.flush()
    b = EmbeddingIndex(other, tmp_path)  # same directory, same texts, another model
    vb = b.vectors(_keys(texts), texts)
    b.flush()
    assert (b.computed, other.embedded) == (2, 2) and not np.allclose(va, vb)
    assert a.folder != b.folder and b.folder is not None and b.folder.parent == tmp_path
    reader = _Hashing("model-a")
    again = EmbeddingIndex(reader, tmp_path)  # model-a's vectors, from disk
    assert np.array_equal(again.vectors(_keys(texts), texts), va)
    assert (again.reused, reader.embedded) == (2, 0)


def _skills(descriptions: list[str]) -> list[Skill]:
    return [
        Skill.create(f"skill-{i}", d, base_dir=Path(f"/x/skill-{i}"))
        for i, d in enumerate(descriptions)
    ]


def test_an_edit_embeds_one_skill_and_ranks_as_a_fresh_build(tmp_path: Path) -> None:
    descriptions = [f"tool number {i} for task {i * 7}" for i in range(12)]
    model = _Hashing("m")
    skills = _skills(descriptions)
    settings = SelectorSettings(backend="embedding")
    sel = Selector(skills, settings=settings, embedders={"m": model}, index_dir=tmp_path)
    assert model.embedded == 12
    edited = list(skills)
    edited[5] = _skills([*descriptions[:5], "merge and split PDF files"])[5]
    report = sel.update(edited)
    assert (report.documents_rebuilt, report.vectors_computed, model.embedded) == (1, 1, 13)
    fresh = Selector(edited, settings=settings, embedders={"m": _Hashing("m")})
    for text in ("merge PDF files", "task 14"):
        assert np.array_equal(sel.channel_scores(text)["m"], fresh.channel_scores(text)["m"])
    # the edited text itself (this model knows only identical texts) finds it first
    assert sel.select("skill 5: merge and split PDF files").ranked[0].name == "skill-5"


def test_index_embeds_skill_texts_with_embed_documents(tmp_path: Path) -> None:
    model = _Documents("d")
    index = EmbeddingIndex(model, tmp_path)
    texts = ["merge pdf files", "weather in lyon"]
    stored = index.vectors(_keys(texts), texts)
    assert np.array_equal(stored, model.embed(["merge", "weather"]).astype(np.float16))
    sel = Selector(
        _skills(["merge pdf files"]),
        settings=SelectorSettings(backend="embedding"),
        embedders={"d": model},
    )
    # The skill was read as its first word ("skill 0: ..." -> "skill"); a request whole.
    assert sel.channel_scores("skill")["d"][0] == pytest.approx(1.0, abs=1e-3)
    assert sel.channel_scores("skill 0: merge pdf files")["d"][0] < 0.9
