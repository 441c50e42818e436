"""``lhbench run``: run a harness on a pack's tasks and store runs, trajectories, artifacts."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console
from rich.table import Table

from lhbench.config import Settings
from lhbench.errors import ConfigError
from lhbench.harness import HARNESSES, RunOutcome, RunSpec, run_local, run_ray
from lhbench.models import resolve_model
from lhbench.packs import load_pack, resolve_pack_dir
from lhbench.schema import RunStatus
from lhbench.store import Store

__all__ = ["run_command", "store_outcome"]


def store_outcome(store: Store, out: RunOutcome) -> None:
    """Save a run with its trajectory and artifacts."""
    store.save_run(out.run)
    store.save_trajectory(out.trajectory)
    for a in out.artifacts:
        store.save_artifact(a)


def run_command(
    settings: Settings,
    *,
    pack: str,
    harness: str,
    model: str,
    tasks: list[str] | None,
    repeats: int,
    versions: dict[str, str],
    parallel: int,
    executor: str,
    console: Console,
) -> list[RunOutcome]:
    """Plan, skip finished runs, execute the rest, store every outcome as it arrives."""
    if harness not in HARNESSES:
        raise ConfigError(
            f"--harness {harness!r}: available here: {', '.join(HARNESSES)} "
            "(the Claude Code, Codex and Gemini CLI adapters are not built yet)"
        )
    if executor not in ("local", "ray"):
        raise ConfigError(f"--executor {executor!r}: expected local or ray")
    pack_dir = resolve_pack_dir(pack)
    task_pack = load_pack(pack_dir)
    chosen = tasks or [t.id for t in task_pack.tasks]
    unknown = sorted(set(chosen) - {t.id for t in task_pack.tasks})
    if unknown:
        raise ConfigError(f"--tasks: not in pack {task_pack.id}: {', '.join(unknown)}")
    spec = resolve_model(model, settings.models)
    specs = [
        RunSpec(
            pack_dir=str(Path(pack_dir).resolve()),
            task_id=t,
            harness=harness,
            model=spec.model_dump(mode="json"),
            versions=versions,
            repeat=k,
            home=str(settings.home.resolve()),
        )
        for t in chosen
        for k in range(repeats)
    ]
    with Store.open(settings.database_url) as store:
        store.save_pack(task_pack)
        todo = []
        for s in specs:
            try:
                done = store.get_run(s.run_id()).status == RunStatus.COMPLETED
            except Exception:
                done = False
            if done:
                console.print(f"[dim]{s.run_id()}: already completed[/dim]")
            else:
                todo.append(s)
        if executor == "ray":
            outcomes = run_ray(todo, parallel=parallel)
            for o in outcomes:
                store_outcome(store, o)
        else:
            outcomes = asyncio.run(
                run_local(todo, parallel=parallel, on_done=lambda o: store_outcome(store, o))
            )
    table = Table(
        title=f"{len(outcomes)} run(s) of {task_pack.id} with {harness} / {spec.model_string}"
    )
    for col in ("run", "task", "status", "steps", "tool calls", "errors", "tokens"):
        table.add_column(col)
    for o in outcomes:
        table.add_row(
            o.run.id,
            o.run.task_id,
            o.run.status.value,
            str(len(o.trajectory.steps)),
            str(len(o.trajectory.tool_calls)),
            str(len(o.trajectory.errors)),
            f"{o.run.usage.input_tokens}+{o.run.usage.output_tokens}",
        )
    console.print(table)
    return outcomes
