"""Ground truth meets the runs: every run lhbench ran, or imported under a task, is checked."""

import asyncio
import json
from pathlib import Path

from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from lhbench.api import import_transcripts, run_agents_async, verify
from lhbench.config import Settings
from lhbench.reporting import ReportData
from lhbench.reporting.leaderboard import pass_rate_rows
from lhbench.store import Store

REPORT = "east: 19.55\nnorth: 155.80\nsouth: 99.99\n"


def _writer(content: str):
    """A scripted agent that writes report.md once, then finishes."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returned = [
            p
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        ]
        if not returned:
            return ModelResponse(
                parts=[ToolCallPart("write_file", {"path": "report.md", "content": content})]
            )
        return ModelResponse(parts=[TextPart("wrote report.md")])

    return fn


def test_runs_and_imports_under_a_task_get_a_label_and_a_pass_rate(
    store: Store, tmp_path: Path
) -> None:
    settings = Settings(home=tmp_path / "home")

    async def run(model: str, content: str):
        return await run_agents_async(
            "lhbench-samples",
            harness="native",
            model=f"test:{model}",
            tasks=["csv-region-totals"],
            agent_model=FunctionModel(_writer(content)),
            store=store,
            settings=settings,
        )

    right = asyncio.run(run("right", REPORT))
    wrong = asyncio.run(run("wrong", REPORT.replace("99.99", "100.00")))
    assert right.verify is not None and right.verify.done == 1
    assert wrong.verify is not None and wrong.verify.done == 1
    labels = {lab.run_id: lab for lab in store.list_labels()}
    [ok_run] = [o.run for o in right.summary.results]
    [bad_run] = [o.run for o in wrong.summary.results]
    assert labels[ok_run.id].passed is True and labels[ok_run.id].detail == "all totals right"
    assert labels[bad_run.id].passed is False and "south" in labels[bad_run.id].detail
    assert labels[ok_run.id].source == "verify:csv-region-totals/verify.py"

    # an imported transcript filed under the task is replayed and checked the same way
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        "\n".join(
            json.dumps(x)
            for x in (
                {"type": "run", "model": "imported-model"},
                {"role": "user", "kind": "message", "content": "sum the sales"},
                {
                    "role": "assistant",
                    "kind": "tool_call",
                    "tool_name": "write_file",
                    "tool_call_id": "c1",
                    "tool_input": {"path": "report.md", "content": REPORT},
                },
                {"role": "tool", "kind": "tool_result", "tool_call_id": "c1", "tool_output": "ok"},
                {"type": "end", "status": "completed"},
            )
        )
        + "\n"
    )
    imported = import_transcripts(
        [transcript],
        pack="lhbench-samples",
        task="csv-region-totals",
        store=store,
        settings=settings,
    )
    [imp] = imported.files[0].runs
    assert imported.verify is not None and imported.verify.done == 1
    assert store.get_run(imp).pack_hash == store.latest_pack_hash("lhbench-samples")
    assert {lab.run_id: lab.passed for lab in store.list_labels()}[imp] is True

    # checks already run on the same task content are not run again
    again = verify("lhbench-samples", store=store, settings=settings)
    assert [(p, s.skipped, s.ran) for p, s in again.packs] == [("lhbench-samples", 3, 0)]

    rates = {r.group: r for r in pass_rate_rows(ReportData.from_store(store), ["model"])}
    assert (rates["test:right"].passed, rates["test:right"].n) == (1, 1)
    assert (rates["test:wrong"].passed, rates["test:wrong"].n) == (0, 1)
    assert (rates["imported-model"].passed, rates["imported-model"].n) == (1, 1)


def test_a_crashing_or_hanging_check_is_an_undecided_label_and_the_job_goes_on(
    store: Store, tmp_path: Path
) -> None:
    import shutil

    from lhbench.packs import resolve_pack_dir

    pack = tmp_path / "pack"
    shutil.copytree(resolve_pack_dir("lhbench-samples"), pack)
    (pack / "tasks" / "ini-to-json" / "verify.py").write_text("raise SystemExit(7)\n")
    settings = Settings(home=tmp_path / "home")
    res = asyncio.run(
        run_agents_async(
            str(pack),
            harness="native",
            model="test:w",
            tasks=["ini-to-json", "csv-region-totals"],
            agent_model=FunctionModel(_writer(REPORT)),
            store=store,
            settings=settings,
        )
    )
    assert res.verify is not None
    assert (res.verify.done, res.verify.failed) == (2, 1)  # two decided (csv verify, hook check)
    assert res.verify.failures == {"check crashed": 1}
    undecided = [lab for lab in store.list_labels() if lab.passed is None]
    assert len(undecided) == 1 and "exited 7" in (undecided[0].error or "")


def test_a_verify_script_contradicting_itself_is_never_a_pass(store: Store, tmp_path: Path) -> None:
    import shutil

    from lhbench.packs import resolve_pack_dir

    pack = tmp_path / "pack"
    shutil.copytree(resolve_pack_dir("lhbench-samples"), pack)
    # the hook-check payload shape, exit 0: the old reader saw only the exit code (PASS)
    (pack / "tasks" / "csv-region-totals" / "verify.py").write_text(
        'print(\'{"ok": false, "diagnosis": "report.md is wrong"}\')\n'
    )
    res = asyncio.run(
        run_agents_async(
            str(pack),
            harness="native",
            model="test:w",
            tasks=["csv-region-totals"],
            agent_model=FunctionModel(_writer(REPORT)),
            store=store,
            settings=Settings(home=tmp_path / "home"),
        )
    )
    assert res.verify is not None
    assert res.verify.failures == {"check's exit code and answer disagree": 1}
    [label] = [lab for lab in store.list_labels() if lab.source.startswith("verify:")]
    assert label.passed is None and "contradicts itself" in (label.error or "")
    rates = pass_rate_rows(ReportData.from_store(store), ["model"])
    assert [r.n for r in rates] == [0] or rates == []
