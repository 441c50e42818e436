"""Rubric-judge throughput against the local model stub.

1,000 runs × 3 judges against the stub (a separate process) with 200 ms latency and a
concurrency limit of 32: achieved wall time against the ideal (calls × latency /
concurrency), and the judge process's CPU time per call. Grades are written to a real
SQLite store with the response cache on, as ``lhbench judge`` does.

    uv run python bench/judge_throughput.py           # 1,000 runs
    uv run python bench/judge_throughput.py --quick   # 100 runs
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lhbench.jobs import GradeJob, run_job
from lhbench.judges import RubricJudge
from lhbench.models import ModelPool, resolve_model
from lhbench.packs import bundled_pack_dirs, load_pack
from lhbench.schema import Role, Run, RunStatus, Step, StepKind, Trajectory
from lhbench.store import Store

LATENCY = 0.2
CONCURRENCY = 32


def seed(store: Store, n: int) -> list[Run]:
    runs = []
    for i in range(n):
        run = Run(
            id=f"run-{i:05d}",
            pack_id="bench",
            task_id=f"t{i % 25}",
            harness="native",
            model="openai:x",
            status=RunStatus.COMPLETED,
        )
        store.save_run(run)
        steps = [
            Step(
                index=0,
                role=Role.USER,
                kind=StepKind.MESSAGE,
                content=f"Build it. RUN-MARK:{run.id}",
            )
        ]
        for k in range(1, 21):
            if k % 2:
                steps.append(
                    Step(
                        index=k,
                        role=Role.ASSISTANT,
                        kind=StepKind.TOOL_CALL,
                        tool_name="Bash",
                        tool_call_id=f"c{k}",
                        tool_input={"command": f"npm run build # {k}"},
                    )
                )
            else:
                steps.append(
                    Step(
                        index=k,
                        role=Role.TOOL,
                        kind=StepKind.TOOL_RESULT,
                        tool_name="Bash",
                        tool_call_id=f"c{k - 1}",
                        tool_output="built in 1.2s " * 5,
                    )
                )
        store.save_trajectory(Trajectory(run_id=run.id, steps=steps))
        runs.append(run)
    return runs


async def grade_all(store: Store, runs: list[Run], base_url: str) -> tuple[int, float, float]:
    [lib] = [d for d in bundled_pack_dirs() if d.name == "lhbench-rubrics"]
    rubric = load_pack(lib).rubric("figma-to-code")
    tier = rubric.tier("process")
    specs = [
        resolve_model(
            n,
            {
                n: {
                    "model": f"openai:{n}@{base_url}",
                    "max_concurrency": CONCURRENCY,
                    "timeout_s": 30,
                }
            },
        )
        for n in ("judge-a", "judge-b", "judge-c")
    ]
    pool = ModelPool(store)
    async with pool.session():
        judges = [RubricJudge(pool.get(s), s) for s in specs]
        wall0, cpu0 = time.perf_counter(), time.process_time()
        job = GradeJob(store, runs, rubric, tier, judges, tasks={})
        summary = await run_job(job, concurrency=2 * CONCURRENCY)
        requests = sum(g.usage.requests for g in summary.results)
        return requests, time.perf_counter() - wall0, time.process_time() - cpu0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100 runs instead of 1,000")
    args = ap.parse_args()
    n_runs = 100 if args.quick else 1000
    stub = subprocess.Popen(
        [sys.executable, "-m", "lhbench.testing", "--latency", str(LATENCY)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert stub.stdout is not None
        base_url = stub.stdout.readline().strip()
        with (
            tempfile.TemporaryDirectory() as tmp,
            Store.open(f"sqlite:///{Path(tmp) / 'bench.db'}") as store,
        ):
            runs = seed(store, n_runs)
            calls, wall, cpu = asyncio.run(grade_all(store, runs, base_url))
    finally:
        stub.terminate()
        stub.wait()
    ideal = calls * LATENCY / CONCURRENCY
    print(
        f"runs={n_runs} judges=3 calls={calls} latency={LATENCY * 1000:.0f} ms "
        f"concurrency={CONCURRENCY}"
    )
    print(f"ideal wall time: {ideal:.2f} s (calls x latency / concurrency)")
    print(f"achieved wall time: {wall:.2f} s")
    print(f"judge-process CPU: {cpu:.2f} s = {1000 * cpu / calls:.2f} ms per call (target < 2 ms)")
    print(
        f"judge_throughput efficiency: {ideal / wall:.3f} "
        f"(target >= 0.9; CPU {1000 * cpu / calls:.2f} ms/call)"
    )


if __name__ == "__main__":
    main()
