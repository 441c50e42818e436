"""The web overview cold and warm in one process, and the collections inside warm requests.

A quick look beside ``bench/scale.py``'s web figures (which serve the app in its own
process and sign in): the app as served, in-process through starlette's TestClient, on a
copy of a store that ``bench/scale.py --keep DIR`` built. First ``/`` after the app starts
(a full analysis); then six times: a write (a label, or a judge's new grade of a run,
alternately), ``/`` once cold (the analysis updated from the change log) and ten times
warm. Prints the first request, the cold maximum after a label and after a grade (wall and
CPU), the warm p50/p95, the cyclic collections that ran inside warm requests (count,
longest, total) and the process's peak RSS. Last, a second app over the store (a restart,
same secret): its first ``/``, answered from the front the first app saved.

    cp DIR/scale-10000.db /tmp/copy.db   # it writes labels
    LHBENCH_HOME=DIR/home uv run python bench/overview_warm.py sqlite:////tmp/copy.db
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("url", help="a store URL (a copy: labels are written)")
    ap.add_argument("--run", default="run-000001", help="the run whose label is rewritten")
    ap.add_argument("--quick", action="store_true", help="accepted for symmetry (one size)")
    args = ap.parse_args()
    os.environ["LHBENCH_WEB_PUBLIC_LEADERBOARD"] = "true"

    from fastapi.testclient import TestClient

    from lhbench.schema import Label, grade_key
    from lhbench.store import Store
    from lhbench.web.app import create_app

    store = Store.open(args.url)  # migrated: the change log is migration 0020
    fronts = Path(tempfile.mkdtemp(prefix="lhbench-fronts-"))
    t = time.perf_counter()
    c = TestClient(create_app(store, secret="bench", front_dir=fronts))
    assert c.get("/").status_code == 200
    first = time.perf_counter() - t
    template = store.list_grades(run_id=args.run)[0]
    collections: list[float] = []
    started = [0.0]

    def timer(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            collections.append(time.perf_counter() - started[0])

    cold: dict[str, list[float]] = {"label": [], "grade": []}
    cold_cpu: dict[str, list[float]] = {"label": [], "grade": []}
    warm = []
    for k in range(6):
        if k % 2 == 0:
            kind = "label"
            store.save_label(Label(run_id=args.run, passed=k % 4 == 0, source="verify:verify.py"))
        else:
            kind = "grade"
            # a repeat number no earlier round of the bench used on this copy
            repeat = 1000 * (int(time.time()) % 1_000_000) + k
            store.save_grades(
                [
                    template.model_copy(
                        update={
                            "id": f"{template.id}-bench-{repeat}",
                            "repeat": repeat,
                            "key": grade_key(
                                template.run_id,
                                template.judge.key,
                                template.rubric_hash,
                                template.tier.value,
                                repeat,
                            ),
                        }
                    )
                ]
            )
        t, cpu = time.perf_counter(), time.process_time()
        assert c.get("/").status_code == 200
        cold[kind].append(time.perf_counter() - t)
        cold_cpu[kind].append(time.process_time() - cpu)
        gc.callbacks.append(timer)
        for _ in range(10):
            t = time.perf_counter()
            c.get("/")
            warm.append(time.perf_counter() - t)
        gc.callbacks.remove(timer)
    warm.sort()
    t = time.perf_counter()
    restarted = TestClient(create_app(store, secret="bench", front_dir=fronts))
    assert restarted.get("/").status_code == 200
    after_restart = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"first request after start {first:.1f} s, after a restart (saved front) "
        f"{1000 * after_restart:.0f} ms; "
        f"cold max after a label {1000 * max(cold['label']):.0f} ms "
        f"({1000 * max(cold_cpu['label']):.0f} ms CPU), "
        f"after a grade {1000 * max(cold['grade']):.0f} ms "
        f"({1000 * max(cold_cpu['grade']):.0f} ms CPU); "
        f"warm p50 {1000 * statistics.median(warm):.0f} ms, "
        f"p95 {1000 * warm[int(0.95 * len(warm)) - 1]:.0f} ms; "
        f"collections in warm requests {len(collections)}, longest "
        f"{1000 * max(collections, default=0):.1f} ms, all {1000 * sum(collections):.0f} ms; "
        f"peak RSS {rss:.0f} MB"
    )
    print(f"overview warm p95: {1000 * warm[int(0.95 * len(warm)) - 1]:.0f} ms (target <= 100 ms)")
    worst = max(max(v) for v in cold.values())
    print(f"overview cold after a write: {1000 * worst:.0f} ms (target <= 1000 ms)")


if __name__ == "__main__":
    main()
