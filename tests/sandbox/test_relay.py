"""The relay starts inside every networked sandbox before its command: a bare interpreter.

It is run by path with ``-I -S`` and imports the standard library only. As ``python -m
lhbench.sandbox.relay`` it imported the ``lhbench.sandbox`` package (asyncio, typing,
every backend): 60 ms of start against a bare interpreter's 8, paid by every agent run,
networked check and PostgreSQL check.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lhbench.sandbox.relay import relay_argv


def test_the_relay_is_run_by_path_and_imports_nothing_of_lhbench(tmp_path: Path) -> None:
    argv = relay_argv([], [sys.executable, "-I", "-S", "-c", "print('the command ran')"])
    assert argv[:3] == [sys.executable, "-I", "-S"] and Path(argv[3]).name == "relay.py"
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the command ran\n"
    # -X importtime lists every module the relay imported (its command is another process)
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert {"socket", "subprocess", "threading"} <= imported
    assert not {m for m in imported if m.split(".")[0] in ("lhbench", "asyncio", "typing")}


def test_the_relay_passes_on_its_commands_exit_code(tmp_path: Path) -> None:
    argv = relay_argv([], [sys.executable, "-I", "-S", "-c", "import sys; sys.exit(7)"])
    assert subprocess.run(argv, cwd=tmp_path, timeout=60).returncode == 7
    bad = relay_argv(["--map", "no-port"], ["/bin/true"])
    assert subprocess.run(bad, cwd=tmp_path, timeout=60, capture_output=True).returncode != 0


def test_a_forwarder_closes_without_waiting_out_its_accept_timeout(tmp_path: Path) -> None:
    """Its accept loop polls every 0.2 s; the close wakes it (every networked sandbox's
    close waited for that timeout: ~0.19 s per PostgreSQL check)."""
    import socket
    import statistics
    import time

    from lhbench.sandbox.forward import Forwarder

    took = []
    for i in range(5):
        fwd = Forwarder(tmp_path / f"{i}.sock", "127.0.0.1", 9).__enter__()
        time.sleep(0.01)
        t0 = time.perf_counter()
        fwd.__exit__(None, None, None)
        took.append(time.perf_counter() - t0)
        assert fwd._thread is not None and not fwd._thread.is_alive()
        assert not (tmp_path / f"{i}.sock").exists()
        with socket.socket(socket.AF_UNIX) as late, pytest.raises(OSError):
            late.connect(str(tmp_path / f"{i}.sock"))
    assert statistics.median(took) < 0.1, took
