"""The failures section on a large store: only runs that may hold an error are read.

A team's store has 100,000 runs and 605,000 steps, nearly all of them clean. The lean
report counts every run's steps and tool calls in one query, flags the runs with a step
that may have failed or a preview/deploy tool, and reads only those runs' tool steps, as
plain tuples (no pydantic ``Step``). Here random trajectories (errors and recoveries,
hooks, exit codes, retried commands, id-less calls, soft failures, previews and deploys)
give the same taxonomy as the full trajectories, the clean runs are never read, and the
queries do not grow with the runs.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from lhbench.reporting import ReportData, failures_section
from lhbench.reporting.tables import Section
from lhbench.schema import Role, Step, StepKind, StepView, Trajectory
from lhbench.stats import agent_table, error_events, run_failures, type_table
from lhbench.store import LabelFact, ReportRun, Store
from tests.factories import make_run, random_error_steps

BY = ["harness", "model"]
GROUPS = [("claude-code", "a:1"), ("codex", "b:2"), ("gemini-cli", "c:3")]


def _clean_steps(n: int) -> list[Step]:
    """A run with calls that all worked (no preview or deploy tool) and messages."""
    steps = [Step(index=0, role=Role.USER, kind=StepKind.MESSAGE, content="build it")]
    for k in range(n):
        steps += [
            Step(index=len(steps), role=Role.ASSISTANT, kind=StepKind.TOOL_CALL,
                 tool_name="Bash", tool_call_id=f"b{k}", tool_input={"command": "ls"}),
            Step(index=len(steps) + 1, role=Role.TOOL, kind=StepKind.TOOL_RESULT,
                 tool_call_id=f"b{k}", tool_output='{"status": "ok"}', exit_code=0),
        ]  # fmt: skip
    return steps


def _may_fail(s: Step) -> bool:
    """What the database flags, in Python: a run with such a step is read."""
    name = (s.tool_name or "").lower()
    output = s.tool_output or ""
    result = s.kind == StepKind.TOOL_RESULT
    return (
        s.is_error
        or (result and s.exit_code not in (None, 0))
        or (result and '"status"' in output.lower() and '"error"' in output.lower())
        or any(w in name for w in ("preview", "deploy", "upload_dist"))
    )


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Trajectory]]:
    """60 random runs in 3 groups, 25 clean runs, 5 runs without steps."""
    url = f"sqlite:///{tmp_path_factory.mktemp('failures') / 'lhbench.db'}"
    rng = random.Random(28)
    trajectories: dict[str, Trajectory] = {}
    with Store.open(url) as store:
        for n in range(90):
            rid = f"r{n:03d}"
            harness, model = GROUPS[n % 3]
            store.save_run(make_run(rid, harness=harness, model=model, task_id=f"t{n % 7}"))
            if n < 60:
                steps = random_error_steps(rng)
            elif n < 85:
                steps = _clean_steps(n % 4)
            else:
                continue
            trajectories[rid] = Trajectory(run_id=rid, steps=steps)
            store.save_trajectory(trajectories[rid])
    return url, trajectories


def _rows(section: Section) -> list[list[str]]:
    # repr: NaN rates compare equal, floats to the last bit
    return [[repr(c) for c in row] for t in section.tables for row in [[t.title], *t.rows]]


def test_the_lean_walk_gives_the_full_trajectories_taxonomy(
    seeded: tuple[str, dict[str, Trajectory]],
) -> None:
    url, trajectories = seeded
    with Store.open(url) as store:
        full = ReportData.from_store(store, check_packs=False)
        lean = ReportData.from_store(store, check_packs=False, lean=True)
    got, want = failures_section(lean, BY), failures_section(full, BY)
    assert _rows(got) == _rows(want)
    # and the figures are the taxonomy's own over the whole trajectories
    events = [e for t in trajectories.values() for e in error_events(t)]
    assert got.tables[0].title == f"Failure taxonomy across 85 runs ({len(events)} errors)"
    assert len(events) > 40 and 0 < sum(e.recovered for e in events) < len(events)
    assert [r[:3] for r in got.tables[0].rows[:-1]] == [
        [r.type.value.replace("_", " "), r.count, r.recovered] for r in type_table(events)
    ]
    runs = {r.id: r for r in lean.runs.values()}
    table = agent_table(
        [(f"{runs[rid].harness} / {runs[rid].model}", None, t) for rid, t in trajectories.items()]
    )
    assert [[r[0], r[1], r[2], r[7]] for r in got.tables[1].rows] == [
        [a.group, a.runs, a.errors, a.tool_calls] for a in table
    ]
    assert sum(a.preview_runs for a in table) > 0 and sum(a.deploy_runs for a in table) > 0


def test_only_runs_that_may_hold_an_error_are_read_and_no_step_model_is_built(
    seeded: tuple[str, dict[str, Trajectory]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, trajectories = seeded
    built: list[str] = []
    for name in ("model_construct", "model_validate"):
        real = getattr(Step, name)

        def counting(*a: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            built.append(_name)
            return _real(*a, **kw)

        monkeypatch.setattr(Step, name, counting)
    read: list[str] = []
    with Store.open(url) as store:
        lean = ReportData.from_store(store, check_packs=False, lean=True)
        load = lean.load_error_steps
        assert load is not None

        def spying(run_ids: Any) -> Any:
            for rid, steps in load(run_ids):
                read.append(rid)
                assert all(isinstance(s, StepView) for s in steps)
                yield rid, steps

        lean.load_error_steps = spying
        failures_section(lean, BY)
    assert built == []
    flagged = {rid for rid, t in trajectories.items() if any(map(_may_fail, t.steps))}
    assert read == sorted(flagged)
    # every run with an error, a preview or a deploy is among them; no clean run is
    needed = set()
    for rid, t in trajectories.items():
        found = run_failures(t.steps)
        if found.events or found.previewed or found.deployed:
            needed.add(rid)
    assert needed <= flagged and len(needed) > 30
    assert not flagged & {f"r{n:03d}" for n in range(60, 85)}


def test_the_failure_walk_queries_do_not_grow_with_the_runs(
    seeded: tuple[str, dict[str, Trajectory]],
) -> None:
    url, _ = seeded
    statements: list[str] = []
    with Store.open(url) as store:
        store.engine.dispose()  # every connection from here on is traced
        event.listen(
            store.engine,
            "connect",
            lambda conn, _rec: conn.set_trace_callback(statements.append),
        )
        lean = ReportData.from_store(store, check_packs=False, lean=True)
        counts = []
        for extra in (0, 1500):
            # runs without steps (a store holds many): 1,500 more do not cost a query
            base = next(r for r in lean.runs.values() if isinstance(r, ReportRun))
            for n in range(extra):
                lean.runs[f"x{n}"] = dataclasses.replace(base, id=f"x{n}")
            statements.clear()
            section = failures_section(lean, BY)
            counts.append(sum(s.lstrip().upper().startswith("SELECT") for s in statements))
            assert section.tables[0].title.startswith("Failure taxonomy across 85 runs")
    # the tool names, every run's counts, one slice of suspect runs' steps
    assert counts[0] == counts[1] <= 3, counts


def test_the_lean_report_reads_labels_as_facts(tmp_path: Path) -> None:
    from lhbench.schema import FailureKind, Label

    with Store.open(f"sqlite:///{tmp_path / 'lhbench.db'}") as store:
        for n in range(4):
            store.save_run(make_run(f"r{n}"))
        store.save_labels(
            [
                Label(run_id="r0", passed=True, source="verify:t/check.py", detail="3/3"),
                Label(run_id="r0", passed=False, source="human:ann"),
                Label(run_id="r1", passed=False, source="figma-deploy:app"),
                Label(run_id="r1", passed=None, source="verify:t/check.py", error="no chromium",
                      failure_kind=FailureKind.INFRASTRUCTURE),
                Label(run_id="r2", passed=False, source="verify:t/check.py"),
            ]
        )  # fmt: skip
        full = ReportData.from_store(store, check_packs=False)
        lean = ReportData.from_store(store, check_packs=False, lean=True)
    assert all(isinstance(lab, LabelFact) for lab in lean.labels) and len(lean.labels) == 5
    assert [(x.run_id, x.source, x.passed) for x in lean.labels] == [
        (x.run_id, x.source, x.passed) for x in full.labels
    ]
    assert lean.excluded.infra_labels == full.excluded.infra_labels == 1
    assert [lean.label_of(f"r{n}") for n in range(4)] == [True, None, False, None]
    assert lean.undecided_labels == full.undecided_labels == {"verify": 1}
