"""Replay + verify time per trajectory over the aj-ds-mini pack, on SQLite and PostgreSQL.

For every bundled trajectory: replay its final state into a fresh directory or database
and run its verify script (a fresh process per script, as ``lhbench verify`` does). The floor,
measured in the same run for the same trajectories: copying the initial state alone
(``copytree`` of the directory; for SQL, loading the dump into a fresh SQLite file, or
``CREATE DATABASE … TEMPLATE …`` on PostgreSQL). Headline: SQLite p95 as a multiple of
the SQLite floor's p95.

    uv run python bench/replay.py [--quick] [--pg-url postgresql://root@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

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
from lhbench.schema import Run
from lhbench.store import Store


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


def replay_one(it: Item, work: Path, pg: PostgresDatabases | None, store: Store) -> None:
    provider = StateProvider(store, it.pack, work, postgres=pg)
    state = provider._make(it.run, None)
    run_verify(it.check.target, root=state.ref.root, db_url=state.ref.db_url)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def summary(values: list[float]) -> str:
    return (
        f"median {1000 * statistics.median(values):.1f} ms, p95 {1000 * pct(values, 0.95):.1f} ms"
    )


def floor(item, work: Path, pg: PostgresDatabases | None) -> float:
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
    return time.perf_counter() - t0


def measure(
    items, rounds: int, pg: PostgresDatabases | None, store: Store
) -> tuple[list[float], list[float]]:
    times, floors = [], []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for it in items:  # warm: templates, page cache
            replay_one(it, work / "warm", pg, store)
            floor(it, work, pg)
        for r in range(rounds):
            for it in items:
                floors.append(floor(it, work, pg))
                t0 = time.perf_counter()
                replay_one(it, work / f"r{r}", pg, store)
                times.append(time.perf_counter() - t0)
    return times, floors


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one round instead of five")
    ap.add_argument("--pg-url", default=os.environ.get("LHBENCH_TEST_PG_URL"))
    args = ap.parse_args()
    rounds = 1 if args.quick else 5
    with tempfile.TemporaryDirectory() as home:
        store = Store.open(f"sqlite:///{Path(home) / 'b.db'}")
        items = load_items(store, Path(home))
        s_times, s_floors = measure(items, rounds, None, store)
        print(f"trajectories: {len(items)} x {rounds} round(s)")
        print(
            f"SQLite: replay+verify {summary(s_times)}; "
            f"floor (copy initial state) {summary(s_floors)}"
        )
        pg_ratio = None
        if args.pg_url:
            pg = PostgresDatabases(args.pg_url)
            try:
                sql_items = [it for it in items if it.kind.value == "sql"]
                p_times, p_floors = measure(sql_items, rounds, pg, store)
            finally:
                pg.drop_all()
            pg_ratio = pct(p_times, 0.95) / pct(p_floors, 0.95)
            print(f"PostgreSQL (SQL tasks): replay+verify {summary(p_times)}")
            print(f"PostgreSQL floor (CREATE DATABASE ... TEMPLATE): {summary(p_floors)}")
            print(f"PostgreSQL p95 ratio {pg_ratio:.2f}x (target <= 5x)")
        else:
            print("PostgreSQL: skipped (pass --pg-url or set LHBENCH_TEST_PG_URL)")
    ratio = pct(s_times, 0.95) / pct(s_floors, 0.95)
    print(
        f"replay sqlite p95: {ratio:.2f}x floor (target <= 3x)"
        + (f"; postgres {pg_ratio:.2f}x (target <= 5x)" if pg_ratio else "")
    )


if __name__ == "__main__":
    main()
