"""Tokenizing a request from compact tables, without loading a tokenizer's vocabulary.

Input: the two embedding models' tokenizers, once, in the process that builds a
selector (:func:`unigram_tables`, :func:`bpe_tables`: plain bytes, saved inside the
selector's file by :mod:`skillbook.selection.saved`). Output, in a fresh process:
:class:`UnigramTokens` and :class:`BpeTokens` reading those bytes where they lie (a
memory-mapped file), which give a request the same ids as the libraries do.

Why: a fresh ``skillbook select`` spent most of its CPU building the two
vocabularies it tokenizes one request with (the ``sentencepiece`` model of the
multilingual encoder, 128,000 pieces, and wordllama's ``tokenizer.json``, 32,000
pieces and 61,249 merges). Here a request looks up only the strings it holds, in
open-addressing hash tables (CRC-32 of the UTF-8 bytes, linear probing) read by
offset, so it touches a few pages of them.

What is computed is the libraries' arithmetic, step for step:

- SentencePiece unigram (``nmt_nfkc`` normalization): whitespace runs collapsed and
  stripped, a ``▁`` prefix, spaces as ``▁``; then the best segmentation by the sum of
  piece scores (float32 sums, the first of equal paths kept, as the C++ lattice does).
- Hugging Face BPE (Llama's ``tokenizer.json``): ``▁`` prepended, spaces as ``▁``, one
  symbol per character (its UTF-8 bytes as ``<0xNN>`` pieces when it is not one), then
  the lowest-ranked merge first, leftmost among equals.

Where a text holds what the tables do not settle exactly (a character whose
normalization is not itself, a character without a piece of its own, a special
token's text), the encoders return None and the caller asks the real library; so
results are always the library's.
"""

from __future__ import annotations

import heapq
import marshal
import struct
import zlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

TYPE_CHECKING = False  # not `typing` at run time: a fresh `select` imports this module
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "BpeTokens",
    "UnigramTokens",
    "bpe_tables",
    "cached",
    "unigram_safe",
    "unigram_tables",
]

_MAGIC_UNIGRAM: Final = b"SBTOKU1\n"
_MAGIC_BPE: Final = b"SBTOKB1\n"
_SPACE: Final = "\u2581"
_STR_SLOT: Final = struct.Struct("<Ii")  # 1 + offset of the string (0: empty), id
_PAIR_SLOT: Final = struct.Struct("<iiii")  # left id + 1 (0: empty), right id, rank, new id
_F32: Final = struct.Struct("<f")


def _slots_for(count: int) -> int:
    """A power of two at least twice ``count``: probes stay short."""
    size = 1024
    while size < 2 * count:
        size *= 2
    return size


def _pack(magic: bytes, header: dict[str, Any], parts: Sequence[bytes]) -> bytes:
    """``magic``, the header's length and ``marshal`` form, then ``parts``, each 8-byte
    aligned; their offsets from the end of the (8-byte aligned) header are ``parts``."""
    offsets: list[int] = []
    body = bytearray()
    for part in parts:
        body += b"\0" * (-len(body) % 8)
        offsets.append(len(body))
        body += part
    head = magic + (b"\0" * 8) + marshal.dumps({**header, "parts": offsets})
    head = magic + (len(head) - len(magic) - 8).to_bytes(8, "little") + head[len(magic) + 8 :]
    return head + b"\0" * (-len(head) % 8) + bytes(body)


def _unpack(magic: bytes, blob: Any) -> tuple[dict[str, Any], memoryview]:
    """The header (``parts`` made offsets in the returned view) and the view."""
    view = memoryview(blob).cast("B")
    if bytes(view[: len(magic)]) != magic:
        raise ValueError("not a token table")
    size = int.from_bytes(view[len(magic) : len(magic) + 8], "little")
    end = len(magic) + 8 + size
    header = marshal.loads(view[len(magic) + 8 : end])
    if not isinstance(header, dict) or end > len(view):
        raise ValueError("not a token table")
    body = end + (-end % 8)
    header["parts"] = [body + int(o) for o in header["parts"]]
    return header, view


def _string_table(pieces: Iterable[tuple[str, int]], count: int) -> tuple[int, bytes, bytes]:
    """The hash table of ``(string, id)`` and the strings it points into."""
    from array import array

    size = _slots_for(count)
    mask = size - 1
    where = [0] * size
    ids = [0] * size
    chunks: list[bytes] = [b"\0"]  # offset 0 is "no string"
    at_end = 1
    for piece, pid in pieces:
        raw = piece.encode("utf-8", "surrogatepass")
        if len(raw) > 255:
            continue  # never a whole piece a lookup asks for
        at = zlib.crc32(raw) & mask
        while where[at]:
            at = (at + 1) & mask
        where[at] = at_end
        ids[at] = pid
        chunks.append(bytes((len(raw),)) + raw)
        at_end += 1 + len(raw)
    slots = array("i", [0]) * (2 * size)
    slots[0::2] = array("i", where)
    slots[1::2] = array("i", ids)
    if slots.itemsize != 4:
        raise ValueError("no 4-byte int array")
    import sys

    if sys.byteorder != "little":
        slots.byteswap()
    return size, slots.tobytes(), b"".join(chunks)


