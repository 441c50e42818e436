"""LLM failure extraction as a job: each run's error events, asked of a model once.

``lhbench failures --llm M`` compares the rule-based failure taxonomy with a model's reading
of the same trajectories. Each run is a unit keyed by (run, model, endpoint, prompt); the
answer, or why there is none, is stored, so a rerun asks only for what is missing, an
interrupted one resumes, and the calls in flight are bounded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lhbench.config import Settings
from lhbench.jobs.runner import Assessment, JobSummary, Unit, run_with_progress, short_reason
from lhbench.models import ModelPool, ModelSpec, resolve_model
from lhbench.schema import ExtractedEvent, FailureExtraction, Run, extraction_key
from lhbench.store import ResultState, Store

__all__ = ["FailureExtractionJob", "FailureExtractionOutcome", "extract_failures"]


class FailureExtractionJob:
    """Every run's error events as the model reads them (the Job protocol)."""

    name = "failure-extraction"

    def __init__(self, store: Store, runs: Sequence[Run], extractor: Any, spec: ModelSpec) -> None:
        from lhbench.judges.failure_extract import PROMPT_VERSION

        self.store = store
        self.runs = list(runs)
        self.extractor = extractor
        self.spec = spec
        self.prompt_version = PROMPT_VERSION
        self.settings = f"budget_tokens={getattr(extractor, 'budget_tokens', '')}"

    def key(self, run: Run) -> str:
        """The extraction's key: the run, the model and endpoint, the prompt."""
        return extraction_key(
            run.id, self.spec.model_string, self.spec.endpoint, self.prompt_version, self.settings
        )

    def plan(self) -> list[Unit[Run]]:
        """One unit per run."""
        return [Unit(self.key(r), r.id, r) for r in self.runs]

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """Stored extraction states."""
        return self.store.failure_extraction_states(keys)

    async def run(self, unit: Unit[Run]) -> FailureExtraction:
        """Ask the model; a failure is stored with its reason, never as no errors."""
        from lhbench.models import is_transport_error

        run = unit.payload
        base = {
            "key": unit.key,
            "run_id": run.id,
            "model": self.spec.model_string,
            "prompt_version": self.prompt_version,
        }
        trajectory = self.store.get_trajectory(run.id)
        try:
            found = await self.extractor.extract(trajectory)
        except Exception as exc:  # the model's failure is a stored error row, not a crash
            return FailureExtraction(
                **base,
                status="error",
                error=f"{type(exc).__name__}: {str(exc)[:500]}",
                retryable=is_transport_error(exc),
            )
        events = [ExtractedEvent(step=e.step, type=e.type, recovered=e.recovered) for e in found]
        return FailureExtraction(**base, events=events)

    def assess(self, result: FailureExtraction) -> Assessment:
        """Ok, or why not (retryable when the model was never reached)."""
        if result.status == "ok":
            return Assessment(True)
        return Assessment(False, short_reason(result.error), result.retryable)

    def write(self, results: Sequence[FailureExtraction]) -> None:
        """The extractions (one replaces a failed one under its key)."""
        self.store.save_failure_extractions(results)


@dataclass
class FailureExtractionOutcome:
    """The job's summary and each run's stored extraction (ok ones and failures alike)."""

    summary: JobSummary[FailureExtraction]
    model: str
    extractions: dict[str, FailureExtraction]


async def extract_failures(
    store: Store,
    settings: Settings,
    runs: Sequence[Run],
    *,
    model: str,
    concurrency: int = 8,
    retry_errors: bool = False,
    progress: Any = None,
    wrapped: Any = None,
) -> FailureExtractionOutcome:
    """Each run's error events as ``model`` reads its trajectory, stored by key.

    Args:
        store: The store (trajectories, and where the extractions go).
        settings: Settings (model aliases).
        runs: The runs to read.
        model: Model string or alias.
        concurrency: Calls in flight.
        retry_errors: Ask again where a stored answer failed for good.
        progress: Progress-bar factory.
        wrapped: Test hook: a pydantic-ai model used instead of the real one.
    """
    from lhbench.judges import FailureExtractor

    spec = resolve_model(model, settings.models)
    pool = ModelPool()  # the stored extractions are what a rerun reuses
    async with pool.session():
        job = FailureExtractionJob(
            store, runs, FailureExtractor(pool.get(spec, wrapped=wrapped)), spec
        )
        summary = await run_with_progress(
            job,
            progress,
            "extracting failures",
            concurrency=concurrency,
            retry_errors=retry_errors,
        )
    keys = {job.key(r): r.id for r in runs}
    stored = store.list_failure_extractions(keys)
    return FailureExtractionOutcome(
        summary, spec.model_string, {x.run_id: x for x in stored if x.key in keys}
    )
