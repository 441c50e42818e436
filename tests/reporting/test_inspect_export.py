"""Inspect logs: what Inspect's own reader reads back equals what the store holds."""

from __future__ import annotations

import json
import statistics
import zipfile
from pathlib import Path

import pytest

from lhbench.schema import Role, StepKind
from lhbench.store import Store
from tests.cli.helpers import cli
from tests.factories import make_trajectory
from tests.reporting.test_report import FIGMA, JUDGES, grade, seed_store

read_eval_log = pytest.importorskip("inspect_ai.log").read_eval_log


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("inspect")
    db = tmp / "s.db"
    with Store.open(f"sqlite:///{db}") as store:
        seed_store(store, tmp)
        store.save_trajectory(make_trajectory("a-t1"))
        # a grade made with earlier rubric content: stale, never a score in the export
        stale = grade("a-t2", JUDGES[0], (1, 1, 1, 1)).model_copy(
            update={"id": "g-stale", "rubric_hash": "f" * 64, "key": "stale-key-0001"}
        )
        store.save_grade(stale)
    out = tmp / "logs"
    res = cli(*["export", "inspect", str(out), "--db", f"sqlite:///{db}", "--json"])
    assert res.exit_code == 0, res.stdout + res.stderr
    return db, out


def _logs(out: Path, suffix: str) -> dict[str, object]:
    logs = {}
    for p in sorted(out.glob(f"*{suffix}")):
        log = read_eval_log(str(p))
        logs[log.eval.solver + "|" + str(log.eval.metadata["lhbench"]["versions"])] = log
    return logs


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_inspect_reads_every_log_and_it_equals_the_store(
    exported: tuple[Path, Path], suffix: str
) -> None:
    db, out = exported
    logs = _logs(out, suffix)
    with Store.open(f"sqlite:///{db}") as store:
        runs = store.list_runs()
        # one log per (pack, harness, model, versions) group: A (skill=v1), B (none), B (v1)
        groups = {
            (r.harness, ",".join(f"{k}={v}" for k, v in sorted(r.versions.items()))) for r in runs
        }
        assert len(logs) == len(groups) == 3
        by_id = {r.id: r for r in runs}
        seen = 0
        for log in logs.values():
            assert log.status == "success"
            assert log.samples is not None
            assert log.results.total_samples == len(log.samples)
            for sample in log.samples:
                run = by_id[sample.metadata["lhbench"]["run_id"]]
                seen += 1
                assert (sample.id, sample.epoch) == (run.task_id, run.repeat + 1)
                assert log.eval.model == run.model.replace(":", "/", 1)
                # tokens equal the run's
                [usage] = sample.model_usage.values()
                assert (usage.input_tokens, usage.output_tokens) == (
                    run.usage.input_tokens,
                    run.usage.output_tokens,
                )
                # rubric score = panel mean of the current grades (the stale one left out)
                current = [
                    g
                    for g in store.list_grades()
                    if g.run_id == run.id
                    and g.tier_score is not None
                    and g.rubric_hash == FIGMA.content_hash
                ]
                by_judge: dict[str, list[float]] = {}
                for g in current:
                    by_judge.setdefault(g.judge.model, []).append(g.tier_score)
                expected = statistics.fmean(statistics.fmean(v) for v in by_judge.values())
                [name] = [n for n in sample.scores if n.startswith("figma-to-code")]
                assert sample.scores[name].value == pytest.approx(expected)
                assert sorted(sample.scores[name].metadata["grade_ids"]) == sorted(
                    g.id for g in current
                )
                assert "g-stale" not in sample.scores[name].metadata["grade_ids"]
                # the task's checks and both verdict judges
                label = run.id.startswith("a-")
                assert sample.scores["verify"].value == ("C" if label else "I")
                # one score per verdict judge: the majority of its repeats, all ids kept
                stored = [v for v in store.list_verdicts() if v.run_id == run.id]
                verdicts = {n: sc for n, sc in sample.scores.items() if n.startswith("verdict:")}
                assert len(verdicts) == len({v.judge.key for v in stored}) == 2
                for sc in verdicts.values():
                    mine = [v for v in stored if v.id in sc.metadata["verdict_ids"]]
                    assert len(mine) == 2  # both repeats
                    share = sum(str(v.verdict) == "PASS" for v in mine) / len(mine)
                    assert sc.value == ("C" if share >= 0.5 else "I")
            # group totals equal the sum over its runs
            [total] = log.stats.model_usage.values()
            group_runs = [by_id[s.metadata["lhbench"]["run_id"]] for s in log.samples]
            assert total.input_tokens == sum(r.usage.input_tokens for r in group_runs)
            assert total.output_tokens == sum(r.usage.output_tokens for r in group_runs)
            # the log says what it left out
            excluded = log.eval.metadata["lhbench"]["excluded"]
            assert any("1 grade(s) for rubric figma-to-code" in n for n in excluded), excluded
        assert seen == len(runs)


