"""What lhbench itself does on the host with things the agent could write.

The sandbox holds; these are the harness's own steps outside it — writing the progress
manifest, a CLI's settings before a later turn, skills into a kept workspace, reading the
hook log, asking a CLI its version, taking an imported run's word for its workspace — each
given a planted link, a huge file or a forged field.
"""

from __future__ import annotations

import json
import marshal
import os
import socket
import stat
import tempfile
import threading
import time
from pathlib import Path

import pytest

from lhbench.harness.cli_agents import (
    CLI_AGENTS,
    MAX_HOOK_RECORDS,
    CliJob,
    cli_version,
    read_hook_log,
)
from lhbench.harness.manifest import complete_step, read_manifest
from lhbench.harness.workspace import Workspace, install_skills
from lhbench.jobs.states import kept_workspace
from lhbench.models import resolve_model
from lhbench.sandbox import BubblewrapSandbox, policy_for
from lhbench.sandbox.forward import Forwarder
from tests.factories import make_run
from tests.security.helpers import CANARY, agent_run, bounded


def _host_file(tmp_path: Path, name: str = "host.json") -> Path:
    target = tmp_path / "host" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"api_key": CANARY}))
    return target


def test_complete_step_through_a_planted_temp_link(tmp_path: Path) -> None:
    target = _host_file(tmp_path, "prlimit")
    before = target.read_bytes()
    with bounded(60):
        _, out, _ = agent_run(
            tmp_path,
            [
                ("run_shell", {"command": f"ln -s {target} manifest.json.tmp"}),
                ("complete_step", {"step": "pwn"}),
            ],
        )
    assert target.read_bytes() == before  # the host file was never written through
    ws = Path(out.run.metadata["workspace"])
    assert json.loads((ws / "manifest.json").read_text())["completed_steps"] == ["pwn"]
    assert not (ws / "manifest.json").is_symlink()


def test_read_manifest_through_a_planted_link(tmp_path: Path) -> None:
    target = _host_file(tmp_path)
    with bounded(60):
        outs, _, _ = agent_run(
            tmp_path,
            [
                ("run_shell", {"command": f"ln -s {target} manifest.json"}),
                ("read_manifest", {}),
                ("complete_step", {"step": "a"}),
            ],
        )
    assert CANARY not in outs[1] and "not a regular file" in outs[1]
    assert json.loads(target.read_text()) == {"api_key": CANARY}  # not replaced either


@pytest.mark.parametrize(
    "content",
    ["[" * 100_000, "x" * (2 << 20), '{"completed_steps": "not a list"}'],
    ids=["deep-nesting", "over-the-size-cap", "wrong-type"],
)
def test_hostile_manifest_contents(tmp_path: Path, content: str) -> None:
    (tmp_path / "manifest.json").write_text(content)
    with bounded(10, mb=100):
        doc = read_manifest(tmp_path)
        after = complete_step(tmp_path, "s")
    assert doc["completed_steps"] == [] and after["completed_steps"] == ["s"]


def _workspace(tmp_path: Path) -> Workspace:
    run_dir = tmp_path / "runs" / "r1"
    ws = Workspace(run_dir / "workspace", run_dir / "home", tmp_path / "vol", run_dir, True)
    for d in (ws.root, ws.home, ws.volume):
        d.mkdir(parents=True, exist_ok=True)
    return ws


@pytest.mark.parametrize("harness", ["claude-code", "gemini-cli"])
def test_cli_settings_before_a_later_turn_through_planted_links(
    tmp_path: Path, harness: str
) -> None:
    ws = _workspace(tmp_path)
    target = tmp_path / "host" / "dir"
    target.mkdir(parents=True)
    (target / "keep.txt").write_text("host")
    # what an agent's shell could leave in the CLI's home during turn 1
    config = ".claude" if harness == "claude-code" else ".gemini"
    (ws.home / config).symlink_to(target)
    job = CliJob(
        ws=ws,
        task_dir=tmp_path,
        prompt="turn 2",
        model=resolve_model("openai:m@http://127.0.0.1:9/v1"),
        env={},
        hooks=[],
        skills={},
        turn=1,
        session="s1",
    )
    with bounded(30):
        CLI_AGENTS[harness].setup(job, Path("/bin/true"))
    assert sorted(os.listdir(target)) == ["keep.txt"]
    assert (ws.home / config).is_dir() and not (ws.home / config).is_symlink()


@pytest.mark.parametrize("harness", ["claude-code", "gemini-cli"])
def test_skills_into_a_kept_workspace_through_a_planted_link(tmp_path: Path, harness: str) -> None:
    ws = _workspace(tmp_path)
    target = _host_file(tmp_path, "bashrc")
    before = target.read_bytes()
    skills = ws.root / (".claude" if harness == "claude-code" else ".gemini") / "skills" / "g"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").symlink_to(target)
    install_skills(ws, harness, {"g": "the skill"})
    assert target.read_bytes() == before
    assert (skills / "SKILL.md").read_text() == "the skill"


def test_a_huge_hook_log_is_read_bounded(tmp_path: Path) -> None:
    line = b'{"ok": true}\n'
    with (tmp_path / "hooks.jsonl").open("wb") as f:
        f.write(line * (MAX_HOOK_RECORDS * 5))
        f.write(b'{"x": "' + b"y" * (1 << 20) + b'"}\n')
    with bounded(30, mb=60):
        records = read_hook_log(tmp_path)
    assert len(records) == MAX_HOOK_RECORDS


