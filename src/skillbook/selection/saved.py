"""A built selector kept on disk, so a fresh ``skillbook select`` ranks without building.

Input: built :class:`~skillbook.selection.selector.Selector` objects (their BM25
indexes, speller words, vectors and trigger hints) and what the command printed
beside them. Output: one file per command line (:func:`save`), and, read back by
:func:`load`, selectors that rank exactly as the ones saved: the same BM25 arrays
scored by the same arithmetic, the same float16-rounded vectors (kept as float32, so
:mod:`skillbook.selection.plain` hands them to BLAS as they are), the same null-skill
vectors, the same embedding models (loaded lazily: the weights are memory-mapped and
a request reads only its tokens' rows). The header also holds what
:mod:`skillbook.selection.plain` needs to rank without numpy (``plain``: where each
model's weights are mapped; per role the ``mix`` weights, the threshold and whether
the learned ranker applies).

Whether a saved selector still answers is not decided here: the command line keeps
the footprint of the build beside it (:mod:`skillbook.pipeline.cache.footprint`: every
file, folder, variable and module file it read, the models' files included), and
uses the file only while that footprint holds. So an unchanged catalog never
rebuilds, and any change (a skill, the config, the code, a model) rebuilds once.

The file: ``SBSELECT1\\n``, an 8-byte header length, a ``marshal`` header (names,
settings, vocabularies, speller counts, trigger hints, array offsets, the arrays'
size and CRC-32), then the arrays, 64-byte aligned, memory-mapped on load.
``marshal`` rebuilds plain values only (never code run on load); a file that does not
parse, whose arrays do not match their checksum, or that does not hold what a
selector needs is a miss (:func:`read_header` or :func:`load` returns None) and is
rewritten by the next build.
Writes are atomic (temporary file, then rename).
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

# Not `typing` nor `dataclasses` at run time: a fresh `select` imports this module,
# and those two (with `inspect`, which dataclasses imports) cost more CPU than ranking.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

    from skillbook.diagnostics import Diagnostic
    from skillbook.model import Skill
    from skillbook.selection.embedders import Embedder
    from skillbook.selection.selector import Selector

__all__ = [
    "FORMAT",
    "Loaded",
    "SavedSkill",
    "diagnostic",
    "load",
    "model_cache",
    "read_header",
    "save",
    "saveable",
    "selector_file",
]

FORMAT: Final = "skillbook-selector-3"
_MAGIC: Final = b"SBSELECT1\n"
_SUFFIX: Final = ".selector"
#: Saved selectors kept per folder (the newest by modification time).
MAX_SAVED: Final = 16
#: The embedding providers a saved selector can load again by itself.
_KNOWN: Final = ("wordllama", "multilingual")


class SavedSkill:
    """What a restored selector knows of a skill: its name (all a ranking prints).

    A plain class, not a frozen dataclass: a thousand of them are made per process,
    and a frozen dataclass's ``__init__`` costs several times more. Equal by name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SavedSkill) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"SavedSkill(name={self.name!r})"


def folder_of(results: str) -> str:
    """Saved selectors live beside the result cache of ``prompt`` (its parent folder)."""
    return os.path.join(os.path.dirname(results), "selection")


def model_cache(results: str | None) -> Path | None:
    """Where uncompressed model weights are kept, beside the saved selectors."""
    return None if results is None else Path(folder_of(results)) / "models"


def selector_file(results: str, key: str) -> str:
    import zlib

    digest = zlib.crc32(key.encode("utf-8", "surrogateescape"))
    return os.path.join(folder_of(results), f"{digest:08x}{_SUFFIX}")


def saveable(selector: Selector) -> bool:
    """Whether :func:`load` can rebuild ``selector``: tuned weights, shipped models
    whose index reported nothing, bm25s's default (Lucene) scoring, and a BM25 index
    covering every skill."""
    if selector.settings.weights is not None:
        return False
    if any(name not in _KNOWN for name in selector._indexes):
        return False
    if any(index.diagnostics for index in selector._indexes.values()):
        return False  # an index file could not be read or written: say so until it can
    lexical = selector._lexical
    if lexical is not None:
        if not lexical.wait() or lexical._speller is None:
            return False
        live = lexical._live
        if live is None or live.remap is not None:
            return False
        for index in (live.lexical, live.body):
            bm = getattr(index, "_bm25", None)
            if index.size and (
                bm is None
                or getattr(bm, "nonoccurrence_array", None) is not None
                or str(getattr(bm, "dtype", "")) != "float32"
                or not isinstance(getattr(bm, "scores", None), dict)
            ):
                return False
    return True


