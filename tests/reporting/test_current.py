"""Analysis uses grades for the rubric's current content and current judges, and says what
it left out; paired ablations; pass rates."""

import math
from datetime import timedelta
from pathlib import Path

import pytest

from lhbench.api import grade as grade_pack
from lhbench.config import Settings
from lhbench.judges import panel_scores, tier_keys
from lhbench.reporting import ReportData, write_report
from lhbench.reporting.ablation import ablation_section
from lhbench.schema import Label
from lhbench.store import Store
from lhbench.testing import ModelStub, hashed_scale_scores, rubric_judge_script
from tests.factories import make_grade, make_run
from tests.judges.helpers import trajectory_for
from tests.packs.test_loader import write_pack


def _runs(store: Store, n: int = 3) -> list[str]:
    ids = []
    for i in range(n):
        run = make_run(f"r{i}", pack_id="demo-pack", task_id="t1", pack_hash="")
        store.save_run(run)
        store.save_trajectory(trajectory_for(run.id))
        ids.append(run.id)
    return ids


def test_editing_a_rubric_regrades_and_the_report_names_what_it_excluded(
    store: Store, tmp_path: Path
) -> None:
    pack = write_pack(tmp_path / "pack")
    ids = _runs(store)
    settings = Settings(home=tmp_path / "home", pack_paths=[tmp_path])
    with ModelStub(rubric_judge_script(hashed_scale_scores)) as stub:
        panel = [f"openai:judge@{stub.base_url}"]

        def grade() -> int:
            res = grade_pack("demo-pack", panel=panel, store=store, settings=settings)
            return res.summary.done

        assert grade() == 3
        assert grade() == 0  # stored: nothing asked
        rubric = pack / "rubrics" / "demo.yaml"
        rubric.write_text(rubric.read_text().replace("always", "always, and says so"))
        assert grade() == 3  # the rubric changed: every run is graded again
        assert stub.count == 6
    data = ReportData.from_store(store)
    assert len(data.all_grades) == 6 and len(data.grades) == 3
    hashes = {g.rubric_hash for g in data.grades}
    assert len(hashes) == 1 and hashes != {g.rubric_hash for g in data.all_grades} - hashes
    assert data.excluded.stale_rubric == {("demo", "2"): 3}
    [note] = data.excluded.notes()
    assert note.startswith("3 grade(s) for rubric demo v2 excluded")
    [key] = tier_keys(data.grades)
    assert set(panel_scores(data.grades, key)) == set(ids)
    files = write_report(data, tmp_path / "report")
    assert "3 grade(s) for rubric demo v2 excluded" in files.markdown.read_text()
    everything = ReportData.from_store(store, include_stale=True)
    assert len(everything.grades) == 6 and everything.excluded.total == 0


def test_a_changed_judge_setting_makes_its_earlier_grades_stale(store: Store, tmp_path) -> None:
    store.save_run(make_run("r1"))
    old = make_grade("r1", "openai:j", key="k" * 16)
    new_judge = old.judge.model_copy(update={"settings": {"temperature": 0.7}})
    later = old.created_at + timedelta(seconds=1)
    new = make_grade("r1", "openai:j", key="n" * 16).model_copy(
        update={"judge": new_judge, "created_at": later}
    )
    store.save_grades([old, new])
    data = ReportData.from_store(store)
    assert [g.key for g in data.grades] == ["n" * 16]
    assert data.excluded.stale_judge == {"openai:j": 1}
    # a configured panel decides instead: grades by other configs are left out, and counted
    panel = ReportData.from_store(store, panel={old.judge.key})
    assert [g.key for g in panel.grades] == ["k" * 16]
    assert panel.excluded.not_in_panel == {"openai:j": 1}


def _ablation_data(cells: dict[tuple[str, str], list[float]]) -> ReportData:
    """Runs of one group, scored by one judge; cells: (task, skill) -> panel scores."""
    runs, grades = [], []
    for (task, skill), values in cells.items():
        for k, v in enumerate(values):
            rid = f"{task}-{skill}-{k}"
            runs.append(make_run(rid, task_id=task, versions={"skill": skill}))
            s = int(v)
            grades.append(make_grade(rid, "openai:j", scores=(s, s, s, s), key=f"{rid}-key"))
    return ReportData.build(runs, grades=grades)


def _deltas(data: ReportData, baseline: str) -> dict[str, list[object]]:
    sec = ablation_section(data, "skill", baseline, ["harness", "model"])
    table = next(t for t in sec.tables if t.slug.startswith("ablation_delta"))
    return {str(r[1]): r for r in table.rows}


