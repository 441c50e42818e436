"""Grading units made in another process, as on a Ray worker, and stored by the job.

The executor here is a process pool (``spawn``: a fresh interpreter that imports lhbench
by name, as a Ray worker does); what travels to it is pickled both ways. The Ray cluster
test (``tests/harness/test_ray_cluster.py``) runs the same job on real Ray nodes.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from lhbench.api import grade_async
from lhbench.config import Settings
from lhbench.errors import ConfigError
from lhbench.jobs import GradeJob, JobSummary, run_job
from lhbench.judges import RubricJudge
from lhbench.models import ModelPool, ModelSpec, resolve_model
from lhbench.schema import Grade, Run
from lhbench.store import Store
from lhbench.testing import ModelStub, StubReply, StubRequest, rubric_judge_script
from lhbench.testing.stub import LoggedRequest
from tests.factories import make_run
from tests.judges.helpers import JUDGE_NAMES, process_tier, seed_runs, stub_specs, trajectory_for


class ProcessExecutor:
    """The Ray executor's ``call``, on a pool of spawned processes (counted)."""

    def __init__(self, pool: ProcessPoolExecutor) -> None:
        self.pool = pool
        self.calls = 0

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        self.calls += 1
        return await asyncio.wrap_future(self.pool.submit(fn, *args))


@pytest.fixture(scope="module")
def processes() -> Iterator[ProcessPoolExecutor]:
    """Two spawned worker processes, started before any test sets an endpoint variable."""
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        started = [pool.submit(time.sleep, 1.0) for _ in range(2)]
        assert [f.result(timeout=120) for f in started] == [None, None]
        yield pool


async def _grade(
    store: Store,
    runs: list[Run],
    specs: list[ModelSpec],
    remote: ProcessExecutor | None,
    **kw: Any,
) -> JobSummary[Grade]:
    rubric, tier = process_tier()
    pool = ModelPool(store)
    async with pool.session():
        judges = [RubricJudge(pool.get(s), s, retries=1) for s in specs]
        job = GradeJob(store, runs, rubric, tier, judges, tasks={}, remote=remote, batch=4)
        return await run_job(job, **kw)


def _same(g: Grade) -> tuple[object, ...]:
    return (g.key, g.judge.key, g.status, g.tier_score, [s.score for s in g.scores], g.raw_output)


def test_grades_made_in_another_process_equal_local_ones(
    processes: ProcessPoolExecutor, tmp_path: Path
) -> None:
    with ModelStub(rubric_judge_script()) as stub:
        specs = stub_specs(stub.base_url)
        stores = {}
        for name in ("local", "remote"):
            with Store.open(f"sqlite:///{tmp_path / name}.db") as store:
                runs = seed_runs(store, 5)
                remote = ProcessExecutor(processes) if name == "remote" else None
                summary = asyncio.run(_grade(store, runs, specs, remote))
                assert (summary.planned, summary.done) == (15, 15)
                stores[name] = sorted(_same(g) for g in store.list_grades())
            # the replies came back with the grades and were written here
            assert _cached(tmp_path / f"{name}.db") == 15
            if remote is not None:
                assert 4 <= remote.calls < 15  # 15 units sent in batches of at most 4
        assert stub.count == 30
        assert stores["remote"] == stores["local"]


def _cached(db: Path) -> int:
    """Rows in a SQLite store's response cache."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return int(conn.execute("SELECT count(*) FROM response_cache").fetchone()[0])


def test_a_stored_reply_travels_with_its_unit_and_costs_no_call(
    processes: ProcessPoolExecutor, tmp_path: Path
) -> None:
    """Two runs with the same evidence: the second, graded remotely, is answered from the store."""
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        seed_runs(store, 0)
        runs = [make_run(rid, pack_id="figma-mini", pack_hash="") for rid in ("twin-a", "twin-b")]
        for r in runs:
            store.save_run(r)
            store.save_trajectory(trajectory_for("twin").model_copy(update={"run_id": r.id}))
        with ModelStub(rubric_judge_script()) as stub:
            specs = stub_specs(stub.base_url)
            first = asyncio.run(_grade(store, runs[:1], specs, None))
            assert first.done == 3 and stub.count == 3
            remote = ProcessExecutor(processes)
            second = asyncio.run(_grade(store, runs[1:], specs, remote))
            assert second.done == 3 and remote.calls == 1
            assert stub.count == 3  # every reply was found in the store and sent along
        grades = store.list_grades()
        assert len(grades) == 6 and len({g.key for g in grades}) == 6
        by_run = {
            r.id: sorted((g.judge.key, g.tier_score) for g in grades if g.run_id == r.id)
            for r in runs
        }
        assert by_run["twin-a"] == by_run["twin-b"]


def test_the_worker_asks_the_endpoint_resolved_here(
    processes: ProcessPoolExecutor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OPENAI_BASE_URL is set only here (the worker started without it)."""
    with (
        ModelStub(rubric_judge_script()) as stub,
        Store.open(f"sqlite:///{tmp_path / 'e.db'}") as store,
    ):
        runs = seed_runs(store, 2)
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "stub-key")
        specs = [resolve_model(f"openai:{n}", {}) for n in JUDGE_NAMES]
        summary = asyncio.run(_grade(store, runs, specs, ProcessExecutor(processes)))
        assert (summary.done, summary.failed) == (6, 0), dict(summary.failures)
        assert stub.count == 6
        assert {g.judge.endpoint for g in store.list_grades()} == {stub.base_url}