class _Strings:
    """Lookups in a table :func:`_string_table` wrote."""

    __slots__ = ("_mask", "_slots", "_strings")

    def __init__(self, view: memoryview, slots_at: int, size: int, strings_at: int) -> None:
        if size <= 0 or size & (size - 1) or slots_at + size * _STR_SLOT.size > len(view):
            raise ValueError("the token table is damaged")
        self._slots = view[slots_at : slots_at + size * _STR_SLOT.size]
        self._strings = view[strings_at:]
        self._mask = size - 1

    def get(self, text: str) -> int:
        """The id of ``text``, or -1."""
        raw = text.encode("utf-8", "surrogatepass")
        n = len(raw)
        slots, strings, mask = self._slots, self._strings, self._mask
        at = zlib.crc32(raw) & mask
        unpack = _STR_SLOT.unpack_from
        for _ in range(mask + 1):  # bounded: a damaged table without a free slot ends
            where, pid = unpack(slots, at * 8)
            if not where:
                return -1
            if strings[where] == n and strings[where + 1 : where + 1 + n] == raw:
                return int(pid)
            at = (at + 1) & mask
        return -1


# --------------------------------------------------------------------------- unigram


def unigram_safe(sp: Any, pieces: Sequence[str]) -> tuple[str, str]:
    """The characters :class:`UnigramTokens` settles for ``sp``: those that normalize
    to themselves in any company and have a piece of their own, and those that
    normalize to a space. Decided by asking ``sp`` itself."""
    import unicodedata

    unk = sp.unk_id()
    singles = {p for p in pieces if len(p) == 1 and p != _SPACE}
    safe: list[str] = []
    for c in sorted(singles):
        cp = ord(c)
        if unicodedata.category(c)[0] in "MCZ" or unicodedata.combining(c):
            continue
        if 0x1100 <= cp <= 0x11FF or 0xA960 <= cp <= 0xA97F or 0xD7B0 <= cp <= 0xD7FF:
            continue  # Hangul jamo compose with their neighbours
        if 0x3130 <= cp <= 0x318F or 0xFFA0 <= cp <= 0xFFDC:
            continue  # compatibility jamo: NFKC maps them to the composing ones
        if sp.piece_to_id(c) == unk:
            continue
        if sp.normalize(c) != _SPACE + c or sp.normalize(f"a{c}a") != f"{_SPACE}a{c}a":
            continue
        if sp.normalize(f"{c}{c}") != _SPACE + c + c:
            continue
        safe.append(c)
    spaces: list[str] = []
    for c in map(chr, [*range(0x3000 + 1), ord(_SPACE)]):
        if c != " " and not (unicodedata.category(c) in ("Zs", "Zl", "Zp", "Cc") or c.isspace()):
            continue
        if (
            sp.normalize(c) == ""
            and sp.normalize(f"a{c}b") == f"{_SPACE}a{_SPACE}b"
            and sp.normalize(f"a {c} b") == f"{_SPACE}a{_SPACE}b"
            and sp.normalize(f"{c}a{c}") == f"{_SPACE}a"
        ):
            spaces.append(c)
    return "".join(safe), "".join(spaces)


def unigram_tables(sp: Any) -> bytes:
    """What :class:`UnigramTokens` needs of the ``sentencepiece`` processor ``sp``
    (a unigram model): every piece's id and score, and the settled characters."""
    count = sp.get_piece_size()
    pieces = [sp.IdToPiece(i) for i in range(count)]
    scores = struct.pack(f"<{count}f", *map(sp.GetScore, range(count)))
    # Control and unknown pieces are never matched in text (the C++ lattice's trie
    # holds neither), though piece_to_id finds them.
    hidden = [i for i in range(count) if sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i)]
    size, slots, strings = _string_table(((p, i) for i, p in enumerate(pieces)), count)
    safe, spaces = unigram_safe(sp, pieces)
    header = {
        "count": count,
        "slots": size,
        "unk": sp.unk_id(),
        "hidden": hidden,
        "longest": max(len(p) for p in pieces),
        "safe": safe,
        "spaces": spaces,
    }
    return _pack(_MAGIC_UNIGRAM, header, [slots, strings, scores])