# --------------------------------------------------------------------------- saving


def save(
    path: str,
    key: str,
    selectors: Mapping[str, Selector],
    extra: Mapping[str, Any],
    record: Mapping[str, Any],
    *,
    groups: Mapping[str, Sequence[Skill]] | None = None,
    models: Path | None = None,
) -> None:
    """Write ``selectors`` (by role), ``extra`` (plain values) and the footprint
    ``record`` for ``key``; ``groups`` are lists of the selectors' skills, restored as
    the same objects the restored selectors rank (so identity tests hold). Each
    model's tokenizer tables go with them (kept in ``models`` too, per tokenizer
    file: :func:`skillbook.selection.query_tokens.cached`). Never raises for a full
    or read-only disk."""
    import numpy as np

    names: list[str] = []
    position: dict[int, int] = {}
    arrays: list[Any] = []

    def array(a: Any, dtype: Any = None) -> int:
        arrays.append(np.ascontiguousarray(a, dtype=dtype))
        return len(arrays) - 1

    def skill_at(skill: Skill) -> int:
        at = position.get(id(skill))
        if at is None:
            at = position[id(skill)] = len(names)
            names.append(skill.name)
        return at

    roles: dict[str, Any] = {}
    for role, sel in selectors.items():
        s = sel.settings
        entry: dict[str, Any] = {
            "settings": (s.backend, s.fusion, s.top_k, s.min_score, tuple(s.pinned)),
            "skills": [skill_at(skill) for skill in sel.skills],
            "triggered": {
                i: (d.triggers.any, d.triggers.all, d.triggers.none)
                for i in sel._triggered
                for d in (sel.documents[i],)
            },
            "diagnostics": [d.to_dict() for d in sel.diagnostics],
            "embedders": {name: index.embedder.id for name, index in sel._indexes.items()},
            # float32 (the index's float16 values widened, as the selector holds them):
            # the plain path (skillbook.selection.plain) hands them to BLAS as they are.
            "vectors": {name: array(v, np.float32) for name, v in sel._vectors.items()},
            "null": None if sel._null is None else array(sel._null, np.float32),
            "null_rule": sel._null_rule,
            # Beside the settings tuple, which the plain path reads as it is; a file
            # written before the setting had it on.
            "null_skill": s.null_skill,
            "lexical": None,
            "plain": _plain_parameters(sel),
        }
        lexical = sel._lexical
        if lexical is not None and lexical._live is not None and lexical._speller is not None:
            live = lexical._live
            entry["lexical"] = {
                "stop": sorted(lexical.tokenize.stop),
                "stem": lexical.tokenize.stem is not None,
                "speller": dict(lexical._speller.counts),
                "indexes": [_bm25_entry(index, array) for index in (live.lexical, live.body)],
            }
        roles[role] = entry
    plain: dict[str, Any] | None = {}
    tables: dict[str, int] = {}
    for sel in selectors.values():
        for index in sel._indexes.values():
            spec = getattr(index.embedder, "plain_spec", None)
            spec = spec() if callable(spec) else None
            if spec is None or plain is None:
                plain = None  # a model the plain path cannot compute: numpy ranks
            else:
                plain[index.embedder.id] = spec
    for sel in selectors.values():
        for index in sel._indexes.values():
            model = index.embedder
            make = getattr(model, "query_tables", None)
            if model.id in tables or not callable(make):
                continue
            try:
                blob = make(models)
            except (ValueError, OSError, KeyError, TypeError):
                continue  # a tokenizer the tables do not reproduce: loaded whole on use
            tables[model.id] = array(np.frombuffer(blob, dtype=np.uint8))
    kept = {
        name: [position[id(s)] for s in skills if id(s) in position]
        for name, skills in (groups or {}).items()
    }
    layout: list[tuple[str, tuple[int, ...], int]] = []
    body = bytearray()
    for a in arrays:
        layout.append((a.dtype.str, tuple(a.shape), len(body)))
        body += a.tobytes()
        body += b"\0" * (-len(body) % 64)
    import zlib

    header = marshal.dumps(
        {
            "format": FORMAT,
            "key": key,
            "record": dict(record),
            "names": names,
            "roles": roles,
            "extra": dict(extra),
            "groups": kept,
            "tables": tables,
            "plain": plain,
            "arrays": layout,
            # The arrays are checked whole on load: a damaged vector is a miss, not a rank.
            "body": (len(body), zlib.crc32(body)),
        }
    )
    head = _MAGIC + len(header).to_bytes(8, "little") + header
    try:
        from skillbook.base.atomic import atomic_writer

        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with atomic_writer(path, mode=0o600, prefix=".tmp-", suffix=_SUFFIX) as fh:
            fh.write(head + b"\0" * (-len(head) % 64))
            fh.write(body)
        _prune(os.path.dirname(path))
    except (OSError, ValueError):
        return  # only a cache: the next run builds again


