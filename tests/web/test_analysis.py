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
import weakref
from collections import defaultdict
from pathlib import Path

import httpx
import pytest

from lhbench.judges import tier_keys
from lhbench.reporting import (
    LeaderboardRow,
    PassRateRow,
    ReportData,
    arena_section,
    leaderboard_notes,
    leaderboard_rows,
    pass_rate_rows,
)
from lhbench.schema import (
    FailureKind,
    GradeStatus,
    JudgeIdentity,
    JudgeKind,
    Label,
    RunStatus,
    TierKind,
    grade_key,
)
from lhbench.store import Store
from lhbench.web import analysis as analysis_module
from lhbench.web.analysis import (
    analyse,
    gc_paused,
    parse_group_by,
    rank_by_ci,
    settle_heap,
    sort_agents,
)
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
            assert math.isclose(row.leaderboard[key].variance, ref.variance, abs_tol=1e-12)
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


def _same_row(web: LeaderboardRow | PassRateRow, report: LeaderboardRow | PassRateRow) -> None:
    """Field by field: counts and labels equal, floats to rounding (sums vs documents)."""
    assert type(web) is type(report)
    for name, ref in vars(report).items():
        got = getattr(web, name)
        if name == "dimension_means":  # the overview shows none (the store sums no dimensions)
            assert got == {}
        elif isinstance(ref, float) and math.isnan(ref):
            assert math.isnan(got), name
        elif isinstance(ref, float | tuple | dict) and not isinstance(ref, bool):
            assert got == pytest.approx(ref, abs=1e-12, nan_ok=True), name
        else:
            assert got == ref, name


def _disturb(store: Store) -> None:
    """A fourth judge whose grade of one run failed, a stale check label, a deploy label."""
    ident = JudgeIdentity(kind=JudgeKind.LLM, model="openai:judge-d", family="openai")
    template = [
        g
        for g in store.list_grades(tier=TierKind.PROCESS.value)
        if g.repeat == 0 and g.judge.model == "openai:judge-a"
    ]
    failed_run = template[0].run_id
    added = []
    for g in template:
        key = grade_key(g.run_id, ident.key, g.rubric_hash, "process", 0)
        update: dict[str, object] = {"id": f"{g.id}-d", "judge": ident, "key": key}
        if g.run_id == failed_run:
            update |= {
                "status": GradeStatus.ERROR,
                "scores": [],
                "tier_score": None,
                "error": "timed out",
            }
        added.append(g.model_copy(update=update))
    store.save_grades(added)
    labels = store.list_labels()
    verified = next(lab for lab in labels if lab.source.startswith("verify:"))
    # made with a task content that is no longer the pack's: stale, in no pass rate
    store.save_label(verified.model_copy(update={"check_hash": "0" * 64, "passed": False}))
    unlabelled = next(lab.run_id for lab in labels if lab.run_id != verified.run_id)
    # the app runs: never the run's outcome (a verify label decides it)
    store.save_label(Label(run_id=unlabelled, passed=False, source="figma-deploy:app"))
    # a run whose model endpoint was unreachable: no score, named with what it leaves out
    voted = {v.run_a for v in store.list_votes()}
    infra = next(
        r
        for r in store.list_runs()
        if r.id in voted and r.id not in (failed_run, verified.run_id, unlabelled)
    )
    store.save_run(
        infra.model_copy(
            update={
                "status": RunStatus.FAILED,
                "error": "model endpoint refused the connection",
                "failure_kind": FailureKind.INFRASTRUCTURE,
            }
        )
    )


@pytest.mark.parametrize("by", [None, ("harness",)])
def test_overview_rows_are_the_reports_rows(store: Store, by: tuple[str, ...] | None) -> None:
    _disturb(store)
    a = analyse(store, by=by)
    data = ReportData.from_store(store)
    assert a.tier_keys
    for key in a.tier_keys:
        report = leaderboard_rows(data, key, a.by)
        assert any(r.incomplete == 1 and r.panel == 4 for r in report)
        web = {r.label: r.leaderboard[key] for r in a.agents if key in r.leaderboard}
        assert sorted(web) == sorted(r.group for r in report)
        for ref in report:
            _same_row(web[ref.group], ref)
        assert a.tier_notes[key] == leaderboard_notes(report)
        assert any("incomplete panel on 1 of" in n for n in a.tier_notes[key])
    passes = pass_rate_rows(data, a.by)
    web_passes = {r.label: r.passes for r in a.agents if r.passes is not None}
    assert sorted(web_passes) == sorted(p.group for p in passes)
    for ref in passes:
        _same_row(web_passes[ref.group], ref)
    assert data.excluded.stale_labels == 1
    assert len(data.excluded.infra_runs) == 1 and data.excluded.infra_judgements > 0
    assert a.excluded.notes() == data.excluded.notes()


def test_overview_page_shows_the_incomplete_panel(served: Served) -> None:
    _disturb(served.store)
    with httpx.Client(base_url=served.url, follow_redirects=False) as c:
        page = c.get("/login").text
        token = page.split('name="csrf_token" value="')[1].split('"')[0]
        c.post("/login", data={"name": "boss", "password": PASSWORD, "csrf_token": token})
        html = c.get("/").text
    data = ReportData.from_store(served.store)
    key = next(k for k in tier_keys(data.grades) if k.tier == "process")
    (row,) = [r for r in leaderboard_rows(data, key, ("harness",)) if r.incomplete]
    assert f"incomplete panel: 1 of {row.n} runs" in html
    assert "incomplete panel on 1 of" in html
    assert "1 check label(s) excluded" in html
    infra = data.excluded.infra_note()
    assert infra is not None and f"(and their {data.excluded.infra_judgements} grade(s)" in infra
    assert f"(and their {data.excluded.infra_judgements} grade(s)" in html


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


class _Node:
    """An object in a reference cycle (only the cyclic collector frees it)."""

    def __init__(self) -> None:
        self.me = self


def test_the_cached_analysis_is_out_of_the_collectors_way(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Warm requests never walk the cached figures; cycles frozen with them are still freed.

    Left in the collector's generations, the objects of one analysis (millions at 100,000
    runs) were walked by the first collections after it, inside warm requests.
    """
    # the real one (tests/conftest.py leaves it out of every other test)
    monkeypatch.setattr(analysis_module, "settle_heap", settle_heap)
    cycle = _Node()
    ref = weakref.ref(cycle)
    a = analyse(store)
    walked = {id(o) for generation in range(3) for o in gc.get_objects(generation)}
    held = [a, a.runs, a.scores, a.agent_of, *a.agents, *a.runs.values()]
    assert len(held) > 10 and not any(id(o) in walked for o in held)
    assert id(cycle) not in walked  # frozen alive with the rest
    del cycle
    analyse(store)  # the next analysis gives the frozen objects back and collects
    assert ref() is None
