"""Token accounting in plain integers, per model, in the one meaning every format maps to.

Input tokens exclude cache reads and cache writes (each counted on its own); output
tokens include reasoning, and reasoning tokens say how many of them were reasoning. A
format that counts differently is converted where it is read (Gemini and Codex include
cache reads in their input count, for instance).
"""

from __future__ import annotations

from lhbench.schema import Usage

__all__ = ["MAX_MODELS", "Tally", "Tokens"]

MAX_MODELS = 64  # models counted apart at most (a hostile file may name a new one per line)


class Tally:
    """Summed usage of some model calls, in plain integers."""

    __slots__ = ("cache_read", "cache_write", "cost", "input", "output", "reasoning", "requests")

    def __init__(
        self,
        input: int = 0,
        output: int = 0,
        cache_read: int = 0,
        cache_write: int = 0,
        reasoning: int = 0,
        requests: int = 0,
        cost: float | None = None,
    ) -> None:
        self.input = input
        self.output = output
        self.cache_read = cache_read
        self.cache_write = cache_write
        self.reasoning = reasoning
        self.requests = requests
        self.cost = cost

    def add(self, other: Tally) -> None:
        """Add another tally to this one."""
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.reasoning += other.reasoning
        self.requests += other.requests
        if other.cost is not None:
            self.cost = (self.cost or 0.0) + other.cost

    def usage(self) -> Usage:
        """As schema Usage."""
        return Usage(
            input_tokens=self.input,
            output_tokens=self.output,
            cache_read_tokens=self.cache_read,
            cache_write_tokens=self.cache_write,
            reasoning_tokens=self.reasoning,
            requests=self.requests,
            cost_usd=self.cost,
        )

    @classmethod
    def of(cls, usage: Usage) -> Tally:
        """A tally from schema Usage."""
        return cls(
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.reasoning_tokens,
            usage.requests,
            usage.cost_usd,
        )


class Tokens:
    """A run's usage: the total and, per model, its share."""

    __slots__ = ("models", "total")

    def __init__(self) -> None:
        self.total = Tally()
        self.models: dict[str, Tally] = {}

    def add(self, model: str | None, t: Tally) -> None:
        """Count one call's (or one summary's) usage under ``model``."""
        self.total.add(t)
        self.add_model(model, t)

    def add_model(self, model: str | None, t: Tally) -> None:
        """Count usage under ``model`` only (the caller keeps the total)."""
        if model:
            m = self.models.get(model)
            if m is None:
                if len(self.models) >= MAX_MODELS:  # a hostile file naming one per line
                    return
                m = self.models[model] = Tally()
            m.add(t)

    def per_model(self) -> dict[str, Usage]:
        """Usage per model (empty when no model was named)."""
        return {name: t.usage() for name, t in self.models.items()}
