"""The sandbox as a user meets it: `lhbench doctor`, and what happens where none works."""

import json
from pathlib import Path

from lhbench.store import Store
from lhbench.testing import ModelStub, auto_script
from tests.cli.helpers import cli


def test_doctor_names_the_backend_and_proves_it_with_probes() -> None:
    res = cli("doctor", "--json")
    doc = json.loads(res.stdout)
    assert res.exit_code == 0, res.stdout
    assert doc["sandbox"] == "bubblewrap" and doc["backends"]["bubblewrap"] is None
    assert any("network" in line for line in doc["describe"])
    checks = {p["check"]: p["ok"] for p in doc["self_test"]}
    assert len(checks) == 11 and all(checks.values()), checks


def test_without_a_sandbox_runs_refuse_unless_told_and_then_say_so(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    env = {"LHBENCH_SANDBOX": "none", "LHBENCH_HOME": str(tmp_path / "home")}
    doctor = cli("doctor", "--json", env=env)
    assert doctor.exit_code == 1 and "--unsafe-no-sandbox" in json.loads(doctor.stdout)["error"]
    with ModelStub(auto_script()) as stub:
        model = f"openai:stub-agent-a@{stub.base_url}"
        args = ["run", "lhbench-samples", "--tasks", "ini-to-json", "--model", model, "--db", db]
        refused = cli(*args, env=env)
        assert refused.exit_code == 2 and "--unsafe-no-sandbox" in refused.stderr
        with Store.open(db) as store:
            assert store.list_runs() == []
        allowed = cli(*args, "--unsafe-no-sandbox", env=env)
        assert allowed.exit_code == 0, allowed.stdout + allowed.stderr
    with Store.open(db) as store:
        [run] = store.list_runs()
    assert run.metadata["unsandboxed"] is True and run.metadata["sandbox"] == "none"
    report = cli("report", "--db", db, "--out", str(tmp_path / "report"), env=env)
    assert report.exit_code == 0
    assert "1 of 1 runs ran without a sandbox" in (tmp_path / "report" / "report.md").read_text()