class UnigramTokens:
    """A SentencePiece unigram model's ids for a text, from :func:`unigram_tables`."""

    def __init__(self, blob: Any) -> None:
        header, view = _unpack(_MAGIC_UNIGRAM, blob)
        slots_at, strings_at, scores_at = header["parts"]
        self._count = int(header["count"])
        self._pieces = _Strings(view, slots_at, int(header["slots"]), strings_at)
        self._scores = view[scores_at : scores_at + 4 * self._count]
        self._hidden = frozenset(header["hidden"])
        self.unk = int(header["unk"])
        self._longest = int(header["longest"])
        self._safe = frozenset(header["safe"])
        self._spaces = frozenset(header["spaces"])
        if len(self._scores) != 4 * self._count:
            raise ValueError("the token table is cut short")

    def piece_id(self, piece: str) -> int:
        """``SentencePieceProcessor.piece_to_id``: the unknown id when absent."""
        found = self._pieces.get(piece)
        return self.unk if found < 0 else found

    def encode(self, text: str) -> list[int] | None:
        """The pieces' ids (no BOS/EOS), or None when the text needs the library."""
        safe, spaces = self._safe, self._spaces
        chars: list[str] = []
        for c in text:
            if c in safe:
                chars.append(c)
            elif c in spaces:
                chars.append(" ")
            else:
                return None
        words = "".join(chars).split()
        if not words:
            return []
        norm = _SPACE + _SPACE.join(words)
        return self._viterbi(norm)

    def _viterbi(self, norm: str) -> list[int] | None:
        n = len(norm)
        get, hidden, scores = self._pieces.get, self._hidden, self._scores
        unpack, pack = _F32.unpack_from, _F32.pack
        # best[e] = (score, start, id) of the best path ending at e; None: none yet.
        best: list[tuple[float, int, int] | None] = [None] * (n + 1)
        best[0] = (0.0, -1, -1)
        for start in range(n):
            here = best[start]
            if here is None:
                return None  # unreachable with settled characters: ask the library
            till = here[0]
            for end in range(start + 1, min(n, start + self._longest) + 1):
                pid = get(norm[start:end])
                if pid < 0 or pid in hidden:
                    continue
                # float32 + float32 rounded to float32, as the C++ lattice adds.
                total = _F32.unpack(pack(unpack(scores, 4 * pid)[0] + till))[0]
                old = best[end]
                if old is None or total > old[0]:
                    best[end] = (total, start, pid)
        ids: list[int] = []
        end = n
        while end > 0:
            node = best[end]
            if node is None:
                return None
            ids.append(node[2])
            end = node[1]
        ids.reverse()
        return ids


# --------------------------------------------------------------------------- BPE


def bpe_tables(tokenizer_json: bytes) -> bytes:
    """What :class:`BpeTokens` needs of a Hugging Face ``tokenizer.json`` holding a
    Llama-style BPE (``▁`` prepended, spaces replaced, byte fallback, no pre-tokenizer);
    ValueError for any other kind."""
    import json

    spec = json.loads(tokenizer_json)
    model = spec.get("model") or {}
    normalizer = spec.get("normalizer") or {}
    expected = [
        {"type": "Prepend", "prepend": _SPACE},
        {"type": "Replace", "pattern": {"String": " "}, "content": _SPACE},
    ]
    if (
        model.get("type") != "BPE"
        or not model.get("byte_fallback")
        or model.get("dropout") is not None
        or model.get("continuing_subword_prefix")
        or model.get("end_of_word_suffix")
        or model.get("ignore_merges")
        or spec.get("pre_tokenizer") is not None
        or normalizer.get("type") != "Sequence"
        or normalizer.get("normalizers") != expected
    ):
        raise ValueError("not a tokenizer these tables reproduce")
    vocab: dict[str, int] = model["vocab"]
    merges: list[Any] = model["merges"]
    size = _slots_for(len(merges))
    slots = bytearray(size * _PAIR_SLOT.size)
    mask = size - 1
    for rank, merge in enumerate(merges):
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        a, b, new = vocab[left], vocab[right], vocab[left + right]
        at = zlib.crc32(struct.pack("<ii", a, b)) & mask
        while _PAIR_SLOT.unpack_from(slots, at * _PAIR_SLOT.size)[0]:
            at = (at + 1) & mask
        _PAIR_SLOT.pack_into(slots, at * _PAIR_SLOT.size, a + 1, b, rank, new)
    fallback = [vocab.get(f"<0x{b:02X}>", -1) for b in range(256)]
    header = {
        "slots": size,
        "chars": {p: i for p, i in vocab.items() if len(p) == 1},
        "bytes": fallback,
        "added": [t["content"] for t in spec.get("added_tokens") or ()],
    }
    return _pack(_MAGIC_BPE, header, [bytes(slots)])


