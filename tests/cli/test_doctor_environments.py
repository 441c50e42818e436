"""`lhbench doctor` lists what each environment needs and whether it is here (issue 25)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import cli


def test_doctor_names_each_environments_needs_and_how_to_install_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "playwright", None)  # as on a plain `pip install lhbench`
    ran = cli("doctor", "--no-self-test", "--json", env={"LHBENCH_HOME": str(tmp_path / "home")})
    doc = json.loads(ran.stdout)
    envs = doc["environments"]
    assert {"figma", "content", "gui"} <= set(envs)
    assert any(e.startswith("cli:") for e in envs)
    figma = {r["name"]: r for r in envs["figma"]}
    assert figma["playwright"]["present"] is False
    assert figma["playwright"]["install"] == "pip install 'lhbench[figma]'"
    assert {r["name"]: r["install"] for r in envs["content"]}["playwright"] == (
        "pip install 'lhbench[content]'"
    )
    text = cli("doctor", "--no-self-test", env={"LHBENCH_HOME": str(tmp_path / "home")})
    assert "figma: playwright NO" in text.stdout
    assert "pip install 'lhbench[figma]'" in text.stdout


def test_every_extra_an_error_names_is_declared() -> None:
    import tomllib

    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    for extra in ("figma", "content"):
        assert any(d.startswith("playwright") for d in extras[extra])
