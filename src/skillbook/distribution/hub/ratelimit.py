"""Rate limits shared by every replica: fixed-window counters in the registry database.

Input: the kind of request (``read``, ``download``, ``write``), who sends it (a valid
token, else the client address) and :class:`~skillbook.distribution.hub.server_config.RateLimits`.
Output: a :class:`RateDecision` with the numbers for the ``RateLimit-*`` headers (and
``Retry-After`` once the limit is reached). Each request is one upsert that returns
the new count, atomic in SQLite and PostgreSQL alike, so two replicas behind a load
balancer count together and no process keeps state the others lack.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

from sqlalchemy import delete
from sqlalchemy.dialects import postgresql, sqlite

from skillbook.distribution.hub.db import Database
from skillbook.distribution.hub.models import RateCounter
from skillbook.distribution.hub.server_config import RateLimits

__all__ = ["KINDS", "RateDecision", "RateLimiter"]

KINDS: Final = ("read", "download", "write")


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


class RateLimiter:
    """Counts requests per subject and window in the database."""

    def __init__(self, db: Database, limits: RateLimits) -> None:
        self._db = db
        self.limits = limits

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
        dialect = postgresql if self._db.backend == "postgresql" else sqlite
        stmt = dialect.insert(RateCounter).values(key=key, window=window, count=1)
        stmt = stmt.on_conflict_do_update(
            index_elements=[RateCounter.key, RateCounter.window],
            set_={"count": RateCounter.count + 1},
        ).returning(RateCounter.count)
        with self._db.session() as session:
            count = int(session.execute(stmt).scalar_one())
            if count == 1:
                # The first request of a window sweeps windows nobody reads any more.
                session.execute(delete(RateCounter).where(RateCounter.window < window - 1))
        reset_at = (window + 1) * span
        reset = max(1, int(reset_at - moment + 0.999))
        return RateDecision(
            allowed=count <= limit,
            limit=limit,
            remaining=max(0, limit - count),
            reset=reset,
            reset_at=int(reset_at),
        )
