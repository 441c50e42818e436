import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from lhbench.schema import RunStatus, StepKind
from lhbench.store import Store
from lhbench.testing import ModelStub, manifest_planner_script
from tests.harness.helpers import write_harness_pack


def env(home: Path) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("LHBENCH_")}
    e["LHBENCH_HOME"] = str(home)
    return e


def run_cmd(pack: Path, url: str, base: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "lhbench",
        "run",
        str(pack),
        "--harness",
        "native",
        "--model",
        f"openai:planner@{base}",
        "--db",
        url,
        *extra,
    ]


def test_killed_run_resumes_from_the_manifest(tmp_path: Path) -> None:
    pack = write_harness_pack(tmp_path / "pack", hooks=False)
    home = tmp_path / "home"
    url = f"sqlite:///{tmp_path / 'r.db'}"
    with ModelStub(manifest_planner_script(), latency=0.4) as stub:
        proc = subprocess.Popen(
            run_cmd(pack, url, stub.base_url),
            env=env(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        manifest = None
        while time.monotonic() < deadline:
            found = list(home.glob("runs/*/workspace/manifest.json"))
            if found:
                doc = json.loads(found[0].read_text())
                if doc["completed_steps"]:
                    manifest = found[0]
                    break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert manifest is not None
        done_before = json.loads(manifest.read_text())["completed_steps"]
        assert done_before and done_before != ["one", "two", "three"]
        stub.reset()
        res = subprocess.run(
            run_cmd(pack, url, stub.base_url),
            env=env(home),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == 0, res.stderr
    workspace = manifest.parent
    assert json.loads(manifest.read_text())["completed_steps"] == ["one", "two", "three"]
    assert [(workspace / f"{s}.txt").read_text() for s in ("one", "two", "three")] == [
        "one",
        "two",
        "three",
    ]
    with Store.open(url) as store:
        [run] = store.list_runs()
        assert run.status == RunStatus.COMPLETED and run.metadata["resumed"] is True
        traj = store.get_trajectory(run.id)
    # every step before the kill is kept (journaled as it happened), then the resumption
    [note] = [s for s in traj.steps if s.metadata.get("resumed")]
    before, after = traj.steps[: note.index], traj.steps[note.index + 1 :]
    assert [s.index for s in traj.steps] == list(range(len(traj.steps)))
    written_before = {
        s.tool_input["path"]
        for s in before
        if s.kind == StepKind.TOOL_CALL and s.tool_name == "write_file"
    }
    assert {f"{s}.txt" for s in done_before} <= written_before
    assert before[0].kind == StepKind.MESSAGE and before[1].tool_name == "read_manifest"
    calls = [s for s in after if s.kind == StepKind.TOOL_CALL]
    assert calls[0].tool_name == "read_manifest"
    rewritten = {c.tool_input["path"] for c in calls if c.tool_name == "write_file"}
    assert not rewritten & {f"{s}.txt" for s in done_before}  # completed steps were not redone
    again = subprocess.run(
        run_cmd(pack, url, "http://127.0.0.1:9/v1"),
        env=env(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0 and "run: planned 1 · skipped 1 (stored) · done 0" in again.stdout


def test_local_and_ray_executors_store_equivalent_runs(tmp_path: Path) -> None:
    pack = write_harness_pack(tmp_path / "pack", hooks=False)
    results = {}
    with ModelStub(manifest_planner_script(("a", "b"))) as stub:
        for executor in ("local", "ray"):
            url = f"sqlite:///{tmp_path / (executor + '.db')}"
            res = subprocess.run(
                run_cmd(pack, url, stub.base_url, "--executor", executor, "--repeats", "2"),
                env=env(tmp_path / f"home-{executor}"),
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert res.returncode == 0, res.stderr[-3000:]
            with Store.open(url) as store:
                results[executor] = {
                    r.id: (
                        r.status,
                        r.task_id,
                        r.repeat,
                        [(s.kind.value, s.tool_name) for s in store.get_trajectory(r.id).steps],
                    )
                    for r in store.list_runs()
                }
    assert len(results["local"]) == 2
    assert results["local"] == results["ray"]
