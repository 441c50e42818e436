"""Injectable rate limiting for the fixture server: token buckets and a seeded schedule.

Figma limits REST calls per user and per endpoint tier with a leaky bucket (Tier 1 —
files, nodes, images — allows 10 to 20 requests a minute on paid seats). The fixture
server reproduces that so an agent's recovery from 429s can be studied: each (token,
tier) has a bucket of ``capacity`` requests refilled at ``per_minute``; a request finding
it empty is refused with ``Retry-After`` (the seconds until a token is back). A schedule
can also refuse given request numbers outright, for exactly repeatable tests.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

__all__ = ["Decision", "RateLimit", "RateLimiter", "parse_rate_limit", "tier_of"]


def tier_of(path: str) -> int:
    """Figma's rate-limit tier of a REST path (1 heaviest; ``meta`` and images lighter)."""
    if path.endswith("/meta") or "/variables/" in path or path.endswith("/images"):
        return 2
    if path.endswith(("/styles", "/components", "/component_sets")):
        return 3
    return 1


@dataclass(frozen=True)
class RateLimit:
    """The limit to apply: a bucket per (token, tier), and request numbers always refused.

    ``capacity`` None means no bucket. ``schedule`` lists 1-based request numbers (over
    all requests the server sees) that get a 429 whatever the bucket holds.
    """

    capacity: int | None = None
    per_minute: float = 10.0
    schedule: frozenset[int] = frozenset()
    plan_tier: str = "starter"
    limit_type: str = "high"

    @property
    def active(self) -> bool:
        """Whether anything can be refused."""
        return self.capacity is not None or bool(self.schedule)


def parse_rate_limit(text: str | None) -> RateLimit:
    """A limit from ``"10/min"``, ``"capacity=5,per_minute=10,schedule=3;7"`` or ``"off"``.

    Raises:
        ValueError: naming the part that is not understood.
    """
    if text is None or not text.strip() or text.strip().lower() in ("off", "none", "0"):
        return RateLimit()
    text = text.strip()
    if "/" in text and "=" not in text:
        count, _, unit = text.partition("/")
        if unit.strip().lower() not in ("min", "minute", "m"):
            raise ValueError(f"rate limit {text!r}: expected N/min")
        n = int(count)
        return RateLimit(capacity=n, per_minute=float(n))
    values: dict[str, str] = {}
    for part in text.split(","):
        k, sep, v = part.partition("=")
        if not sep:
            raise ValueError(f"rate limit {text!r}: expected key=value, got {part!r}")
        values[k.strip()] = v.strip()
    unknown = set(values) - {"capacity", "per_minute", "schedule", "plan_tier", "limit_type"}
    if unknown:
        raise ValueError(f"rate limit {text!r}: unknown key(s) {', '.join(sorted(unknown))}")
    schedule = frozenset(int(x) for x in values.get("schedule", "").split(";") if x.strip())
    cap = values.get("capacity")
    return RateLimit(
        capacity=int(cap) if cap else None,
        per_minute=float(values.get("per_minute", cap or 10)),
        schedule=schedule,
        plan_tier=values.get("plan_tier", "starter"),
        limit_type=values.get("limit_type", "high"),
    )


@dataclass(frozen=True)
class Decision:
    """Whether a request may go on; if not, how long to wait."""

    allowed: bool
    retry_after: int = 0


@dataclass
class _Bucket:
    tokens: float
    stamp: float


@dataclass
class RateLimiter:
    """Applies a :class:`RateLimit`; ``clock`` is injectable so tests control time."""

    limit: RateLimit
    clock: Callable[[], float] = time.monotonic
    requests: int = 0
    refused: int = 0
    _buckets: dict[tuple[str, int], _Bucket] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self, token: str, path: str) -> Decision:
        """Count one request by ``token`` to ``path`` and say whether it is allowed."""
        with self._lock:
            self.requests += 1
            if self.requests in self.limit.schedule:
                self.refused += 1
                return Decision(False, 1)
            if self.limit.capacity is None:
                return Decision(True)
            rate = self.limit.per_minute / 60.0
            now = self.clock()
            key = (token, tier_of(path))
            b = self._buckets.get(key)
            if b is None:
                b = self._buckets[key] = _Bucket(float(self.limit.capacity), now)
            b.tokens = min(float(self.limit.capacity), b.tokens + (now - b.stamp) * rate)
            b.stamp = now
            if b.tokens >= 1.0:
                b.tokens -= 1.0
                return Decision(True)
            self.refused += 1
            wait = (1.0 - b.tokens) / rate if rate > 0 else 3600.0
            return Decision(False, max(1, math.ceil(wait)))

    def headers(self, decision: Decision) -> Iterable[tuple[str, str]]:
        """The headers Figma sends with a 429."""
        yield "Retry-After", str(decision.retry_after)
        yield "X-Figma-Plan-Tier", self.limit.plan_tier
        yield "X-Figma-Rate-Limit-Type", self.limit.limit_type
        yield "X-Figma-Upgrade-Link", "https://www.figma.com/pricing"
