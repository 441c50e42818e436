"""What every model call shares, whichever path it takes: its accounting and its retry policy.

- A :class:`Ledger` collects the calls made inside one unit of work (a grade, a verdict);
  the judge reading it sums tokens, cost, attempts and cache hits per result.
- ``cache_salt`` gives requests in a context their own cache entries (a judge's repeats),
  ``cache_refresh`` asks again ignoring cached answers (``--retry-errors``).
- Retries: rate limits, 5xx, connection errors, timeouts and undecodable responses are
  retried with exponential backoff and full jitter, never sooner than the server's
  Retry-After; a refused request (400, 401, 404, exhausted quota) is not.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from lhbench.models.spec import ModelSpec
from lhbench.schema import Usage

__all__ = [
    "CallRecord",
    "Ledger",
    "backoff_delay",
    "cache_refresh",
    "cache_refreshing",
    "cache_salt",
    "current_ledger",
    "is_transport_error",
    "retryable",
]


@dataclass(frozen=True)
class CallRecord:
    """One model call as accounted."""

    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    latency_s: float
    attempts: int
    cached: bool


@dataclass
class Ledger:
    """Calls made inside one unit of work (a grade, a verdict)."""

    calls: list[CallRecord] = field(default_factory=list)

    @property
    def input_tokens(self) -> int:
        """Input tokens of calls actually made (cache hits cost nothing)."""
        return sum(c.input_tokens for c in self.calls if not c.cached)

    @property
    def output_tokens(self) -> int:
        """Output tokens of calls actually made."""
        return sum(c.output_tokens for c in self.calls if not c.cached)

    @property
    def requests(self) -> int:
        """HTTP attempts made, retries included."""
        return sum(c.attempts for c in self.calls if not c.cached)

    @property
    def cost_usd(self) -> float | None:
        """Summed cost, None when no price is known."""
        costs = [c.cost_usd for c in self.calls if not c.cached and c.cost_usd is not None]
        return sum(costs) if costs else None

    def usage(self) -> Usage:
        """The ledger as schema Usage (what a grade or verdict records)."""
        return Usage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            requests=self.requests,
            cost_usd=self.cost_usd,
        )

    @property
    def cache_hits(self) -> int:
        """Calls answered from the cache."""
        return sum(1 for c in self.calls if c.cached)


_LEDGER: contextvars.ContextVar[Ledger | None] = contextvars.ContextVar(
    "lhbench_ledger", default=None
)
_SALT: contextvars.ContextVar[str] = contextvars.ContextVar("lhbench_cache_salt", default="")
_REFRESH: contextvars.ContextVar[bool] = contextvars.ContextVar("lhbench_refresh", default=False)


@contextlib.contextmanager
def current_ledger() -> Iterator[Ledger]:
    """Collect the calls made in this context (and the tasks it starts) into a new Ledger."""
    ledger = Ledger()
    token = _LEDGER.set(ledger)
    try:
        yield ledger
    finally:
        _LEDGER.reset(token)


@contextlib.contextmanager
def cache_salt(salt: str) -> Iterator[None]:
    """Give requests in this context their own cache entries (repeats that must not share)."""
    token = _SALT.set(salt)
    try:
        yield
    finally:
        _SALT.reset(token)


@contextlib.contextmanager
def cache_refresh(refresh: bool = True) -> Iterator[None]:
    """Ask the model again in this context, ignoring cached answers (and caching the new ones).

    Used when a final result (a judge answer that did not parse) is re-asked on purpose:
    the cached answer is the one that failed.
    """
    token = _REFRESH.set(refresh)
    try:
        yield
    finally:
        _REFRESH.reset(token)


def cache_refreshing() -> bool:
    """Whether this context asks again ignoring cached answers (work sent elsewhere carries it)."""
    return _REFRESH.get()


def retryable(exc: BaseException) -> bool:
    """Whether asking again after ``exc`` may work (and the model layer should retry)."""
    from pydantic_ai.exceptions import (
        ModelAPIError,
        ModelQuotaExceededError,
        ModelRequestRejectedError,
    )

    if isinstance(exc, ModelRequestRejectedError | ModelQuotaExceededError):
        return False
    return isinstance(exc, ModelAPIError | asyncio.TimeoutError)


def is_transport_error(exc: BaseException) -> bool:
    """Whether a failed call never got an answer from the model (so asking again may work).

    Timeouts, refused connections, rate limits, server errors, refused or cut-off bodies:
    everything the model layer raises except an answer that does not fit (which a judge
    records as a final parse failure).
    """
    # pydantic-ai loads where a model call failed, not with the job runner that imports us
    from pydantic_ai.exceptions import (
        ModelAPIError,
        ModelContextWindowExceededError,
        ModelRequestRejectedError,
    )

    if isinstance(exc, ModelRequestRejectedError | ModelContextWindowExceededError):
        return False  # the request itself is refused: asking the same again cannot help
    return isinstance(exc, ModelAPIError | TimeoutError | OSError)


def backoff_delay(spec: ModelSpec, rng: random.Random, attempt: int, exc: BaseException) -> float:
    """Exponential backoff with full jitter, never shorter than the server's Retry-After."""
    cap = min(spec.backoff_max_s, spec.backoff_s * 2 ** (attempt - 1))
    delay = rng.uniform(0, cap)
    retry_after = getattr(exc, "retry_after", None)
    if isinstance(retry_after, int | float):
        delay = max(delay, float(retry_after))
    return delay
