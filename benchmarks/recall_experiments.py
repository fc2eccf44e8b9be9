"""Issue 21, third pass: candidate signals for recall@1 and paraphrase recall, by CV.

Every candidate is scored the way ``learn_select.py`` scores the shipped ranker: the
learned ranker refitted with the candidate's features added, on the tuning parts only
(the first set's ``train`` split and ``user-voice-tune.jsonl``; never ``test``,
``user-voice-report.jsonl`` or ``fresh-heldout.jsonl``), 5-fold cross-validation,
repeated over three fold assignments (``sha256(salt + id)``) and averaged, so a
difference of one or two requests shows as the noise it is. The candidates:

- **concept bridge, wordllama**: a table built from general vocabulary, not from the
  catalog or the requests: every whole English word of wordllama's tokenizer (a
  ``▁word`` piece, lower-case letters, 3–20, no stop word) with its nearest whole
  words in the model's token-embedding space (full ``l2_supercat`` table, cosine ≥
  ``min_cos``, at most ``neighbours``, its own inflections left out). A request's
  words bring their neighbours' stems (not already in the request, known to the
  catalog, the 12 strongest) as a weighted BM25 query (weight: the cosine) over the
  summary index (``bridge``) or the body index (``bridgeBody``); ``unknown`` expands
  only words the catalog does not use. Features: the squashed score, its gap to the
  best, its rank and z-score over the catalog;
- **concept bridge, co-occurrence**: the same expansion from normalised PMI of stems
  co-occurring in the skills' summaries and bodies (document frequency ≥ 3, NPMI ≥
  0.3, five partners per stem);
- **term coverage**: the share of the request's distinct stems each skill's summary /
  body contains (plain and IDF-weighted);
- **content-word cosines**: wordllama and multilingual cosines of the request with
  stop words and chat filler removed;
- **channel agreement**: each skill's best, median and top-3 count of its four
  channel ranks;
- **neighbourhood**: each candidate's mean cosine to the mix's best 3/5/10 skills
  (pseudo-relevance feedback, both encoders);
- **interactions**: name hit × (1 − coverage), BM25 × (1 − coverage), name hit ×
  multilingual cosine.

``--cache FILE`` keeps the signals between runs (about a minute to compute).

    python benchmarks/recall_experiments.py [--cache /tmp/recall.pkl] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import hashlib
import math
import pickle
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Container, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import learn_select as L
from corpus_skills import corpus_skills

from skillbook.selection.embedders import (
    WORDLLAMA_CONFIG,
    WORDLLAMA_DIM,
    MultilingualEmbedder,
    WordLlamaEmbedder,
    _package_dir,
    _safetensors_rows,
)
from skillbook.selection.evaluate import load_queries
from skillbook.selection.phrases import words
from skillbook.selection.ranker import CHANNELS, _ranks, features, name_hits
from skillbook.selection.selector import DEFAULT_MIN_SCORE, NULL_RULE, Selector, SelectorSettings

Table = dict[str, list[tuple[str, float]]]
#: Bridged terms per request at most, the strongest kept.
MAX_TERMS = 12
_WORD = re.compile(r"\b[a-z]{3,20}\b")
#: (name in the cache, min cosine, neighbours) of the wordllama tables tried.
WL_TABLES = (("wl35", 0.35, 4), ("wl40", 0.40, 4), ("wl45", 0.45, 4), ("wl45n8", 0.45, 8))


def wordllama_table(min_cos: float, neighbours: int) -> Table:
    """Each general English word's nearest whole words in wordllama's token space."""
    import Stemmer
    from bm25s.stopwords import STOPWORDS_EN
    from tokenizers import Tokenizer

    root = _package_dir("wordllama", "the bridge")
    weights = root / "weights" / f"{WORDLLAMA_CONFIG}_{WORDLLAMA_DIM}.safetensors"
    tok = Tokenizer.from_file(
        str(root / "tokenizers" / f"{WORDLLAMA_CONFIG}_tokenizer_config.json")
    )
    table = np.asarray(_safetensors_rows(weights, "embedding.weight"), dtype=np.float32)
    stop = set(STOPWORDS_EN)
    ids, vocab = [], []
    for piece, i in sorted(tok.get_vocab().items(), key=lambda p: p[1]):
        w = piece[1:]
        general = w.isascii() and w.isalpha() and w.islower() and w not in stop
        if piece.startswith("▁") and general and 3 <= len(w) <= 20:
            ids.append(i)
            vocab.append(w)
    stems = Stemmer.Stemmer("english").stemWords(vocab)
    m = table[ids]
    m /= np.linalg.norm(m, axis=1, keepdims=True) + 1e-9
    out: Table = {}
    for start in range(0, len(vocab), 1024):
        for r, row in enumerate(m[start : start + 1024] @ m.T):
            i = start + r
            kept: list[tuple[str, float]] = []
            for j in np.argsort(-row)[: 8 * neighbours]:
                j = int(j)
                if row[j] < min_cos or len(kept) >= neighbours:
                    break
                a, b = vocab[i], vocab[j]
                if j != i and stems[i] != stems[j] and not (a.startswith(b) or b.startswith(a)):
                    kept.append((b, float(row[j])))
            if kept:
                out[vocab[i]] = kept
    return out


def expand(
    text: str,
    table: Table,
    tokenize: Callable[[str], list[str]],
    vocab: Container[str],
    *,
    unknown_only: bool = False,
) -> list[tuple[str, float]]:
    """The stems a request's words bridge to (not its own, known to the catalog)."""
    own = set(tokenize(text))
    best: dict[str, float] = {}
    for word in dict.fromkeys(_WORD.findall(text.casefold())):
        if unknown_only and any(t in vocab for t in tokenize(word)):
            continue
        for neighbour, cos in table.get(word, ()):
            for term in tokenize(neighbour):
                if term not in own and term in vocab and cos > best.get(term, 0.0):
                    best[term] = cos
    return sorted(best.items(), key=lambda p: (-p[1], p[0]))[:MAX_TERMS]


