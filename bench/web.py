"""Web overview (the leaderboard) at 10,000 runs and 30,000 grades: cold and warm p95.

Seeds 10,000 runs (``--quick``: 1,000) over 33 tasks and 8 agents, each with a short
trajectory, three judges' grades on one rubric tier and a check label, then serves the app
with ``lhbench serve`` in its own process and signs in. Each repetition, alternating:

- bare: a plain query of the same rows the overview reads (runs' columns, grades'
  columns, labels) straight from SQLite in this process — the floor any page pays;
- cold: one write (a label replaced) bumps the store version, so the next ``GET /``
  recomputes everything from the store;
- warm: ``GET /`` again, served from the page cache.

Rounds alternate the three sides (``bench/common.py``: the first side rotates each round).
Prints p50/p95 of each and the ratios of p95s and of medians to the bare query. Also the
first request after start and a run page. BLAS/OpenMP threads are pinned to 1 on both
sides (``common`` sets the environment the server process inherits). The load is printed
at the start and the end. Last line: the headline.

    uv run python bench/web.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import common
import httpx

from lhbench.packs import bundled_pack_dirs, load_pack
from lhbench.schema import (
    DimensionScore,
    Grade,
    JudgeIdentity,
    JudgeKind,
    Label,
    Role,
    Run,
    RunStatus,
    Step,
    StepKind,
    TierKind,
    Usage,
    grade_key,
)
from lhbench.store import Store
from lhbench.web import add_user

PASSWORD = "bench password"
GROUPS = [
    ("claude-code", "anthropic:claude-opus-4-6"),
    ("codex", "openai:gpt-5.2"),
    ("gemini-cli", "google-gla:gemini-3.1-pro"),
    ("native", "openai:qwen2.5-72b"),
]
JUDGES = ("anthropic:judge", "openai:judge", "google-gla:judge")


def seed(store: Store, n: int) -> str:
    pack = load_pack(next(d for d in bundled_pack_dirs() if d.name == "lhbench-rubrics"))
    store.save_pack(pack)
    rubric = pack.rubric("figma-to-code")
    tier = rubric.tier("process")
    rng = random.Random(0)
    grades: list[Grade] = []
    labels: list[Label] = []
    idents = [JudgeIdentity(kind=JudgeKind.LLM, model=j) for j in JUDGES]
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
            usage=Usage(input_tokens=10_000 + i, output_tokens=3_000),
            cost_usd=0.1 + (i % 7) / 100,
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
        store.append_steps(run.id, steps)
        labels.append(Label(run_id=run.id, passed=rng.random() < 0.6, source="verify:t/verify.py"))
        for ident in idents:
            scores = [rng.randint(1, 5) for _ in tier.dimensions]
            grades.append(
                Grade(
                    id=f"g-{i}-{ident.model}",
                    run_id=run.id,
                    rubric_id=rubric.id,
                    rubric_version=rubric.version,
                    rubric_hash=rubric.content_hash,
                    tier=TierKind.PROCESS,
                    judge=ident,
                    scores=[
                        DimensionScore(dimension_id=d.id, scale=d.scale, score=s, evidence="seen")
                        for d, s in zip(tier.dimensions, scores, strict=True)
                    ],
                    tier_score=sum(
                        d.weight * s for d, s in zip(tier.dimensions, scores, strict=True)
                    ),
                    key=grade_key(run.id, ident.key, rubric.content_hash, "process", 0),
                )
            )
        if len(grades) >= 3000:
            store.save_grades(grades)
            store.save_labels(labels)
            grades, labels = [], []
    store.save_grades(grades)
    store.save_labels(labels)
    add_user(store, "bench", PASSWORD, admin=True)
    return f"run-{n // 2:05d}"


def bare_query(path: Path) -> float:
    """The rows the overview reads, fetched with the stdlib driver: the floor."""
    t0 = time.perf_counter()
    con = sqlite3.connect(path)
    try:
        con.execute(
            "SELECT id, pack_id, task_id, harness, harness_version, model, versions, status, "
            "repeat, cost_usd, usage FROM runs"
        ).fetchall()
        con.execute(
            "SELECT run_id, rubric_id, rubric_version, rubric_hash, tier, judge_key, status, "
            "retryable, tier_score FROM grades"
        ).fetchall()
        con.execute("SELECT run_id, source, passed FROM labels").fetchall()
    finally:
        con.close()
    return time.perf_counter() - t0


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, round(q * (len(v) - 1)))]


def get(c: httpx.Client, path: str) -> float:
    t0 = time.perf_counter()
    r = c.get(path)
    took = time.perf_counter() - t0
    r.raise_for_status()
    return took


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system) the server process has used, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1,000 runs instead of 10,000")
    ap.add_argument("--reps", type=int, default=None, help="alternating rounds")
    ap.add_argument(
        "--db",
        type=Path,
        default=None,
        help="SQLite file: seeded if missing, reused if this script seeded it before",
    )
    args = ap.parse_args()
    n = 1000 if args.quick else 10_000
    reps = args.reps or (5 if args.quick else 15)
    print(common.load_line("web"), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "web.db"
        url = f"sqlite:///{db}"
        t0 = time.perf_counter()
        if db.exists():
            # a store this script seeded before (same n): seeding is deterministic
            run_id = f"run-{n // 2:05d}"
            with Store.open(url) as store:
                if store.find_run(f"run-{n - 1:05d}") is None:
                    raise SystemExit(f"{db} was not seeded with {n:,} runs by this script")
            how = f"reused {db}"
        else:
            with Store.open(url) as store:
                run_id = seed(store, n)
            how = f"seeded in {time.perf_counter() - t0:.0f} s"
        print(f"runs={n:,} grades={3 * n:,} labels={n:,} ({how})", flush=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = {**os.environ, "LHBENCH_HOME": tmp}
        log = (Path(tmp) / "serve.log").open("wb")
        server = subprocess.Popen(
            [sys.executable, "-m", "lhbench", "serve", "--db", url, "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=base, timeout=120) as c, Store.open(url) as store:
                # a loaded machine can take tens of seconds to import and start
                deadline = time.monotonic() + 300
                while True:
                    if server.poll() is not None:
                        raise SystemExit(
                            f"lhbench serve exited ({server.returncode}): "
                            + (Path(tmp) / "serve.log").read_text()[-2000:]
                        )
                    try:
                        if c.get("/healthz").status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    if time.monotonic() > deadline:
                        raise SystemExit("lhbench serve did not answer within 300 s")
                    time.sleep(0.2)
                page = c.get("/login").text
                token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
                c.post("/login", data={"name": "bench", "password": PASSWORD, "csrf_token": token})
                first = get(c, "/")
                writes = iter(range(10**6))
                cold_cpu: list[float] = []
                warm_cpu: list[float] = []

                def cold() -> list[float]:
                    # one write: the store's version moves, the page cache misses
                    k = next(writes)
                    store.save_label(
                        Label(run_id=f"run-{k:05d}", passed=k % 2 == 0, source="verify:t/verify.py")
                    )
                    cpu0 = server_cpu(server.pid)
                    took = get(c, "/")
                    cold_cpu.append(server_cpu(server.pid) - cpu0)
                    return [took]

                def warm() -> list[float]:
                    get(c, "/")  # fills the cache if a write came last
                    cpu0 = server_cpu(server.pid)
                    took = [get(c, "/") for _ in range(10)]
                    warm_cpu.append((server_cpu(server.pid) - cpu0) / 10)
                    return took

                rounds = common.alternate(
                    {"bare": lambda: [bare_query(db)], "cold": cold, "warm": warm}, reps
                )
                run_page = [get(c, f"/runs/{run_id}") for _ in range(20)]
        finally:
            server.terminate()
            server.wait()
            log.close()
    bare = [t for r in rounds["bare"] for t in r]
    cold_t = [t for r in rounds["cold"] for t in r]
    warm_t = [t for r in rounds["warm"] for t in r]

    def ms(v: list[float]) -> str:
        return f"p50 {1000 * statistics.median(v):.1f} ms, p95 {1000 * pct(v, 0.95):.1f} ms"

    print(f"first request after start: {1000 * first:.0f} ms")
    print(f"bare query of the same rows ({len(bare)}): {ms(bare)}")
    print(f"overview, cold after a write ({len(cold_t)}): {ms(cold_t)}")
    print(f"overview, warm ({len(warm_t)}): {ms(warm_t)}")
    print(f"run page ({len(run_page)}): {ms(run_page)}")
    print(f"cold per round, ms: {common.spread([1000 * t for t in cold_t], '{:.0f}')}")
    # CPU the server spent, which the machine's load does not inflate (10 ms ticks)
    print(
        f"server CPU per request: cold p50 {1000 * statistics.median(cold_cpu):.0f} ms, "
        f"p95 {1000 * pct(cold_cpu, 0.95):.0f} ms; warm p50 "
        f"{1000 * statistics.median(warm_cpu):.1f} ms (mean of 10 per round)"
    )
    b95, c95, w95 = pct(bare, 0.95), pct(cold_t, 0.95), pct(warm_t, 0.95)
    cm = common.ratio_of_medians(cold_t, bare)
    wm = common.ratio_of_medians(warm_t, bare)
    print(
        f"ratios to the bare query: cold p95 {c95 / b95:.1f}x, warm p95 {w95 / b95:.2f}x; "
        f"medians: cold {cm:.1f}x, warm {wm:.2f}x"
    )
    print(common.load_line("web", "end"))
    print(
        f"web leaderboard p95 cold / warm: {1000 * c95:.0f} ms / {1000 * w95:.1f} ms "
        f"(target < 1000 ms / < 100 ms; {c95 / b95:.1f}x / {w95 / b95:.2f}x a bare query of "
        f"the same rows, {1000 * b95:.0f} ms)"
    )


if __name__ == "__main__":
    main()