def test_transcript_becomes_messages_and_events(exported: tuple[Path, Path]) -> None:
    _db, out = exported
    logs = _logs(out, ".eval")
    [sample] = [
        s for log in logs.values() for s in log.samples if s.metadata["lhbench"]["run_id"] == "a-t1"
    ]
    steps = make_trajectory("a-t1").steps
    roles = [m.role for m in sample.messages]
    # user, assistant(call t1), tool, assistant(call t2), tool, assistant(text)
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert sample.messages[0].text == steps[0].content
    call = sample.messages[1].tool_calls[0]
    assert (call.id, call.function, call.arguments) == ("t1", "Bash", steps[1].tool_input)
    assert sample.messages[2].tool_call_id == "t1"
    assert sample.messages[2].error is not None  # the failed build
    assert sample.messages[2].text == steps[2].tool_output
    assert sample.messages[-1].text == "Done ✓"
    assert sample.output.completion == "Done ✓"
    tool_events = [e for e in sample.events if e.event == "tool"]
    assert [e.id for e in tool_events] == ["t1", "t2"]
    assert tool_events[0].error is not None and tool_events[1].error is None
    hooks = [e for e in sample.events if e.event == "info"]
    assert [e.data["kind"] for e in hooks] == [StepKind.HOOK.value]
    assert hooks[0].data["role"] == Role.HARNESS.value
    scores = [e for e in sample.events if e.event == "score"]
    assert len(scores) == len(sample.scores)


def test_eval_zip_layout_and_results(exported: tuple[Path, Path]) -> None:
    _db, out = exported
    for p in out.glob("*.eval"):
        with zipfile.ZipFile(p) as z:
            names = z.namelist()
            header = json.loads(z.read("header.json"))
        assert "summaries.json" in names
        assert sum(n.startswith("samples/") for n in names) == header["results"]["total_samples"]
        assert "samples" not in header
    log = next(iter(_logs(out, ".eval").values()))
    verify = next(s for s in log.results.scores if s.name == "verify")
    values = [s.scores["verify"].value for s in log.samples]
    assert verify.metrics["accuracy"].value == pytest.approx(
        sum(v == "C" for v in values) / len(values)
    )


def test_include_stale_and_pack_filter(exported: tuple[Path, Path], tmp_path: Path) -> None:
    db, _out = exported
    out = tmp_path / "stale"
    res = cli(
        *[
            "export",
            "inspect",
            str(out),
            "--db",
            f"sqlite:///{db}",
            "--include-stale",
            "--format",
            "json",
        ]
    )
    assert res.exit_code == 0, res.stdout + res.stderr
    assert not list(out.glob("*.eval"))
    [sample] = [
        s
        for p in out.glob("*.json")
        for s in read_eval_log(str(p)).samples
        if s.metadata["lhbench"]["run_id"] == "a-t2"
    ]
    assert any(
        "g-stale" in sc.metadata.get("grade_ids", [])
        for sc in sample.scores.values()
        if sc.metadata
    )
    res = cli(
        *["export", "inspect", str(tmp_path / "none"), "--db", f"sqlite:///{db}", "--pack", "nope"]
    )
    assert res.exit_code == 2
    assert "no runs of pack 'nope'" in res.stderr


def test_a_log_imports_back_as_the_same_transcript(tmp_path: Path) -> None:
    """lhbench's own Inspect importer reads the export: steps, tokens and cost come back."""
    from tests.factories import make_run

    src, back = tmp_path / "a.db", tmp_path / "b.db"
    with Store.open(f"sqlite:///{src}") as store:
        store.save_run(make_run("r1"))
        store.save_trajectory(make_trajectory("r1"))
    out = tmp_path / "logs"
    res = cli(*["export", "inspect", str(out), "--format", "eval", "--db", f"sqlite:///{src}"])
    assert res.exit_code == 0, res.stderr
    [path] = out.glob("*.eval")
    res = cli(*["import", "inspect", str(path), "--db", f"sqlite:///{back}"])
    assert res.exit_code == 0, res.stderr
    with Store.open(f"sqlite:///{back}") as store:
        [run] = store.list_runs()
        steps = store.get_trajectory(run.id).steps
    orig = make_run("r1")
    assert (run.usage.input_tokens, run.usage.output_tokens) == (
        orig.usage.input_tokens,
        orig.usage.output_tokens,
    )
    assert run.cost_usd == pytest.approx(orig.cost_usd)

    def shape(s: object) -> tuple[object, ...]:
        return (s.role, s.kind, s.tool_call_id, s.content, s.is_error)  # type: ignore[attr-defined]

    # every step but the harness hook (an info event in Inspect, not a message)
    expected = [s for s in make_trajectory("r1").steps if s.kind != StepKind.HOOK]
    assert [shape(s) for s in steps] == [shape(s) for s in expected]
    for got, want in zip(steps, expected, strict=True):
        # a failed call's output comes back with Inspect's error note appended
        assert (got.tool_output or "").startswith(want.tool_output or "")
        if not want.is_error:
            assert (got.tool_output or "") == (want.tool_output or "")
