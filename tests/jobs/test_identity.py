"""A grade is one (run, judge config incl. endpoint, rubric content, tier, repeat)."""

from lhbench.api import grade
from lhbench.config import Settings
from lhbench.reporting import ReportData
from lhbench.schema import GradeStatus, Trajectory
from lhbench.store import Store
from lhbench.testing import ModelStub, hashed_scale_scores, rubric_judge_script
from tests.judges.helpers import JUDGE_NAMES, seed_runs, stub_specs, trajectory_for


def _identical(store: Store, n: int) -> list[str]:
    """n runs whose evidence is identical (same trajectory text, no run mark)."""
    runs = seed_runs(store, n)
    same = trajectory_for("same")
    for r in runs:
        store.save_trajectory(Trajectory(run_id=r.id, steps=same.steps))
    return [r.id for r in runs]


def _settings(tmp_path, base_url: str) -> Settings:
    models = {
        s.ref: {"model": f"openai:{s.name}", "base_url": base_url, "family": s.family}
        for s in stub_specs(base_url)
    }
    return Settings(home=tmp_path / "home", models=models, judge_panel=list(JUDGE_NAMES))


def test_48_runs_with_identical_evidence_get_144_grades_from_3_calls(
    store: Store, tmp_path
) -> None:
    ids = _identical(store, 48)
    with ModelStub(rubric_judge_script(hashed_scale_scores), latency=0.05) as stub:
        res = grade(
            "figma-mini",
            rubric="figma-to-code",
            concurrency=32,
            store=store,
            settings=_settings(tmp_path, stub.base_url),
        )
        calls = stub.count
    assert (res.summary.planned, res.summary.done, res.summary.failed) == (144, 144, 0)
    grades = store.list_grades()
    assert len(grades) == 144
    assert {(g.run_id, g.judge.model) for g in grades} == {
        (r, f"openai:{j}") for r in ids for j in JUDGE_NAMES
    }
    assert all(g.status == GradeStatus.OK for g in grades)
    # identical requests in flight at once make one call per judge; the rest share it
    assert calls == 3
    assert sum(g.usage.requests for g in grades) == 3
    # every run has its panel score: none is lost to a shared key
    data = ReportData.from_store(store)
    from lhbench.judges import panel_scores, tier_keys

    [key] = tier_keys(data.grades)
    assert set(panel_scores(data.grades, key)) == set(ids)


def test_a_second_endpoint_with_the_same_model_name_gets_its_own_grades(
    store: Store, tmp_path
) -> None:
    seed_runs(store, 2)
    with (
        ModelStub(rubric_judge_script(hashed_scale_scores)) as one,
        ModelStub(rubric_judge_script(hashed_scale_scores)) as two,
    ):
        for stub in (one, two):
            settings = Settings(home=tmp_path / "home")
            grade(
                "figma-mini",
                rubric="figma-to-code",
                panel=[f"openai:same-name@{stub.base_url}"],
                store=store,
                settings=settings,
            )
        assert one.count == 2 and two.count == 2  # the second server was asked, not the cache
    grades = store.list_grades()
    assert len(grades) == 4
    assert {g.judge.endpoint for g in grades} == {one.base_url, two.base_url}
    assert len({g.judge.key for g in grades}) == 2
