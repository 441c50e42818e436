"""The agent's own shell: what a hostile agent tries from inside its sandbox.

Each case runs the native harness with a scripted model that issues the attack through
``run_shell`` and checks the host afterwards. The CLIs run in the same sandbox
(tests/harness/test_cli_agents.py runs all three inside it).
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from lhbench.sandbox import lhbench_paths
from lhbench.sandbox.cgroups import cgroup_support
from tests.security.helpers import CANARY, bounded, processes_with, shell


def test_reading_the_parents_environ_through_proc(tmp_path: Path) -> None:
    with bounded(60):
        [out], _ = shell(
            tmp_path,
            "tr '\\0' '\\n' </proc/$PPID/environ; tr '\\0' '\\n' </proc/1/environ; "
            "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' <$f; done; echo end",
        )
    assert "end" in out and CANARY not in out


def test_dumping_the_environment(tmp_path: Path) -> None:
    with bounded(60):
        [out], _ = shell(tmp_path, "env; set")
    assert "HOME=" in out and CANARY not in out and "OPENAI_API_KEY" not in out


def test_listing_host_processes(tmp_path: Path) -> None:
    # a private PID namespace: the harness, pytest and everything else are invisible
    with bounded(60):
        [out], _ = shell(
            tmp_path, "ls /proc | grep -c '^[0-9]'; cat /proc/*/cmdline | tr '\\0' ' '"
        )
    assert "bin/pytest" not in out and "test_agent_shell.py" not in out
    assert int(out.split("\n")[1].strip()) < 10


def test_killing_the_harness(tmp_path: Path) -> None:
    import os

    with bounded(60):
        [out], res = shell(tmp_path, f"kill -9 {os.getpid()}; kill -9 -1; echo after")
    assert "after" in out and res.run.status.value == "completed"


def test_reading_a_host_file_outside_the_workspace(tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text(CANARY)
    with bounded(60):
        [out], _ = shell(tmp_path, f"cat {secret}; ls {tmp_path}")
    assert CANARY not in out and "No such file" in out


def test_writing_a_host_file_outside_the_workspace(tmp_path: Path) -> None:
    target = tmp_path / "pwned.txt"
    with bounded(60):
        [out], _ = shell(tmp_path, f"echo pwned > {target}; echo pwned > /pwned; touch /usr/pwned")
    assert not target.exists() and not Path("/pwned").exists() and not Path("/usr/pwned").exists()
    assert "ERROR" in out


def test_rewriting_its_own_verification_hook(tmp_path: Path) -> None:
    # the pack (its hook checks and verify script) is not even visible to the agent
    from tests.harness.helpers import CHECK

    pack_check = tmp_path / "pack" / "tasks" / "greet" / "check.py"
    with bounded(60):
        shell(
            tmp_path,
            f"printf 'print(1)' > {pack_check}; ls {pack_check.parent} || true",
        )
    assert pack_check.read_text() == CHECK


def test_rewriting_the_results_database(tmp_path: Path) -> None:
    db = tmp_path / "home" / "lhbench.db"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE grades (score REAL)")
    conn.execute("INSERT INTO grades VALUES (0.1)")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    with bounded(60):
        [out], _ = shell(
            tmp_path,
            f"python3 -c \"import sqlite3; c = sqlite3.connect('{db}'); "
            "c.execute('UPDATE grades SET score = 1.0'); c.commit()\"; "
            "echo x >> ../../../lhbench.db",
        )
    # the host's database is not there: at most a private empty one in the sandbox's /tmp
    assert db.read_bytes() == before and "no such table: grades" in out


def test_reading_etc_shadow_and_ssh_keys(tmp_path: Path) -> None:
    with bounded(60):
        [out], _ = shell(tmp_path, "cat /etc/shadow; ls /etc/ssh; ls /root/.ssh")
    assert "root:" not in out and out.count("No such file") == 3


def test_listing_the_host_home(tmp_path: Path) -> None:
    home = Path.home()
    needed = sorted(
        {p.relative_to(home).parts[0] for p in lhbench_paths() if p.is_relative_to(home)}
    )
    with bounded(60):
        [out], _ = shell(tmp_path, f"ls -A {home} 2>/dev/null | sort")
    seen = [line for line in out.splitlines()[1:] if line.strip()]
    assert seen == needed  # only the directory holding lhbench's own Python, if it is there


def _connect(host: str, port: int) -> str:
    return (
        'python3 -c "import socket\n'
        f"try:\n s = socket.create_connection(('{host}', {port}), timeout=3); print('OPEN')\n"
        "except OSError as e: print('blocked', e)\""
    )


def test_connecting_to_postgresql_on_the_host(tmp_path: Path) -> None:
    with bounded(60):
        [out], _ = shell(tmp_path, _connect("127.0.0.1", 5432))
    assert "OPEN" not in out and "blocked" in out


def test_connecting_to_the_postgresql_unix_socket(tmp_path: Path) -> None:
    with bounded(60):
        [out], _ = shell(tmp_path, "ls /var/run/postgresql/ /run/postgresql/ 2>&1")
    assert ".s.PGSQL" not in out


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.seen.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_reaching_a_local_http_service(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        with bounded(60):
            [out], _ = shell(
                tmp_path,
                f"python3 -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:{port}/x', "
                'timeout=3)" 2>&1 | tail -1',
            )
    finally:
        server.shutdown()
    assert _Recorder.seen == [] and "refused" in out.lower()


def test_reaching_the_internet(tmp_path: Path) -> None:
    with bounded(60):
        [out], _ = shell(tmp_path, _connect("1.1.1.1", 443))
    assert "OPEN" not in out and "unreachable" in out.lower()


def test_reaching_the_cloud_metadata_endpoint(tmp_path: Path) -> None:
    with bounded(60):
        [out], _ = shell(tmp_path, _connect("169.254.169.254", 80))
    assert "OPEN" not in out


def test_resolving_names_over_dns(tmp_path: Path) -> None:
    with bounded(60):
        [out], _ = shell(
            tmp_path,
            "python3 -c \"import socket\ntry: print(socket.gethostbyname('example.com'))\n"
            "except OSError as e: print('no dns', e)\"",
        )
    assert "no dns" in out


@pytest.mark.skipif(
    "pids" not in cgroup_support(), reason="no writable pids cgroup on this machine"
)
def test_fork_bomb(tmp_path: Path) -> None:
    marker = f"lhb-fork-bomb-7a1-{uuid.uuid4().hex[:8]}"  # this run's own (suites may run at once)
    bomb = (
        f'python3 -c "import os, time  # {marker}\nn = 0\ntry:\n'
        "    while n < 5000:\n"
        "        if os.fork() == 0:\n            time.sleep(120); os._exit(0)\n"
        "        n += 1\nexcept OSError as e: print('stopped after', n, 'forks:', e.strerror)\n"
        "print('forks', n)\""
    )
    with bounded(90):
        [out], _ = shell(tmp_path, bomb)
    assert "stopped after" in out
    forks = int(out.split("forks ")[-1].split()[0])
    assert forks < 600  # the agent's process limit is 512
    assert processes_with(marker) == []  # every child died with the sandbox


@pytest.mark.skipif(
    "memory" not in cgroup_support(), reason="no writable memory cgroup on this machine"
)
def test_memory_bomb(tmp_path: Path) -> None:
    # 6 GiB, every page touched: the agent's 4 GiB memory limit stops it (killed, 137)
    with bounded(90):
        [out], res = shell(
            tmp_path,
            'python3 -c "\nb = bytearray(6 << 30)\n'
            "for i in range(0, len(b), 4096): b[i] = 1\nprint('touched')\"; echo exit=$?",
        )
    assert "touched" not in out and "exit=137" in out
    assert res.run.status.value == "completed"


def test_filling_the_disk(tmp_path: Path) -> None:
    with bounded(120):
        [out], res = shell(
            tmp_path, "head -c 1200M /dev/zero > big.bin; echo exit=$?; ls -l big.bin"
        )
    big = Path(res.run.metadata["workspace"]) / "big.bin"
    assert "exit=0" not in out and big.stat().st_size <= 1024 << 20
    big.unlink()


def test_flooding_its_output(tmp_path: Path) -> None:
    with bounded(120, mb=200):
        [out], _ = shell(tmp_path, "head -c 300M /dev/zero | tr '\\0' 'y'; echo tail-marker")
    assert len(out) < 100_000 and "tail-marker" in out


def test_leaving_a_process_behind(tmp_path: Path) -> None:
    marker = f"lhb-orphan-3c9-{uuid.uuid4().hex[:8]}"  # this run's own (suites may run at once)
    with bounded(60):
        shell(
            tmp_path,
            f"nohup sh -c 'sleep 300 # {marker}' >/dev/null 2>&1 & "
            f"setsid sh -c 'sleep 300 # {marker}' >/dev/null 2>&1 & echo started",
        )
    assert processes_with(marker) == []
