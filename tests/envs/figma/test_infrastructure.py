"""An infrastructure failure is never a score (issue 25 item 4).

A plain ``pip install lhbench`` has no playwright: ``lhbench figma check`` said ``deploy
FAILED … ModuleNotFoundError`` and aggregate 0.00, as if the agent's app were broken. What
the check needs and lacks is a typed error naming what to install, and the CLI exits 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lhbench.envs.figma import check_app, require_capture
from lhbench.errors import InfrastructureError, MissingDependency
from tests.cli.helpers import cli
from tests.envs.figma.helpers import STORE, static_copy
from tests.envs.figma.test_checks import HOME, gt_dir


def _check(tmp_path: Path, *extra: str) -> object:
    gt = gt_dir(tmp_path / "gt", HOME)
    app = static_copy(tmp_path / "app")
    return cli(
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
        *extra,
        env={"LHBENCH_HOME": str(tmp_path / "home")},
    )


def test_figma_check_without_playwright_is_an_error_not_a_failed_deploy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "playwright", None)  # as on a plain `pip install lhbench`
    ran = _check(tmp_path, "--json")
    assert ran.exit_code == 2, ran.stdout  # type: ignore[attr-defined]
    assert ran.stdout == ""  # type: ignore[attr-defined]  # no report, no 0.00, no FAILED
    assert "playwright is not installed" in ran.stderr  # type: ignore[attr-defined]
    assert "pip install 'lhbench[figma]'" in ran.stderr  # type: ignore[attr-defined]


def test_figma_check_without_a_browser_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("lhbench.envs.browser.chromium_path", lambda: None)
    with pytest.raises(MissingDependency, match="Chromium is not installed") as info:
        check_app(static_copy(tmp_path / "app"), gt_dir(tmp_path / "gt", HOME))
    assert isinstance(info.value, InfrastructureError) and info.value.exit_code == 2
    assert "apt-get install chromium-headless-shell" in info.value.install


def test_an_unreachable_registry_is_infrastructure(tmp_path: Path) -> None:
    from lhbench.envs.figma import build_app
    from lhbench.sandbox import get_sandbox

    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text(
        '{"name": "a", "version": "1.0.0", "dependencies": {"left-pad": "1.3.0"}}'
    )
    (app / ".npmrc").write_text("fetch-retries=0\n")  # fail at once, not after backoffs
    # a closed port on 127.0.0.1: npm cannot reach the registry (ECONNREFUSED)
    with pytest.raises(InfrastructureError, match="could not be reached"):
        build_app(
            app,
            tmp_path / "work",
            sandbox=get_sandbox(),
            registry="http://127.0.0.1:9/",
            install_timeout=120,
        )


def test_require_capture_passes_where_everything_is_installed() -> None:
    require_capture()  # CI installs playwright and Chromium: nothing is missing


def test_a_capture_that_cannot_start_in_the_sandbox_is_infrastructure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lhbench.envs.figma.capture import CapturePlan, capture_sandboxed
    from lhbench.sandbox import Finished, get_sandbox

    def cannot_start(*_: object, **__: object) -> Finished:
        err = b"python: Error while finding module specification (ModuleNotFoundError: x)"
        return Finished(1, b"", err, False, "bubblewrap")

    monkeypatch.setattr("lhbench.envs.figma.capture.run_sandboxed_sync", cannot_start)
    plan = CapturePlan(dist=str(tmp_path), out=str(tmp_path / "out"), frames=[])
    with pytest.raises(InfrastructureError, match="the capture could not start"):
        capture_sandboxed(plan, get_sandbox())
