"""The built wheel works on its own: installed in a fresh venv outside the checkout.

It must carry everything lhbench reads at run time (bundled packs, migrations, web
templates and static files, the stub's scripts): the demo and the web app run from the
installed package, with nothing read from this source tree.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from lhbench.store import Store

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LHBENCH_", "PYTHON"))}
    env.pop("VIRTUAL_ENV", None)
    env["HOME"] = str(os.environ.get("HOME", home))  # uv's cache
    return env


def test_wheel_installs_and_runs_the_demo_twice_and_the_web_app(tmp_path: Path) -> None:
    dist, venv, work = tmp_path / "dist", tmp_path / "venv", tmp_path / "work"
    work.mkdir()
    env = _clean_env(tmp_path)
    subprocess.run(
        ["uv", "build", "--wheel", "--out-dir", str(dist), str(ROOT)],
        check=True, capture_output=True, env=env, timeout=600,
    )  # fmt: skip
    [wheel] = dist.glob("lhbench-*.whl")
    subprocess.run(
        ["uv", "venv", "--python", sys.executable, str(venv)],
        check=True, capture_output=True, env=env, timeout=300,
    )  # fmt: skip
    python = venv / "bin" / "python"
    subprocess.run(
        ["uv", "pip", "install", "--python", str(python), str(wheel)],
        check=True, capture_output=True, env=env, timeout=900,
    )  # fmt: skip
    # the package imported is the installed one, not this checkout
    where = subprocess.run(
        [str(python), "-c", "import lhbench; print(lhbench.__file__)"],
        check=True, capture_output=True, text=True, cwd=work, env=env,
    ).stdout.strip()  # fmt: skip
    assert where.startswith(str(venv)) and not where.startswith(str(ROOT))
    lhbench = str(venv / "bin" / "lhbench")

    _demo_runs_twice(lhbench, work, env)

    port = _free_port()
    server = subprocess.Popen(
        [lhbench, "serve", "--port", str(port)],
        cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        body = ""
        # a first start compiles every module of the fresh venv: seconds on a quiet machine,
        # a minute when the other test worker and the rest of CI keep the cores busy
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as res:
                    body = res.read().decode()
                    status = res.status
                break
            except OSError:
                time.sleep(0.2)
        assert body, f"the web app did not answer (exit {server.poll()})"
        assert status == 200 and "lhbench" in body
        css = [line for line in body.split('"') if line.startswith("/static/") and "css" in line]
        assert css, "no stylesheet linked"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{css[0]}", timeout=5) as res:
            assert res.status == 200 and len(res.read()) > 100
    finally:
        server.terminate()
        server.wait(timeout=30)


def _demo_runs_twice(lhbench: str, work: Path, env: dict[str, str]) -> None:
    """``lhbench demo`` on the defaults runs every pillar; run again, it finds all stored.

    Here rather than from the checkout: the installed package must carry all it reads.
    """

    def demo() -> str:
        ran = subprocess.run(
            [lhbench, "demo"], capture_output=True, text=True, cwd=work, env=env, timeout=900
        )
        assert ran.returncode == 0, ran.stderr[-3000:]
        return ran.stdout

    out = demo()
    assert "lhbench-rubrics" in out and "figma-to-code-v1.1" in out
    # no model configured: it says the stub answered, and that its numbers are placeholders
    assert "local model stub answers every model request" in out and "placeholders" in out
    # every pillar ran: 12 agent runs checked, 2 tiers x 12 runs x 3 judges, pairwise, AJ
    assert out.count("run: planned 4 · skipped 0 (stored) · done 4 · failed 0") == 3
    assert out.count("grade: planned 36 · skipped 0 (stored) · done 36 · failed 0") == 2
    assert "pairwise: planned 8 · skipped 0 (stored) · done 8 · failed 0" in out
    assert "verify: planned 48 · skipped 0 (stored) · done 48 · failed 0" in out  # AJ fixtures
    assert out.count("judge-states: planned 48 · skipped 0 (stored) · done 48 · failed 0") == 2
    assert (work / ".lhbench" / "report" / "report.html").is_file()
    report = (work / ".lhbench" / "report" / "report.md").read_text()
    assert "placeholders" in report and "Ablation by skill" in report
    with Store.open(f"sqlite:///{work / '.lhbench' / 'lhbench.db'}") as store:
        labels = [lab for lab in store.list_labels() if lab.run_id.startswith("aj-ds-mini--")]
        assert sum(lab.passed is True for lab in labels) == 24
        assert sum(lab.passed is False for lab in labels) == 24
    # the same command again finds everything stored and makes no model call
    again = demo()
    assert " done 0 · failed 0" in again and " done 4" not in again
    assert "done 36" not in again and "done 48" not in again
