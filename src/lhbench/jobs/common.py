"""What the public job functions (``lhbench.api``) share.

The sandbox, the judges' models, a job run with its progress bar, and labelling a pack's
runs on their final states.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lhbench.errors import ConfigError
from lhbench.jobs.runner import JobSummary, run_with_progress
from lhbench.models import ModelSpec, resolve_model
from lhbench.sandbox import Sandbox, get_sandbox
from lhbench.schema import Run, RunStatus

if TYPE_CHECKING:
    from lhbench.config import Settings
    from lhbench.jobs.packs import LoadedPack
    from lhbench.jobs.states import StateProvider
    from lhbench.store import Store

__all__ = [
    "GRADABLE",
    "ProgressFactory",
    "aj_judge_spec",
    "label_runs",
    "panel_specs",
    "run_with_progress",
    "sandbox_for",
]

# Runs still going, or never started, have no trajectory worth grading yet.
GRADABLE = {s for s in RunStatus} - {RunStatus.RUNNING, RunStatus.PENDING}

ProgressFactory = Any  # Callable[[str], ProgressSink-context-manager] | None


def sandbox_for(settings: Settings) -> Sandbox:
    """The sandbox the settings ask for (raises SandboxUnavailable, naming what to install)."""
    return get_sandbox(
        settings.sandbox, unsafe=settings.unsafe_no_sandbox, image=settings.sandbox_image
    )


def panel_specs(refs: Sequence[str] | None, settings: Settings) -> list[ModelSpec]:
    """The judges named (or ``judge_panel``); a clear error when there are none."""
    names = [r.strip() for r in refs or [] if r.strip()] or list(settings.judge_panel)
    if not names:
        raise ConfigError(
            "no judge models configured: pass --panel M1,M2,M3 or set judge_panel in "
            "lhbench.toml (LHBENCH_JUDGE_PANEL); LLM judges are skipped, never faked"
        )
    return [resolve_model(r, settings.models) for r in names]


def aj_judge_spec(judge: str | None, model: str | None, settings: Settings) -> ModelSpec | None:
    """The Agent-as-a-Judge model for ``--judge agent|llm`` (None: label only, no judge).

    Raises:
        ConfigError: an unknown judge kind, or a judge with no model given or configured.
    """
    if judge not in (None, "agent", "llm"):
        raise ConfigError(f"--judge {judge!r}: expected agent or llm")
    if judge is None:
        return None
    ref = model or settings.aj_model
    if not ref:
        raise ConfigError(
            "no judge model: pass --model or set aj_model in lhbench.toml (LHBENCH_AJ_MODEL)"
        )
    return resolve_model(ref, settings.models)


async def label_runs(
    store: Store,
    settings: Settings,
    pack: LoadedPack,
    runs: Sequence[Run],
    *,
    retry_errors: bool = False,
    progress: ProgressFactory = None,
    states: StateProvider | None = None,
) -> JobSummary[Any]:
    """Label runs by their tasks' checks, on the final states the pack's environment makes."""
    from lhbench.jobs.environments import environment_context, environment_for
    from lhbench.jobs.verification import VerifyJob

    # a run that failed for infrastructure is no score: its state is not labelled either
    done = [
        r
        for r in runs
        if r.status not in (RunStatus.RUNNING, RunStatus.PENDING) and not r.infrastructure_failure
    ]
    if states is None:
        env = environment_for(pack)
        with environment_context(env, pack, settings, sandbox_for(settings)) as ctx:
            return await label_runs(
                store,
                settings,
                pack,
                [r for r in done if env.judged(r)],
                retry_errors=retry_errors,
                progress=progress,
                states=env.states(store, pack, ctx),
            )
    try:
        return await run_with_progress(
            VerifyJob(store, done, states),
            progress,
            "verifying",
            concurrency=4,
            retry_errors=retry_errors,
        )
    finally:
        await asyncio.to_thread(states.close)  # the runs' sandboxes
