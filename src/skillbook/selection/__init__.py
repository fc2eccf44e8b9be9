"""Query-time selection: the skills that fit a request reach the model (``skills.selection``).

Stages, one module each: :mod:`~skillbook.selection.documents` (what is ranked of a
skill), :mod:`~skillbook.selection.triggers` (OpenPocket's hints),
:mod:`~skillbook.selection.lexical` (BM25), :mod:`~skillbook.selection.embedders`
and :mod:`~skillbook.selection.http_embedder` (vectors),
:mod:`~skillbook.selection.index` (vectors on disk by content hash),
:mod:`~skillbook.selection.fusion` (hybrid scores), :mod:`~skillbook.selection.selector`
(the ranking), :mod:`~skillbook.selection.options` (the config made concrete),
:mod:`~skillbook.selection.router` (:func:`route`: ``direct``, ``ambiguous`` or
``nomatch`` per request), :mod:`~skillbook.selection.plan` and
:mod:`~skillbook.runtime.find_skills` (what the model sees: stable system section,
per-request block, ``find_skills``), :mod:`~skillbook.selection.eligibility` (why a
matching skill is not offered),
:mod:`~skillbook.selection.evaluate` and :mod:`~skillbook.runtime.trigger_eval`.

A part above security and below the runtime: the pipeline never imports it, and importing it loads no model and no
numpy; backends load when a selector is built (``pip install "skillbook[selection]"``).
This ``__init__`` holds the package's exceptions.
"""

from __future__ import annotations

from skillbook.errors import SkillbookError


class SelectionUnavailable(SkillbookError, ImportError):
    """A package that a selection backend needs is not installed."""


class EmbeddingError(SkillbookError):
    """An embedding endpoint could not be reached or gave an unusable answer."""


class QueryFileError(SkillbookError, ValueError):
    """A labelled query file is malformed; the message names the line."""
