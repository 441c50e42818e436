"""A team's store at scale: 100,000 runs and 1,000,000 grades on SQLite and PostgreSQL.

Builds a store (``--quick``: 10,000 runs) of runs in 10 harness × model × versions groups
over 300 tasks in two generated packs, each run with a short trajectory and a check label;
grades from a 3-judge panel on both tiers of the packs' rubric (pack ``scale-a``'s runs
graded twice per judge, ``scale-b``'s once: 10 grades per run on average); 20,000 human
votes between runs of a task; 50,000 verdicts; and one run with a 5,000-step transcript.
Rows are written with SQLAlchemy core ``executemany`` from rows the store's own row
builders made (one template per judge and tier, copied per run), so the documents are what
``save_grades`` would write.

Then, each in a process of its own (peak RSS: the command's or the server's VmHWM, the
peak of its memory since its exec), it times:

- ``lhbench report`` (goal ≤ 10 s);
- the web overview (the leaderboard) cold after a write (≤ 1 s) and warm (p95 ≤ 100 ms),
  and the runs page; a run page with a 5,000-step transcript (≤ 300 ms);
- ``lhbench runs list --json``: time to its first byte and to its end, and peak RSS
  (streams: the same at 10k and 100k runs);
- ``lhbench aj score``;
- the grade job (``lhbench judge`` on each pack and tier, the panel the grades were made
  with, answered by the local model stub): finds every grade stored (≤ 30 s in all) and
  makes no model call, counted from the stub's request log.

Every figure is printed with its goal and the machine's load; peak RSS goal < 1 GB each.
The full run builds and measures 10,000 runs and then 100,000 on each backend and prints
each figure's growth (the ratio 100k/10k: ≤ 10 is no faster than linear).

    uv run python bench/scale.py [--quick] [--backend sqlite|postgresql|both]
                                 [--pg-url postgresql+psycopg://…] [--keep DIR]

PostgreSQL: ``--pg-url`` (or ``LHBENCH_BENCH_PG_URL``) names a database this bench may
empty (its tables are dropped first); without it, SQLite only.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import common
import httpx

from lhbench.schema import (
    DimensionScore,
    Grade,
    JudgeIdentity,
    JudgeKind,
    Label,
    PreferenceVote,
    Role,
    Run,
    RunStatus,
    Step,
    StepKind,
    TierKind,
    Usage,
    Verdict,
    grade_key,
    verdict_key,
)

PASSWORD = "bench password"
TASKS = 300
# pack scale-a holds the first 200 tasks and is graded with 2 repeats, scale-b once
PACKS = (("scale-a", 200, 2), ("scale-b", 100, 1))
GROUPS = [  # 10 harness × model × versions groups
    ("claude-code", "anthropic:claude-opus-4-6", "default"),
    ("claude-code", "anthropic:claude-opus-4-6", "none"),
    ("codex", "openai:gpt-5.2", "default"),
    ("codex", "openai:gpt-5.2", "none"),
    ("gemini-cli", "google-gla:gemini-3.1-pro", "default"),
    ("gemini-cli", "google-gla:gemini-3.1-pro", "none"),
    ("native", "openai:qwen2.5-72b", "default"),
    ("native", "openai:qwen2.5-72b", "none"),
    ("native", "anthropic:claude-sonnet-4-6", "default"),
    ("native", "anthropic:claude-sonnet-4-6", "none"),
]
JUDGES = ("openai:judge-a", "openai:judge-b", "openai:judge-c")
TIERS = ("process", "output")
VOTES, VERDICTS, LONG_STEPS = 20_000, 50_000, 5_000
BATCH = 20_000
GB = 1 << 30

GOALS = {
    "report": ("s", 10.0),
    "overview cold": ("ms", 1000.0),
    "overview first after start": ("ms", 1000.0),
    "overview warm p95": ("ms", 100.0),
    "runs page warm p95": ("ms", 100.0),
    "run page (5,000 steps) p95": ("ms", 300.0),
    "run page (5,000 steps) p95 right after start": ("ms", 300.0),
    "overview after a write right after start": ("ms", 1000.0),
    "runs list --json": ("s", None),
    "runs list --json first byte": ("s", None),
    "aj score": ("s", 10.0),
    "grade job": ("s", 30.0),
}

# figures whose growth says nothing of how cost grows with the data, and why
RACES = {
    "overview after a write right after start": (
        "whether the start's summary is over when the write comes (at 10,000 runs it is)"
    ),
    "run page (5,000 steps) p95 right after start": (
        "how much of the start's summary the pages overlap (at 10,000 runs, little)"
    ),
}


# --------------------------------------------------------------------------------------
# the packs


def write_packs(root: Path) -> list[Path]:
    """Two packs of plain tasks sharing one rubric with a process and an output tier."""

    def dim(did: str, weight: float, scale: str) -> str:
        low, high = (int(x) for x in scale.split("-"))
        anchors = ", ".join(f"{v}: level {v}" for v in range(low, high + 1))
        return (
            f"      - {{id: {did}, name: {did}, weight: {weight}, description: {did}., "
            f"scale: {scale}, anchors: {{{anchors}}}}}\n"
        )

    rubric = (
        'id: scale-rubric\nversion: "1.0"\ntitle: Scale bench rubric\nauthor: expert\n'
        "tiers:\n  - kind: process\n    evidence_source: trajectory\n    dimensions:\n"
        + dim("plan", 0.5, "1-5")
        + dim("tools", 0.5, "1-5")
        + "  - kind: output\n    evidence_source: artifacts\n    dimensions:\n"
        + dim("done", 0.6, "0-2")
        + dim("clear", 0.4, "0-2")
    )
    dirs, first = [], 0
    for pack_id, n, _repeats in PACKS:
        d = root / pack_id
        (d / "rubrics").mkdir(parents=True, exist_ok=True)
        (d / "pack.yaml").write_text(
            f"# generated by bench/scale.py\nid: {pack_id}\nversion: '1.0'\n"
            "environment: filesystem\ndescription: Generated tasks for the scale bench.\n"
        )
        (d / "rubrics" / "scale-rubric.yaml").write_text(rubric)
        for t in range(first, first + n):
            td = d / "tasks" / f"t{t:03d}"
            td.mkdir(parents=True, exist_ok=True)
            (td / "task.yaml").write_text(
                f"title: Task {t}\ninstruction: Do task number {t}.\nrubrics: [scale-rubric]\n"
            )
        first += n
        dirs.append(d)
    return dirs


def pack_of(task: int) -> tuple[str, int]:
    """The pack and repeats of task number ``task``."""
    first = 0
    for pack_id, n, repeats in PACKS:
        if task < first + n:
            return pack_id, repeats
        first += n
    raise ValueError(task)


# --------------------------------------------------------------------------------------
# the build


def run_id(i: int) -> str:
    return f"run-{i:06d}"


def _steps(n_pairs: int) -> list[Step]:
    steps = [Step(index=0, role=Role.USER, kind=StepKind.MESSAGE, content="do the task")]
    for k in range(n_pairs):
        steps.append(
            Step(
                index=len(steps),
                role=Role.ASSISTANT,
                kind=StepKind.TOOL_CALL,
                tool_name="Bash",
                tool_call_id=f"c{k}",
                tool_input={"command": f"make step{k}"},
            )
        )
        steps.append(
            Step(
                index=len(steps),
                role=Role.TOOL,
                kind=StepKind.TOOL_RESULT,
                tool_call_id=f"c{k}",
                tool_name="Bash",
                tool_output="error: exit 2" if k % 7 == 3 else f"ok {k}",
                is_error=k % 7 == 3,
            )
        )
    steps.append(Step(index=len(steps), role=Role.ASSISTANT, kind=StepKind.MESSAGE, content="done"))
    return steps


@dataclass
class Built:
    runs: int = 0
    grades: int = 0
    steps: int = 0
    labels: int = 0
    votes: int = 0
    verdicts: int = 0
    long_run: str = ""
    seconds: float = 0.0
    load: float = 0.0  # the 1-minute load when the build ended


def build(url: str, n: int, packs: list[Path], stub_url: str) -> Built:
    """Seed ``n`` runs and everything said about them (see the module docstring)."""
    from lhbench.config import Settings
    from lhbench.jobs import panel_specs
    from lhbench.judges import rubric_judge_identity
    from lhbench.packs import load_pack
    from lhbench.store import Store
    from lhbench.store.judgements import _grade_row, _verdict_row, _vote_row
    from lhbench.store.rows import run_row, step_row
    from lhbench.store.tables import (
        GradeRow,
        LabelRow,
        RunRow,
        StepRow,
        VerdictRow,
        VoteRow,
    )
    from lhbench.web import add_user

    t0 = time.perf_counter()
    out = Built()
    rng = random.Random(0)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    with Store.open(url) as store:
        loaded = [load_pack(p) for p in packs]
        for p in loaded:
            store.save_pack(p)
        rubric = loaded[0].rubric("scale-rubric")
        specs = panel_specs([f"{j}@{stub_url}" for j in JUDGES], Settings())
        idents = [rubric_judge_identity(s) for s in specs]
        tiers = {t: rubric.tier(t) for t in TIERS}
        # one grade row per (judge, tier, score pattern), copied per run
        templates: dict[tuple[int, str, int], dict[str, Any]] = {}
        for j, ident in enumerate(idents):
            for t, tier in tiers.items():
                for pattern in range(4):
                    scores = [
                        (pattern + k) % (int(d.scale.split("-")[1]) + 1) or 1
                        if d.scale != "binary"
                        else pattern % 2
                        for k, d in enumerate(tier.dimensions)
                    ]
                    g = Grade(
                        id="template",
                        run_id="template",
                        rubric_id=rubric.id,
                        rubric_version=rubric.version,
                        rubric_hash=rubric.content_hash,
                        tier=TierKind(t),
                        judge=ident,
                        scores=[
                            DimensionScore(
                                dimension_id=d.id, scale=d.scale, score=s, evidence="seen in step 3"
                            )
                            for d, s in zip(tier.dimensions, scores, strict=True)
                        ],
                        tier_score=sum(
                            d.weight * s for d, s in zip(tier.dimensions, scores, strict=True)
                        ),
                        key="template-key",
                        created_at=base,
                    )
                    templates[(j, t, pattern)] = _grade_row(g)
        short = [step_row("template", s) for s in _steps(2)]
        ver = Verdict(
            id="template",
            run_id="template",
            judge=JudgeIdentity(kind=JudgeKind.AGENT, model="openai:aj-judge"),
            verdict="PASS",
            evidence=["state checked"],
            key="template-key",
            created_at=base,
        )
        ver_tpl = _verdict_row(ver)
        engine = store.engine

        def insert(table: Any, rows: list[dict[str, Any]]) -> None:
            if rows:
                with engine.begin() as conn:
                    conn.execute(table.__table__.insert(), rows)

        def grade_rows(rid: str, i: int, repeats: int) -> Iterator[dict[str, Any]]:
            for j in range(len(idents)):
                for t in TIERS:
                    for k in range(repeats):
                        row = dict(templates[(j, t, (i + j + k) % 4)])
                        gid = f"g-{i}-{j}-{t}-{k}"
                        key = grade_key(rid, row["judge_key"], rubric.content_hash, t, k)
                        row["id"], row["run_id"], row["key"], row["repeat"] = gid, rid, key, k
                        row["created_at"] = base + timedelta(seconds=i)
                        doc = dict(row["document"])
                        doc.update(id=gid, run_id=rid, key=key, repeat=k)
                        row["document"] = doc
                        yield row

        runs, steps, grades, labels = [], [], [], []
        by_task: dict[int, list[str]] = {}
        for i in range(n):
            harness, model, skill = GROUPS[i % len(GROUPS)]
            task = (i // len(GROUPS)) % TASKS
            pack_id, repeats = pack_of(task)
            rid = run_id(i)
            by_task.setdefault(task, []).append(rid)
            run = Run(
                id=rid,
                pack_id=pack_id,
                task_id=f"t{task:03d}",
                harness=harness,
                model=model,
                versions={"skill": skill},
                status=RunStatus.COMPLETED,
                usage=Usage(input_tokens=10_000 + i % 5000, output_tokens=3_000),
                cost_usd=0.1 + (i % 7) / 100,
                started_at=base + timedelta(seconds=i),
                ended_at=base + timedelta(seconds=i + 60),
            )
            runs.append(run_row(run))
            for s in short:
                steps.append({**s, "run_id": rid})
            labels.append(
                {
                    **Label(
                        run_id=rid, passed=rng.random() < 0.6, source="verify:verify.py"
                    ).model_dump(),
                }
            )
            grades.extend(grade_rows(rid, i, repeats))
            if len(grades) >= BATCH:
                insert(RunRow, runs)
                insert(StepRow, steps)
                insert(LabelRow, labels)
                insert(GradeRow, grades)
                out.runs += len(runs)
                out.steps += len(steps)
                out.labels += len(labels)
                out.grades += len(grades)
                runs, steps, grades, labels = [], [], [], []
        insert(RunRow, runs)
        insert(StepRow, steps)
        insert(LabelRow, labels)
        insert(GradeRow, grades)
        out.runs += len(runs)
        out.steps += len(steps)
        out.labels += len(labels)
        out.grades += len(grades)
        # one run with a 5,000-step transcript (its own, beside the others)
        long_id = "run-long"
        store.save_run(
            Run(
                id=long_id,
                pack_id=PACKS[0][0],
                task_id="t000",
                harness=GROUPS[0][0],
                model=GROUPS[0][1],
                versions={"skill": GROUPS[0][2]},
                status=RunStatus.COMPLETED,
                usage=Usage(input_tokens=2_000_000, output_tokens=90_000),
                started_at=base,
            )
        )
        long_steps = [step_row(long_id, s) for s in _steps((LONG_STEPS - 2) // 2)]
        for part in range(0, len(long_steps), BATCH):
            insert(StepRow, long_steps[part : part + BATCH])
        out.steps += len(long_steps)
        long_grades = list(grade_rows(long_id, n, pack_of(0)[1]))
        insert(GradeRow, long_grades)
        out.grades += len(long_grades)
        out.runs += 1
        out.long_run = long_id
        # human votes between two runs of one task
        votes = []
        tasks = sorted(by_task)
        for v in range(VOTES):
            task = tasks[v % len(tasks)]
            ids = by_task[task]
            if len(ids) < 2:
                continue
            a, b = rng.sample(ids, 2)
            votes.append(
                _vote_row(
                    PreferenceVote(
                        id=f"vote-{v}",
                        pack_id=pack_of(task)[0],
                        task_id=f"t{task:03d}",
                        run_a=a,
                        run_b=b,
                        left="a" if v % 2 else "b",
                        winner=("a", "b", "tie")[rng.randrange(3)],
                        annotator=f"annotator-{v % 12}",
                        created_at=base + timedelta(seconds=v),
                    )
                )
            )
        insert(VoteRow, votes)
        out.votes = len(votes)
        # verdicts: an agent judge's on every other run (up to 50,000)
        verdicts = []
        for v in range(min(VERDICTS, n)):
            rid = run_id((2 * v) % n if n > VERDICTS else v)
            row = dict(ver_tpl)
            key = verdict_key(rid, row["judge_key"], "", 0)
            verdict = "PASS" if rng.random() < 0.55 else "FAIL"
            row.update(id=f"vd-{v}", run_id=rid, key=key, verdict=verdict)
            row["document"] = {**row["document"], "id": f"vd-{v}", "run_id": rid, "key": key}
            row["document"]["verdict"] = verdict
            verdicts.append(row)
        for part in range(0, len(verdicts), BATCH):
            insert(VerdictRow, verdicts[part : part + BATCH])
        out.verdicts = len(verdicts)
        add_user(store, "bench", PASSWORD, admin=True)
        if store.backend == "postgresql":
            # what autovacuum does to a team's store within a minute of a bulk load (this
            # machine's server runs with autovacuum off): statistics, the visibility map
            # (index-only scans without heap fetches) and hint bits, so the first command
            # measured does not pay for the build's writes
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("VACUUM (ANALYZE)")
    out.seconds = time.perf_counter() - t0
    out.load = load1()
    return out


def reset(url: str) -> None:
    """An empty database (PostgreSQL: the bench's own; every table dropped)."""
    from sqlalchemy import create_engine, text

    if url.startswith("sqlite"):
        Path(url.removeprefix("sqlite:///")).unlink(missing_ok=True)
        return
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()


# --------------------------------------------------------------------------------------
# measuring


@dataclass
class Figure:
    name: str
    value: float
    unit: str
    rss: float | None = None  # bytes
    load: float = 0.0
    note: str = ""

    def goal(self) -> float | None:
        return GOALS.get(self.name, (self.unit, None))[1]

    def line(self) -> str:
        g = self.goal()
        goal = f"goal ≤ {g:g} {self.unit}" if g is not None else "no time goal"
        ok = "" if g is None else (" ok" if self.value <= g else " MISSED")
        rss = "" if self.rss is None else f", peak RSS {self.rss / 2**20:.0f} MB"
        rss_ok = "" if self.rss is None else (" ok" if self.rss < GB else " MISSED")
        note = f"; {self.note}" if self.note else ""
        return (
            f"  {self.name:30s} {self.value:10.3f} {self.unit:2s} ({goal}{ok}{rss}"
            f"{' (goal < 1024 MB' + rss_ok + ')' if rss else ''}; load {self.load:.2f}){note}"
        )


def load1() -> float:
    return os.getloadavg()[0]


# what a measured command may use before it is stopped: a store that makes one take more
# is a figure in itself ("over the limit"), not a reason to swap the shared machine to death
LIMIT_AS = 6 * GB
LIMIT_S = 300.0


class Over(Exception):
    """A measured command went over its time or memory limit (or failed)."""


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))


