"""A third-party plugin, installed from its own package, works through the CLI and the API.

``acme_plugin/`` is a tiny package declaring an ``acme-log`` transcript format and two
state checks by entry points, plus two bad entry points (a name that clashes with a
built-in format, an object that does not exist). It is installed with lhbench into a
fresh venv; nothing is installed into the environment running the tests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = Path(__file__).resolve().parent / "acme_plugin"
SECRET = Path("/var/tmp/acme-lhbench-secret.txt")

pytestmark = pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LHBENCH_", "PYTHON"))}
    env.pop("VIRTUAL_ENV", None)
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("plugin-venv")
    venv = tmp / "venv"
    env = _env()
    subprocess.run(
        ["uv", "venv", "--python", sys.executable, str(venv)],
        check=True, capture_output=True, env=env, timeout=300,
    )  # fmt: skip
    python = str(venv / "bin" / "python")
    # lhbench as a developer has it, and the plugin as a user installs it (built, not linked)
    plugin_src = tmp / "acme_plugin"
    shutil.copytree(PLUGIN, plugin_src)
    subprocess.run(
        ["uv", "pip", "install", "--python", python, "-e", str(ROOT), str(plugin_src)],
        check=True, capture_output=True, env=env, timeout=900,
    )  # fmt: skip
    return venv


def _lhbench(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "lhbench"), *args],
        capture_output=True, text=True, cwd=cwd, env=_env(), timeout=600,
    )  # fmt: skip


def _acme_log(path: Path) -> Path:
    lines = [
        {"acme": 1, "who": "user", "t": 1767225600, "text": "Write a README that names acme."},
        {"acme": 1, "who": "call", "t": 1767225601, "id": "c1", "tool": "write_file",
         "args": {"path": "README.md", "content": "# Built by ACME\n"}},
        {"acme": 1, "who": "result", "t": 1767225602, "id": "c1", "out": "wrote README.md"},
        {"acme": 1, "who": "bot", "t": 1767225603, "text": "Done."},
        {"acme": 1, "who": "end", "t": 1767225604, "model": "acme:bot-1", "ok": True,
         "in": 120, "out": 30},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _pack(root: Path) -> Path:
    (root / "tasks" / "readme").mkdir(parents=True)
    (root / "pack.yaml").write_text(
        "id: acme-pack\nversion: 1.0\nenvironment: filesystem\ndescription: plugin checks\n"
    )
    (root / "tasks" / "readme" / "task.yaml").write_text(
        textwrap.dedent(
            """\
            title: Write a README
            instruction: Write a README that names acme.
            environment:
              checks: [acme-readme, acme-snoop]
            """
        )
    )
    return root


def test_plugins_list_shows_the_plugin_and_what_it_could_not_register(
    venv: Path, tmp_path: Path
) -> None:
    res = _lhbench(venv, "plugins", "list", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    ok = {(r["group"], r["name"]): r for r in rows if r["error"] is None}
    bad = [r for r in rows if r["error"] is not None]
    assert ok[("lhbench.formats", "acme-log")]["distribution"] == "acme-lhbench"
    assert ok[("lhbench.formats", "acme-log")]["version"] == "0.3.1"
    checks = {n: r["builtin"] for (g, n), r in ok.items() if g == "lhbench.checks"}
    assert {n for n, builtin in checks.items() if not builtin} == {"acme-readme", "acme-snoop"}
    # lhbench's own checks are entries of the same group
    assert {n for n, builtin in checks.items() if builtin} == {
        "verify",
        "hooks",
        "figma",
        "content",
    }
    # built-ins are registered the same way, and come first
    assert ok[("lhbench.formats", "codex")]["builtin"] is True
    assert ok[("lhbench.harnesses", "claude-code")]["builtin"] is True
    assert rows[0]["builtin"] is True
    # the clash and the missing object are reported against the plugin, not fatal
    assert {(r["name"], r["distribution"]) for r in bad} == {
        ("codex", "acme-lhbench"),
        ("broken", "acme-lhbench"),
    }
    clash = next(r for r in bad if r["name"] == "codex")
    assert "already registered by lhbench" in clash["error"]
    assert "AttributeError" in next(r for r in bad if r["name"] == "broken")["error"]


def test_plugin_format_imports_and_plugin_checks_label_in_the_sandbox(
    venv: Path, tmp_path: Path
) -> None:
    log = _acme_log(tmp_path / "session.acme.jsonl")
    pack = _pack(tmp_path / "acme-pack")
    SECRET.write_text("host secret 7f3a\n")
    try:
        # the plugin check, run in this process, can read the host file: not vacuous
        probe = subprocess.run(
            [str(venv / "bin" / "python"), "-c",
             "from acme_lhbench import SnoopCheck; print(SnoopCheck()(None, None).passed)"],
            capture_output=True, text=True, env=_env(), timeout=120,
        )  # fmt: skip
        assert probe.stdout.strip() == "True", probe.stderr
        res = _lhbench(
            venv, "import", "auto", str(log), "--pack", str(pack), "--task", "readme", "--json",
            cwd=tmp_path,
        )  # fmt: skip
        assert res.returncode == 0, res.stdout + res.stderr
    finally:
        SECRET.unlink(missing_ok=True)
    # what was stored, read through the API in the plugin's venv
    script = textwrap.dedent(
        """\
        import json, lhbench
        with lhbench.open_store() as store:
            [run] = store.list_runs()
            steps = store.get_trajectory(run.id).steps
            labels = {l.source: [l.passed, l.detail or l.error] for l in store.list_labels()}
        print(json.dumps({
            "harness": run.harness, "model": run.model, "status": run.status.value,
            "tokens": [run.usage.input_tokens, run.usage.output_tokens],
            "steps": [[s.index, s.kind.value, s.tool_name] for s in steps],
            "labels": labels,
        }))
        """
    )
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", script],
        capture_output=True, text=True, cwd=tmp_path, env=_env(), timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert (got["harness"], got["model"], got["status"]) == (
        "acme-agent",
        "acme:bot-1",
        "completed",
    )
    assert got["tokens"] == [120, 30]
    assert got["steps"] == [
        [0, "message", None],
        [1, "tool_call", "write_file"],
        [2, "tool_result", "write_file"],
        [3, "message", None],
    ]
    # the README check passed on the replayed state; the snoop check saw nothing of the host
    assert got["labels"]["plugin:readme/acme-readme"] == [True, "mentions acme"]
    passed, detail = got["labels"]["plugin:readme/acme-snoop"]
    assert passed is False and detail.startswith("blocked"), detail


def test_plugin_format_through_the_api_and_an_unknown_check_is_a_pack_error(
    venv: Path, tmp_path: Path
) -> None:
    log = _acme_log(tmp_path / "s.jsonl")
    script = textwrap.dedent(
        f"""\
        import lhbench
        runs = lhbench.import_transcripts([{str(log)!r}], fmt="acme-log").runs
        print(runs[0].harness, len(runs))
        """
    )
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", script],
        capture_output=True, text=True, cwd=tmp_path, env=_env(), timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["acme-agent", "1"]
    pack = _pack(tmp_path / "p")
    task = pack / "tasks" / "readme" / "task.yaml"
    task.write_text(task.read_text().replace("acme-snoop", "acme-typo"))
    res = _lhbench(venv, "packs", "validate", str(pack), cwd=tmp_path)
    assert res.returncode == 2
    assert "no state check 'acme-typo' is installed" in res.stderr
    assert "acme-readme" in res.stderr and "task.yaml" in res.stderr
