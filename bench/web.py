"""Web latency with a large store: leaderboard and run pages against a static file.

Seeds 10,000 runs (``--quick``: 1,000), each with a short trajectory and three judges'
grades, serves the app with ``lhbench serve`` in its own process, then requests the
leaderboard, a run page, and a static file from the same app, 200 times each, from this
process over 127.0.0.1. Prints p50/p95 of each (the first, uncached leaderboard request
is reported apart). Headline: leaderboard p95 in ms.

    uv run python bench/web.py [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from lhbench.packs import bundled_pack_dirs, load_pack
from lhbench.schema import (
    DimensionScore,
    Grade,
    JudgeIdentity,
    JudgeKind,
    Role,
    Run,
    RunStatus,
    Scale,
    Step,
    StepKind,
    TierKind,
    Trajectory,
)
from lhbench.store import Store

DIMS = ("design_inspection", "token_extraction", "component_architecture", "build_verification")
W = (0.30, 0.25, 0.25, 0.20)
GROUPS = [
    ("claude-code", "anthropic:claude-opus-4-6"),
    ("codex", "openai:gpt-5.2"),
    ("gemini-cli", "google-gla:gemini-3.1-pro"),
    ("native", "openai:qwen2.5-72b"),
]


def seed(store: Store, n: int) -> str:
    store.save_pack(load_pack(next(d for d in bundled_pack_dirs() if d.name == "lhbench-rubrics")))
    rng = random.Random(0)
    for i in range(n):
        harness, model = GROUPS[i % len(GROUPS)]
        run = Run(
            id=f"run-{i:05d}",
            pack_id="figma",
            task_id=f"t{i % 33}",
            harness=harness,
            model=model,
            versions={"skill": "v1" if i % 3 else "none"},
            status=RunStatus.COMPLETED,
        )
        store.save_run(run)
        steps = [Step(index=0, role=Role.USER, kind=StepKind.MESSAGE, content="build the page")]
        for k in range(1, 9, 2):
            steps.append(
                Step(
                    index=k,
                    role=Role.ASSISTANT,
                    kind=StepKind.TOOL_CALL,
                    tool_name="Bash",
                    tool_call_id=f"c{k}",
                    tool_input={"command": "npm run build"},
                )
            )
            steps.append(
                Step(
                    index=k + 1,
                    role=Role.TOOL,
                    kind=StepKind.TOOL_RESULT,
                    tool_call_id=f"c{k}",
                    tool_name="Bash",
                    tool_output="error TS2322" if k == 1 else "built",
                    is_error=k == 1,
                )
            )
        store.save_trajectory(Trajectory(run_id=run.id, steps=steps))
        for j, judge in enumerate(("anthropic:judge", "openai:judge", "google-gla:judge")):
            scores = [rng.randint(1, 5) for _ in DIMS]
            store.save_grade(
                Grade(
                    id=f"g-{i}-{j}",
                    run_id=run.id,
                    rubric_id="figma-to-code",
                    rubric_version="1.2",
                    tier=TierKind.PROCESS,
                    judge=JudgeIdentity(kind=JudgeKind.LLM, model=judge),
                    scores=[
                        DimensionScore(
                            dimension_id=d, scale=Scale.ONE_TO_FIVE, score=s, evidence="e"
                        )
                        for d, s in zip(DIMS, scores, strict=True)
                    ],
                    tier_score=sum(w * s for w, s in zip(W, scores, strict=True)),
                    cache_key=hashlib.sha256(f"{i}-{j}".encode()).hexdigest(),
                )
            )
    return f"run-{n // 2:05d}"


def timed(client: httpx.Client, path: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = client.get(path)
        out.append(time.perf_counter() - t0)
        r.raise_for_status()
    return out


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, round(q * (len(v) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1,000 runs instead of 10,000")
    args = ap.parse_args()
    n = 1000 if args.quick else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'web.db'}"
        t0 = time.perf_counter()
        with Store.open(url) as store:
            run_id = seed(store, n)
        seed_s = time.perf_counter() - t0
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = {**os.environ, "LHBENCH_HOME": tmp}
        server = subprocess.Popen(
            [sys.executable, "-m", "lhbench", "serve", "--db", url, "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=base, timeout=120) as c:
                for _ in range(200):
                    try:
                        c.get("/healthz")
                        break
                    except httpx.TransportError:
                        time.sleep(0.1)
                cold = timed(c, "/leaderboard", 1)[0]
                lb = timed(c, "/leaderboard", 200)
                run = timed(c, f"/runs/{run_id}", 200)
                static = timed(c, "/static/style.css", 200)
        finally:
            server.terminate()
            server.wait()
    ms = lambda v: f"p50 {1000 * statistics.median(v):.1f} ms, p95 {1000 * pct(v, 0.95):.1f} ms"  # noqa: E731
    print(f"runs={n:,} grades={3 * n:,} (seeded in {seed_s:.0f} s)")
    print(f"leaderboard, first request (uncached): {1000 * cold:.0f} ms")
    print(f"leaderboard: {ms(lb)}")
    print(f"run page: {ms(run)}")
    print(f"static file (baseline): {ms(static)}")
    print(
        f"web leaderboard p95: {1000 * pct(lb, 0.95):.1f} ms (target < 200 ms; "
        f"{pct(lb, 0.95) / pct(static, 0.95):.1f}x the static file)"
    )


if __name__ == "__main__":
    main()
