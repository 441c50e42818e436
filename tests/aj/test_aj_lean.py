"""``aj score`` reads lean: the same tables as from the report's data, without its models.

A generated store (search items folded per answer, runs that failed for infrastructure,
stale, undecided and competing labels, judges under two tool budgets, error verdicts,
reviewer tags, recorded outcomes) on each backend: the tables from
:meth:`AjData.from_store` equal those from :meth:`ReportData.from_store`; and the command
builds no run, label or verdict model, whatever the store's size.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lhbench.cli.app import app
from lhbench.config import Settings
from lhbench.jobs import resolve_pack, run_job
from lhbench.jobs.aj_search import SearchFixtureJob
from lhbench.reporting import ReportData, Section
from lhbench.reporting.aj import aj_section
from lhbench.reporting.aj_breakdown import aj_breakdown_section
from lhbench.reporting.aj_data import AjData
from lhbench.reporting.recorded import recorded_agreement_table, recorded_outcomes
from lhbench.schema import (
    RECORDED_OUTCOME_KEY,
    FailureKind,
    JudgeIdentity,
    JudgeKind,
    Label,
    Run,
    RunStatus,
    Verdict,
)
from lhbench.store import Store

JUDGES = [
    JudgeIdentity(kind=JudgeKind.AGENT, model="m", settings={"tool_budget": 5}),
    JudgeIdentity(kind=JudgeKind.AGENT, model="m", settings={"tool_budget": 10, "t": [1, 2]}),
    JudgeIdentity(kind=JudgeKind.LLM, model="m"),
    JudgeIdentity(kind=JudgeKind.AGENT, model="other"),
]
TOOLS = [[], ["read_file"], ["open_url", "search"], ["view_trajectory_step"], ["query"]]


def generate(store: Store, home: Path, seed: int = 7) -> list[str]:
    """Packs of three domains, their runs, labels and verdicts; returns the run ids."""
    rng = random.Random(seed)
    settings = Settings(home=home)
    search = resolve_pack("aj-search-mini", settings, store)
    asyncio.run(run_job(SearchFixtureJob(store, search)))
    run_ids = [r.id for r in store.list_runs()]
    for name in ("aj-ds-mini", "aj-gui-mini"):
        loaded = resolve_pack(name, settings, store)
        for i in range(40):
            task = loaded.pack.tasks[i % len(loaded.pack.tasks)]
            infra = i % 13 == 5
            meta: dict[str, Any] = {}
            if i % 7 == 0:
                meta[RECORDED_OUTCOME_KEY] = {"passed": i % 2 == 0, "source": f"sys{i % 3}:log"}
            elif i % 7 == 1:
                meta[RECORDED_OUTCOME_KEY] = {"passed": "not a bool", "source": ""}
            run = Run(
                id=f"{name}-r{i:02d}",
                pack_id=loaded.pack.id,
                pack_hash=loaded.pack.content_hash,
                task_id=task.id,
                harness="h",
                model="a",
                status=RunStatus.FAILED if infra else RunStatus.COMPLETED,
                failure_kind=FailureKind.INFRASTRUCTURE if infra else None,
                metadata={**meta, "note": "answer in prose"},
            )
            store.save_run(run)
            run_ids.append(run.id)
    labels = []
    for k, rid in enumerate(run_ids):
        roll = rng.random()
        if roll < 0.05:
            continue  # no label
        passed = None if roll < 0.1 else rng.random() < 0.5
        stale = "old-content" if rng.random() < 0.1 else ""
        why = "could not run" if passed is None else None
        labels.append(
            Label(run_id=rid, passed=passed, source="verify:v", check_hash=stale, error=why)
        )
        if k % 5 == 0:  # a second check, which loses to a decided verify script
            labels.append(Label(run_id=rid, passed=k % 10 == 0, source="check:c"))
        if k % 9 == 0:  # never a run's outcome
            labels.append(Label(run_id=rid, passed=True, source="figma-deploy:d"))
    store.save_labels(labels)
    verdicts = []
    for rid in run_ids:
        for j, judge in enumerate(JUDGES):
            for repeat in range(2 if j < 3 else 1):
                if rng.random() < 0.15:
                    continue  # an item left unjudged: its answer is left out
                error = rng.random() < 0.05
                verdicts.append(
                    Verdict(
                        id=f"v-{rid}-{j}-{repeat}",
                        run_id=rid,
                        judge=judge,
                        verdict=None if error else rng.choice(["PASS", "FAIL"]),
                        error="no answer" if error else None,
                        tool_calls=rng.randint(0, 6),
                        tools_used=rng.choice(TOOLS) if judge.kind == JudgeKind.AGENT else [],
                        failure_mode="c" if rng.random() < 0.05 else None,
                        repeat=repeat,
                        key=f"key-{rid}-{j}-{repeat}",
                    )
                )
    store.save_verdicts(verdicts)
    return run_ids


def dump(sec: Section) -> str:
    """A section's tables as text (NaN included), for comparing two computations."""
    tables = [(t.slug, t.title, t.columns, t.rows, t.notes) for t in sec.tables]
    return json.dumps([sec.empty, tables], default=str)


