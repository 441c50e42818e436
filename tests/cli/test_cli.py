import json
import os
import subprocess
import sys
from pathlib import Path

from lhbench.store import Store
from tests.cli.helpers import cli
from tests.factories import make_run, make_trajectory


def lhbench(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real entry point in a subprocess: the one smoke test of ``python -m lhbench``."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("LHBENCH_")}
    full_env.update(env or {})
    full_env["COLUMNS"] = "200"
    return subprocess.run(
        [sys.executable, "-m", "lhbench", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
    )


def test_demo_runs_twice_on_defaults(tmp_path: Path) -> None:
    first = lhbench("demo", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    out = first.stdout
    assert "lhbench-rubrics" in out and "figma-to-code-v1.1" in out
    # no model configured: it says the stub answered, and that its numbers are placeholders
    assert "local model stub answers every model request" in out and "placeholders" in out
    # every pillar ran: 12 agent runs checked, 2 tiers x 12 runs x 3 judges, pairwise, AJ
    assert out.count("run: planned 4 · skipped 0 (stored) · done 4 · failed 0") == 3
    assert out.count("grade: planned 36 · skipped 0 (stored) · done 36 · failed 0") == 2
    assert "pairwise: planned 8 · skipped 0 (stored) · done 8 · failed 0" in out
    assert "verify: planned 48 · skipped 0 (stored) · done 48 · failed 0" in out  # AJ fixtures
    assert out.count("judge-states: planned 48 · skipped 0 (stored) · done 48 · failed 0") == 2
    report = (tmp_path / ".lhbench" / "report" / "report.md").read_text()
    assert "placeholders" in report and "Ablation by skill" in report
    with Store.open(f"sqlite:///{tmp_path / '.lhbench' / 'lhbench.db'}") as store:
        labels = [lab for lab in store.list_labels() if lab.run_id.startswith("aj-ds-mini--")]
        assert sum(lab.passed is True for lab in labels) == 24
        assert sum(lab.passed is False for lab in labels) == 24
    # the same command again finds everything stored and makes no model call
    second = lhbench("demo", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert " done 0 · failed 0" in second.stdout and " done 4" not in second.stdout
    assert "done 36" not in second.stdout and "done 48" not in second.stdout


def test_settings_from_toml_and_environment(tmp_path: Path) -> None:
    (tmp_path / "lhbench.toml").write_text('db_url = "sqlite:///from-toml.db"\n')
    assert cli("db", "upgrade", cwd=tmp_path).returncode == 0
    assert (tmp_path / "from-toml.db").is_file()
    res = cli("db", "upgrade", cwd=tmp_path, env={"LHBENCH_DB_URL": "sqlite:///from-env.db"})
    assert res.returncode == 0 and (tmp_path / "from-env.db").is_file()
    (tmp_path / "lhbench.toml").write_text("db_url = [\n")
    bad = cli("db", "upgrade", cwd=tmp_path)
    assert bad.returncode == 2 and "lhbench.toml" in bad.stderr and "Traceback" not in bad.stderr


def test_runs_list_json_counts(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    with Store.open(url) as store:
        store.save_run(make_run("r1", versions={"skill": "v1"}))
        store.save_run(make_run("r2", harness="codex", versions={"skill": "none"}))
        store.save_trajectory(make_trajectory("r1"))
    res = cli("runs", "list", "--db", url, "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    rows = {r["id"]: r for r in json.loads(res.stdout)}
    assert rows["r1"]["harness"] == "claude-code" and rows["r1"]["versions"] == {"skill": "v1"}
    assert (rows["r1"]["steps"], rows["r1"]["tool_calls"], rows["r1"]["errors"]) == (7, 2, 1)
    assert rows["r2"]["status"] == "completed" and rows["r2"]["steps"] == 0
    only = json.loads(
        cli("runs", "list", "--db", url, "--json", "--versions", "skill=none", cwd=tmp_path).stdout
    )
    assert [r["id"] for r in only] == ["r2"]
    table = cli("runs", "list", "--db", url, cwd=tmp_path)
    assert "Runs (2)" in table.stdout and "skill=v1" in table.stdout
    bad = cli("runs", "list", "--db", url, "--versions", "skill", cwd=tmp_path)
    assert bad.returncode == 2 and "expected key=value" in bad.stderr


def test_schema_export_and_db_upgrade(tmp_path: Path) -> None:
    res = cli("schema", "export", str(tmp_path / "schemas"), cwd=tmp_path)
    assert res.returncode == 0
    assert json.loads((tmp_path / "schemas" / "Grade.schema.json").read_text())["title"] == "Grade"
    up = cli("db", "upgrade", "--db", f"sqlite:///{tmp_path / 'u.db'}", cwd=tmp_path)
    assert up.returncode == 0 and "was empty" in up.stdout
    again = cli("db", "upgrade", "--db", f"sqlite:///{tmp_path / 'u.db'}", cwd=tmp_path)
    from lhbench.store import head_revision

    assert f"was {head_revision()}" in again.stdout  # the newest migration
    broken = cli("db", "upgrade", "--db", "nonsense://", cwd=tmp_path)
    assert broken.returncode == 2 and "Traceback" not in broken.stderr