def _plain_parameters(sel: Selector) -> dict[str, Any] | None:
    """What :mod:`skillbook.selection.plain` needs beyond the arrays: the ``mix``
    weights and the threshold the selector computes, whether the learned ranker
    applies. None for a fusion or backend it does not compute."""
    if sel.settings.fusion != "mix" or sel.settings.backend != "hybrid":
        return None
    w = sel._weights()
    return {
        "weights": (float(w.bm25_k), {k: float(v) for k, v in w.weights.items()}, w.adaptive),
        "threshold": float(sel.settings.threshold(sel.profile)),
        "learned": sel.ranker is not None,
    }


def _bm25_entry(index: Any, array: Any) -> dict[str, Any]:
    if not index.size:
        return {"size": 0}
    bm = index._bm25
    scores = bm.scores
    return {
        "size": index.size,
        "num_docs": int(scores["num_docs"]),
        "vocab": dict(bm.vocab_dict),
        "data": array(scores["data"]),
        "indices": array(scores["indices"]),
        "indptr": array(scores["indptr"]),
        "int_dtype": str(bm.int_dtype),
    }


def _prune(folder: str) -> None:
    try:
        entries = [e for e in os.scandir(folder) if e.name.endswith(_SUFFIX) and e.is_file()]
        entries.sort(key=lambda e: e.stat().st_mtime_ns, reverse=True)
        for old in entries[MAX_SAVED:]:
            os.unlink(old.path)
    except OSError:
        pass


# --------------------------------------------------------------------------- loading


class Loaded:
    """A saved file read back: its footprint record, selectors by role, extra values."""

    __slots__ = ("extra", "groups", "record", "selectors", "skills")

    def __init__(
        self,
        record: Mapping[str, Any],
        selectors: Mapping[str, Selector],
        extra: Mapping[str, Any],
        skills: tuple[SavedSkill, ...],
        groups: Mapping[str, tuple[SavedSkill, ...]],
    ) -> None:
        self.record = record
        self.selectors = selectors
        self.extra = extra
        self.skills = skills
        self.groups = groups


def read_header(path: str, key: str) -> tuple[dict[str, Any], Any, int] | None:
    """The header, the mapped file and the arrays' start; None when absent or foreign."""
    import mmap

    try:
        with open(path, "rb") as fh:
            # Copy-on-write: writable for ctypes (skillbook.selection._cblas takes
            # addresses), the same shared pages as long as nothing writes, and nothing does.
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
    except (OSError, ValueError):
        return None
    try:
        if data[: len(_MAGIC)] != _MAGIC:
            return None
        size = int.from_bytes(data[len(_MAGIC) : len(_MAGIC) + 8], "little")
        end = len(_MAGIC) + 8 + size
        header = marshal.loads(data[len(_MAGIC) + 8 : end])
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            return None
        if header.get("key") != key:
            return None  # another command line with the same checksum
        start = -(-end // 64) * 64
        import zlib

        size, crc = header["body"]
        if len(data) - start != size or zlib.crc32(memoryview(data)[start:]) != crc:
            return None  # torn or damaged: rebuilt by the next run
        return header, data, start
    except (ValueError, TypeError, EOFError, KeyError):
        return None


def load(
    header: dict[str, Any],
    data: Any,
    start: int,
    *,
    weights_cache: Path | None = None,
) -> Loaded | None:
    """Selectors from a header :func:`read_header` gave; None when the file is damaged."""
    try:
        return _load(header, data, start, weights_cache)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, EOFError):
        return None


