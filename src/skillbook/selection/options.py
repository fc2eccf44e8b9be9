"""``skills.selection`` as the selector needs it: settings, embedders and the index folder.

Input: the validated :class:`~skillbook.config.file.SelectionConfig` (the core checks the
keys and values; this module gives them meaning), the environment mapping the caller
chose (for ``embedding.apiKeyEnv``) and the state folder. Output:
:class:`~skillbook.selection.selector.SelectorSettings`, the embedding backends by
channel name, and diagnostics for the backends that could not be built — a missing
package or a model that is not on disk degrades the ranking to the channels left,
it never stops the agent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from skillbook import diagnostics as diag
from skillbook.config.file import SelectionConfig
from skillbook.diagnostics import Diagnostic
from skillbook.model import Skill
from skillbook.selection.selector import DEFAULT_TOP_K, Selector, SelectorSettings

if TYPE_CHECKING:
    from skillbook.pipeline.book import SkillBook
    from skillbook.selection.embedders import Embedder

__all__ = [
    "DEFAULT_INDEX_DIRNAME",
    "build_embedders",
    "index_dir",
    "selector_for",
    "selector_settings",
]

#: Where the embedding index lives under the state folder (``~/.openclaw``).
DEFAULT_INDEX_DIRNAME: Final = "selection-index"


def selector_settings(cfg: SelectionConfig, *, backend: str | None = None) -> SelectorSettings:
    return SelectorSettings(
        backend=backend or cfg.backend or "hybrid",
        fusion=cfg.fusion or "mix",
        top_k=cfg.top_k or DEFAULT_TOP_K,
        min_score=cfg.min_score,
        pinned=cfg.pinned,
        null_skill=cfg.null_skill is not False,
    )


def build_embedders(
    cfg: SelectionConfig,
    *,
    env: Mapping[str, str],
    backend: str | None = None,
    model_cache: Path | None = None,
) -> tuple[dict[str, Embedder], tuple[Diagnostic, ...]]:
    """The embedding channels ``cfg`` asks for; those that cannot be built are reported.

    ``model_cache``: a folder for the multilingual model's uncompressed weights
    (memory-mapped: a process opens them in milliseconds instead of inflating them)."""
    if (backend or cfg.backend or "hybrid") == "bm25":
        return {}, ()
    from skillbook.selection.embedders import (
        FastEmbedEmbedder,
        Model2VecEmbedder,
        MultilingualEmbedder,
        WordLlamaEmbedder,
    )
    from skillbook.selection.http_embedder import HttpEmbedder

    emb = cfg.embedding
    provider = emb.provider or "wordllama"
    out: dict[str, Embedder] = {}
    found: list[Diagnostic] = []

    def attempt(channel: str, what: str, make: object) -> None:
        try:
            out[channel] = make()  # type: ignore[operator]
        except Exception as exc:  # a backend that cannot load must not stop the agent
            found.append(
                diag.warning(
                    "selection.backend-unavailable",
                    f"skills.selection.embedding: {what} cannot be used ({exc}); skills are "
                    "ranked without it. Fix the setting or install the package it names.",
                )
            )

    if provider == "wordllama":
        attempt("wordllama", "wordllama", WordLlamaEmbedder)
    elif provider in ("model2vec", "fastembed", "openai"):
        if not emb.model or (provider == "openai" and not emb.url):
            need = "model and url" if provider == "openai" else "model"
            found.append(
                diag.warning(
                    "selection.backend-unavailable",
                    f"skills.selection.embedding: provider {provider!r} needs {need}; "
                    "skills are ranked without it.",
                )
            )
        elif provider == "model2vec":
            attempt(
                "embedding",
                f"model2vec model {emb.model}",
                lambda: Model2VecEmbedder(emb.model or ""),
            )
        elif provider == "fastembed":
            attempt(
                "embedding",
                f"fastembed model {emb.model}",
                lambda: FastEmbedEmbedder(emb.model or ""),
            )
        else:
            key = env.get(emb.api_key_env) if emb.api_key_env else None
            attempt(
                "embedding",
                f"the /embeddings endpoint {emb.url}",
                lambda: HttpEmbedder(emb.url or "", emb.model or "", api_key=key),
            )
    if emb.multilingual is not False:
        attempt(
            "multilingual",
            "the multilingual model",
            lambda: MultilingualEmbedder(weights_cache=model_cache),
        )
    return out, tuple(found)


def index_dir(cfg: SelectionConfig, state_dir: Path) -> Path:
    """``skills.selection.indexDir`` (``~`` expanded), else ``<state dir>/selection-index``."""
    if cfg.index_dir:
        return Path(cfg.index_dir).expanduser()
    return state_dir / DEFAULT_INDEX_DIRNAME


def selector_for(
    book: SkillBook,
    *,
    env: Mapping[str, str] | None = None,
    skills: Sequence[Skill] | None = None,
    backend: str | None = None,
    persist: bool = True,
    embedders: Mapping[str, Embedder] | None = None,
    model_cache: Path | None = None,
) -> tuple[Selector, tuple[Diagnostic, ...]]:
    """A selector over ``book.eligible`` (or ``skills``) as ``skills.selection`` configures it.

    ``embedders`` (another selector's, :attr:`Selector.embedders`) are reused instead of
    loading the models again: two rankings of one request share them.
    ``model_cache``: see :func:`build_embedders`.
    """
    cfg = book.config.skills.selection
    found: tuple[Diagnostic, ...] = ()
    if embedders is None:
        embedders, found = build_embedders(
            cfg, env=env or {}, backend=backend, model_cache=model_cache
        )
    selector = Selector(
        book.eligible if skills is None else skills,
        settings=selector_settings(cfg, backend=backend),
        embedders=embedders,
        index_dir=index_dir(cfg, book.paths.state_dir) if persist else None,
    )
    return selector, found