def test_a_condition_that_changes_nothing_on_the_shared_tasks_reports_zero(tmp_path) -> None:
    # t1 under both (same scores); t2 only under v1, with a much lower score: unpaired,
    # it must not drag the delta (an unpaired mean would report Δ = -1.5 here)
    data = _ablation_data({("t1", "none"): [4, 4], ("t1", "v1"): [4], ("t2", "v1"): [1]})
    row = _deltas(data, "none")["Δ v1 − none"]
    cols = ["group", "contrast", "paired tasks", "paired runs"]
    overall = row[len(cols) + 4]
    lo, hi = row[len(cols) + 5], row[len(cols) + 6]
    assert overall == pytest.approx(0.0)
    assert lo <= 0.0 <= hi  # type: ignore[operator]
    assert row[2] == 1 and row[-1] == "pack/t2"  # the unpaired task is listed


def test_three_conditions_are_each_compared_with_the_one_baseline() -> None:
    data = _ablation_data(
        {
            ("t1", "none"): [2],
            ("t2", "none"): [2],
            ("t1", "v1"): [3],
            ("t2", "v1"): [4],
            ("t1", "v2"): [5],
            ("t2", "v2"): [5],
        }
    )
    rows = _deltas(data, "none")
    assert set(rows) == {"Δ v1 − none", "Δ v2 − none"}
    overall_col = 4 + 4
    assert rows["Δ v1 − none"][overall_col] == pytest.approx(1.5)  # (1 + 2) / 2
    assert rows["Δ v2 − none"][overall_col] == pytest.approx(3.0)
    # another baseline swaps the contrasts, never mixes them
    assert set(_deltas(data, "v1")) == {"Δ none − v1", "Δ v2 − v1"}


def test_leaderboard_shows_pass_rate_with_a_wilson_interval(tmp_path: Path) -> None:
    runs = [make_run(f"r{i}", task_id=f"t{i}") for i in range(4)]
    labels = [
        Label(run_id="r0", passed=True, source="verify:t0/verify.py"),
        Label(run_id="r1", passed=True, source="verify:t1/verify.py"),
        Label(run_id="r2", passed=False, source="verify:t2/verify.py"),
        Label(run_id="r3", passed=None, source="verify:t3/verify.py", error="timed out"),
    ]
    data = ReportData.build(runs, labels=labels)
    files = write_report(data, tmp_path / "r")
    import csv

    with (tmp_path / "r" / "pass_rate.csv").open() as f:
        [row] = list(csv.DictReader(f))
    assert (row["passed"], row["checked"], row["undecided"]) == ("2", "3", "1")
    from scipy.stats import binomtest

    ci = binomtest(2, 3).proportion_ci(method="wilson")
    assert float(row["ci_low %"]) == pytest.approx(100 * ci.low)
    assert float(row["ci_high %"]) == pytest.approx(100 * ci.high)
    assert not math.isnan(float(row["pass %"])) and "Pass rate" in files.markdown.read_text()


def test_runs_made_without_a_sandbox_are_named_at_the_top(tmp_path: Path) -> None:
    runs = [make_run(f"r{i}", task_id=f"t{i}") for i in range(3)]
    runs[1] = runs[1].model_copy(update={"metadata": {"sandbox": "none", "unsandboxed": True}})
    files = write_report(ReportData.build(runs), tmp_path / "r")
    md = files.markdown.read_text()
    assert "1 of 3 runs ran without a sandbox" in md
    clean = write_report(ReportData.build(runs[:1]), tmp_path / "c")
    assert "without a sandbox" not in clean.markdown.read_text()


def test_figma_pass_is_the_fidelity_threshold_stated_beside_the_table_not_deploy(
    tmp_path: Path,
) -> None:
    """A figma-to-code run that built and deployed but failed the fidelity threshold is a
    fail: the figma-deploy label never becomes the outcome, and the table says what pass is."""
    from lhbench.envs.figma.fidelity import PASS_THRESHOLD

    runs = [make_run(f"r{i}", task_id="t0") for i in range(2)]
    labels = [
        Label(run_id="r0", passed=False, source="figma:t0/gt"),
        Label(run_id="r0", passed=True, source="figma-deploy:t0/gt"),
        Label(run_id="r1", passed=True, source="figma:t0/gt"),
        Label(run_id="r1", passed=True, source="figma-deploy:t0/gt"),
    ]
    data = ReportData.build(runs, labels=labels)
    assert data.label_of("r0") is False and data.label_of("r1") is True
    files = write_report(data, tmp_path / "r")
    import csv

    with (tmp_path / "r" / "pass_rate.csv").open() as f:
        [row] = list(csv.DictReader(f))
    assert (row["passed"], row["checked"]) == ("1", "2")
    md = files.markdown.read_text()
    assert "quality ≥ 4 of 5" in md and f"{PASS_THRESHOLD:.3f} in image-only mode" in md
    assert "figma-deploy" in md  # named as the separate label it is
