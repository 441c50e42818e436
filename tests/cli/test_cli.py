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