def pmi_table(docs: Sequence[set[str]]) -> dict[str, list[tuple[str, float]]]:
    """Each stem's five partners by normalised PMI of co-occurrence in the skills' texts."""
    n = len(docs)
    df = Counter(t for d in docs for t in d)
    pairs: Counter[tuple[str, str]] = Counter()
    for d in docs:
        ts = sorted(t for t in d if df[t] >= 3)
        for i, a in enumerate(ts):
            for b in ts[i + 1 :]:
                pairs[(a, b)] += 1
    out: dict[str, list[tuple[str, float]]] = {}
    for (a, b), c in pairs.items():
        if c >= 3 and c < n:
            npmi = math.log(c * n / (df[a] * df[b])) / -math.log(c / n)
            if npmi >= 0.3:
                out.setdefault(a, []).append((b, npmi))
                out.setdefault(b, []).append((a, npmi))
    return {k: sorted(v, key=lambda p: -p[1])[:5] for k, v in out.items()}


def weighted(index: Any, terms: Sequence[tuple[str, float]]) -> Any:
    total = np.zeros(index.size, dtype=np.float64)
    for term, weight in terms:
        if term in index.vocab:
            total += weight * np.asarray(index._bm25.get_scores([term]), dtype=np.float64)
    return total


def signals() -> dict[str, Any]:
    queries = [q for q in load_queries(L.DATA / "queries.jsonl") if q.split == "train"]
    queries += load_queries(L.DATA / "user-voice-tune.jsonl")
    tables = {name: wordllama_table(c, n) for name, c, n in WL_TABLES}
    with tempfile.TemporaryDirectory() as tmp:
        sel = Selector(
            corpus_skills(),
            settings=SelectorSettings(backend="hybrid"),
            embedders={"wordllama": WordLlamaEmbedder(), "multilingual": MultilingualEmbedder()},
            index_dir=Path(tmp),
        )
        sel.wait()
        lexical = sel._lexical
        assert lexical is not None and lexical._live is not None
        live, tok = lexical._live, lexical.tokenize
        summary, body = live.lexical, live.body
        pmi = pmi_table([set(tok(d.lexical)) | set(tok(d.body)) for d in sel.documents])
        out: list[dict[str, Any]] = []
        for q in queries:
            s = sel.signals(q.query, recent=q.recent)
            d: dict[str, Any] = {
                "id": q.id,
                "kind": q.kind or "",
                "expected": list(q.expected),
                "channels": {k: np.asarray(v).copy() for k, v in s.channels.items()},
                "fused": np.asarray(s.fused).copy(),
                "boost": np.asarray(s.boost).copy(),
                "coverage": s.coverage,
                "null": s.null_cosine,
                "tokens": [*words(s.text), *s.tokens],
                "words": len(s.tokens),
                "vetoed": [i for i, m in s.matches.items() if m.vetoed],
            }
            for name, table in tables.items():
                terms = expand(s.text, table, tok, summary.vocab)
                d[f"{name}"] = weighted(summary, terms)
                d[f"{name}Body"] = weighted(body, terms)
                d[f"{name}Unknown"] = weighted(
                    summary, expand(s.text, table, tok, summary.vocab, unknown_only=True)
                )
            own = list(dict.fromkeys(tok(s.text)))
            best: dict[str, float] = {}
            for t in own:
                for b, w in pmi.get(t, ()):
                    if b not in own and b in summary.vocab:
                        best[b] = max(best.get(b, 0.0), w)
            terms = sorted(best.items(), key=lambda p: -p[1])[:MAX_TERMS]
            d["pmi"], d["pmiBody"] = weighted(summary, terms), weighted(body, terms)
            for key, index in (("cov", summary), ("covBody", body)):
                hits = np.zeros(index.size)
                idf_hits = np.zeros(index.size)
                for t in own:
                    if t in index.vocab:
                        hit = np.asarray(index._bm25.get_scores([t])) > 0
                        df = hit.sum()
                        hits += hit
                        idf_hits += hit * math.log(1 + (index.size - df + 0.5) / (df + 0.5))
                d[key] = hits / max(1, len(own))
                d[key + "Idf"] = idf_hits / max(1e-9, len(own) * math.log(1 + index.size))
            stop = tok.stop
            content = " ".join(
                w for w in re.findall(r"(?u)\b\w+\b", s.text) if w.casefold() not in stop
            )
            for name, index in sel._indexes.items():
                v = index.embedder.embed([content or s.text])[0]
                d[name + "Content"] = np.asarray(sel._vectors[name] @ v, dtype=np.float64)
            # The request as wordllama reads it, widened by its words' bridge neighbours.
            bridged = [
                n
                for w in dict.fromkeys(_WORD.findall(s.text.casefold()))
                for n, _ in tables["wl45"].get(w, ())
            ]
            v = sel._indexes["wordllama"].embedder.embed(
                [" ".join([s.text, *bridged[:MAX_TERMS]])]
            )[0]
            d["wordllamaBridged"] = np.asarray(sel._vectors["wordllama"] @ v, dtype=np.float64)
            out.append(d)
        mats = {k: np.asarray(v, dtype=np.float32) for k, v in sel._vectors.items()}
        return {"names": [d.name for d in sel.documents], "queries": out, "mats": mats}


