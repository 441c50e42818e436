"""Startup: how long a command takes when most of what it does is importing.

Each figure beside its goal (wall seconds on a quiet machine, issue 26 item 4):

- ``lhbench --help``: <= 0.3 s;
- ``lhbench import auto FILE``: <= 1 s, a small Claude Code stream-json transcript (about
  60 steps, made by ``bench/ingest.py``'s generator) into a store already at the newest
  migration (a fresh copy each round, so every round imports);
- ``lhbench report``: <= 1.5 s, on the demo store (``lhbench demo`` in a temporary home,
  or ``--home DIR`` holding one already);
- and, beside them, ``inspect --help`` (Inspect AI, a dev dependency) for comparison.

Every command is a fresh process; the sides alternate (``bench/common.py``: the first side
rotates each round); figures are medians, with the wall (``perf_counter``) and the CPU time
(user + sys of the child, ``RUSAGE_CHILDREN``) of each round: on a shared machine the CPU
time is the steadier figure. The ratio of lhbench's ``--help`` to Inspect's is a ratio of
medians. Bytecode: Python here writes none (``PYTHONDONTWRITEBYTECODE=1``), so every process
would compile every module it imports, which a user's install does once; the children get
a private bytecode cache (``PYTHONPYCACHEPREFIX``) filled by one unmeasured run, and
(without ``--quick``) one uncached run of each is printed too. Then one ``-X importtime``
run of each: how many modules, which heavy libraries, and the largest imports the command
itself made (cumulative). The load is printed at the start and the end. Last line: the
headline.

    uv run python bench/startup.py [--quick] [--reps 7] [--home DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import common

import ingest

GOALS = {"help": 0.3, "import": 1.0, "report": 1.5}
HEAVY = (
    "sqlalchemy",
    "alembic",
    "pydantic",
    "pydantic_ai",
    "numpy",
    "scipy",
    "matplotlib",
    "httpx",
    "fastapi",
)


def child_env(cache: Path | None) -> dict[str, str]:
    """The environment of a measured command: no LHBENCH_* of the caller's, our bytecode."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LHBENCH_")}
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    env["PYDANTIC_AI_NO_BANNER"] = "1"
    if cache is None:  # as every process on a machine that writes no bytecode
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="lhbench-nopyc-")
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU (user + sys) seconds of one run of ``argv``, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    res = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        sys.exit(f"startup: {' '.join(argv)} failed ({res.returncode}): {res.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def importtime(argv: list[str], env: dict[str, str], cwd: Path) -> list[tuple[int, int, str]]:
    """``(depth, cumulative µs, module)`` of every import one run of ``argv`` made."""
    res = subprocess.run(
        argv, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, cwd=cwd, capture_output=True, text=True
    )
    rows = []
    for line in res.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, cumulative, name = line.split(":", 1)[1].split("|")
        depth = (len(name) - len(name.lstrip())) // 2
        rows.append((depth, int(cumulative), name.strip()))
    return rows


def evidence(name: str, rows: list[tuple[int, int, str]], top: int) -> None:
    """Module count, heavy libraries loaded, and the command's largest own imports."""
    loaded = {m for _, _, m in rows}
    heavy = [h for h in HEAVY if h in loaded]
    print(f"  {name}: {len(loaded)} modules; heavy: {', '.join(heavy) or 'none'}")
    # depth 0: what the program (or a function, lazily) imported itself
    own = sorted((r for r in rows if r[0] == 0), key=lambda r: -r[1])[:top]
    print("    " + ", ".join(f"{m} {c / 1e6:.2f}s" for _, c, m in own))


def demo_store(home: Path, lhbench: str, env: dict[str, str]) -> Path:
    """The demo's store under ``home`` (made by ``lhbench demo`` when it is not there)."""
    db = home / "lhbench.db"
    if db.exists():
        return db
    home.mkdir(parents=True, exist_ok=True)
    print(f"making the demo store: lhbench demo (in {home}) …", flush=True)
    wall, cpu = timed([lhbench, "demo", "--db", f"sqlite:///{db}"], env, home)
    print(f"  demo: {wall:.1f} s wall, {cpu:.1f} s CPU (not part of any figure)")
    return db


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 rounds, no uncached runs")
    ap.add_argument("--reps", type=int, default=7, help="Alternating rounds (>= 3)")
    ap.add_argument("--home", type=Path, help="Directory with (or for) the demo store")
    args = ap.parse_args()
    reps = 3 if args.quick else args.reps
    print(common.load_line("startup"), flush=True)

    bindir = Path(sys.executable).parent
    lhbench, inspect = str(bindir / "lhbench"), str(bindir / "inspect")
    if not Path(inspect).exists():
        sys.exit("startup: no `inspect` next to this Python (uv sync installs inspect-ai)")

    with tempfile.TemporaryDirectory(prefix="lhbench-startup-") as tmp:
        work = Path(tmp)
        cache = work / "pycache"
        env = child_env(cache)
        transcript = work / "session.jsonl"
        ingest.generate(transcript, 100_000)
        steps = sum(1 for _ in transcript.open()) - 2
        empty = work / "empty.db"
        timed([lhbench, "db", "upgrade", "--db", f"sqlite:///{empty}"], env, work)
        report_db = demo_store(args.home or work / "demo", lhbench, env)
        report_argv = [lhbench, "report", "--db", f"sqlite:///{report_db}"]
        report_argv += ["--out", str(work / "report")]
        rounds = [0]

        def import_argv() -> list[str]:
            rounds[0] += 1
            db = work / f"import-{rounds[0]}.db"
            shutil.copy(empty, db)
            return [lhbench, "import", "auto", str(transcript), "--db", f"sqlite:///{db}"]

        commands: dict[str, Callable[[], list[str]]] = {
            "help": lambda: [lhbench, "--help"],
            "import": import_argv,
            "report": lambda: report_argv,
            "inspect --help": lambda: [inspect, "--help"],
        }
        for argv in commands.values():  # fills the bytecode cache; not measured
            timed(argv(), env, work)

        sides = {n: (lambda a=a: timed(a(), env, work)) for n, a in commands.items()}
        got = common.alternate(sides, reps)
        wall = {n: common.median([w for w, _ in v]) for n, v in got.items()}
        cpu = {n: common.median([c for _, c in v]) for n, v in got.items()}
        print(f"{reps} alternating rounds, medians (wall, CPU = user + sys of the process):")
        for n in commands:
            goal = f"goal <= {GOALS[n]} s wall" if n in GOALS else "comparison"
            print(
                f"  {n:15s} {wall[n]:6.3f} s wall {cpu[n]:6.3f} s CPU   ({goal})  "
                f"wall {common.spread([w for w, _ in got[n]])} "
                f"CPU {common.spread([c for _, c in got[n]])}"
            )
        print(f"  import: {steps // 2} tool steps, {transcript.stat().st_size // 1000} kB")
        print(
            f"lhbench --help / inspect --help: {wall['help'] / wall['inspect --help']:.2f}x wall, "
            f"{cpu['help'] / cpu['inspect --help']:.2f}x CPU (ratio of medians)"
        )

        if not args.quick:
            print("without a bytecode cache (every module compiled, one run each):")
            bare = child_env(None)
            for n, argv in commands.items():
                w, c = timed(argv(), bare, work)
                print(f"  {n:15s} {w:6.3f} s wall {c:6.3f} s CPU")

        print("-X importtime (one run each, cached bytecode): modules, heavy libraries, largest")
        for n, argv in commands.items():
            evidence(n, importtime(argv(), env, work), top=6)

    print(common.load_line("startup", "end"))
    print(
        f"startup: help {wall['help']:.2f} s, import {wall['import']:.2f} s, "
        f"report {wall['report']:.2f} s wall (CPU {cpu['help']:.2f} / {cpu['import']:.2f} / "
        f"{cpu['report']:.2f} s; inspect --help {wall['inspect --help']:.2f} s) "
        f"(target <= 0.3 / 1 / 1.5 s wall on a quiet machine)"
    )


if __name__ == "__main__":
    main()
