"""Replay + verify time per trajectory over the aj-ds-mini pack, on SQLite and PostgreSQL.

For every bundled trajectory, as ``lhbench verify`` does it: the run's sandbox is started
(one per run: its replay and its checks run there), its final state replayed into a fresh
directory or database, and its verify script run in that sandbox; the next run's sandbox
is started while this one's check runs (as the verify job does). The floor, measured in
the same run for the same trajectories, unsandboxed: copying the initial state (``copytree``
of the directory; for SQL, loading the dump into a fresh SQLite file, or ``CREATE
DATABASE … TEMPLATE …`` on PostgreSQL) plus one bare ``python verify.py`` process. Rounds of
each side alternate (``--quick``: 3, else 5).

Headline (target ≤ 1.5x): the ratio of medians over the rounds of a round's time, all the
pack's trajectories one after the other. Not the median over trajectories: the pack's
filesystem tasks take ~40 ms and its SQL tasks ~190 ms, an even split, so that median is
the midpoint between the slowest filesystem and the fastest SQL trajectory and moved with
either alone (1.45x to 1.77x on one host). Beside it, for each kind of task, the median
per trajectory of both sides and their ratio, and the p95s.

    uv run python bench/replay.py [--quick] [--pg-url postgresql://root@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import common

from lhbench.config import Settings
from lhbench.envs import PostgresDatabases, copy_initial_state, run_verify
from lhbench.jobs import (
    FixtureJob,
    LoadedPack,
    StateProvider,
    resolve_pack,
    run_job,
    task_checks,
    task_kind,
)
from lhbench.sandbox import sandbox_env, script_argv
from lhbench.schema import Run
from lhbench.store import Store

TARGET = 1.5


class Item:
    """One fixture run with its task directory."""

    def __init__(self, pack: LoadedPack, run: Run) -> None:
        self.pack = pack
        self.run = run
        self.task = pack.pack.task(run.task_id)
        self.task_dir = pack.task_dir(run.task_id)
        self.kind = task_kind(pack, self.task)
        [self.check] = [c for c in task_checks(pack, self.task) if c.kind == "verify"]


def load_items(store: Store, home: Path) -> list[Item]:
    pack = resolve_pack("aj-ds-mini", Settings(home=home), store)
    asyncio.run(run_job(FixtureJob(store, pack)))
    return [Item(pack, r) for r in store.list_runs(pack_id=pack.pack.id)]


def replay_one(
    it: Item, provider: StateProvider, following: Item | None, pg: PostgresDatabases | None
) -> None:
    """As the verify job does one run: its sandbox, its state, its check; the next sandbox."""
    session = provider.session(it.run)  # started: built while the state is made
    state = provider._make(it.run, None)
    if following is not None:
        provider.session(following.run)
    run_verify(it.check.target, root=state.ref.root, db_url=state.ref.db_url, session=session)
    provider.end_session(it.run.id)


def bare_verify(it: Item, root: Path | None, db_url: str | None) -> None:
    extra = ["--root", str(root)] if root is not None else ["--db", str(db_url)]
    cwd = root or it.check.target.parent
    done = subprocess.run(
        script_argv(it.check.target, *extra),
        cwd=cwd,
        env=sandbox_env(cwd, env={"LHBENCH_IN_SANDBOX": "1"}),
        capture_output=True,
        start_new_session=True,  # as a sandboxed command (see bench/sandbox.py)
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"bare verify failed: {done.stderr.decode()[-500:]}")


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def summary(values: list[float]) -> str:
    return (
        f"median {1000 * statistics.median(values):.1f} ms, p95 {1000 * pct(values, 0.95):.1f} ms"
    )


def floor(
    item: Item, work: Path, pg: PostgresDatabases | None, final: tuple[Path | None, str | None]
) -> float:
    """Copy the initial state (or load the dump), and run the verify script bare.

    The script reads the replayed final state (``final``, made once before timing), so
    both sides run it on the same state and its answer costs the same.
    """
    env = item.task.environment
    t0 = time.perf_counter()
    if item.kind.value == "sql":
        dump = (item.task_dir / (env.database or "seed.sql")).read_text()
        if pg is None:
            db = work / "floor.db"
            db.unlink(missing_ok=True)
            conn = sqlite3.connect(db)
            conn.executescript(dump)
            conn.close()
        else:
            pg.clone(pg.template(dump))
    else:
        copy_initial_state(item.task_dir / (env.initial_state or "initial"), work / "floor")
    bare_verify(item, *final)
    return time.perf_counter() - t0


class Timed:
    """Per-trajectory seconds of one side, round by round, with each trajectory's task kind."""

    def __init__(self) -> None:
        self.rounds: list[list[tuple[str, float]]] = []
        # per round, what no trajectory's figure holds (the last sandboxes' close)
        self.tails: list[float] = []

    def new_round(self) -> None:
        self.rounds.append([])
        self.tails.append(0.0)

    def add(self, kind: str, seconds: float) -> None:
        self.rounds[-1].append((kind, seconds))

    def totals(self) -> list[float]:
        """A round's time: its trajectories one after the other, and its tail."""
        rounds = zip(self.rounds, self.tails, strict=True)
        return [sum(t for _, t in r) + tail for r, tail in rounds]

    def each(self, kind: str | None = None) -> list[float]:
        return [t for r in self.rounds for k, t in r if kind is None or k == kind]

    def kinds(self) -> list[str]:
        return sorted({k for r in self.rounds for k, _ in r})