def test_a_hook_log_that_is_a_link_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "hooks.jsonl").symlink_to(_host_file(tmp_path))
    assert read_hook_log(tmp_path) == []


def test_asking_a_cli_its_version_never_uses_the_agents_home(tmp_path: Path) -> None:
    fake = tmp_path / "fake-cli"
    fake.write_text('#!/bin/sh\ntouch "$HOME/marker"\necho "home=$HOME"\necho 9.8.7\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    assert cli_version(fake) == "9.8.7"
    assert not (Path.home() / "marker").exists()
    assert not list(tmp_path.glob("**/marker"))


def test_asking_a_cli_its_version_runs_it_sandboxed(tmp_path: Path) -> None:
    # `claude --version` is third-party code like the rest of the CLI: it runs confined
    planted = Path(tempfile.gettempdir()) / f"lhb-cli-probe-{os.getpid()}"
    fake = tmp_path / "probe-cli"
    fake.write_text(
        "#!/bin/sh\n"
        f"echo pwned > {planted}\n"
        "v=$(cat /proc/sys/kernel/core_uses_pid)\n"
        'printf "%s\\n" "$v" > /proc/sys/kernel/core_uses_pid 2>/dev/null && exit 3\n'
        "echo 1.2.3\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    try:
        assert cli_version(fake) == "1.2.3"
        assert not planted.exists()  # the host's /tmp is not the sandbox's
    finally:
        planted.unlink(missing_ok=True)


def test_an_imported_run_cannot_name_a_host_directory_as_its_state(tmp_path: Path) -> None:
    host = tmp_path / "host"
    host.mkdir()
    forged = make_run("imp-1", metadata={"workspace": str(host)}).model_copy(
        update={"source": "transcript.jsonl"}
    )
    assert kept_workspace(forged) is None
    also = make_run("imp-2", metadata={"workspace": "/"})
    assert kept_workspace(also) is None
    real = tmp_path / "runs" / "r9" / "workspace"
    real.mkdir(parents=True)
    assert kept_workspace(make_run("r9", metadata={"workspace": str(real)})) == real


def test_the_forwarder_serves_a_bounded_number_of_connections(tmp_path: Path) -> None:
    upstream = socket.socket()
    upstream.bind(("127.0.0.1", 0))
    upstream.listen(512)
    port = upstream.getsockname()[1]
    threads_before = threading.active_count()
    clients = []
    with bounded(30), Forwarder(tmp_path / "f.sock", "127.0.0.1", port, max_connections=8) as fwd:
        for _ in range(200):
            c = socket.socket(socket.AF_UNIX)
            c.connect(str(tmp_path / "f.sock"))
            clients.append(c)
        time.sleep(1.0)
        peak = threading.active_count()
        assert fwd.connections == 8 and fwd.refused == 192
        for c in clients:
            c.close()
    upstream.close()
    assert peak - threads_before <= 2 * 8 + 2


def test_the_host_side_launcher_gets_none_of_the_sandboxs_environment(tmp_path: Path) -> None:
    policy = policy_for(tmp_path, env={"LD_PRELOAD": "/tmp/evil.so", "SECRET": CANARY})
    prepared = BubblewrapSandbox().prepare(["/bin/true"], policy)
    try:
        assert prepared.env == {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        assert not any(CANARY in a or "evil.so" in a for a in prepared.argv)  # not in ps
        # nor in the launcher's configuration, which the command line carries encoded
        config = marshal.loads(bytes.fromhex(prepared.argv[prepared.argv.index("-c") + 2]))
        assert set(config) >= {"cgroups", "args", "stage", "seccomp"}
        assert CANARY not in repr(config) and "evil.so" not in repr(config)
    finally:
        prepared.close()


KEYCTL = {"x86_64": (248, 250)}.get(os.uname().machine)


@pytest.mark.skipif(KEYCTL is None, reason="keyring syscall numbers known for x86_64 only")
def test_the_callers_session_keyring_is_out_of_reach(tmp_path: Path) -> None:
    import ctypes
    import sys

    from lhbench.sandbox import get_sandbox, run_sandboxed_sync

    assert KEYCTL is not None
    add_key, keyctl = KEYCTL
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall(keyctl, 1, 0)  # this test process: a fresh session keyring of its own
    payload = CANARY.encode()
    key = libc.syscall(add_key, b"user", b"lhbench-test", payload, len(payload), -3)
    assert key > 0, os.strerror(ctypes.get_errno())
    probe = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        f"k = libc.syscall({keyctl}, 10, -3, b'user', b'lhbench-test', 0)\n"  # KEYCTL_SEARCH
        "buf = ctypes.create_string_buffer(256)\n"
        f"n = libc.syscall({keyctl}, 11, k, buf, 256) if k > 0 else -1\n"  # KEYCTL_READ
        "print(buf.raw[:n].decode() if n > 0 else 'no key')\n"
    )
    done = run_sandboxed_sync(get_sandbox(), [sys.executable, "-c", probe], policy_for(tmp_path))
    assert done.text().strip() == "no key" and CANARY not in done.text()
