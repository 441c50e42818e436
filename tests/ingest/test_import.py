import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lhbench.jobs import file_digest
from lhbench.jobs.imports import file_identity
from lhbench.schema import RunStatus
from lhbench.store import Store
from tests.ingest.helpers import import_paths, write_zip
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

    from lhbench.reporting import ReportData, write_report

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
    [
        "claude_code_stream.jsonl",
        "claude_code_subagent.jsonl",
        "claude_code_session_out_of_order.jsonl",
        "codex_rollout.jsonl",
        "codex_rollout_harness.jsonl",
        "gemini_stream.jsonl",
        "generic.jsonl",
        "osworld_crash_after_steps.jsonl",
    ],
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


def test_sessions_merge_into_one_run_or_split_into_one_each(store: Store) -> None:
    merged = import_paths(store, [FIX / "claude_code_resumed.jsonl"])
    [run] = store.list_runs()
    assert run.status == RunStatus.INCOMPLETE and run.metadata["sessions"] == 2
    assert merged.outcome.files[0].sessions == 2 and not merged.outcome.files[0].split
    assert len(store.get_trajectory(run.id).steps) == 8
    split = import_paths(
        store, [FIX / "claude_code_resumed.jsonl"], split_sessions=True, replace=True
    )
    runs = {r.id.rsplit("-", 1)[1]: r for r in store.list_runs()}
    assert sorted(runs) == ["s1", "s2"] and split.runs == 2
    assert (runs["s1"].status, runs["s2"].status) == (RunStatus.COMPLETED, RunStatus.INCOMPLETE)
    assert runs["s1"].cost_usd == pytest.approx(0.0412) and runs["s2"].cost_usd is None
    # both runs carry the hash of the whole file, known only once it was read to the end
    digest = file_digest(FIX / "claude_code_resumed.jsonl")
    assert {r.metadata["sha256"] for r in runs.values()} == {digest}


def test_cli_states_how_sessions_were_imported(tmp_path: Path) -> None:
    from tests.cli.helpers import cli

    db = f"sqlite:///{tmp_path / 'i.db'}"
    merged = cli("import", "auto", str(FIX / "claude_code_resumed.jsonl"), "--db", db)
    assert merged.exit_code == 0, merged.stderr
    assert "2 sessions, merged into one run (the last session decides its status" in merged.stdout
    split = cli(
        "import", "auto", str(FIX / "claude_code_resumed.jsonl"), "--db", db,
        "--split-sessions", "--replace", "--json",
    )  # fmt: skip
    out = json.loads(split.stdout)
    assert out["runs"] == 2 and out["sessions"] == "split"
    assert out["multi_session_files"] == [
        {"path": str(FIX / "claude_code_resumed.jsonl"), "sessions": 2, "runs": 2}
    ]


def test_osworld_crash_is_recognised_and_stored_failed(store: Store) -> None:
    res = import_paths(store, [FIX / "osworld_crash.jsonl"])
    [run] = store.list_runs()
    assert res.runs == 1 and run.harness == "osworld" and run.status == RunStatus.FAILED
    assert run.error == "Time limit exceeded in chrome/bb5e4c0d-f964-439c-97b6-bdb9747de3f4"


def test_directory_import_goes_on_past_bad_files_and_sums_up(store: Store, tmp_path: Path) -> None:
    src = tmp_path / "mixed"
    src.mkdir()
    (src / "a_garbage.jsonl").write_bytes(b"\x00\xff\xfe not json at all\n" * 3)
    (src / "b_stream.jsonl").write_bytes((FIX / "claude_code_stream.jsonl").read_bytes())
    (src / "c_empty.json").write_text("")
    (src / "d_subagent.jsonl").write_bytes((FIX / "claude_code_subagent.jsonl").read_bytes())
    res = import_paths(store, [src])
    assert res.files == 4 and res.runs == 2 and len(res.failed) == 2
    assert all("format not recognised" in e for e in res.failed)
    sub = next(r for r in store.list_runs() if r.source.endswith("d_subagent.jsonl"))
    # sub-agent ids and usage per model survive the store
    steps = store.get_trajectory(sub.id).steps
    assert {s.agent_id for s in steps} == {None, "toolu_01Tk"}
    assert set(sub.model_usage) == {"claude-opus-4-6", "claude-haiku-4-5"}
    assert sub.metadata["task_text"] == "Remove unused CSS from the shop front page."


def test_a_stopped_import_leaves_a_failed_run_never_a_running_one(
    store: Store, tmp_path: Path
) -> None:
    lines = (FIX / "claude_code_stream.jsonl").read_text().splitlines()
    lines[6] = '{"type": "assistant", "message": 7}'
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    res = import_paths(store, [bad], strict=True)
    [run] = store.list_runs()
    assert run.status == RunStatus.FAILED and run.error.startswith("import stopped:")
    assert f"{bad}:7:" in run.error and res.failed and f"{bad}:7:" in res.failed[0]
    assert len(store.get_trajectory(run.id).steps) == 5  # what came before the bad line


def test_file_identity_samples_large_files(tmp_path: Path) -> None:
    small = tmp_path / "s.jsonl"
    small.write_bytes(b'{"a": 1}\n')
    assert file_identity(small) == file_digest(small)  # small files: their SHA-256
    big = tmp_path / "b.jsonl"
    block = b"x" * (1 << 20)
    big.write_bytes(block * 12)
    same = tmp_path / "c.jsonl"
    same.write_bytes(block * 12)
    other = tmp_path / "d.jsonl"
    other.write_bytes(block * 11 + b"y" + block[1:])  # differs inside the last sampled block
    assert file_identity(big) == file_identity(same) != file_identity(other)
    assert file_identity(big) != file_digest(big)


def test_numbers_past_64_bits_are_kept_as_text_and_runs_save_again(
    store: Store, tmp_path: Path
) -> None:
    # an .eval sample's scores past 2**63: PostgreSQL keeps the float 1e21 exactly and
    # gives it back as an integer no JSON encoder would write again
    doc = json.loads((FIX / "inspect_log.json").read_text())
    doc["samples"][0]["scores"] = {"check": {"value": 1e21, "answer": -1e300}}
    members = {"header.json": json.dumps({k: v for k, v in doc.items() if k != "samples"})}
    for s in doc["samples"]:
        members[f"samples/{s['id']}_epoch_{s['epoch']}.json"] = json.dumps(s)
    path = write_zip(tmp_path / "big.eval", {k: v.encode() for k, v in members.items()})
    res = import_paths(store, [path])
    assert res.failed == [] and res.runs == 2
    run = next(r for r in store.list_runs() if r.metadata["sample_id"] == doc["samples"][0]["id"])
    assert run.metadata["scores"]["check"] == {
        "value": "1e+21",
        "answer": "-1e+300",
    }
    assert run.metadata["sha256"] == file_digest(path)
    again = {**run.metadata, "note": "checked"}
    store.save_run(run.model_copy(update={"metadata": again}))  # saves again as read
    assert store.get_run(run.id).metadata == again
