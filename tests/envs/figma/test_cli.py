"""`lhbench figma check` as a user runs it: the build and the browser in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import cli
from tests.envs.figma.helpers import STORE, static_copy
from tests.envs.figma.test_checks import HOME, gt_dir


def test_check_prints_json_and_exits_by_the_label(tmp_path: Path) -> None:
    gt = gt_dir(tmp_path / "gt", HOME)
    app = static_copy(tmp_path / "app")
    ran = cli(
        "figma",
        "check",
        str(app),
        "--gt",
        str(gt),
        "--design",
        str(STORE),
        "--work",
        str(tmp_path / "work"),
        "--offline",
        "--json",
        env={"LHBENCH_HOME": str(tmp_path / "home")},
    )
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    doc = json.loads(ran.stdout)
    assert doc["passed"] is True and doc["build"]["ok"] is True
    [frame] = doc["frames"]
    assert frame["resolved"] and frame["scores"]["text_recall"] >= 0.95
    assert Path(frame["screenshot"]).is_file()  # kept in --work for the user to look at


def test_check_refuses_what_it_cannot_use(tmp_path: Path) -> None:
    env = {"LHBENCH_HOME": str(tmp_path / "home")}
    app = static_copy(tmp_path / "app")
    missing = cli("figma", "check", str(tmp_path / "nope"), "--gt", str(tmp_path), env=env)
    assert missing.exit_code == 2 and "not a directory" in missing.stderr
    (tmp_path / "gt").mkdir()
    (tmp_path / "gt" / "manifest.json").write_text('{"frames": "all of them"}')
    bad = cli("figma", "check", str(app), "--gt", str(tmp_path / "gt"), env=env)
    assert bad.exit_code == 2 and "manifest.json" in bad.stderr and "frames" in bad.stderr
