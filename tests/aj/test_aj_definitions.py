"""AJ-Bench's definitions, by hand: Improvement over shared subdomains, repeats paired by
number, search F1 per answer (trajectory) with the item-level figure labelled."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from lhbench.reporting.aj import aj_section
from lhbench.reporting.aj_breakdown import aj_breakdown_section
from lhbench.reporting.data import ReportData
from lhbench.reporting.tables import Table
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

LLM = JudgeIdentity(kind=JudgeKind.LLM, model="m")
AGENT = JudgeIdentity(kind=JudgeKind.AGENT, model="m", settings={"tool_budget": 20})


def _task(tid: str, sub: str, kind: EnvironmentKind = EnvironmentKind.FILESYSTEM) -> Task:
    return Task(
        id=tid,
        title=tid,
        instruction="x",
        environment=EnvironmentSpec(kind=kind),
        tags=ComplexityTags(category="d", subdomain=sub),
    )


def _verdict(run: str, judge: JudgeIdentity, said: str | None, repeat: int = 0) -> Verdict:
    return Verdict(
        id=f"{run}-{judge.kind.value}-{repeat}",
        run_id=run,
        judge=judge,
        verdict=said,  # type: ignore[arg-type]
        error=None if said else "failed",
        repeat=repeat,
        key=f"{run}-{judge.kind.value}-{repeat}-key",
    )


def _row(table: Table, agentic: str) -> dict[str, object]:
    [row] = [r for r in table.rows if r[1] == agentic]
    return dict(zip(table.columns, row, strict=True))


def test_improvement_compares_over_the_shared_subdomains_and_says_k_of_n() -> None:
    # subdomain a: 2 passing runs, b: 2 passing runs, c: 2 passing runs
    tasks = [("p", _task("ta", "a")), ("p", _task("tb", "b")), ("p", _task("tc", "c"))]
    runs = [Run(id=f"{t}{i}", pack_id="p", task_id=t, harness="h", model="x")
            for t in ("ta", "tb", "tc") for i in (1, 2)]  # fmt: skip
    labels = [Label(run_id=r.id, passed=True, source="verify:x") for r in runs]
    verdicts = [
        # LLM judge: a F1 2/3 (one of two said PASS), b F1 2/3, c judged by no LLM verdict
        _verdict("ta1", LLM, "PASS"), _verdict("ta2", LLM, "FAIL"),
        _verdict("tb1", LLM, "PASS"), _verdict("tb2", LLM, "FAIL"),
        # agent judge: a 1.0, b 1.0, and c F1 2/3 (a subdomain the LLM judge lacks)
        _verdict("ta1", AGENT, "PASS"), _verdict("ta2", AGENT, "PASS"),
        _verdict("tb1", AGENT, "PASS"), _verdict("tb2", AGENT, "PASS"),
        _verdict("tc1", AGENT, "PASS"), _verdict("tc2", AGENT, "FAIL"),
    ]  # fmt: skip
    data = ReportData.build(runs, verdicts=verdicts, labels=labels, tasks=tasks)
    [main, *_] = aj_section(data).tables
    agent, llm, gain = _row(main, "✓"), _row(main, "✗"), _row(main, "improvement")
    assert agent["overall"] == pytest.approx(100 * (1 + 1 + 2 / 3) / 3)
    assert llm["overall"] == pytest.approx(100 * 2 / 3)
    # every shared subdomain improved by 33.3: so does the improvement (not 100*(8/9-2/3))
    assert gain["a"] == pytest.approx(100 / 3) and gain["b"] == pytest.approx(100 / 3)
    assert math.isnan(gain["c"])  # type: ignore[arg-type]
    assert gain["overall"] == pytest.approx(100 / 3)
    assert any("over 2 of 3 subdomains" in n for n in main.notes)


def test_per_repeat_overall_pairs_repeats_by_number() -> None:
    tasks = [("p", _task("ta", "a")), ("p", _task("tb", "b"))]
    runs = [Run(id=f"{t}{i}", pack_id="p", task_id=t, harness="h", model="x")
            for t in ("ta", "tb") for i in range(4)]  # fmt: skip
    labels = [Label(run_id=r.id, passed=True, source="verify:x") for r in runs]

    def said(task: str, passes: int, repeat: int) -> list[Verdict]:
        # every run passes: k of 4 said PASS gives F1 2k / (4 + k)
        return [
            _verdict(f"{task}{i}", AGENT, "PASS" if i < passes else "FAIL", repeat)
            for i in range(4)
        ]

    # subdomain a: repeats 0, 1, 2; b: repeats 1 and 2 only (its repeat 0 failed to judge)
    verdicts = [*said("ta", 4, 0), *said("ta", 3, 1), *said("ta", 3, 2)]
    verdicts += [*said("tb", 3, 1), *said("tb", 3, 2)]
    verdicts += [_verdict(f"tb{i}", AGENT, None, 0) for i in range(4)]
    data = ReportData.build(runs, verdicts=verdicts, labels=labels, tasks=tasks)
    [main, *_] = aj_section(data).tables
    row = _row(main, "✓")
    # by number: r0 = a's 1.0 alone, r1 = r2 = mean(6/7, 6/7). By list position b's
    # repeats 1 and 2 would be paired with a's repeats 0 and 1.
    per_repeat = np.array([1.0, 6 / 7, 6 / 7])
    half = sps.t.ppf(0.975, 2) * per_repeat.std(ddof=1) / math.sqrt(3)
    assert row["ci_low"] == pytest.approx(100 * (per_repeat.mean() - half))
    assert row["repeats"] == 3


def _search_data() -> ReportData:
    tasks = [("p", _task("s", "wide", EnvironmentKind.WEB))]
    # answers: A1 items all pass; A2 has one failing item; A3 all pass
    items = {"a1": [True, True], "a2": [True, False, True], "a3": [True, True]}
    runs, labels = [], []
    for ans, labs in items.items():
        for i, lab in enumerate(labs):
            rid = f"p--s--{ans}--i{i}"
            runs.append(
                Run(id=rid, pack_id="p", task_id="s", harness="h", model="x",
                    metadata={"answer": ans, "item": f"i{i}", "trajectory": ans})
            )  # fmt: skip
            labels.append(Label(run_id=rid, passed=lab, source="verify:x"))
    # the judge says PASS to every item except a3's second one
    verdicts = [_verdict(r.id, AGENT, "FAIL" if r.id == "p--s--a3--i1" else "PASS") for r in runs]
    return ReportData.build(runs, verdicts=verdicts, labels=labels, tasks=tasks)


def test_search_f1_is_per_answer_as_aj_bench_and_the_item_level_figure_is_labelled() -> None:
    sec = aj_section(_search_data())
    main = sec.tables[0]
    row = _row(main, "✓")
    # per answer: labels a1 P, a2 F, a3 P; judge a1 P, a2 P, a3 F -> tp 1, fp 1, fn 1
    assert row["wide"] == pytest.approx(100 * 0.5)
    assert row["overall"] == pytest.approx(50.0)
    assert row["n"] == 3
    assert any("scored per answer" in n for n in main.notes)
    # the item-level F1 (tp 5, fp 1, fn 1 -> 10/12) is kept only in its own labelled table
    items = next(t for t in sec.tables if t.slug == "aj_search_items")
    assert "item level" in items.title and "not AJ-Bench" in items.title
    assert _row(items, "✓")["wide"] == pytest.approx(100 * 10 / 12)
    # the breakdown's F1 is per answer too
    [dom, *_] = aj_breakdown_section(_search_data()).tables
    [whole] = [r for r in dom.rows if r[dom.columns.index("subdomain")] == "wide"]
    assert whole[dom.columns.index("f1")] == pytest.approx(50.0)


def test_an_answer_with_an_unjudged_item_is_left_out_and_counted() -> None:
    data = _search_data()
    data.verdicts = [
        _verdict(v.run_id, AGENT, None) if v.run_id == "p--s--a2--i0" else v for v in data.verdicts
    ]
    main = aj_section(data).tables[0]
    row = _row(main, "✓")
    # a1 (P, P) and a3 (P, F): tp 1, fn 1 -> 2/3
    assert row["wide"] == pytest.approx(100 * 2 / 3) and row["n"] == 2
    assert any("1 answer(s) left out" in n for n in main.notes)


def test_an_undefined_subdomain_f1_is_na_not_zero() -> None:
    tasks = [("p", _task("ta", "a")), ("p", _task("tb", "b"))]
    runs = [Run(id=f"{t}{i}", pack_id="p", task_id=t, harness="h", model="x")
            for t in ("ta", "tb") for i in (1, 2)]  # fmt: skip
    # subdomain b has no passing run and the judge said FAIL to both: F1 is 0/0
    labels = [Label(run_id=r.id, passed=r.task_id == "ta", source="verify:x") for r in runs]
    verdicts = [_verdict(r.id, AGENT, "PASS" if r.task_id == "ta" else "FAIL") for r in runs]
    data = ReportData.build(runs, verdicts=verdicts, labels=labels, tasks=tasks)
    main = aj_section(data).tables[0]
    row = _row(main, "✓")
    assert math.isnan(row["b"])  # type: ignore[arg-type]
    assert row["overall"] == pytest.approx(100.0)  # over the defined subdomain
    assert "| n/a |" in main.to_markdown()