def rows(
    data: dict[str, Any],
    channels: Sequence[str] = (),
    arrays: Sequence[str] = (),
    *,
    agree: bool = False,
    prf: int = 0,
    inter: bool = False,
    swap_wordllama: str | None = None,
    bm25_k: float = 10.0,
) -> list[L.Row]:
    """learn_select's rows, with the candidate features appended.

    ``swap_wordllama``: an array to use as the ``wordllama`` channel instead, in the
    features and in the mix score (its weight there is ``0.2 × coverage``).
    """
    names = data["names"]
    weight, margin = NULL_RULE["hybrid"]
    out = []
    for q in data["queries"]:
        fused = q["fused"].astype(np.float64)
        if swap_wordllama is not None:
            new = np.asarray(q[swap_wordllama], dtype=np.float64)
            old = q["channels"]["wordllama"].astype(np.float64)
            fused = fused + 0.2 * q["coverage"] * (new - old)
            q = {**q, "channels": {**q["channels"], "wordllama": new}}
        order = [int(i) for i in np.argsort(-fused, kind="stable") if int(i) not in q["vetoed"]]
        cand = np.array(order[: L.DEPTH])
        cn = [names[i] for i in cand]
        hits = name_hits(cn, q["tokens"])
        cols = [
            features(
                q["channels"],
                fused,
                q["boost"],
                cand,
                coverage=q["coverage"],
                null_cosine=q["null"],
                words=q["words"],
                name_hit=hits,
                bm25_k=bm25_k,
            )
        ]
        for key in channels:  # a BM25-like channel: score, gap, rank, z-score
            raw = np.asarray(q[key], dtype=np.float64)
            s = raw / (raw + bm25_k)
            cols += [
                s[cand][:, None],
                (s[cand] - s.max())[:, None],
                np.log1p(_ranks(raw, cand))[:, None],
                ((s[cand] - s.mean()) / (s.std() + 1e-6))[:, None],
            ]
        for key in arrays:
            cols.append(np.asarray(q[key], dtype=np.float64)[cand][:, None])
        if agree:
            rk = np.stack([_ranks(np.asarray(q["channels"][c]), cand) for c in CHANNELS])
            cols += [
                np.log1p(rk.min(axis=0))[:, None],
                (rk < 3).sum(axis=0)[:, None].astype(np.float64),
                np.log1p(np.median(rk, axis=0))[:, None],
            ]
        if prf:
            top = order[:prf]
            for c in ("wordllama", "multilingual"):
                m = data["mats"][c].astype(np.float64)
                sim = m[cand] @ m[top].T
                own = cand[:, None] == np.array(top)[None, :]
                cols.append(
                    (
                        np.where(own, 0.0, sim).sum(axis=1)
                        / np.maximum(1, len(top) - own.sum(axis=1))
                    )[:, None]
                )
        if inter:
            unc = 1.0 - q["coverage"]
            b = np.maximum(q["channels"]["bm25"].astype(np.float64), 0)
            nh = np.asarray(hits)
            cols += [
                (nh * unc)[:, None],
                ((b / (b + bm25_k))[cand] * unc)[:, None],
                (nh * q["channels"]["multilingual"].astype(np.float64)[cand])[:, None],
            ]
        exp = set(q["expected"])
        y = np.array([n in exp for n in cn], dtype=np.float64)
        floor = max(DEFAULT_MIN_SCORE["hybrid"], margin + weight * (q["null"] or 0.0))
        out.append(L.Row(q["id"], q["kind"], exp, cand, np.hstack(cols), y, fused[cand], floor))
    return out