def _load(header: dict[str, Any], data: Any, start: int, weights_cache: Path | None) -> Loaded:
    import numpy as np

    def array(at: int) -> Any:
        dtype, shape, offset = header["arrays"][at]
        count = 1
        for n in shape:
            count *= int(n)
        return np.frombuffer(
            data, dtype=np.dtype(dtype), count=count, offset=start + offset
        ).reshape(shape)

    def raw(at: int) -> memoryview:
        dtype, shape, offset = header["arrays"][at]
        if dtype != "|u1" or len(shape) != 1:
            raise ValueError("not a byte array")
        return memoryview(data)[start + offset : start + offset + int(shape[0])]

    skills = tuple(SavedSkill(str(n)) for n in header["names"])
    models: dict[str, Embedder] = {}
    tables = {ident: raw(at) for ident, at in header.get("tables", {}).items()}
    selectors = {
        role: _selector(entry, skills, array, models, weights_cache, tables)
        for role, entry in header["roles"].items()
    }
    groups = {
        name: tuple(skills[int(i)] for i in positions)
        for name, positions in header["groups"].items()
    }
    return Loaded(header["record"], selectors, header["extra"], skills, groups)


def _embedder(
    name: str,
    ident: str,
    models: dict[str, Embedder],
    cache: Path | None,
    tables: Mapping[str, memoryview],
) -> Embedder:
    """One model per process, shared by the selectors that use it; its tokenizer
    tables (when saved) spare it loading the tokenizer."""
    from skillbook.selection.embedders import MultilingualEmbedder, WordLlamaEmbedder

    found = models.get(ident)
    if found is None:
        if name == "wordllama":
            found = WordLlamaEmbedder(id=ident, tables=tables.get(ident))
        elif name == "multilingual":
            found = MultilingualEmbedder(id=ident, weights_cache=cache, tables=tables.get(ident))
        else:
            raise ValueError(f"no saved embedder {name!r}")
        if found.id != ident:
            raise ValueError("the saved embedder's id is not the model's")
        models[ident] = found
    return found


