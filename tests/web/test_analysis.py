"""The overview's figures equal the report's on one store, and the page cache follows writes.

The overview computes from SQL aggregates (fast at 10,000 runs); the report from every
grade document through ``lhbench.judges.panel`` and ``lhbench.reporting``. Same store, same
numbers: panel scores and CIs, pass rates, Elo, exclusions, noise floor.
"""

from __future__ import annotations

import gc
import math
import shutil
import statistics
import threading
from collections import defaultdict
from pathlib import Path

import httpx
import pytest

from lhbench.judges import tier_keys
from lhbench.reporting import ReportData, arena_section, leaderboard_rows, pass_rate_rows
from lhbench.schema import GradeStatus, Label
from lhbench.store import Store
from lhbench.web.analysis import analyse, gc_paused, parse_group_by, rank_by_ci, sort_agents
from tests.web.conftest import ARENA_TASK, PASSWORD, Served, run_id


@pytest.fixture
def store(tmp_path: Path, seeded_template: tuple[Path, dict[str, list[str]]]) -> Store:
    db = tmp_path / "copy.db"
    shutil.copy(seeded_template[0], db)
    return Store.open(f"sqlite:///{db}")


@pytest.mark.parametrize("by", [None, ("harness",), ("model", "versions.skill")])
def test_overview_figures_equal_the_report(store: Store, by: tuple[str, ...] | None) -> None:
    a = analyse(store, by=by)
    data = ReportData.from_store(store)
    keys = tier_keys(data.grades)
    # the output tier holds only parse errors: it has no scores on either side
    assert [k for k in keys if k.tier == "process"] == a.tier_keys
    for key in a.tier_keys:
        expected = {r.group: r for r in leaderboard_rows(data, key, a.by)}
        got = {r.label: r.scores[key] for r in a.agents if key in r.scores}
        assert set(got) == set(expected)
        for label, e in got.items():
            ref = expected[label]
            assert e.n == ref.n
            assert math.isclose(e.value, ref.mean, abs_tol=1e-12)
            assert math.isclose(e.lo, ref.ci[0], abs_tol=1e-12)
            assert math.isclose(e.hi, ref.ci[1], abs_tol=1e-12)
            row = a.agent(label)
            assert row is not None
            assert math.isclose(row.variance[key], ref.variance, abs_tol=1e-12)
    passes = {p.group: p for p in pass_rate_rows(data, a.by)}
    for row in a.agents:
        ref = passes.get(row.label)
        if ref is None or ref.n == 0:
            assert row.pass_rate is None
            continue
        assert row.pass_rate is not None
        assert (row.pass_rate.k, row.pass_rate.n, row.undecided) == (
            ref.passed,
            ref.n,
            ref.undecided,
        )
        assert (row.pass_rate.lo, row.pass_rate.hi) == pytest.approx(ref.ci, abs=1e-12)
    _, elo = arena_section(data, a.by)
    assert elo is not None and a.elo is not None
    assert a.elo.ratings == pytest.approx(elo.ratings, abs=1e-9)
    assert set(a.elo.ci) == set(elo.ci)
    for m, ci in elo.ci.items():
        assert a.elo.ci[m] == pytest.approx(ci, abs=1e-9)
    assert a.excluded.notes() == data.excluded.notes()
    assert a.grades_used == len(data.grades)


def test_noise_floor_is_the_sd_of_a_judges_repeats(store: Store) -> None:
    a = analyse(store)
    data = ReportData.from_store(store)
    repeats: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for g in data.grades:
        if g.status == GradeStatus.OK and g.tier_score is not None:
            repeats[(g.run_id, g.judge.key, g.rubric_hash)].append(g.tier_score)
    per_agent: dict[str, list[float]] = defaultdict(list)
    for (rid, _, _), scores in repeats.items():
        if len(scores) >= 2:
            per_agent[a.agent_of[rid]].append(statistics.pstdev(scores))
    assert per_agent
    for row in a.agents:
        if per_agent.get(row.label):
            assert row.noise == pytest.approx(statistics.fmean(per_agent[row.label]), abs=1e-12)
            assert row.noise_cells == len(per_agent[row.label])


def test_rank_by_ci_is_arenas_rule() -> None:
    assert rank_by_ci([(4.0, 5.0), (3.5, 4.5), (1.0, 2.0), None]) == [1, 1, 3, None]
    assert rank_by_ci([(0.9, 1.0), (0.1, 0.2), (0.15, 0.3)]) == [1, 2, 2]


def test_sort_never_defaults_to_a_tier_without_scores(store: Store) -> None:
    a = analyse(store)
    rows, metric = sort_agents(a, "tier:7")  # no such column: the default
    assert metric == "tier:0" and a.tier_keys[0].tier == "process"
    assert [r.rank for r in rows] == [1, 2, 3]
    rows, metric = sort_agents(a, "elo")
    assert metric == "elo" and [r.tied for r in rows[:2]] == [True, True]
    # ranks are per request: the cached rows are not changed
    assert all(r.rank is None for r in a.agents)


def test_group_by_is_parsed_strictly() -> None:
    assert parse_group_by("harness, versions.skill") == ("harness", "versions.skill")
    assert parse_group_by("") is None
    assert parse_group_by("harness,<script>") is None


def test_page_cache_follows_in_place_updates(served: Served) -> None:
    target = run_id("claude-code", ARENA_TASK)
    with httpx.Client(base_url=served.url, follow_redirects=False) as c:
        page = c.get("/login").text
        token = page.split('name="csrf_token" value="')[1].split('"')[0]
        c.post("/login", data={"name": "boss", "password": PASSWORD, "csrf_token": token})
        assert "3/4" in c.get("/").text.split("claude-code", 1)[1].split("</tr>")[0]
        version = served.store.data_version()
        # the same row replaced (a re-run check): no row count changes, the version does
        served.store.save_label(
            Label(run_id=target, passed=False, source=f"verify:{ARENA_TASK}/verify.py")
        )
        assert served.store.data_version() > version
        assert "2/4" in c.get("/").text.split("claude-code", 1)[1].split("</tr>")[0]


def test_gc_paused_nests_across_threads_and_restores_the_collector() -> None:
    assert gc.isenabled()
    inside = threading.Event()
    release = threading.Event()
    seen: list[bool] = []

    def other() -> None:
        with gc_paused():
            inside.set()
            release.wait(10)
        seen.append(gc.isenabled())  # the main thread still holds its pause

    with gc_paused():
        assert not gc.isenabled()
        t = threading.Thread(target=other)
        t.start()
        assert inside.wait(10)
        release.set()
        t.join(10)
        assert seen == [False] and not gc.isenabled()
    assert gc.isenabled()
    # an error inside still turns it back on; a collector that was off stays off
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_analyse_leaves_the_collector_on(store: Store) -> None:
    analyse(store)
    assert gc.isenabled()