def cv(rs: Sequence[L.Row], l2: float, salt: str, folds: int = 5) -> dict[str, float]:
    """Out-of-fold metrics of the ranker refitted on ``rs``' features (order only, mix floor)."""

    def fold(qid: str) -> int:
        return int(hashlib.sha256((salt + qid).encode()).hexdigest(), 16) % folds

    assigned = [fold(r.id) for r in rs]
    total: dict[str, float] = {}
    count: dict[str, int] = {}
    for f in range(folds):
        train = [r for r, g in zip(rs, assigned, strict=True) if g != f]
        test = [r for r, g in zip(rs, assigned, strict=True) if g == f]
        model = L.fit_listwise(train, l2)
        m = L.measure(test, L.score_reranked(model, test), [r.floor for r in test])
        n = {
            "pos": sum(1 for r in test if r.expected),
            "neg": sum(1 for r in test if not r.expected),
            "para": sum(1 for r in test if r.expected and r.kind in L.PARAPHRASE),
        }
        for k, v in m.items():
            w = n["neg"] if k == "abstention" else n["para"] if k == "para@3" else n["pos"]
            total[k] = total.get(k, 0.0) + v * w
            count[k] = count.get(k, 0) + w
    return {k: total[k] / count[k] for k in total}


CANDIDATES: dict[str, dict[str, Any]] = {
    "shipped features": {},
    "bridge wl35": {"channels": ("wl35",)},
    "bridge wl40": {"channels": ("wl40",)},
    "bridge wl45": {"channels": ("wl45",)},
    "bridge wl45, 8 neighbours": {"channels": ("wl45n8",)},
    "bridge wl45, body index": {"channels": ("wl45Body",)},
    "bridge wl45, summary + body": {"channels": ("wl45", "wl45Body")},
    "bridge wl40, unknown words only": {"channels": ("wl40Unknown",)},
    "bridge PMI": {"channels": ("pmi",)},
    "bridge PMI, summary + body": {"channels": ("pmi", "pmiBody")},
    "wordllama cosine of the bridged request": {"arrays": ("wordllamaBridged",)},
    "the same in place of wordllama's (mix too)": {"swap_wordllama": "wordllamaBridged"},
    "term coverage": {"arrays": ("cov", "covBody", "covIdf", "covBodyIdf")},
    "content-word cosines": {"arrays": ("wordllamaContent", "multilingualContent")},
    "channel agreement": {"agree": True},
    "neighbourhood of the best 3": {"prf": 3},
    "neighbourhood of the best 10": {"prf": 10},
    "interactions": {"inter": True},
}


