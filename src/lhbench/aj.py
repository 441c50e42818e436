"""Agent-as-a-Judge jobs: replay a pack's trajectories, label them, judge them, score judges.

Each bundled trajectory becomes a Run (harness ``fixture``) with its Trajectory; its
final state is replayed into a fresh directory or database, the task's verify script
labels it, and judges (agent or LLM) give verdicts that are scored against the labels.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from lhbench.envs import PostgresDatabases, VerifyPool, VerifyResult, replay_filesystem, replay_sql
from lhbench.ingest import FORMATS, ImportContext, read_transcripts
from lhbench.judges import VerdictJudge, judge_tool_servers
from lhbench.packs import load_pack
from lhbench.schema import (
    EnvironmentKind,
    Label,
    Run,
    RunStatus,
    Task,
    TaskPack,
    Trajectory,
    Verdict,
)
from lhbench.store import Store

__all__ = [
    "AJItem",
    "Replayed",
    "auto_failure_mode",
    "judge_items",
    "load_items",
    "replay_items",
]


@dataclass(frozen=True)
class AJItem:
    """One trajectory of one task of a pack, as a run."""

    pack: TaskPack
    task: Task
    task_dir: Path
    name: str
    trajectory: Trajectory
    run: Run

    @property
    def kind(self) -> EnvironmentKind:
        """The task's environment kind."""
        return self.task.environment.kind or self.pack.environment


@dataclass(frozen=True)
class Replayed:
    """A replayed final state and the label its verify script gave."""

    item: AJItem
    root: Path | None
    db_url: str | None
    label: VerifyResult
    state_id: str
    trajectory_file: Path


def load_items(pack_dir: Path) -> list[AJItem]:
    """Every trajectory (``tasks/<id>/trajectories/*.jsonl``) of a pack, as runs."""
    pack = load_pack(pack_dir)
    items = []
    for task in pack.tasks:
        task_dir = pack_dir / "tasks" / task.id
        for f in sorted((task_dir / "trajectories").glob("*.jsonl")):
            ctx = ImportContext(path=f, strict=True)
            [(info, steps_iter)] = list(read_transcripts(FORMATS["jsonl"], ctx))
            steps = list(steps_iter)
            run_id = f"{pack.id}--{task.id}--{f.stem}"
            traj = Trajectory(run_id=run_id, steps=steps)
            run = Run(
                id=run_id,
                pack_id=pack.id,
                pack_hash=pack.content_hash,
                task_id=task.id,
                harness="fixture",
                model=info.model or "fixture",
                status=RunStatus.COMPLETED,
                source=str(f.relative_to(pack_dir)),
                metadata={"trajectory": f.stem},
            )
            items.append(AJItem(pack, task, task_dir, f.stem, traj, run))
    return items


def _replay_one(
    item: AJItem, workdir: Path, postgres: PostgresDatabases | None, verifier: VerifyPool
) -> Replayed:
    env = item.task.environment
    base = workdir / item.run.id
    base.mkdir(parents=True, exist_ok=True)
    traj_file = base / "trajectory.json"
    traj_file.write_text(item.trajectory.model_dump_json(), encoding="utf-8")
    verify = item.task_dir / (env.verify or "verify.py")
    state_id = hashlib.sha256(
        (item.task.content_hash + item.trajectory.model_dump_json()).encode()
    ).hexdigest()
    if item.kind == EnvironmentKind.SQL:
        dump = (item.task_dir / (env.database or "seed.sql")).read_text(encoding="utf-8")
        state, _ = replay_sql(dump, item.trajectory, base / "state.db", postgres=postgres)
        label = verifier.run(verify, db_url=state.url)
        return Replayed(item, None, state.url, label, state_id, traj_file)
    initial = item.task_dir / env.initial_state if env.initial_state else None
    replay_filesystem(initial, item.trajectory, base / "state")
    label = verifier.run(verify, root=base / "state")
    return Replayed(item, base / "state", None, label, state_id, traj_file)


def replay_items(
    items: Sequence[AJItem],
    workdir: Path,
    *,
    postgres: PostgresDatabases | None = None,
    workers: int = 4,
    store: Store | None = None,
) -> list[Replayed]:
    """Replay and label every item (in parallel; each replay is isolated)."""
    with VerifyPool(workers) as verifier, ThreadPoolExecutor(max_workers=workers) as pool:
        out = list(pool.map(lambda it: _replay_one(it, workdir, postgres, verifier), items))
    if store is not None:
        for pack in {r.item.pack.content_hash: r.item.pack for r in out}.values():
            store.save_pack(pack)
        for r in out:
            store.save_run(r.item.run)
            store.save_trajectory(r.item.trajectory)
            store.save_label(
                Label(
                    run_id=r.item.run.id,
                    passed=r.label.passed,
                    source=f"verify:{r.item.task.id}/verify.py",
                    detail=r.label.detail,
                )
            )
    return out


async def judge_items(
    store: Store,
    replayed: Sequence[Replayed],
    judge: VerdictJudge,
    *,
    repeats: int = 1,
    concurrency: int = 4,
    on_verdict: Callable[[Verdict], None] | None = None,
) -> tuple[int, int]:
    """Verdicts for every replayed item and repeat; (new, already stored)."""
    gate = asyncio.Semaphore(concurrency)
    done = skipped = 0

    async def one(r: Replayed, k: int) -> None:
        nonlocal done, skipped
        servers = judge_tool_servers(
            root=r.root, db_url=r.db_url, trajectory_file=r.trajectory_file
        )
        key = judge.cache_key(
            r.item.run, judge.prompt(r.item.task, r.item.trajectory), r.state_id, k
        )
        if any(v.cache_key == key for v in store.list_verdicts(run_id=r.item.run.id)):
            skipped += 1
            return
        async with gate:
            verdict = await judge.judge(
                r.item.run,
                r.item.task,
                r.item.trajectory,
                servers=servers,
                state_id=r.state_id,
                repeat=k,
            )
        store.save_verdict(verdict)
        done += 1
        if on_verdict:
            on_verdict(verdict)

    await asyncio.gather(*(one(r, k) for r in replayed for k in range(repeats)))
    return done, skipped


_STATE_TOOLS = {
    EnvironmentKind.FILESYSTEM: {
        "list_directory",
        "directory_tree",
        "read_file",
        "search_files",
        "get_file_info",
    },
    EnvironmentKind.SQL: {"list_tables", "describe_table", "query"},
}


def auto_failure_mode(verdict: Verdict, label: bool, kind: EnvironmentKind) -> str | None:
    """AJ-Bench A.7 modes (a) and (b) for a wrong agent verdict, from its tool use.

    (a) no or omitted tool call: it never looked at the final state; (b) wrong tool: it
    called tools, but none that read this environment's state. (c) misread output and
    (d) wrong reasoning need a reviewer (``lhbench aj tag``).
    """
    if verdict.verdict is None or (verdict.verdict == "PASS") == label:
        return None
    if verdict.failure_mode:
        return verdict.failure_mode
    if verdict.judge.kind.value != "agent":
        return None
    if not verdict.tools_used:
        return "a"
    if not set(verdict.tools_used) & _STATE_TOOLS.get(kind, set()):
        return "b"
    return None
