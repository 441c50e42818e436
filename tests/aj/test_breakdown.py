"""Per-domain / per-subdomain metrics with CIs, failure modes and turn budget, by hand."""

from __future__ import annotations

import math

import pytest
from scipy import stats as sps

from lhbench.reporting.aj_breakdown import aj_breakdown_section
from lhbench.reporting.data import ReportData
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

TASKS = {
    "t1": ("search", "wide", EnvironmentKind.WEB),
    "t2": ("search", "deep", EnvironmentKind.WEB),
    "t3": ("data-systems", "filesystem", EnvironmentKind.FILESYSTEM),
}
LABELS = {
    "r1": 1,
    "r2": 1,
    "r3": 0,
    "r4": 0,
    "r5": 1,
    "r6": 0,
    "r9": 1,
    "r10": 0,
    "r11": 1,
    "r12": 0,
}
TASK_OF = {**dict.fromkeys(["r1", "r2", "r3", "r4"], "t1"), "r5": "t2", "r6": "t2"}
TASK_OF.update(dict.fromkeys(["r9", "r10", "r11", "r12"], "t3"))
# (budget, repeat) -> run -> (verdict, tools used, stored tag)
SAID = {
    (20, 0): {
        "r1": "P", "r2": "P", "r3": ("P", ["open_url"]), "r4": "F",
        "r5": "P", "r6": ("P", ["view_trajectory_step"]),
        "r9": "P", "r10": ("P", []), "r11": "P", "r12": "F",
    },
    (20, 1): {
        "r1": "P", "r2": ("F", ["search"], "c"), "r3": "F", "r4": "F",
        "r5": "P", "r6": "F", "r9": "P", "r10": "F", "r11": "P", "r12": "F",
    },
    (5, 0): {"r1": ("F", []), "r2": ("F", []), "r3": "F", "r4": "F"},
}  # fmt: skip


def data() -> ReportData:
    tasks = [
        ("p", Task(id=t, title=t, instruction="x", environment=EnvironmentSpec(kind=k),
                   tags=ComplexityTags(category=c, subdomain=s)))
        for t, (c, s, k) in TASKS.items()
    ]  # fmt: skip
    runs = [Run(id=r, pack_id="p", task_id=TASK_OF[r], harness="f", model="m") for r in LABELS]
    labels = [Label(run_id=r, passed=bool(v), source="verify:x") for r, v in LABELS.items()]
    verdicts = [
        Verdict(id=f"llm-{r}", run_id=r, judge=JudgeIdentity(kind=JudgeKind.LLM, model="m"),
                verdict="PASS", key=f"llm-{r}-key")
        for r in ("r1", "r2", "r3", "r4")
    ]  # fmt: skip
    for (budget, k), said in SAID.items():
        tool_set = "state" if budget == 5 else "state+trajectory"
        settings = {"tool_budget": budget, "tool_set": tool_set}
        judge = JudgeIdentity(kind=JudgeKind.AGENT, model="m", settings=settings)
        for r, what in said.items():
            what = (what, ["open_url"]) if isinstance(what, str) else what
            v, tools, tag = (*what, None) if len(what) == 2 else what
            verdicts.append(
                Verdict(
                    id=f"{r}-{budget}-{k}", run_id=r, judge=judge,
                    verdict="PASS" if v == "P" else "FAIL", tools_used=tools,
                    tool_calls=len(tools), repeat=k, failure_mode=tag, key=f"{r}-{budget}-{k}-key",
                )
            )  # fmt: skip
    return ReportData.build(runs, verdicts=verdicts, labels=labels, tasks=tasks)


def table(sec, slug):
    t = next(t for t in sec.tables if t.slug == slug)
    return t, {c: i for i, c in enumerate(t.columns)}


def test_domain_and_subdomain_rows_match_hand_computed_values() -> None:
    t, col = table(aj_breakdown_section(data()), "aj_domains")
    rows = {(r[col["tool budget"]], r[col["domain"]], r[col["subdomain"]]): r for r in t.rows}
    wide = rows[(20, "search", "wide")]
    # repeat 0: tp2 fp1 tn1 fn0 -> F1 .8, P 2/3, R 1, FPR .5, FNR 0
    # repeat 1: tp1 fp0 tn2 fn1 -> F1 2/3, P 1, R .5, FPR 0, FNR .5
    f1s = [0.8, 2 / 3]
    assert wide[col["f1"]] == pytest.approx(100 * sum(f1s) / 2)
    assert wide[col["precision"]] == pytest.approx(100 * (2 / 3 + 1) / 2)
    assert wide[col["recall"]] == pytest.approx(75)
    assert wide[col["fpr"]] == pytest.approx(25)
    assert wide[col["fnr"]] == pytest.approx(25)
    sem = abs(f1s[0] - f1s[1]) / math.sqrt(2) / math.sqrt(2)
    half = sps.t.ppf(0.975, df=1) * sem
    # 73.3 ± 84.7 reaches past both ends: an F1 interval is clipped to 0-100
    assert sum(f1s) / 2 - half < 0 and sum(f1s) / 2 + half > 1
    assert (wide[col["f1_ci_low"]], wide[col["f1_ci_high"]]) == (0.0, 100.0)
    assert wide[col["repeats"]] == 2 and wide[col["n"]] == 8
    # the search domain pooled per repeat: rep0 tp3 fp2 -> 6/8; rep1 tp2 fn1 -> 4/5
    dom = rows[(20, "search", "(domain)")]
    assert dom[col["f1"]] == pytest.approx(100 * (0.75 + 0.8) / 2)
    assert rows[(5, "search", "wide")][col["f1"]] == 0
    assert math.isnan(rows[(5, "search", "wide")][col["f1_ci_low"]])  # one repeat: no CI


