"""One resumable job runner for every job: plan → skip stored → run bounded → write in batches.

A job is a list of work units, each with an identity (``key``: a grade's, a verdict's, a
run's, a file's). The runner asks the store which keys already hold a result and whether
that result is final; it skips those, runs the rest with bounded concurrency, writes
results in batches (one transaction each, at least every ``flush_seconds``), and returns
an honest summary: planned, skipped, done, failed, and the failure reasons counted.

Stored failures come in two kinds. A *retryable* one (the model or the process was never
reached: timeout, refused connection, 429, 5xx, cut-off body) is run again by the next run
of the same command. A *final* one (the judge answered, but the answer did not parse) is
kept, and asked again only with ``retry_errors`` — then with the response cache bypassed,
since the cached answer is the one that failed.
"""

from __future__ import annotations

import asyncio
import gc
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from lhbench.errors import InfrastructureError
from lhbench.models import cache_refresh
from lhbench.store import ResultState

__all__ = [
    "Assessment",
    "Gaps",
    "Job",
    "JobSummary",
    "PlansGaps",
    "ProgressSink",
    "Unit",
    "run_job",
    "run_with_progress",
    "short_reason",
]

P = TypeVar("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Unit(Generic[P]):
    """One piece of work: its identity, a short label for messages, and what it needs."""

    key: str
    label: str
    payload: P


@dataclass(frozen=True)
class Assessment:
    """What a result means for the job: ok, or failed (why, and whether to ask again)."""

    ok: bool
    reason: str | None = None
    retryable: bool = False


class Job(Protocol[P, R]):
    """What the runner needs of a job."""

    name: str

    def plan(self) -> Sequence[Unit[P]]:
        """Every unit the job covers (stored ones included: the runner skips those)."""
        ...

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """The stored state of each key that holds a result."""
        ...

    async def run(self, unit: Unit[P]) -> R:
        """Do one unit; a failure is a result that says so, not an exception."""
        ...

    def assess(self, result: R) -> Assessment:
        """Whether a result is ok, and if not, why."""
        ...

    def write(self, results: Sequence[R]) -> None:
        """Store a batch of results (one transaction)."""
        ...


@dataclass(frozen=True)
class Gaps(Generic[P]):
    """A plan told by what it lacks: how many units it covers, and only the units not stored ok.

    ``units`` holds every unit without a stored result or with a stored failure;
    ``states``: the stored state of those that have one. The units stored ok are counted in
    ``planned`` and never built (a job over a store that holds them all builds none).
    """

    planned: int
    units: Sequence[Unit[P]]
    states: Mapping[str, ResultState]


@runtime_checkable
class PlansGaps(Protocol[P]):
    """A job that can tell what is stored ok by a set-based query instead of key by key."""

    def plan_gaps(self) -> Gaps[P]:
        """The plan's size, and the units not stored ok with their stored states."""
        ...


class ProgressSink(Protocol):
    """Where the runner reports progress (a rich progress bar in the CLI)."""

    def start(self, total: int, skipped: int) -> None:
        """The plan is made: ``total`` units to run, ``skipped`` already stored."""
        ...

    def advance(self, ok: bool) -> None:
        """One unit finished."""
        ...


@dataclass
class JobSummary(Generic[R]):
    """What a job did. ``failures`` counts the reasons of the units that failed this time."""

    name: str
    planned: int = 0
    skipped: int = 0
    kept_failed: int = 0
    retried: int = 0
    done: int = 0
    failed: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    results: list[R] = field(default_factory=list)
    seconds: float = 0.0
    interrupted: bool = False

    @property
    def ran(self) -> int:
        """Units run this time."""
        return self.done + self.failed

    def line(self) -> str:
        """The summary in one line, e.g. ``grade: planned 144 · skipped 0 · done 140 · …``."""
        parts = [
            f"planned {self.planned}",
            f"skipped {self.skipped} (stored)",
        ]
        if self.kept_failed:
            parts.append(f"kept {self.kept_failed} final failure(s) (--retry-errors re-asks)")
        if self.retried:
            parts.append(f"retried {self.retried} stored failure(s)")
        parts += [f"done {self.done}", f"failed {self.failed}"]
        text = f"{self.name}: " + " · ".join(parts)
        if self.failures:
            text += " — " + ", ".join(f"{r}: {n}" for r, n in self.failures.most_common())
        if self.interrupted:
            text += " — interrupted; run the same command again to resume"
        return text

    def as_dict(self) -> dict[str, Any]:
        """The counts as plain JSON."""
        return {
            "job": self.name,
            "planned": self.planned,
            "skipped": self.skipped,
            "kept_failed": self.kept_failed,
            "retried": self.retried,
            "done": self.done,
            "failed": self.failed,
            "failures": dict(self.failures),
            "seconds": round(self.seconds, 3),
            "interrupted": self.interrupted,
        }


_HTTP = re.compile(r"status_code: (\d{3})")


def crash_reason(exc: BaseException) -> str:
    """``Type: first line of the message`` of an exception and, briefly, of its cause.

    A unit that crashed stores nothing, so this is all the user sees of it: the message
    must say what happened (``RuntimeError: Client failed to connect: …``), not only its
    type.
    """
    parts: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(parts) < 2:
        msg = str(seen).strip().splitlines()[0][:120] if str(seen).strip() else ""
        parts.append(f"{type(seen).__name__}: {msg}" if msg else type(seen).__name__)
        seen = seen.__cause__
    return " ← ".join(parts)


def short_reason(error: str | None, *, default: str = "error") -> str:
    """A failure's reason as a short category to count (``HTTP 500``, ``timeout`` …)."""
    if not error:
        return default
    if m := _HTTP.search(error):
        return f"HTTP {m.group(1)}"
    lowered = error.lower()
    for needle, reason in (
        ("timed out", "timeout"),
        ("timeout", "timeout"),
        ("connection", "connection error"),
        ("exceeded maximum retries", "answer did not fit the schema"),
        ("output validation", "answer did not fit the schema"),
        ("usagelimitexceeded", "tool budget spent"),
    ):
        if needle in lowered:
            return reason
    head = error.split(":", 1)[0].strip()
    return head[:60] or default


async def run_job(
    job: Job[P, R],
    *,
    concurrency: int = 8,
    retry_errors: bool = False,
    batch_size: int = 64,
    flush_seconds: float = 2.0,
    progress: ProgressSink | None = None,
) -> JobSummary[R]:
    """Run ``job``: everything not already stored with a final result.

    Args:
        job: The job.
        concurrency: Units in flight at once.
        retry_errors: Also run units whose stored result is a final failure (re-asked with
            the response cache bypassed).
        batch_size: Results per write.
        flush_seconds: Write at least this often, so an interrupted job loses little.
        progress: Progress reporting.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    summary: JobSummary[R] = JobSummary(job.name)
    started = time.monotonic()
    states: Mapping[str, ResultState]
    if isinstance(job, PlansGaps):
        # what is stored ok is counted, not built: a unit and its key per stored result
        # cost a job over a million stored grades most of its time
        gaps: Gaps[P] = job.plan_gaps()
        units = list({u.key: u for u in gaps.units}.values())
        summary.planned = gaps.planned
        summary.skipped = gaps.planned - len(units)
        states = gaps.states
    else:
        units = list({u.key: u for u in job.plan()}.values())
        summary.planned = len(units)
        states = job.stored([u.key for u in units]) if units else {}
    todo: list[tuple[Unit[P], bool]] = []
    for u in units:
        state = states.get(u.key)
        if state is None:
            todo.append((u, False))
        elif state == "retryable":
            summary.retried += 1
            todo.append((u, False))
        elif state == "final_error" and retry_errors:
            summary.retried += 1
            todo.append((u, True))
        elif state == "final_error":
            summary.skipped += 1
            summary.kept_failed += 1
        else:
            summary.skipped += 1
    if progress is not None:
        progress.start(len(todo), summary.skipped)

    buffer: list[R] = []
    last_flush = time.monotonic()
    write_lock = asyncio.Lock()

    async def flush(force: bool = False) -> None:
        nonlocal last_flush
        async with write_lock:
            due = len(buffer) >= batch_size or time.monotonic() - last_flush >= flush_seconds
            if not buffer or not (force or due):
                return
            batch = buffer[:]
            buffer.clear()
            await asyncio.to_thread(job.write, batch)
            last_flush = time.monotonic()

    gate = asyncio.Semaphore(concurrency)

    async def one(unit: Unit[P], refresh: bool) -> None:
        async with gate:
            try:
                with cache_refresh(refresh):
                    result = await job.run(unit)
            except InfrastructureError as exc:  # nothing stored: the next run retries it
                summary.failed += 1
                summary.failures[f"infrastructure: {crash_reason(exc)}"] += 1
                if progress is not None:
                    progress.advance(False)
                return
            except Exception as exc:  # a bug or an unreadable input: counted, nothing stored
                summary.failed += 1
                summary.failures[f"crashed: {crash_reason(exc)}"] += 1
                if progress is not None:
                    progress.advance(False)
                return
        verdict = job.assess(result)
        if verdict.ok:
            summary.done += 1
        else:
            summary.failed += 1
            summary.failures[verdict.reason or "failed"] += 1
        summary.results.append(result)
        buffer.append(result)
        if progress is not None:
            progress.advance(verdict.ok)
        await flush()

    # What exists now (store, plan, prepared inputs) lives through the job: frozen, the
    # collector's full passes skip it (~12 % less CPU per grade in bench/judge_throughput.py)
    gc.freeze()
    try:
        await asyncio.gather(*(one(u, refresh) for u, refresh in todo))
    except (asyncio.CancelledError, KeyboardInterrupt):
        summary.interrupted = True
        raise
    finally:
        # whatever finished is written, also when the job is interrupted
        if buffer:
            job.write(buffer[:])
            buffer.clear()
        summary.seconds = time.monotonic() - started
        gc.unfreeze()
    return summary


async def run_with_progress(job: Job[P, R], progress: Any, label: str, **kw: Any) -> JobSummary[R]:
    """:func:`run_job` under a progress bar (None: no bar).

    ``progress`` is a ``label -> context`` factory giving a :class:`ProgressSink` (the CLI's).
    """
    if progress is None:
        return await run_job(job, **kw)
    with progress(label) as sink:
        return await run_job(job, progress=sink, **kw)