# ``python -m lhbench ARGS``, then the process's own peak RSS (VmHWM: the peak since its
# exec) written to the file named first. wait4's ru_maxrss is no figure of the command: the
# kernel keeps the peak of the pages the child shared with this process between fork and
# exec, so at 10,000 runs every command "peaked" at this bench's own 190 MB
_RUN = """import runpy, sys
out, sys.argv = sys.argv[1], ["lhbench", *sys.argv[2:]]
try:
    runpy.run_module("lhbench", run_name="__main__", alter_sys=True)
finally:
    with open("/proc/self/status") as f:
        kb = next(line.split()[1] for line in f if line.startswith("VmHWM:"))
    with open(out, "w") as f:
        f.write(kb)
"""


_PEAKS = itertools.count()


def cli(args: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[float, int, bytes, float]:
    """Run ``lhbench ARGS`` in its own process: wall seconds, its peak RSS (bytes), stdout,
    and seconds to its first byte of output. Raises Over past LIMIT_S or LIMIT_AS."""
    peak_file = cwd / f"peak-{os.getpid()}-{next(_PEAKS)}"
    peak_file.unlink(missing_ok=True)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", _RUN, str(peak_file), *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_limits,
    )
    assert proc.stdout is not None and proc.stderr is not None
    err: list[bytes] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    timer = threading.Timer(LIMIT_S, proc.kill)
    timer.start()
    first: float | None = None
    chunks: list[bytes] = []
    try:
        while True:
            chunk = proc.stdout.read1(1 << 16)
            if not chunk:
                break
            if first is None:
                first = time.perf_counter() - t0
            chunks.append(chunk)
        _pid, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    took = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join()
    if proc.returncode != 0:
        tail = b"".join(err)[-600:].decode(errors="replace").strip().splitlines()
        why = (
            f"killed after {LIMIT_S:.0f} s"
            if took >= LIMIT_S
            else f"exit {proc.returncode}: {tail[-1] if tail else ''}"
        )
        # killed, it wrote no peak: the kernel's figure, an upper bound
        raise Over(f"{why} (peak RSS ≤ {usage.ru_maxrss / 2**20:.0f} MB, {took:.0f} s)")
    peak = int(peak_file.read_text()) * 1024
    peak_file.unlink()
    return took, peak, b"".join(chunks), first or took


