"""What one run can do to the disk, to other runs, and to whoever starts lhbench (issue 27).

A per-run disk limit that ends the run as a disk limit; a volume of each run's own; a
``python -m lhbench`` that does not load plugins from the directory it is started in; and
no call in lhbench that turns data into code.
"""

from __future__ import annotations

import ast
import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import lhbench
from lhbench.harness import RunSpec, execute
from lhbench.models import resolve_model
from lhbench.sandbox import Limits, get_sandbox, policy_for, run_sandboxed_sync
from tests.harness.helpers import write_harness_pack
from tests.security.helpers import SPEC, bounded, shell, tool_returns


def _usage(root: Path) -> int:
    return sum(p.stat().st_blocks * 512 for p in root.rglob("*") if p.is_file())


def test_filling_the_workspace_with_many_files_is_a_disk_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lhbench.harness.runner as runner

    monkeypatch.setattr(runner, "AGENT_DISK_MB", 64)
    # 4 MiB files, one after another, up to 1.6 GiB: no one file is near the file limit
    fill = (
        "i=0; while [ $i -lt 400 ]; do head -c 4M /dev/zero > f$i.bin; i=$((i+1)); sleep 0.02; done"
    )
    with bounded(120):
        seen, res = shell(
            tmp_path, "for i in 1 2 3; do head -c 30M /dev/zero > /tmp/b$i || echo full; done", fill
        )
    # the private /tmp is as small as the disk limit; the workspace fill ends the run
    assert "full" in seen[0] and "No space left" in seen[0]
    assert res.run.status.value == "limit_exceeded"
    assert res.run.error is not None and "disk limit of 64 MiB" in res.run.error
    ws = Path(res.run.metadata["workspace"])
    assert _usage(ws) < 400 << 20  # stopped long before 1.6 GiB


def test_a_sandboxed_command_is_stopped_at_its_disk_limit(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    done = run_sandboxed_sync(
        get_sandbox(),
        [
            "/bin/sh",
            "-c",
            "i=0; while [ $i -lt 400 ]; do head -c 4M /dev/zero > f$i; "
            "i=$((i+1)); sleep 0.01; done; echo all-written",
        ],
        policy_for(ws, writable=[ws], limits=Limits(wall_s=120, disk_mb=32)),
    )
    assert done.disk_limit is not None and "all-written" not in done.text()
    assert "disk limit of 32 MiB" in str(done.disk_limit) and str(ws) in str(done.disk_limit)
    assert _usage(ws) < 300 << 20


def _run(home: Path, pack: Path, repeat: int, command: str) -> list[str]:
    def script(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if not tool_returns(messages):
            return ModelResponse(parts=[ToolCallPart("run_shell", {"command": command})])
        return ModelResponse(parts=[TextPart("done")])

    spec = RunSpec(
        pack_dir=str(pack),
        task_id="greet",
        harness="native",
        model=SPEC,
        home=str(home),
        repeat=repeat,
    )
    out = asyncio.run(execute(spec, model=FunctionModel(script)))
    return [f"{s.content}\n{s.tool_output or ''}" for s in out.trajectory.steps]


def test_the_volume_carries_nothing_from_one_run_to_the_next(tmp_path: Path) -> None:
    pack = write_harness_pack(tmp_path / "pack", hooks=False)
    with bounded(120):
        _run(tmp_path / "home", pack, 0, 'echo the-answer-is-42 > "$LHBENCH_VOLUME/answers.txt"')
        later = _run(tmp_path / "home", pack, 1, 'cat "$LHBENCH_VOLUME/answers.txt"; echo end')
    text = "\n".join(later)
    assert "end" in text and "the-answer-is-42" not in text


def test_python_m_lhbench_loads_no_plugin_from_the_current_directory(tmp_path: Path) -> None:
    marker = tmp_path / "plugin-loaded"
    dist = tmp_path / "evil_lhb-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: evil-lhb\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[lhbench.checks]\nevil = evil_lhb_mod:CHECK\n"
        "[lhbench.formats]\nevil = evil_lhb_mod:CHECK\n"
        "[lhbench.harnesses]\nevil = evil_lhb_mod:CHECK\n"
    )
    (tmp_path / "evil_lhb_mod.py").write_text(
        f"open({str(marker)!r}, 'w').write('loaded')\nCHECK = None\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "lhbench", "plugins", "list", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not marker.exists() and "evil" not in proc.stdout


# The three places the attack suite flagged: none is a call that runs code
_FLAGGED = {
    "reporting/inspect_log.py": "_write_eval",  # writes an Inspect ``.eval`` log (a zip)
    "ingest/inspect_log.py": "_read_eval",  # reads one
    "sandbox/base.py": "create_subprocess_exec",  # asyncio starting the sandbox's launcher
}
_CODE_LOADERS = {"eval", "exec", "compile", "__import__", "execfile"}


def test_nothing_in_lhbench_turns_data_into_code() -> None:
    src = Path(lhbench.__file__).parent
    found = []
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Name) and f.id in _CODE_LOADERS:
                found.append(f"{path.relative_to(src)}:{node.lineno} {f.id}(")
            # builtins.eval(...), yaml.load(...) without a safe loader, marshal.loads
            if isinstance(f, ast.Attribute):
                owner = f.value.id if isinstance(f.value, ast.Name) else ""
                if owner == "builtins" and f.attr in _CODE_LOADERS:
                    found.append(f"{path.relative_to(src)}:{node.lineno} builtins.{f.attr}(")
                if (owner, f.attr) in {
                    ("yaml", "load"),
                    ("yaml", "unsafe_load"),
                    ("marshal", "loads"),
                }:
                    found.append(f"{path.relative_to(src)}:{node.lineno} {owner}.{f.attr}(")
    assert found == []
    # each flagged name is what it looks like: a function of ours, or asyncio's
    for rel, name in _FLAGGED.items():
        text = (src / rel).read_text(encoding="utf-8")
        assert name in text
        tree = ast.parse(text)
        defs = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        assert name in defs or name in attrs


def test_a_pickle_is_only_read_from_lhbench_s_own_pipe() -> None:
    # the one pickle.loads: the step writer reads frames its parent (lhbench) writes to its
    # stdin; nothing else in lhbench unpickles
    src = Path(lhbench.__file__).parent
    users = sorted(
        str(p.relative_to(src))
        for p in src.rglob("*.py")
        if "pickle.load" in p.read_text(encoding="utf-8")
    )
    assert users == ["store/_step_writer.py"]


def test_a_cli_agent_filling_the_workspace_is_a_disk_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import stat

    import lhbench.harness.runner as runner

    monkeypatch.setattr(runner, "AGENT_DISK_MB", 32)
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    fake.write_text(
        '#!/bin/sh\n[ "$1" = --version ] && { echo 9.9.9; exit 0; }\n'
        "i=0; while [ $i -lt 400 ]; do head -c 4M /dev/zero > f$i.bin; i=$((i+1)); "
        "sleep 0.02; done\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("LHBENCH_CLAUDE_BIN", str(fake))
    pack = write_harness_pack(tmp_path / "pack", hooks=False)
    spec = RunSpec(
        pack_dir=str(pack),
        task_id="greet",
        harness="claude-code",
        model=resolve_model("anthropic:attacker@http://127.0.0.1:9").model_dump(mode="json"),
        home=str(tmp_path / "home"),
    )
    with bounded(120):
        out = asyncio.run(execute(spec))
    assert out.run.status.value == "limit_exceeded", out.run.error
    assert out.run.error is not None and "disk limit of 32 MiB" in out.run.error
    assert _usage(Path(out.run.metadata["workspace"])) < 400 << 20
