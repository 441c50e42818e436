"""Rubric-judge throughput at the speed of the endpoint: lhbench against a raw-client floor.

1,000 runs × 3 judges against the local model stub (its own process, 200 ms latency per
answer, 32 requests at once), measured in one process run, in alternation, 3 times each:

- floor: raw aiohttp, one session, 32 at once, posting the very request bodies lhbench
  sends (encoded before the clock starts) and parsing the answers' JSON — nothing else;
- lhbench: ``GradeJob`` through the job runner, as ``lhbench judge`` runs it: plan, skip
  stored, prepare requests (evidence loaded, prompts rendered, one cache query), send on
  the judges' direct path, validate every answer against the rubric, write grades and
  cache rows in batches to a fresh SQLite store;
- lhbench over pydantic-ai's ``model_request`` (the same job with ``ModelPool(direct=
  "pydantic-ai")``): the alternative the direct path was measured against;
- Inspect AI ``get_model().generate`` with the same messages and output tool, 32 at once.

Efficiency is ideal wall time (calls × latency / 32) over achieved wall time; CPU is this
process's CPU time (every thread) per call. Figures are medians over the repetitions;
ratios are ratios of medians.

    uv run python bench/judge_throughput.py           # 1,000 runs, 3 repetitions
    uv run python bench/judge_throughput.py --quick   # 100 runs
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import common
import orjson

from lhbench.jobs import GradeJob, run_job
from lhbench.judges import RubricJudge
from lhbench.judges.prompts import rubric_instructions
from lhbench.models import DirectPath, ModelPool, ModelSpec, PreparedRequest, resolve_model
from lhbench.packs import bundled_pack_dirs, load_pack
from lhbench.schema import Role, Rubric, Run, RunStatus, Step, StepKind, Tier, Trajectory
from lhbench.store import Store

LATENCY = 0.2
CONCURRENCY = 32
JUDGES = ("judge-a", "judge-b", "judge-c")


@dataclass
class Sample:
    """One repetition of one client."""

    wall: float
    cpu: float
    calls: int
    ok: int

    @property
    def efficiency(self) -> float:
        return self.calls * LATENCY / CONCURRENCY / self.wall

    @property
    def cpu_ms(self) -> float:
        return 1000 * self.cpu / self.calls


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


def rubric_tier() -> tuple[Rubric, Tier]:
    [lib] = [d for d in bundled_pack_dirs() if d.name == "lhbench-rubrics"]
    rubric = load_pack(lib).rubric("figma-to-code")
    return rubric, rubric.tier("process")


def judge_specs(base_url: str) -> list[ModelSpec]:
    return [
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
        for n in JUDGES
    ]


def lhbench_side(template: Path, work: Path, runs: list[Run], base_url: str, path: DirectPath):
    """One repetition of lhbench: a fresh copy of the seeded store, a fresh cache."""
    rubric, tier = rubric_tier()

    def side(count: int | None = None) -> Sample:
        chosen = runs[:count] if count else runs
        db = work / f"lhbench-{path}.db"
        db.unlink(missing_ok=True)
        shutil.copyfile(template, db)
        with Store.open(f"sqlite:///{db}") as store:

            async def go() -> tuple[int, int]:
                pool = ModelPool(store, direct=path)
                async with pool.session():
                    judges = [RubricJudge(pool.get(s), s) for s in judge_specs(base_url)]
                    job = GradeJob(store, chosen, rubric, tier, judges, tasks={})
                    summary = await run_job(job, concurrency=2 * CONCURRENCY)
                calls = sum(g.usage.requests for g in summary.results)
                return calls, summary.done

            with common.Timer() as t:
                calls, ok = asyncio.run(go())
            assert store.counts()["grades"] == len(chosen) * len(JUDGES)
        return Sample(t.wall, t.cpu, calls, ok)

    return side


def requests(runs: list[Run], template: Path, base_url: str) -> list[PreparedRequest]:
    """The exact first requests lhbench sends (encoded once, before any clock starts)."""
    rubric, tier = rubric_tier()
    out: list[PreparedRequest] = []
    with Store.open(f"sqlite:///{template}") as store:

        async def build() -> None:
            pool = ModelPool(None)
            judges = [RubricJudge(pool.get(s), s) for s in judge_specs(base_url)]
            from lhbench.judges import Evidence

            for run in runs:
                ev = Evidence(run, None, store.get_trajectory(run.id), [])
                prompt = judges[0].prepare(ev, rubric, tier)
                for j in judges:
                    out.append(j.request(ev, rubric, tier, prepared=prompt))

        asyncio.run(build())
    return out


def floor_side(all_bodies: list[bytes], url: str) -> Callable[..., Sample]:
    """Raw aiohttp: post each body, read the answer, parse its JSON and the tool arguments."""

    def side(count: int | None = None) -> Sample:
        import aiohttp

        bodies = all_bodies[: count * len(JUDGES)] if count else all_bodies

        async def go() -> int:
            sem = asyncio.Semaphore(CONCURRENCY)
            headers = {"content-type": "application/json", "authorization": "Bearer unused"}
            async with aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=CONCURRENCY)
            ) as session:

                async def one(body: bytes) -> bool:
                    async with sem, session.post(url, data=body, headers=headers) as resp:
                        raw = await resp.read()
                    doc = orjson.loads(raw)
                    args = doc["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
                    return bool(orjson.loads(args)["dimensions"])

                return sum(await asyncio.gather(*(one(b) for b in bodies)))

        with common.Timer() as t:
            ok = asyncio.run(go())
        return Sample(t.wall, t.cpu, len(bodies), ok)

    return side


def _inline_refs(schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """The schema with ``$ref`` replaced by the definitions (Inspect's ToolParams has no $defs)."""
    if defs is None and isinstance(schema, dict):
        defs = schema.get("$defs", {})
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _inline_refs(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)  # type: ignore[index]
        return {k: _inline_refs(v, defs) for k, v in schema.items() if k != "$defs"}
    if isinstance(schema, list):
        return [_inline_refs(v, defs) for v in schema]
    return schema


def inspect_side(prepared: list[PreparedRequest], base_url: str) -> Callable[..., Sample] | None:
    """Inspect AI's generate with the same system prompt, user prompt and output tool."""
    try:
        from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model
        from inspect_ai.tool import ToolFunction, ToolInfo, ToolParams
    except ImportError:
        return None
    output = prepared[0].ask.output
    tool = ToolInfo(
        name=output.name,
        description=output.description,
        parameters=ToolParams.model_validate(_inline_refs(dict(output.json_schema))),
    )
    system = rubric_instructions()
    all_prompts = [str(r.ask.user[0]) for r in prepared]

    def side(count: int | None = None) -> Sample:
        prompts = all_prompts[: count * len(JUDGES)] if count else all_prompts

        async def go() -> int:
            model = get_model(
                "openai/judge",
                base_url=base_url,
                api_key="unused",
                memoize=False,
                config=GenerateConfig(
                    max_connections=CONCURRENCY, temperature=0.0, seed=0, max_retries=3
                ),
            )

            async def one(prompt: str) -> bool:
                out = await model.generate(
                    [ChatMessageSystem(content=system), ChatMessageUser(content=prompt)],
                    tools=[tool],
                    tool_choice=ToolFunction(output.name),
                )
                calls = out.message.tool_calls or []
                return bool(calls and calls[0].arguments.get("dimensions"))

            async with model:  # closes its HTTP client inside the loop
                return sum(await asyncio.gather(*(one(p) for p in prompts)))

        with common.Timer() as t:
            ok = asyncio.run(go())
        return Sample(t.wall, t.cpu, len(prompts), ok)

    return side


def _limited(side: Callable[..., Sample], runs: int | None) -> Callable[..., Sample]:
    """The side on its first ``runs`` runs (a warm-up's smaller count still applies)."""

    def limited(count: int | None = None) -> Sample:
        return side(min(c for c in (count, runs) if c) if (count or runs) else None)

    return limited


def report(name: str, samples: list[Sample]) -> str:
    eff = common.median([s.efficiency for s in samples])
    cpu = common.median([s.cpu_ms for s in samples])
    wall = common.median([s.wall for s in samples])
    return (
        f"{name}: wall {wall:.2f} s, efficiency {eff:.3f}, CPU {cpu:.2f} ms per call "
        f"(efficiency {common.spread([s.efficiency for s in samples])}, "
        f"CPU ms {common.spread([s.cpu_ms for s in samples], '{:.2f}')}, "
        f"ok {[s.ok for s in samples]} of {samples[0].calls})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100 runs instead of 1,000")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--reps", type=int, default=3, help="alternating repetitions (>= 3)")
    ap.add_argument(
        "--no-pydantic-ai", action="store_true", help="skip lhbench over pydantic-ai model_request"
    )
    ap.add_argument(
        "--compare-runs",
        type=int,
        default=None,
        help="runs for the pydantic-ai and Inspect AI sides (default: all; their CPU per call "
        "is the figure compared, and on a loaded machine they take minutes per repetition)",
    )
    args = ap.parse_args()
    n_runs = args.runs or (100 if args.quick else 1000)
    print(common.load_line("judge_throughput"), flush=True)
    stub = subprocess.Popen(
        [sys.executable, "-m", "lhbench.testing", "--latency", str(LATENCY)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert stub.stdout is not None
        base_url = stub.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            template = work / "template.db"
            with Store.open(f"sqlite:///{template}") as store:
                runs = seed(store, n_runs)
            prepared = requests(runs, template, base_url)
            sides: dict[str, Callable[..., Sample]] = {
                "floor": floor_side([r.body for r in prepared], f"{base_url}/chat/completions"),
                "lhbench": lhbench_side(template, work, runs, base_url, "wire"),
            }
            compare = args.compare_runs
            if not args.no_pydantic_ai:
                pai = lhbench_side(template, work, runs, base_url, "pydantic-ai")
                sides["pydantic-ai"] = _limited(pai, compare)
            inspect = inspect_side(prepared, base_url)
            if inspect is not None:
                sides["inspect"] = _limited(inspect, compare)
            for side in sides.values():  # imports, TLS contexts, first connections: not measured
                side(min(20, n_runs))
            results = common.alternate(sides, args.reps)
    finally:
        stub.terminate()
        stub.wait()
    calls = results["lhbench"][0].calls
    print(
        f"runs={n_runs} judges={len(JUDGES)} calls={calls} latency={LATENCY * 1000:.0f} ms "
        f"concurrency={CONCURRENCY} ideal wall {calls * LATENCY / CONCURRENCY:.2f} s; "
        f"{args.reps} alternating repetitions, medians"
        + (
            f"; pydantic-ai and Inspect sides on {args.compare_runs} runs"
            if args.compare_runs
            else ""
        )
    )
    print(report("floor (raw aiohttp)", results["floor"]))
    print(report("lhbench grading (direct path, wire client)", results["lhbench"]))
    if "pydantic-ai" in results:
        print(report("lhbench grading over pydantic-ai model_request", results["pydantic-ai"]))
    floor_eff = [s.efficiency for s in results["floor"]]
    eff_ratio = common.ratio_of_medians([s.efficiency for s in results["lhbench"]], floor_eff)
    cpu = common.median([s.cpu_ms for s in results["lhbench"]])
    if "pydantic-ai" in results:
        pai_cpu = common.median([s.cpu_ms for s in results["pydantic-ai"]])
        pai_eff = common.ratio_of_medians([s.efficiency for s in results["pydantic-ai"]], floor_eff)
        print(
            f"pydantic-ai model_request path: efficiency {pai_eff:.3f} of the floor's, CPU "
            f"{pai_cpu:.2f} ms per grade ({pai_cpu / cpu:.1f}x the wire client's)"
        )
    headline = (
        f"judge_throughput: efficiency {eff_ratio:.3f} of the floor's (target >= 0.95), "
        f"CPU {cpu:.2f} ms per grade (target <= 3 ms)"
    )
    if "inspect" in results:
        print(report("Inspect AI get_model().generate", results["inspect"]))
        i_eff = common.ratio_of_medians([s.efficiency for s in results["inspect"]], floor_eff)
        i_cpu = common.median([s.cpu_ms for s in results["inspect"]])
        print(
            f"inspect_ai generate: efficiency {i_eff:.3f} of the floor's, CPU {i_cpu:.2f} ms "
            f"per call; lhbench's CPU per grade is {cpu / i_cpu:.2f}x Inspect's (target <= 0.5x)"
        )
        headline += f", {cpu / i_cpu:.2f}x Inspect's CPU per call (target <= 0.5x)"
    print(common.load_line("judge_throughput", "end"))
    print(json.dumps({k: [s.__dict__ for s in v] for k, v in results.items()}))
    print(headline)


if __name__ == "__main__":
    main()