class _SavedIndex:
    """What a selector asks of an embedding index at query time: the model."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.diagnostics: list[Any] = []
        self.computed = 0
        self.reused = 0

    def flush(self) -> None:
        return None


class _SavedBm25:
    """bm25s's ``BM25`` as :class:`~skillbook.selection.lexical.Bm25Index` asks it: the
    vocabulary and ``get_scores``, computed as bm25s computes it (its precomputed
    per-word scores summed with ``np.add.at`` word by word, float32), from the arrays
    bm25s built, without importing it."""

    def __init__(self, entry: Mapping[str, Any], array: Any) -> None:
        import numpy as np

        self._np = np
        self.vocab_dict: dict[str, int] = entry["vocab"]
        self._data = array(entry["data"])
        self._indices = array(entry["indices"])
        self._indptr = array(entry["indptr"])
        self._docs = int(entry["num_docs"])
        self._int = np.dtype(entry["int_dtype"])
        #: As bm25s keeps them: ``Bm25Index.scores_of`` sums them itself.
        self.scores = {"data": self._data, "indices": self._indices, "indptr": self._indptr}
        self.nonoccurrence_array = None

    def get_scores(self, tokens: list[str]) -> Any:
        np = self._np
        vocab = self.vocab_dict
        ids = np.asarray([vocab[t] for t in tokens if t in vocab], dtype=self._int)
        if int(ids.max(initial=0)) >= len(self._indptr) - 1:
            raise ValueError("a query word is not in the saved BM25 index")
        starts, ends = self._indptr[ids], self._indptr[ids + 1]
        scores = np.zeros(self._docs, dtype=np.float32)
        for begin, end in zip(starts, ends, strict=True):
            np.add.at(scores, self._indices[begin:end], self._data[begin:end])
        return scores


def _selector(
    entry: Mapping[str, Any],
    skills: tuple[SavedSkill, ...],
    array: Any,
    models: dict[str, Embedder],
    cache: Path | None,
    tables: Mapping[str, memoryview],
) -> Selector:
    from skillbook.diagnostics import Diagnostic
    from skillbook.selection.documents import SkillDocument
    from skillbook.selection.selector import Selector, SelectorSettings
    from skillbook.selection.triggers import Triggers

    backend, fusion, top_k, min_score, pinned = entry["settings"]
    indexes: dict[str, Any] = {
        name: _SavedIndex(_embedder(name, ident, models, cache, tables))
        for name, ident in entry["embedders"].items()
    }
    mine = tuple(skills[i] for i in entry["skills"])
    triggered = {int(i): Triggers(*t) for i, t in entry["triggered"].items()}
    empty = Triggers()
    problems = tuple(_diagnostic(Diagnostic, d) for d in entry["diagnostics"])
    # A ranking reads a document's trigger hints and diagnostics only (names come
    # from the skills): the skills without hints share one empty document, a
    # thousand frozen dataclasses less to make.
    plain = SkillDocument("", "", "", "", empty, "")
    documents = [
        plain if i not in triggered else SkillDocument(s.name, "", "", "", triggered[i], "")
        for i, s in enumerate(mine)
    ]
    if problems and documents:
        # The build's diagnostics, reported once as the selector reports them.
        documents[0] = SkillDocument(mine[0].name, "", "", "", documents[0].triggers, "", problems)
    rule = entry["null_rule"]
    return Selector.restore(
        settings=SelectorSettings(
            backend=backend,
            fusion=fusion,
            top_k=top_k,
            min_score=min_score,
            pinned=tuple(pinned),
            null_skill=bool(entry.get("null_skill", True)),
        ),
        indexes=indexes,
        skills=mine,  # names are all a ranking reads
        documents=documents,
        vectors={name: np_float32(array(at)) for name, at in entry["vectors"].items()},
        lexical=_lexical(entry["lexical"], array) if entry["lexical"] is not None else None,
        null=None if entry["null"] is None else array(entry["null"]),
        null_rule=None if rule is None else (float(rule[0]), float(rule[1])),
    )


def np_float32(a: Any) -> Any:
    import numpy as np

    return np.asarray(a, dtype=np.float32)


def diagnostic(d: Mapping[str, Any]) -> Diagnostic:
    """A diagnostic from its ``to_dict()`` form."""
    from skillbook.diagnostics import Diagnostic

    found: Diagnostic = _diagnostic(Diagnostic, d)
    return found


def _diagnostic(cls: Any, d: Mapping[str, Any]) -> Any:
    from skillbook.diagnostics import Severity

    path = d.get("path")
    return cls(
        d["code"],
        Severity(d["severity"]),
        d["message"],
        path=None if path is None else Path(path),
        line=d.get("line"),
        skill=d.get("skill"),
    )


def _lexical(entry: Mapping[str, Any], array: Any) -> Any:
    import numpy as np

    from skillbook.selection.lexical import (
        SPELL_SYNC_LIMIT,
        SYNC_LIMIT,
        Bm25Index,
        LexicalChannels,
        Tokenizer,
        _Built,
        _stemmer,
    )
    from skillbook.selection.speller import Speller

    tokenize = Tokenizer.__new__(Tokenizer)
    tokenize.stop = frozenset(entry["stop"])
    tokenize.stem = _stemmer() if entry["stem"] else None
    tokenize._memo = {}
    if entry["stem"] and tokenize.stem is None:
        raise ValueError("the saved index was stemmed and PyStemmer is gone")

    def bm25(saved: Mapping[str, Any]) -> Bm25Index:
        index = Bm25Index.__new__(Bm25Index)
        index._np = np
        index.tokenize = tokenize
        index.size = int(saved["size"])
        index._bm25 = _SavedBm25(saved, array) if index.size else None
        index._postings = None
        index._spread = {}
        return index

    lexical, body = (bm25(e) for e in entry["indexes"])
    channels = LexicalChannels.__new__(LexicalChannels)
    channels._np = np
    channels.tokenize = tokenize
    channels.sync_limit = SYNC_LIMIT
    channels._tokens = {}
    channels._live = _Built(lexical, body, ())
    channels._generation = 0
    import threading

    channels._lock = threading.Lock()
    channels._worker = None
    # Its delete index waits for the first word that needs it: most requests to a
    # restored selector have none, and building it cost more CPU than ranking.
    channels._speller = Speller(dict(entry["speller"]), lazy=True)
    channels._speller_worker = None
    channels._spelling = ()
    channels.spell_sync_limit = SPELL_SYNC_LIMIT
    return channels