def mix_added(data: dict[str, Any], key: str, lam: float) -> dict[str, float]:
    """A bridge channel added to the ``mix`` score (``+ lam * s / (s + 10)``), no ranker.

    Ordering *and* selection change (the same threshold and null floor): what the
    bridge would do to abstention if it were part of the fused score.
    """
    names = data["names"]
    weight, margin = NULL_RULE["hybrid"]
    pos = neg = h1 = h3 = para = p3 = quiet = sel = 0
    for q in data["queries"]:
        raw = np.maximum(np.asarray(q[key], dtype=np.float64), 0.0)
        score = q["fused"].astype(np.float64) + lam * raw / (raw + 10.0)
        score[q["vetoed"]] = -np.inf
        top = np.argsort(-score, kind="stable")[: L.TOP_K]
        floor = max(DEFAULT_MIN_SCORE["hybrid"], margin + weight * (q["null"] or 0.0))
        chosen = [int(i) for i in top if score[i] >= floor]
        if not q["expected"]:
            neg += 1
            quiet += not chosen
            continue
        hit = [names[i] in q["expected"] for i in top]
        pos += 1
        h1 += hit[0]
        h3 += any(hit[:3])
        sel += any(names[i] in q["expected"] for i in chosen)
        if q["kind"] in L.PARAPHRASE:
            para += 1
            p3 += any(hit[:3])
    return {
        "r@1": h1 / pos,
        "r@3": h3 / pos,
        "para@3": p3 / para,
        "abstention": quiet / neg,
        "selected": sel / pos,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--l2", type=float, default=10.0)
    parser.add_argument("--salts", nargs="*", default=["", "a", "b"])
    parser.add_argument("--only", nargs="*", help="candidate names (default: all)")
    args = parser.parse_args()
    if args.cache is not None and args.cache.is_file():
        data = pickle.loads(args.cache.read_bytes())
    else:
        data = signals()
        if args.cache is not None:
            args.cache.write_bytes(pickle.dumps(data))
    keys = ("r@1", "r@3", "para@3", "abstention", "selected")
    print(f"{len(data['queries'])} tuning requests; L2 {args.l2:g}; folds salted {args.salts}")
    print(f"| candidate | {' | '.join(keys)} |")
    for name, kw in CANDIDATES.items():
        if args.only and name not in args.only:
            continue
        rs = rows(data, **kw)
        runs = [cv(rs, args.l2, salt) for salt in args.salts]
        mean = {k: sum(r[k] for r in runs) / len(runs) for k in keys}
        spread = {k: max(r[k] for r in runs) - min(r[k] for r in runs) for k in keys}
        cells = " | ".join(f"{mean[k]:.3f} ±{spread[k] / 2:.3f}" for k in keys)
        print(f"| {name} | {cells} |", flush=True)
    print("\nadded to the mix score, no ranker (in-sample: nothing is fitted but lam)")
    print(f"| channel | lam | {' | '.join(keys)} |")
    for key in ("wl40", "wl45", "wl45Body", "pmi", "pmiBody"):
        for lam in (0.0, 0.05, 0.1, 0.2):
            m = mix_added(data, key, lam)
            print(f"| {key} | {lam:g} | {' | '.join(f'{m[k]:.3f}' for k in keys)} |", flush=True)


if __name__ == "__main__":
    main()