def test_lean_tables_equal_the_report_datas_on_a_generated_store(
    store: Store, tmp_path: Path
) -> None:
    generate(store, tmp_path / "home")
    full = ReportData.from_store(store, graded=False)
    lean = AjData.from_store(store)
    assert len(lean.verdicts) == len(full.verdicts) > 300
    assert lean.outcomes == {
        v.run_id: p for v in full.verdicts if (p := full.label_of(v.run_id)) is not None
    }
    for section in (aj_section, aj_breakdown_section):
        want, got = dump(section(full)), dump(section(lean))
        assert got == want
    main = aj_section(lean)
    assert "answer(s) left out" in json.dumps(main.tables[0].notes)  # search items folded
    slugs = [t.slug for t in aj_breakdown_section(lean).tables]
    assert "aj_turn_budget" in slugs and "aj_failure_mode_counts" in slugs
    # with stale labels kept, both ways again
    assert dump(aj_section(AjData.from_store(store, include_stale=True))) == dump(
        aj_section(ReportData.from_store(store, graded=False, include_stale=True))
    )
    # recorded outcomes: the lean read gives the table the run models give
    recorded = recorded_outcomes(store)
    assert len(recorded) == 12  # a malformed claim is no claim
    old = recorded_agreement_table(store.list_runs(), store.list_labels())
    new = recorded_agreement_table(recorded, store.label_facts())
    assert old is not None and new is not None and old.rows == new.rows


def test_aj_score_builds_no_run_label_or_verdict_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    with Store.open(url) as store:
        generate(store, tmp_path / "home")
    monkeypatch.setenv("LHBENCH_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    want = runner.invoke(app, ["aj", "score", "--json", "--db", url])
    assert want.exit_code == 0, want.output
    built: list[str] = []

    def counted(name: str, real: Any) -> Any:
        def validate(*args: Any, **kwargs: Any) -> Any:
            built.append(name)
            return real(*args, **kwargs)

        return validate

    for model in (Run, Label, Verdict):
        monkeypatch.setattr(model, "model_validate", counted(model.__name__, model.model_validate))
        monkeypatch.setattr(model, "__init__", counted(model.__name__, model.__init__))
    got = runner.invoke(app, ["aj", "score", "--json", "--db", url])
    assert got.exit_code == 0, got.output
    assert built == []
    assert got.output == want.output
    tables = json.loads(got.output)["tables"]
    assert {"aj_f1", "aj_domains", "recorded_vs_labels"} <= {t["slug"] for t in tables}


def test_report_data_is_converted_once_for_both_sections_and_let_go(tmp_path: Path) -> None:
    import gc
    import weakref

    from lhbench.reporting import aj_data

    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        generate(store, tmp_path / "home")
        data = ReportData.from_store(store, graded=False)
    first = aj_data.aj_data(data)
    assert aj_data.aj_data(data) is first  # the breakdown reuses the main section's
    data.verdicts = data.verdicts[:10]  # another list: taken again
    assert len(aj_data.aj_data(data).verdicts) == 10
    held = weakref.ref(aj_data.aj_data(data))
    del data, first
    gc.collect()
    assert held() is None