def _unparsable_once() -> Callable[[StubRequest], StubReply]:
    """Text instead of the output tool, until ``fixed`` is set."""
    scores = rubric_judge_script()
    state = {"fixed": False}

    def script(req: StubRequest) -> StubReply:
        if not state["fixed"]:
            return StubReply(content="about a 3, I would say")
        return scores(req)

    script.state = state  # type: ignore[attr-defined]
    return script


def test_an_unparsed_answer_is_a_parse_error_and_retry_errors_asks_again(
    processes: ProcessPoolExecutor, tmp_path: Path
) -> None:
    script = _unparsable_once()
    with ModelStub(script) as stub, Store.open(f"sqlite:///{tmp_path / 'p.db'}") as store:
        runs = seed_runs(store, 1)
        specs = stub_specs(stub.base_url)[:1]
        bad = asyncio.run(_grade(store, runs, specs, ProcessExecutor(processes)))
        assert (bad.done, bad.failed) == (0, 1)
        [g] = store.list_grades()
        assert g.status == "parse_error" and g.tier_score is None and not g.scores
        assert g.raw_output == "about a 3, I would say"
        assert stub.count == 2  # asked, re-asked once (retries=1), never coerced

        again = asyncio.run(_grade(store, runs, specs, ProcessExecutor(processes)))
        assert again.skipped == 1 and again.kept_failed == 1 and stub.count == 2

        script.state["fixed"] = True  # type: ignore[attr-defined]
        retried = asyncio.run(
            _grade(store, runs, specs, ProcessExecutor(processes), retry_errors=True)
        )
        assert retried.done == 1 and stub.count == 3  # the cached bad answer was bypassed
        [g] = store.list_grades()
        assert g.status == "ok" and g.tier_score is not None


@pytest.mark.parametrize(
    ("executor", "extra", "message"),
    [
        ("ray", {"pairwise": True}, "pairwise comparisons"),
        ("local", {"ray_address": "127.0.0.1:6379"}, "--ray-address needs --executor ray"),
        ("dask", {}, "expected one of local, ray"),
    ],
)
def test_grading_executor_choices_are_checked_before_any_work(
    tmp_path: Path, executor: str, extra: dict[str, Any], message: str
) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'c.db'}") as store:
        seed_runs(store, 1)
        with pytest.raises(ConfigError, match=re.escape(message)):
            asyncio.run(
                grade_async(
                    "figma-mini",
                    store=store,
                    settings=Settings(home=tmp_path / "home"),
                    rubric="figma-to-code",
                    panel=["openai:j@http://127.0.0.1:9/v1"],
                    executor=executor,
                    **extra,
                )
            )
        assert store.list_grades() == [] and store.list_votes() == []


def _peak(requests: list[LoggedRequest]) -> int:
    """Most requests the stub answered at once."""
    events = sorted([(r.started, 1) for r in requests] + [(r.finished, -1) for r in requests])
    peak = now = 0
    for _t, step in events:
        now += step
        peak = max(peak, now)
    return peak


def test_an_endpoint_limit_holds_across_workers(
    processes: ProcessPoolExecutor, tmp_path: Path
) -> None:
    """Two workers, three judges on one endpoint limited to 2 calls: never more in flight."""
    with (
        ModelStub(rubric_judge_script(), latency=0.3) as stub,
        Store.open(f"sqlite:///{tmp_path / 'l.db'}") as store,
    ):
        runs = seed_runs(store, 4)
        specs = stub_specs(stub.base_url, max_concurrency=2)
        remote = ProcessExecutor(processes)
        summary = asyncio.run(_grade(store, runs, specs, remote))
        assert (summary.done, stub.count) == (12, 12)
        assert remote.calls >= 6  # batches of the (at most 2) units in flight
        assert _peak(stub.requests) == 2
