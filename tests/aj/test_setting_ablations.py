"""Any judge setting that varies becomes an ablation table; stored names stay inert."""

from __future__ import annotations

from pathlib import Path

import pytest

from lhbench.reporting import ReportData, write_report
from lhbench.reporting.aj_breakdown import aj_breakdown_section
from lhbench.schema import (
    ComplexityTags,
    EnvironmentKind,
    EnvironmentSpec,
    JudgeIdentity,
    JudgeKind,
    Label,
    Run,
    Task,
    Verdict,
)

EVIL = "../../evil axis/<b>"
LABELS = {"r1": True, "r2": False, "r3": True, "r4": False}


def data(settings_of: dict[str, dict[str, object]]) -> ReportData:
    """One task; verdict per (run, setting group): the group's settings and a fixed answer."""
    task = Task(
        id="t",
        title="t",
        instruction="x",
        environment=EnvironmentSpec(kind=EnvironmentKind.WEB),
        tags=ComplexityTags(category="d", subdomain="s"),
    )
    runs = [Run(id=r, pack_id="p", task_id="t", harness="h", model="m") for r in LABELS]
    labels = [Label(run_id=r, passed=p, source="verify:x") for r, p in LABELS.items()]
    verdicts = []
    for name, settings in settings_of.items():
        judge = JudgeIdentity(kind=JudgeKind.AGENT, model="m", settings=settings)
        for r in LABELS:
            # group "a" answers right; every other group says PASS to everything
            said = LABELS[r] if name == "a" else True
            verdicts.append(
                Verdict(
                    id=f"{name}-{r}",
                    run_id=r,
                    judge=judge,
                    verdict="PASS" if said else "FAIL",
                    tools_used=["open_url"],
                    key=f"{name}-{r}-key",
                )
            )
    return ReportData.build(runs, verdicts=verdicts, labels=labels, tasks=[("p", task)])


def test_a_varying_setting_gets_a_table_with_hand_values(tmp_path: Path) -> None:
    d = data({"a": {"modality": "a11y", EVIL: 1}, "b": {"modality": "screenshot", EVIL: 1}})
    sec = aj_breakdown_section(d)
    slugs = [t.slug for t in sec.tables]
    assert "aj_ablation_modality" in slugs
    assert not any("evil" in s for s in slugs)  # the same value everywhere: no ablation
    t = next(t for t in sec.tables if t.slug == "aj_ablation_modality")
    col = {c: i for i, c in enumerate(t.columns)}
    rows = {r[col["modality"]]: r for r in t.rows}
    assert rows["a11y"][col["overall"]] == pytest.approx(100)
    # PASS to all: tp 2, fp 2 -> P 1/2, R 1, F1 2/3
    assert rows["screenshot"][col["overall"]] == pytest.approx(100 * 2 / 3)
    assert rows["a11y"][col["n"]] == 4


def test_a_hostile_setting_name_stays_inside_the_report_folder(tmp_path: Path) -> None:
    d = data({"a": {EVIL: 1}, "b": {EVIL: 2}, "c": {}})
    t = next(t for t in aj_breakdown_section(d).tables if t.slug.startswith("aj_ablation_"))
    assert t.slug == "aj_ablation_evil_axis_b"
    assert {r[2] for r in t.rows} == {"1", "2", "(not set)"}
    out = tmp_path / "report"
    write_report(d, out)
    assert (out / "aj_ablation_evil_axis_b.csv").is_file()
    assert not any(p.name.startswith("aj_ablation") for p in tmp_path.iterdir())
    assert "<b>" not in (out / "report.html").read_text().replace("&lt;b&gt;", "")
