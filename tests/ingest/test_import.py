import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lhbench.schema import RunStatus
from lhbench.store import Store
from tests.ingest.helpers import import_paths
from tests.packs.test_loader import write_pack

FIX = Path(__file__).parent / "fixtures"


def test_import_directory_into_the_store_and_reimport_is_a_noop(
    store: Store, tmp_path: Path
) -> None:
    src = tmp_path / "transcripts"
    src.mkdir()
    for name in (
        "claude_code_stream.jsonl",
        "claude_code_killed.jsonl",
        "codex_exec.jsonl",
        "gemini_stream.jsonl",
        "inspect_log.json",
        "osworld_traj.jsonl",
    ):
        (src / name).write_bytes((FIX / name).read_bytes())
    summary = import_paths(store, [src], harness=None, versions={"skill": "v1"})
    assert summary.files == 6 and summary.runs == 7  # the Inspect log holds two samples
    assert summary.incomplete == 1 and len(summary.skipped_lines) == 1  # the killed Claude run
    runs = {
        r.source.split("/")[-1] + (r.task_id if "inspect" in r.source else ""): r
        for r in store.list_runs()
    }
    cc = next(r for r in store.list_runs() if r.source.endswith("claude_code_stream.jsonl"))
    assert (cc.pack_id, cc.task_id, cc.harness, cc.model) == (
        "imported",
        "claude_code_stream",
        "claude-code",
        "claude-opus-4-6",
    )
    assert cc.status == RunStatus.COMPLETED and cc.cost_usd == pytest.approx(0.1234)
    assert cc.versions == {"skill": "v1"} and cc.metadata["import"] == "done"
    assert len(store.get_trajectory(cc.id).steps) == 11
    killed = next(r for r in store.list_runs() if r.source.endswith("claude_code_killed.jsonl"))
    assert killed.status == RunStatus.INCOMPLETE
    assert len(runs) == 7
    again = import_paths(store, [src])
    # every file is stored whole: each is skipped without being read again
    assert again.runs == 0 and again.already == 6 and again.outcome.summary.skipped == 6
    assert len(store.list_runs()) == 7


def test_pack_task_and_partial_import_is_redone(store: Store, tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack")
    s = import_paths(
        store,
        [FIX / "codex_exec.jsonl"],
        pack=str(pack),
        task="t1",
        harness="codex-0.146",
        model="openai:gpt-5.2",
    )
    run = store.get_run(s.run_ids[0])
    assert (run.pack_id, run.task_id, run.harness, run.model) == (
        "demo-pack",
        "t1",
        "codex-0.146",
        "openai:gpt-5.2",
    )
    # the pack was recorded, and the run carries its content hash
    assert run.pack_hash and store.latest_pack_hash("demo-pack") == run.pack_hash
    # a run left 'partial' by a killed import is imported again, not skipped
    store.save_run(run.model_copy(update={"metadata": {**run.metadata, "import": "partial"}}))
    store.delete_steps(run.id)
    again = import_paths(store, [FIX / "codex_exec.jsonl"], pack=str(pack), task="t1")
    assert again.runs == 1 and len(store.get_trajectory(run.id).steps) == 11


def test_cli_import_json_and_strict(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LHBENCH_")}
    url = f"sqlite:///{tmp_path / 'i.db'}"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "lhbench",
            "import",
            "auto",
            str(FIX / "gemini_stream.jsonl"),
            str(FIX / "claude_code_killed.jsonl"),
            "--db",
            url,
            "--versions",
            "skill=none",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["runs"] == 2 and out["incomplete"] == 1
    assert out["by_format"] == {"gemini-cli": 1, "claude-code": 1}
    assert any(":4: truncated last line" in line for line in out["skipped_lines"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        (FIX / "codex_exec.jsonl").read_text().replace('{"type":"turn.started"}', "{oops")
    )
    strict = subprocess.run(
        [sys.executable, "-m", "lhbench", "import", "codex", str(bad), "--db", url, "--strict"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert (
        strict.returncode == 2 and f"{bad}:2:" in strict.stderr and "Traceback" not in strict.stderr
    )
    lenient = subprocess.run(
        [sys.executable, "-m", "lhbench", "import", "codex", str(bad), "--db", url],
        capture_output=True,
        text=True,
        env=env,
    )
    assert (
        lenient.returncode == 0
        and "1 line(s) skipped" in lenient.stdout
        and f"{bad}:2:" in lenient.stderr
    )


def test_report_gains_failure_tables(store: Store, tmp_path: Path) -> None:
    import csv

    from lhbench.report import ReportData, write_report

    import_paths(
        store,
        [FIX / "codex_exec.jsonl", FIX / "gemini_stream.jsonl", FIX / "claude_code_stream.jsonl"],
    )
    files = write_report(ReportData.from_store(store), tmp_path / "r")
    with (tmp_path / "r" / "failure_types.csv").open() as f:
        rows = {r["error type"]: r for r in csv.DictReader(f)}
    assert rows["total"]["count"] == "5"  # codex 2, gemini 1, claude 2
    assert rows["git error"]["recovered"] == "1" and rows["type error"]["count"] == "2"
    with (tmp_path / "r" / "failure_agents.csv").open() as f:
        agents = {r["group"]: r for r in csv.DictReader(f)}
    codex = agents["codex / unknown"]
    assert (codex["runs"], codex["errors"], codex["tool calls"]) == ("1", "2", "4")
    assert float(codex["failure %"]) == 50.0 and float(codex["recovery %"]) == 50.0
    assert "Failures and recovery" in files.markdown.read_text()


@pytest.mark.parametrize(
    "name",
    ["claude_code_stream.jsonl", "codex_rollout.jsonl", "gemini_stream.jsonl", "generic.jsonl"],
)
def test_stored_steps_equal_parsed_steps(store: Store, name: str) -> None:
    from lhbench.ingest import FORMATS, ImportContext, detect_format, read_transcripts

    s = import_paths(store, [FIX / name])
    [(_info, steps)] = [
        (i, list(st))
        for i, st in read_transcripts(detect_format(FIX / name), ImportContext(path=FIX / name))
    ]
    assert store.get_trajectory(s.run_ids[0]).steps == steps
    assert FORMATS  # the registry is importable from the package face
