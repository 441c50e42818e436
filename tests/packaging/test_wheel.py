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


def test_wheel_installs_and_runs_the_demo_and_the_web_app(tmp_path: Path) -> None:
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

    demo = subprocess.run(
        [lhbench, "demo"], capture_output=True, text=True, cwd=work, env=env, timeout=900
    )
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert "local model stub answers every model request" in demo.stdout
    assert (work / ".lhbench" / "report" / "report.html").is_file()
    assert "Ablation by skill" in (work / ".lhbench" / "report" / "report.md").read_text()

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