def hwm(pid: int) -> float:
    """Peak RSS of a live process (VmHWM), bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return float(line.split()[1]) * 1024
    return float("nan")


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, round(q * (len(v) - 1)))]


@contextlib.contextmanager
def serve(url: str, env: dict[str, str], cwd: Path) -> Iterator[tuple[httpx.Client, int]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (cwd / "serve.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "lhbench", "serve", "--db", url, "--port", str(port)],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as c:
            deadline = time.monotonic() + 300
            while True:
                if server.poll() is not None:
                    raise SystemExit(f"lhbench serve exited: {(cwd / 'serve.log').read_text()}")
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
            r = c.post("/login", data={"name": "bench", "password": PASSWORD, "csrf_token": token})
            # signed in, or every page after this is the login page and its figures are
            # meaningless (how a reused store was measured wrong before)
            if r.status_code != 303 or r.headers.get("location") != "/":
                raise SystemExit(f"the bench user could not sign in: HTTP {r.status_code}")
            yield c, server.pid
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()
        log.close()


def timed_get(c: httpx.Client, path: str) -> float:
    t0 = time.perf_counter()
    r = c.get(path)
    took = time.perf_counter() - t0
    # a redirect (to the login page) is no figure of the page asked for
    if r.status_code != 200:
        raise SystemExit(f"GET {path}: HTTP {r.status_code} {r.headers.get('location') or ''}")
    return took


SECTIONS = ("report", "runs", "aj", "grade", "web")


def measure(
    url: str, built: Built, packs: list[Path], stub: Any, work: Path, only: Sequence[str]
) -> list[Figure]:
    """Every figure of one store (see the module docstring)."""
    env = {**os.environ, "LHBENCH_HOME": str(work / "home"), "LHBENCH_DB_URL": url}
    figs: list[Figure] = []

    def note(f: Figure) -> None:
        figs.append(f)
        print(f.line(), flush=True)

    def over(name: str, unit: str, load: float, exc: Over) -> None:
        note(Figure(name, float("inf"), unit, None, load, f"OVER THE LIMIT: {exc}"))

    if "report" in only:
        load = load1()
        try:
            # CPU beside the wall time: on a loaded machine the wall is mostly waiting
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            took, rss, _out, _first = cli(
                ["report", "--db", url, "--out", str(work / "report")], env, work
            )
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            note(Figure("report", took, "s", rss, load, f"CPU {cpu:.1f} s"))
        except Over as exc:
            over("report", "s", load, exc)

    if "runs" in only:  # runs list --json: does it stream?
        load = load1()
        try:
            took, rss, out, first = cli(["runs", "list", "--json", "--db", url], env, work)
            n_listed = out.count(b'"id"')
            note(Figure("runs list --json", took, "s", rss, load, f"{n_listed:,} runs listed"))
            note(Figure("runs list --json first byte", first, "s", None, load))
        except Over as exc:
            over("runs list --json", "s", load, exc)

    if "aj" in only:
        load = load1()
        try:
            took, rss, _out, _first = cli(["aj", "score", "--json", "--db", url], env, work)
            note(Figure("aj score", took, "s", rss, load))
        except Over as exc:
            over("aj score", "s", load, exc)

    if "grade" in only:
        try:
            grade_job(url, built, packs, stub, work, env, note)
        except Over as exc:
            over("grade job", "s", load1(), exc)
    if "web" in only:
        web(url, built, work, env, note)
    return figs


def grade_job(
    url: str,
    built: Built,
    packs: list[Path],
    stub: Any,
    work: Path,
    env: dict[str, str],
    note: Any,
) -> None:
    """Every pack and tier with the panel the grades were made with: all stored, no call."""
    load = load1()
    before = len(stub.requests)
    # CPU seconds of the four commands: what a shared machine's load does not inflate
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    total, peak, planned, skipped, job_s = 0.0, 0.0, 0, 0, 0.0
    panel = ",".join(f"{j}@{stub.base_url}" for j in JUDGES)
    for pack_dir, (_pid, _n, repeats) in zip(packs, PACKS, strict=True):
        for tier in TIERS:
            took, rss, out, _first = cli(
                [
                    "judge",
                    "--pack",
                    str(pack_dir),
                    "--tier",
                    tier,
                    "--panel",
                    panel,
                    "--repeats",
                    str(repeats),
                    "--json",
                    "--db",
                    url,
                ],
                env,
                work,
            )
            total += took
            peak = max(peak, rss)
            j = re.search(rb'"seconds":\s*([0-9.]+)', out)
            job_s += float(j.group(1)) if j else 0.0
            m = re.search(rb'"planned":\s*(\d+)', out)
            s = re.search(rb'"skipped":\s*(\d+)', out)
            planned += int(m.group(1)) if m else 0
            skipped += int(s.group(1)) if s else 0
    calls = len(stub.requests) - before
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    note(
        Figure(
            "grade job",
            total,
            "s",
            peak,
            load,
            f"{planned:,} units planned, {skipped:,} found stored, {calls} model calls; "
            f"{cpu:.1f} s CPU in all; the job itself (plan, stored lookup, skip) {job_s:.2f} s "
            f"(goal: {built.grades:,} stored, 0 calls)",
        )
    )


def web(url: str, built: Built, work: Path, env: dict[str, str], note: Any) -> None:
    """The overview cold and warm, the runs page, the run page of the long transcript.

    Cold: the first request after a write (labels and grades in turn), which the server
    answers by updating its analysis from the store's change log; the first request after
    the server starts computes it whole and is printed beside it.
    """
    from lhbench.schema import Label, grade_key
    from lhbench.store import Store
    from lhbench.web import add_user

    load = load1()
    with Store.open(url) as store:
        # a reused store may predate the bench user, hold another password or earlier
        # failed sign-ins that rate-limit it: set it as this bench signs in
        add_user(store, "bench", PASSWORD, admin=True)
        store.clear_login_failures("bench")
    # the first server starts from nothing saved (a reused store's earlier runs left their
    # summary in the home): its first overview is the whole summary, and the cold figures
    # after it a running server's; the restarted server below starts from what it saved
    shutil.rmtree(Path(env["LHBENCH_HOME"]) / "web-overview", ignore_errors=True)
    with serve(url, env, work) as (c, pid), Store.open(url, migrate=False) as store:
        first_page = timed_get(c, "/")
        cold, warm, runs_warm, long_page = [], [], [], []
        template = store.list_grades(run_id=run_id(1))[0]
        for k in range(6):
            # a label, then a judge's new grade of a run (a repeat no earlier round used)
            if k % 2 == 0:
                store.save_label(
                    Label(run_id=run_id(k), passed=k % 4 == 0, source="verify:verify.py")
                )
            else:
                repeat = 1000 * (int(time.time()) % 1_000_000) + k
                key = grade_key(
                    template.run_id,
                    template.judge.key,
                    template.rubric_hash,
                    template.tier.value,
                    repeat,
                )
                store.save_grades(
                    [
                        template.model_copy(
                            update={"id": f"bench-{key}", "key": key, "repeat": repeat}
                        )
                    ]
                )
            cold.append(timed_get(c, "/"))
            warm.extend(timed_get(c, "/") for _ in range(10))
        timed_get(c, "/runs")
        runs_warm = [timed_get(c, "/runs") for _ in range(10)]
        timed_get(c, f"/runs/{built.long_run}")
        long_page = [timed_get(c, f"/runs/{built.long_run}") for _ in range(10)]
        rss = hwm(pid)
    note(
        Figure(
            "overview cold",
            1000 * max(cold),
            "ms",
            rss,
            load,
            f"max of {len(cold)} after a write; first after start {1000 * first_page:.0f} ms",
        )
    )
    note(Figure("overview warm p95", 1000 * pct(warm, 0.95), "ms", None, load))
    # a restarted server: its first overview (the summary is made from the store again)
    started = time.perf_counter()
    with serve(url, env, work) as (c, pid), Store.open(url, migrate=False) as store:
        answer = timed_get(c, "/")
        after_start = time.perf_counter() - started
        second = timed_get(c, "/")
        # while the restarted server may still be making its summary: the long run page,
        # then a write and the overview after it
        page_after_start = [timed_get(c, f"/runs/{built.long_run}") for _ in range(10)]
        store.save_label(Label(run_id=run_id(7), passed=True, source="verify:verify.py"))
        write_after_start = timed_get(c, "/")
        rss_after_start = hwm(pid)
    note(
        Figure(
            "overview first after start",
            1000 * answer,
            "ms",
            None,
            load,
            f"{1000 * after_start:.0f} ms from the server's start (process, sign-in, answer); "
            f"then {1000 * second:.0f} ms",
        )
    )
    note(
        Figure(
            "run page (5,000 steps) p95 right after start",
            1000 * pct(page_after_start, 0.95),
            "ms",
            None,
            load,
            f"p50 {1000 * statistics.median(page_after_start):.0f} ms",
        )
    )
    note(
        Figure(
            "overview after a write right after start",
            1000 * write_after_start,
            "ms",
            rss_after_start,
            load,
        )
    )
    note(Figure("runs page warm p95", 1000 * pct(runs_warm, 0.95), "ms", None, load))
    note(
        Figure(
            "run page (5,000 steps) p95",
            1000 * pct(long_page, 0.95),
            "ms",
            None,
            load,
            f"p50 {1000 * statistics.median(long_page):.0f} ms",
        )
    )


# --------------------------------------------------------------------------------------


@dataclass
class Result:
    backend: str
    n: int
    built: Built
    figures: list[Figure] = field(default_factory=list)


def stored_stub_ports(url: str) -> set[int]:
    """The ports of the stub the store's panel grades were made with (their judges' endpoint).

    For a store whose marker predates ``stub_port``: read from the grades' judge identities,
    without migrating the store (one grade document per judge).
    """
    from lhbench.store import Store

    with Store.open(url, migrate=False) as store:
        identities = store.judge_identities().values()
    return {
        port
        for ident in identities
        if ident.model in JUDGES and ident.endpoint
        for port in [urlsplit(ident.endpoint).port]
        if port is not None
    }


def check_stub_port(url: str, built_with: int | None, port: int) -> None:
    """Refuse to reuse a store with a stub on another port than the one it was built with.

    The endpoint is part of a judge's identity: on another port every stored grade is
    another judge's, and the grade job would grade the whole store again (and write it).
    """
    ports = {built_with} if built_with is not None else stored_stub_ports(url)
    if not ports:
        print(f"scale: cannot tell the stub port {url} was built with; using {port}", flush=True)
        return
    if ports != {port}:
        was = ", ".join(str(p) for p in sorted(ports))
        how = (
            f"pass --stub-port {was}"
            if len(ports) == 1
            else "its grades were made on several ports: build it again (without --reuse)"
        )
        raise SystemExit(
            f"scale: --reuse of {url}: it was built with the model stub on port {was}, "
            f"not {port} (the port is part of every stored grade's judge identity, so the "
            f"grade job would grade the whole store again); {how}"
        )


def one(
    backend: str,
    url: str,
    n: int,
    work: Path,
    packs: list[Path],
    stub: Any,
    only: Sequence[str],
    reuse: bool,
) -> Result:
    marker = work / f"built-{backend}-{n}.json"
    if reuse and marker.exists():
        held = json.loads(marker.read_text())
        built = Built(**held["built"])
        check_stub_port(url, held.get("stub_port"), stub.port)
        print(f"\n== {backend}, {n:,} runs: reusing the store built before", flush=True)
    else:
        for old in work.glob(f"built-{backend}-*.json" if backend != "sqlite" else marker.name):
            old.unlink()  # one PostgreSQL database holds one store at a time
        reset(url)
        print(f"\n== {backend}, {n:,} runs: building (load {load1():.2f}) …", flush=True)
        built = build(url, n, packs, stub.base_url)
        # the stub's port is part of every stored grade's judge identity (its endpoint)
        marker.write_text(json.dumps({"n": n, "stub_port": stub.port, "built": asdict(built)}))
    print(
        f"built {built.runs:,} runs, {built.grades:,} grades, {built.steps:,} steps, "
        f"{built.labels:,} labels, {built.votes:,} votes, {built.verdicts:,} verdicts "
        f"in {built.seconds:.0f} s (load {built.load or float('nan'):.2f} when it ended)",
        flush=True,
    )
    res = Result(backend, n, built)
    res.figures = measure(url, built, packs, stub, work, only)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10,000 runs only")
    ap.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    ap.add_argument("--pg-url", default=os.environ.get("LHBENCH_BENCH_PG_URL"))
    ap.add_argument("--sizes", default=None, help="run counts, comma-separated")
    ap.add_argument("--keep", type=Path, default=None, help="work directory to keep")
    ap.add_argument(
        "--reuse", action="store_true", help="measure the store --keep holds (same size)"
    )
    ap.add_argument("--only", default=",".join(SECTIONS), help=f"of {', '.join(SECTIONS)}")
    ap.add_argument(
        "--stub-port", type=int, default=0, help="the model stub's port (fixed for --reuse)"
    )
    args = ap.parse_args()
    sizes = (
        [int(s) for s in args.sizes.split(",")]
        if args.sizes
        else [10_000]
        if args.quick
        else [10_000, 100_000]
    )
    only = [o.strip() for o in args.only.split(",") if o.strip()]
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    if "postgresql" in backends and not args.pg_url:
        print("scale: no --pg-url / LHBENCH_BENCH_PG_URL: PostgreSQL left out", flush=True)
        backends.remove("postgresql")
    print(common.load_line("scale"), flush=True)
    from lhbench.testing import ModelStub, auto_script

    work = args.keep or Path(tempfile.mkdtemp(prefix="lhbench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "home").mkdir(exist_ok=True)
    results: list[Result] = []
    try:
        packs = write_packs(work / "packs")
        with ModelStub(auto_script(), port=args.stub_port) as stub:
            for backend in backends:
                for n in sizes:
                    url = (
                        f"sqlite:///{work / f'scale-{n}.db'}"
                        if backend == "sqlite"
                        else str(args.pg_url)
                    )
                    results.append(one(backend, url, n, work, packs, stub, only, args.reuse))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print("\n== summary", flush=True)
    for res in results:
        print(f"{res.backend}, {res.n:,} runs ({res.built.grades:,} grades):")
        for f in res.figures:
            print(f.line())
    growth_misses: list[str] = []
    for backend in backends:
        mine = [r for r in results if r.backend == backend]
        if len(mine) < 2:
            continue
        small, big = mine[0], mine[-1]
        scale = big.n / small.n
        print(f"{backend}: growth from {small.n:,} to {big.n:,} runs (x{scale:g} the data):")
        for fs, fb in zip(small.figures, big.figures, strict=True):
            r = fb.value / fs.value if fs.value else float("nan")
            rr = f", peak RSS x{fb.rss / fs.rss:.2f}" if fs.rss and fb.rss else ""
            if fs.name in RACES:
                lin = "not compared: " + RACES[fs.name]
            elif r <= scale:
                lin = "ok"
            else:
                lin = "FASTER THAN LINEAR"
                growth_misses.append(f"{backend} growth of {fs.name}")
            print(f"  {fs.name:30s} x{r:6.2f} ({lin}){rr}")
    print(common.load_line("scale", "end"))
    misses = [
        f"{r.backend} {r.n} {f.name}"
        for r in results
        for f in r.figures
        if (f.goal() is not None and f.value > f.goal()) or (f.rss or 0) >= GB  # type: ignore[operator]
    ] + growth_misses
    last = results[-1] if results else None
    head = ", ".join(
        f"{f.name} {f.value:.2f} {f.unit}"
        for f in (last.figures if last else [])
        if f.name in ("report", "grade job", "overview cold")
    )
    print(
        f"scale ({last.backend if last else '-'}, {last.n if last else 0:,} runs): {head}; "
        f"{len(misses)} goal(s) missed"
        + (f" ({'; '.join(misses)})" if misses else "")
        + " (target: every figure within its goal, peak RSS < 1 GB, growth ≤ linear)"
    )


if __name__ == "__main__":
    main()
