"""The Python API: the README's notebook example runs, inside an event loop too."""

import asyncio
import contextlib
import io
import re
from pathlib import Path

import pytest

import lhbench
from lhbench.config import load_settings
from lhbench.errors import ConfigError
from lhbench.testing import ModelStub, auto_script

README = Path(__file__).resolve().parents[1] / "README.md"


def _notebook_block() -> str:
    text = README.read_text()
    marker = text.index("<!-- notebook example")
    return re.search(r"```python\n(.*?)```", text[marker:], re.S).group(1)  # type: ignore[union-attr]


def test_the_readme_notebook_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LHBENCH_HOME", str(tmp_path / ".lhbench"))
    scope: dict[str, object] = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(_notebook_block(), "README.md", "exec"), scope)
    runs, grades, board = scope["runs"], scope["grades"], scope["board"]
    assert len(runs) == 4 and all(r.status.value == "completed" for r in runs)  # type: ignore[attr-defined]
    assert len(grades) == 4 * 3 and all(g.status.value == "ok" for g in grades)  # type: ignore[attr-defined]
    [row] = board  # type: ignore[misc]
    # the board's score is the mean over the runs (one per task) of the judges' mean
    per_run: dict[str, list[float]] = {}
    for g in grades:  # type: ignore[attr-defined]
        per_run.setdefault(g.run_id, []).append(g.tier_score)
    expected = sum(sum(v) / len(v) for v in per_run.values()) / len(per_run)
    assert row["n"] == 4 and row["score"] == pytest.approx(expected, abs=1e-9)
    assert out.getvalue().startswith("4 runs, 12 grades\n")
    # the CLI sees what the notebook stored: the same command finds everything done
    again_scope: dict[str, object] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(_notebook_block(), "README.md", "exec"), again_scope)
    assert [r.id for r in again_scope["runs"]] == [r.id for r in runs]  # type: ignore[attr-defined]


def test_the_api_works_inside_a_running_event_loop(tmp_path: Path) -> None:
    """A notebook cell runs in a live event loop: asyncio.run alone would refuse."""

    async def cell() -> list[lhbench.Report]:
        with (
            ModelStub(auto_script()) as stub,
            lhbench.open_store(f"sqlite:///{tmp_path / 'nb.db'}") as store,
        ):
            runs = lhbench.run_agents(
                "lhbench-samples",
                model=f"openai:stub-agent-b@{stub.base_url}",
                tasks=["ini-to-json"],
                store=store,
                settings=load_settings(home=tmp_path / "home"),
            ).runs
            labels = lhbench.verify("lhbench-samples", store=store).labels
            logs = lhbench.export_inspect(tmp_path / "logs", formats=["eval"], store=store).paths
            return [runs, labels, logs]  # type: ignore[list-item]

    runs, labels, logs = asyncio.run(cell())
    assert [r.task_id for r in runs] == ["ini-to-json"]  # type: ignore[attr-defined]
    assert {lab.run_id for lab in labels} == {runs[0].id}  # type: ignore[index]
    # the same run, read back by Inspect's own reader, with the task's check as a score
    from inspect_ai.log import read_eval_log

    [path] = logs  # type: ignore[misc]
    log = read_eval_log(str(path))
    [sample] = log.samples or []
    assert sample.uuid == runs[0].id  # type: ignore[index]
    assert sample.scores["verify"].value == ("C" if labels[0].passed else "I")  # type: ignore[index]


def test_a_report_table_that_does_not_exist_names_the_ones_there_are(tmp_path: Path) -> None:
    with lhbench.open_store(f"sqlite:///{tmp_path / 'e.db'}") as store:
        rep = lhbench.report(store=store)
        with pytest.raises(ConfigError, match="the report has"):
            rep.table("nope")