class BpeTokens:
    """A Llama-style BPE's ids for a text, from :func:`bpe_tables`."""

    def __init__(self, blob: Any) -> None:
        header, view = _unpack(_MAGIC_BPE, blob)
        (slots_at,) = header["parts"]
        size = int(header["slots"])
        self._slots = view[slots_at : slots_at + size * _PAIR_SLOT.size]
        if size <= 0 or size & (size - 1) or len(self._slots) != size * _PAIR_SLOT.size:
            raise ValueError("the token table is cut short")
        self._mask = size - 1
        self._chars: dict[str, int] = header["chars"]
        self._bytes: list[int] = header["bytes"]
        self._added: tuple[str, ...] = tuple(header["added"])

    def _merge(self, a: int, b: int) -> tuple[int, int] | None:
        """``(rank, new id)`` of merging ``a`` then ``b``, or None."""
        slots, mask = self._slots, self._mask
        at = zlib.crc32(struct.pack("<ii", a, b)) & mask
        unpack = _PAIR_SLOT.unpack_from
        for _ in range(mask + 1):  # bounded, as in _Strings.get
            left, right, rank, new = unpack(slots, at * 16)
            if not left:
                return None
            if left == a + 1 and right == b:
                return rank, new
            at = (at + 1) & mask
        return None

    def encode(self, text: str) -> list[int] | None:
        """The ids (no special tokens added), or None when the text needs the library."""
        if any(t in text for t in self._added):
            return None  # special tokens are split out of the raw text first
        if not text:
            return []
        symbols: list[int] = []
        for c in _SPACE + text.replace(" ", _SPACE):
            pid = self._chars.get(c)
            if pid is not None:
                symbols.append(pid)
                continue
            fallback = [self._bytes[b] for b in c.encode("utf-8", "surrogatepass")]
            if any(f < 0 for f in fallback):
                return None
            symbols.extend(fallback)
        return self._merged(symbols)

    def _merged(self, ids: list[int]) -> list[int]:
        """Merges applied lowest rank first, leftmost first among equal ranks, over a
        linked list of symbols (a removed symbol's id becomes -1)."""
        n = len(ids)
        nxt = list(range(1, n + 1))
        prev = list(range(-1, n - 1))
        queue: list[tuple[int, int, int]] = []
        for i in range(n - 1):
            m = self._merge(ids[i], ids[i + 1])
            if m is not None:
                queue.append((m[0], i, m[1]))
        heapq.heapify(queue)
        while queue:
            _, pos, new = heapq.heappop(queue)
            if ids[pos] < 0 or nxt[pos] >= n:
                continue
            right = nxt[pos]
            m = self._merge(ids[pos], ids[right])
            if m is None or m[1] != new:
                continue  # an expired entry: one of the two was merged meanwhile
            ids[pos] = new
            ids[right] = -1
            nxt[pos] = nxt[right]
            if nxt[pos] < n:
                prev[nxt[pos]] = pos
            if prev[pos] >= 0:
                m = self._merge(ids[prev[pos]], new)
                if m is not None:
                    heapq.heappush(queue, (m[0], prev[pos], m[1]))
            if nxt[pos] < n:
                m = self._merge(new, ids[nxt[pos]])
                if m is not None:
                    heapq.heappush(queue, (m[0], pos, m[1]))
        return [i for i in ids if i >= 0]


# --------------------------------------------------------------------------- caching


#: Bump when the tables' layout or what they hold changes: older files are ignored.
_LAYOUT: Final = "skillbook-query-tokens-1"


def cached(folder: Path | None, source: Path, build: Callable[[], bytes]) -> bytes:
    """``build()``, kept in ``folder`` under a name tied to ``source`` (the tokenizer
    file: its path, size and time), so a selector saved again reuses it instead of
    walking the vocabulary again (about a second of CPU). Never raises for the cache."""
    if folder is None:
        return build()
    try:
        st = source.stat()
    except OSError:
        return build()
    tag = zlib.crc32(f"{_LAYOUT}|{source}|{st.st_size}|{st.st_mtime_ns}".encode())
    path = folder / f"tokens-{tag:08x}.tables"
    try:
        raw = path.read_bytes()
        data, crc = raw[:-4], int.from_bytes(raw[-4:], "little")
        if len(raw) > 4 and zlib.crc32(data) == crc and _readable(data):
            return data
    except OSError:
        pass
    data = build()
    try:
        from skillbook.base.atomic import atomic_writer

        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with atomic_writer(path, mode=0o600, prefix=".tmp-", suffix=".tables") as fh:
            # A checksum: a damaged copy would be saved into every selector after it.
            fh.write(data + zlib.crc32(data).to_bytes(4, "little"))
    except (OSError, ValueError):
        pass  # only a cache
    return data


def _readable(data: bytes) -> bool:
    try:
        if data.startswith(_MAGIC_UNIGRAM):
            UnigramTokens(data)
        elif data.startswith(_MAGIC_BPE):
            BpeTokens(data)
        else:
            return False
    except (ValueError, TypeError, KeyError, EOFError):
        return False
    return True