def test_failure_modes_per_subdomain_and_judge_configuration() -> None:
    sec = aj_breakdown_section(data())
    t, col = table(sec, "aj_failure_modes_by_subdomain")
    rows = {(r[col["judge settings"]], r[col["subdomain"]]): r for r in t.rows}
    b20 = "tool_budget=20, tool_set=state+trajectory"
    b5 = "tool_budget=5, tool_set=state"
    assert {k[0] for k in rows} == {b20, b5}  # two configurations of m, never pooled
    modes = ("(a)", "(b)", "(c)", "(d)", "untagged")
    # wide at budget 20: r3 (rule cannot tell: untagged), r2 rep1 (reviewer: c)
    assert [rows[(b20, "wide")][col[m]] for m in modes] == [0, 0, 50, 0, 50]
    # wide at budget 5: r1 and r2 called no tool (a)
    assert [rows[(b5, "wide")][col[m]] for m in modes] == [100, 0, 0, 0, 0]
    assert rows[(b20, "deep")][col["(b)"]] == 100  # tools, but none that read the web
    assert rows[(b20, "filesystem")][col["(a)"]] == 100  # no tool at all
    counts, ccol = table(sec, "aj_failure_mode_counts")
    by = {r[ccol["judge settings"]]: [r[ccol[m]] for m in modes] for r in counts.rows}
    assert by == {b20: [1, 1, 1, 0, 1], b5: [2, 0, 0, 0, 0]}


def test_turn_budget_ablation() -> None:
    t, col = table(aj_breakdown_section(data()), "aj_turn_budget")
    rows = {r[col["tool budget"]]: r for r in t.rows}
    # budget 20: wide (.8+2/3)/2, deep (2/3+1)/2, filesystem (.8+1)/2; overall their mean
    subs = [(0.8 + 2 / 3) / 2, (2 / 3 + 1) / 2, (0.8 + 1) / 2]
    assert rows[20][col["overall"]] == pytest.approx(100 * sum(subs) / 3)
    assert rows[5][col["overall"]] == 0
    assert rows[20][col["n"]] == 20 and rows[5][col["n"]] == 4


def test_tool_set_ablation() -> None:
    t, col = table(aj_breakdown_section(data()), "aj_tool_sets")
    rows = {r[col["tool set"]]: r for r in t.rows}
    # no tools: the LLM judge said PASS to r1..r4 (wide): tp2 fp2 -> F1 2/3
    assert rows["none"][col["overall"]] == pytest.approx(100 * 2 / 3)
    assert rows["state"][col["overall"]] == 0
    subs = [(0.8 + 2 / 3) / 2, (2 / 3 + 1) / 2, (0.8 + 1) / 2]
    assert rows["state+trajectory"][col["overall"]] == pytest.approx(100 * sum(subs) / 3)
    assert [rows[k][col["n"]] for k in ("none", "state", "state+trajectory")] == [4, 4, 20]


def test_no_improvement_row_without_one_llm_judge_to_subtract_and_it_says_so() -> None:
    from lhbench.reporting.aj import aj_section

    base = data()
    t, col = table(aj_section(base), "aj_f1")
    assert any(r[col["agentic"]] == "improvement" for r in t.rows)  # one LLM config of m
    second = [
        Verdict(id=f"llm2-{r}", run_id=r, verdict="FAIL", key=f"llm2-{r}-key",
                judge=JudgeIdentity(kind=JudgeKind.LLM, model="m", settings={"prompt": "v2"}))
        for r in ("r1", "r2", "r3", "r4")
    ]  # fmt: skip
    two = ReportData.build(
        list(base.runs.values()),
        verdicts=[*base.verdicts, *second],
        labels=base.labels,
        tasks=[(pack, task) for (pack, _), task in base.tasks.items()],
    )
    t, col = table(aj_section(two), "aj_f1")
    assert not any(r[col["agentic"]] == "improvement" for r in t.rows)
    assert any("No improvement row for m" in n and "2 settings" in n for n in t.notes)
