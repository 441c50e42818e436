"""Group labels and run outcomes as the report reads them once per report data."""

from __future__ import annotations

import pytest

from lhbench.reporting import ReportData
from lhbench.reporting.data import group_label, group_labeller, outcome_labels
from lhbench.schema import Label
from tests.factories import make_run


def test_outcomes_map_every_decided_run_to_its_deciding_label() -> None:
    """``outcomes`` is ``label_of`` as one dict: a verify script wins over a hook check
    whichever came first, undecided and figma-deploy labels decide nothing."""
    runs = [make_run(f"r{i}", task_id=f"t{i}") for i in range(5)]
    labels = [
        Label(run_id="r0", passed=True, source="hook:t0/after"),
        Label(run_id="r0", passed=False, source="verify:t0"),
        Label(run_id="r1", passed=None, source="verify:t1", error="timed out"),
        Label(run_id="r1", passed=True, source="hook:t1/after"),
        Label(run_id="r2", passed=None, source="verify:t2", error="timed out"),
        Label(run_id="r3", passed=True, source="figma-deploy:t3/gt"),
        Label(run_id="r3", passed=False, source="figma:t3/gt"),
        Label(run_id="r4", passed=True, source="figma-deploy:t4/gt"),
    ]
    data = ReportData.build(runs, labels=labels)
    assert data.outcomes == {"r0": False, "r1": True, "r3": False}
    assert [data.label_of(f"r{i}") for i in range(5)] == [False, True, None, False, None]


def test_outcome_labels_keep_the_first_label_of_the_winning_source() -> None:
    """Two labels of one run from one source: the first listed decides (a stable order)."""
    labels = [
        Label(run_id="r0", passed=True, source="hook:b"),
        Label(run_id="r0", passed=False, source="hook:a"),
        Label(run_id="r0", passed=True, source="hook:a"),
        Label(run_id="r1", passed=True, source="verify:x"),
        Label(run_id="r1", passed=False, source="verify:x"),
    ]
    best = outcome_labels(labels)
    assert best["r0"] is labels[1] and best["r1"] is labels[3]


@pytest.mark.parametrize(
    "by",
    [
        ("harness", "model"),
        ("model",),
        ("pack", "task", "status"),
        ("harness", "versions.skill", "prompt"),
        (),
    ],
)
def test_group_labeller_formats_as_group_label(by: tuple[str, ...]) -> None:
    runs = [
        make_run("r0"),
        make_run("r1", model="openai:gpt-5", task_id="t2"),
        make_run("r2", versions={"skill": "v2"}),
        make_run("r3", harness="codex", versions={}),
    ]
    label = group_labeller(by)
    assert [label(r) for r in runs] == [group_label(r, by) for r in runs]
    data = ReportData.build(runs)
    assert data.group_labels(by) == {r.id: group_label(r, by) for r in runs}


def test_group_labels_name_the_groups_in_the_papers_form() -> None:
    runs = [make_run("r0"), make_run("r1", versions={"prompt": "v0"})]
    labels = ReportData.build(runs).group_labels(("harness", "model", "versions.skill"))
    assert labels == {
        "r0": "claude-code / anthropic:claude-sonnet-4-6 / skill=v1",
        "r1": "claude-code / anthropic:claude-sonnet-4-6 / skill=-",
    }
