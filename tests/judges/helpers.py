"""Shared set-up for judge tests: runs with trajectories in a store, and stub judge specs."""

from __future__ import annotations

from datetime import timedelta

from lhbench.jobs import GradeJob, JobSummary, run_job
from lhbench.judges import Evidence, RubricJudge
from lhbench.models import ModelSpec, resolve_model
from lhbench.packs import bundled_pack_dirs, load_pack
from lhbench.schema import Role, Rubric, Run, Step, StepKind, TaskPack, Tier, Trajectory
from lhbench.store import Store
from tests.factories import T0, make_run

WEIGHTS = {
    "design_inspection": 0.30,
    "token_extraction": 0.25,
    "component_architecture": 0.25,
    "build_verification": 0.20,
}
JUDGE_NAMES = ("judge-claude", "judge-gemini", "judge-gpt")


def rubric_pack() -> TaskPack:
    [d] = [p for p in bundled_pack_dirs() if p.name == "lhbench-rubrics"]
    return load_pack(d)


def process_tier() -> tuple[Rubric, Tier]:
    rubric = rubric_pack().rubric("figma-to-code")
    return rubric, rubric.tier("process")


def trajectory_for(run_id: str, extra: str = "") -> Trajectory:
    return Trajectory(
        run_id=run_id,
        steps=[
            Step(
                index=0,
                role=Role.USER,
                kind=StepKind.MESSAGE,
                content=f"Build the page. RUN-MARK:{run_id}",
            ),
            Step(
                index=1,
                role=Role.ASSISTANT,
                kind=StepKind.TOOL_CALL,
                tool_name="get_figma_file",
                tool_call_id="c1",
                tool_input={"file": "abc"},
                timestamp=T0 + timedelta(seconds=1),
            ),
            Step(
                index=2,
                role=Role.TOOL,
                kind=StepKind.TOOL_RESULT,
                tool_call_id="c1",
                tool_output="frames: 3",
            ),
            Step(index=3, role=Role.ASSISTANT, kind=StepKind.MESSAGE, content=f"Done. {extra}"),
        ],
    )


def seed_runs(store: Store, n: int, pack_id: str = "figma-mini") -> list[Run]:
    store.save_pack(rubric_pack())
    runs = []
    for i in range(n):
        run = make_run(
            f"r{i:03d}",
            pack_id=pack_id,
            pack_hash="",
            task_id=f"t{i % 3}",
            harness=("claude-code", "codex")[i % 2],
        )
        store.save_run(run)
        store.save_trajectory(trajectory_for(run.id))
        runs.append(run)
    return runs


def stub_specs(base_url: str, **kw: object) -> list[ModelSpec]:
    families = ("anthropic", "google", "openai")
    return [
        resolve_model(
            name,
            {
                name: {
                    "model": f"openai:{name}@{base_url}",
                    "family": fam,
                    "backoff_s": 0.01,
                    "backoff_max_s": 0.05,
                    **kw,
                }
            },
        )
        for name, fam in zip(JUDGE_NAMES, families, strict=True)
    ]


def evidence(store: Store, run: Run) -> Evidence:
    """A run's evidence from the store."""
    return Evidence(
        run=run,
        task=None,
        trajectory=store.get_trajectory(run.id),
        artifacts=store.list_artifacts(run.id),
    )


async def grade_job(
    store: Store,
    runs: list[Run],
    rubric: Rubric,
    tier: Tier,
    judges: list[RubricJudge],
    **kw: object,
) -> JobSummary:
    """Grade ``runs`` with ``judges`` through the job runner (as ``lhbench judge`` does)."""
    repeats = int(kw.pop("repeats", 1))  # type: ignore[call-overload]
    job = GradeJob(store, runs, rubric, tier, judges, tasks={}, repeats=repeats)
    return await run_job(job, **kw)  # type: ignore[arg-type]
