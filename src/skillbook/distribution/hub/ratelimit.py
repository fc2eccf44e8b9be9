"""Rate limits shared by every replica: fixed-window counters in the registry database.

Input: the kind of request (``read``, ``download``, ``write``), who sends it (a valid
token, else the client address) and :class:`~skillbook.distribution.hub.server_config.RateLimits`.
Output: a :class:`RateDecision` with the numbers for the ``RateLimit-*`` headers (and
``Retry-After`` once the limit is reached).

Batched (``flush_seconds`` > 0, the default): a request is counted in this process's
memory, against the count the database had at the last flush plus this process's
own requests since; :meth:`RateLimiter.flush` adds the local counts to the database
in one transaction (upserts, atomic in SQLite and PostgreSQL alike) and learns the
totals, so replicas count together within ``flush_seconds``. Unbatched (0): each
request is one upsert that returns the new count, exact across replicas at once.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import bindparam, delete, select
from sqlalchemy.dialects import postgresql, sqlite

from skillbook.distribution.hub.db import Database
from skillbook.distribution.hub.models import RateCounter
from skillbook.distribution.hub.server_config import RateLimits

__all__ = ["KINDS", "RateDecision", "RateLimiter"]

KINDS: Final = ("read", "download", "write")
#: Keys per statement of a flush (far below SQLite's limit on parameters).
_CHUNK: Final = 500
_TOTALS: Final = select(RateCounter.key, RateCounter.window, RateCounter.count).where(
    RateCounter.key.in_(bindparam("keys", expanding=True)),
    RateCounter.window.in_(bindparam("windows", expanding=True)),
)


@dataclass(frozen=True, slots=True)
class RateDecision:
    allowed: bool
    limit: int
    remaining: int
    #: Seconds until the window resets (``RateLimit-Reset``, delta seconds).
    reset: int
    #: Epoch seconds of the reset (``X-RateLimit-Reset``).
    reset_at: int

    def headers(self) -> dict[str, str]:
        """Headers every client reads at least one of (clawhub-api.md §7)."""
        out = {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(self.remaining),
            "RateLimit-Reset": str(self.reset),
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset_at),
        }
        if not self.allowed:
            out["Retry-After"] = str(self.reset)
        return out


@dataclass(slots=True)
class _Local:
    """One key's window in this process: the database's count at the last flush, and ours since."""

    window: int
    seen: int = 0
    pending: int = 0


class RateLimiter:
    """Counts requests per subject and window, in the database or batched through memory."""

    def __init__(self, db: Database, limits: RateLimits, *, batched: bool = False) -> None:
        self._db = db
        self.limits = limits
        self.batched = batched
        self._local: dict[str, _Local] = {}
        self._lock = threading.Lock()
        self._swept_window = -1

    def _upsert(self, key: str, window: int, n: int) -> Any:
        dialect = postgresql if self._db.backend == "postgresql" else sqlite
        stmt = dialect.insert(RateCounter).values(key=key, window=window, count=n)
        return stmt.on_conflict_do_update(
            index_elements=[RateCounter.key, RateCounter.window],
            set_={"count": RateCounter.count + n},
        ).returning(RateCounter.count)

    def _add_many(self) -> Any:
        """One upsert run for every row (executemany): compiled once, whatever the batch."""
        dialect = postgresql if self._db.backend == "postgresql" else sqlite
        stmt = dialect.insert(RateCounter).values(
            key=bindparam("k"), window=bindparam("w"), count=bindparam("n")
        )
        return stmt.on_conflict_do_update(
            index_elements=[RateCounter.key, RateCounter.window],
            set_={"count": RateCounter.count + stmt.excluded.count},
        )

    def hit(
        self, kind: str, subject: str, *, token: bool, now: float | None = None
    ) -> RateDecision | None:
        """Count one request; None when this kind is unlimited."""
        limit = self.limits.limit(kind, token=token)
        if limit <= 0:
            return None
        span = max(1, self.limits.window_seconds)
        moment = time.time() if now is None else now
        window = int(moment // span)
        key = f"{kind}:{'t' if token else 'a'}:{subject}"[:96]
        if self.batched:
            with self._lock:
                local = self._local.get(key)
                if local is None or local.window != window:
                    local = self._local[key] = _Local(window)
                local.pending += 1
                count = local.seen + local.pending
        else:
            with self._db.session() as session:
                count = int(session.execute(self._upsert(key, window, 1)).scalar_one())
                if count == 1:
                    # The first request of a window sweeps windows nobody reads any more.
                    session.execute(delete(RateCounter).where(RateCounter.window < window - 1))
        return _decision(count, limit, window, span, moment)

    def flush(self, now: float | None = None) -> int:
        """Add this process's counts to the database and learn the totals; returns keys written."""
        span = max(1, self.limits.window_seconds)
        current = int((time.time() if now is None else now) // span)
        with self._lock:
            # Windows before the previous one are over: nobody reads them any more.
            for key in [k for k, v in self._local.items() if v.window < current - 1]:
                del self._local[key]
            taken = [(k, v.window, v.pending) for k, v in self._local.items() if v.pending]
            for key, _, _ in taken:
                self._local[key].pending = 0
        sweep = current != self._swept_window
        if not taken and not sweep:
            return 0
        totals: list[tuple[str, int, int]] = []
        try:
            # Two statements per chunk however many clients: add the counts, read the totals.
            with self._db.engine.begin() as conn:
                for start in range(0, len(taken), _CHUNK):
                    chunk = taken[start : start + _CHUNK]
                    conn.execute(self._add_many(), [{"k": k, "w": w, "n": n} for k, w, n in chunk])
                    wanted = {(k, w) for k, w, _ in chunk}
                    rows = conn.execute(
                        _TOTALS,
                        {
                            "keys": [k for k, _, _ in chunk],
                            "windows": list({w for _, w, _ in chunk}),
                        },
                    )
                    totals.extend((str(k), int(w), int(c)) for k, w, c in rows if (k, w) in wanted)
                if sweep:
                    conn.execute(delete(RateCounter).where(RateCounter.window < current - 1))
        except Exception:
            with self._lock:
                for key, window, n in taken:
                    local = self._local.get(key)
                    if local is not None and local.window == window:
                        local.pending += n
            raise
        self._swept_window = current
        with self._lock:
            for key, window, total in totals:
                local = self._local.get(key)
                if local is not None and local.window == window:
                    # ``total`` holds what was flushed; hits since are still pending.
                    local.seen = total
        return len(totals)


def _decision(count: int, limit: int, window: int, span: int, moment: float) -> RateDecision:
    reset_at = (window + 1) * span
    reset = max(1, int(reset_at - moment + 0.999))
    return RateDecision(
        allowed=count <= limit,
        limit=limit,
        remaining=max(0, limit - count),
        reset=reset,
        reset_at=int(reset_at),
    )