def measure(
    items: list[Item], rounds: int, pg: PostgresDatabases | None, store: Store
) -> tuple[Timed, Timed]:
    """Both sides' times per round; rounds alternate which side goes first."""
    times, floors = Timed(), Timed()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)

        def replay_round(r: int) -> None:
            provider = StateProvider(store, items[0].pack, work / f"r{r}", postgres=pg)
            times.new_round()
            try:
                for i, it in enumerate(items):
                    following = items[i + 1] if i + 1 < len(items) else None
                    t0 = time.perf_counter()
                    replay_one(it, provider, following, pg)
                    times.add(it.kind.value, time.perf_counter() - t0)
            finally:
                # the last sandboxes' close (in the background) is the round's time too
                t0 = time.perf_counter()
                provider.close()
                times.tails[-1] = time.perf_counter() - t0

        def floor_round() -> None:
            floors.new_round()
            for it in items:
                shutil.rmtree(work / "floor", ignore_errors=True)
                floors.add(it.kind.value, floor(it, work, pg, finals[it.run.id]))

        replay_round(-1)  # warm: templates, page cache
        made = StateProvider(store, items[0].pack, work / "final", postgres=pg)
        finals = {}
        for it in items:
            ref = made._make(it.run, None).ref
            finals[it.run.id] = (ref.root, ref.db_url)
        made.close()
        floor_round()
        times, floors = Timed(), Timed()
        for r in range(rounds):
            if r % 2:
                floor_round()
                replay_round(r)
            else:
                replay_round(r)
                floor_round()
    return times, floors


def report(label: str, times: Timed, floors: Timed) -> float:
    """Print one backend's figures; the headline ratio."""
    ratio = common.ratio_of_medians(times.totals(), floors.totals())
    print(
        f"{label}: a round ({len(times.rounds[0])} trajectories) median "
        f"{common.median(times.totals()):.2f} s, floor {common.median(floors.totals()):.2f} s "
        f"over {len(times.rounds)} alternating rounds: {ratio:.2f}x"
    )
    for kind in times.kinds():
        t, f = times.each(kind), floors.each(kind)
        print(
            f"  {kind} tasks ({len(t) // len(times.rounds)} per round): "
            f"replay+verify {summary(t)}; "
            f"floor {summary(f)}; {statistics.median(t) / statistics.median(f):.2f}x median, "
            f"{pct(t, 0.95) / pct(f, 0.95):.2f}x p95"
        )
    return ratio


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="three rounds instead of five")
    ap.add_argument("--pg-url", default=os.environ.get("LHBENCH_TEST_PG_URL"))
    args = ap.parse_args()
    rounds = 3 if args.quick else 5
    print(common.load_line("replay"))
    with tempfile.TemporaryDirectory() as home:
        store = Store.open(f"sqlite:///{Path(home) / 'b.db'}")
        items = load_items(store, Path(home))
        print(
            f"trajectories: {len(items)} x {rounds} rounds; floor: copy the initial state + "
            "a bare verify process"
        )
        ratio = report("SQLite", *measure(items, rounds, None, store))
        pg_ratio = None
        if args.pg_url:
            pg = PostgresDatabases(args.pg_url)
            try:
                sql_items = [it for it in items if it.kind.value == "sql"]
                p_times, p_floors = measure(sql_items, rounds, pg, store)
            finally:
                pg.drop_all()
            print("PostgreSQL floor: CREATE DATABASE ... TEMPLATE + a bare verify process")
            pg_ratio = report("PostgreSQL (SQL tasks)", p_times, p_floors)
        else:
            print("PostgreSQL: skipped (pass --pg-url or set LHBENCH_TEST_PG_URL)")
    print(common.load_line("replay", "end"))
    print(
        f"replay sqlite: {ratio:.2f}x the floor, ratio of medians of a round "
        f"(target <= {TARGET}x)" + (f"; postgres {pg_ratio:.2f}x" if pg_ratio else "")
    )


if __name__ == "__main__":
    main()
