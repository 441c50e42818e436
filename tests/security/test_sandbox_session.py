"""Attacks on the sandbox session's worker: one check against the worker or the next check.

A session (lhbench.sandbox.session) runs a run's replay and checks, one after another, in
one sandbox, through a worker that forks and executes each. Each case runs a hostile
command, then an honest one, and asserts that the hostile one got only its own result,
that the honest one got its own, and that nothing the first did reached the second.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from lhbench.sandbox import (
    Limits,
    SandboxSession,
    get_sandbox,
    policy_for,
    sandbox_env,
    session_support,
)
from tests.security.helpers import bounded

pytestmark = pytest.mark.skipif(
    session_support(get_sandbox()) is not None,
    reason=f"no sandbox session here: {session_support(get_sandbox())}",
)

CHECK = Limits(wall_s=20, cpu_s=20, memory_mb=512, file_mb=8, processes=32)


@pytest.fixture
def unit(tmp_path: Path) -> Iterator[tuple[SandboxSession, Path]]:
    """A session for one run: its directory writable to the sandbox, its state inside."""
    base = tmp_path / "run"
    state = base / "state"
    state.mkdir(parents=True)
    (state / "answer.txt").write_text("the run's answer\n")
    policy = policy_for(base, writable=[base], limits=Limits(memory_mb=1024, processes=32))
    with SandboxSession(get_sandbox(), policy) as session:
        yield session, state


def py(session: SandboxSession, state: Path, code: str, **kw: object):  # type: ignore[no-untyped-def]
    env = sandbox_env(state, env={"LHBENCH_IN_SANDBOX": "1"})
    limits = kw.pop("limits", CHECK)
    return session.run(
        [sys.executable, "-I", "-c", textwrap.dedent(code)],
        cwd=state,
        env=env,
        limits=limits,  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


HONEST = "import sys; print('honest'); sys.exit(1)"


def test_check_cannot_take_the_workers_socket(unit: tuple[SandboxSession, Path]) -> None:
    """Its parent's descriptors: not by /proc, not by pidfd_getfd; no forged reply."""
    session, state = unit
    attack = """
        import ctypes, json, os, socket, sys
        libc = ctypes.CDLL(None, use_errno=True)
        got = []
        for pid in [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:
            try:
                fds = os.listdir(f'/proc/{pid}/fd')
            except OSError:
                fds = [str(n) for n in range(64)]
            for fd in fds:
                try:
                    os.close(os.open(f'/proc/{pid}/fd/{fd}', os.O_RDWR))
                    got.append(f'open {pid}/{fd}')
                except OSError:
                    pass
            pidfd = libc.syscall(434, int(pid), 0)  # pidfd_open
            if pidfd < 0:
                continue
            for fd in range(64):
                stolen = libc.syscall(438, pidfd, fd, 0)  # pidfd_getfd
                if stolen < 0:
                    continue
                got.append(f'getfd {pid}/{fd}')
                try:
                    s = socket.socket(fileno=stolen)
                    forged = {'id': 'x', 'returncode': 0, 'timed_out': False}
                    s.send(json.dumps(forged).encode())
                    got.append('forged a reply')
                except OSError:
                    pass
        print(json.dumps(got))
        sys.exit(3)
    """
    with bounded(60):
        res = py(session, state, attack)
        after = py(session, state, HONEST)
    assert res.returncode == 3, res.text("stderr")
    assert res.text().strip().splitlines()[-1] == "[]", res.text()
    assert after.returncode == 1 and after.text() == "honest\n"
    assert session.started == 1  # the worker was never disturbed


def test_check_cannot_kill_or_signal_the_worker(unit: tuple[SandboxSession, Path]) -> None:
    """Killing its parent or every process it can signal: refused; the sandbox stays."""
    session, state = unit
    attack = """
        import os, signal, sys
        refused = 0
        for target in (os.getppid(), 1):
            try:
                os.kill(target, signal.SIGKILL)
            except OSError:
                refused += 1
        try:
            os.kill(-1, signal.SIGKILL)  # everything it may signal
        except OSError:
            pass
        print(refused)
        sys.exit(4)
    """
    with bounded(60):
        res = py(session, state, attack)
        after = py(session, state, HONEST)
    assert res.returncode == 4, res.text("stderr")
    assert res.text().strip() == "2"
    assert after.returncode == 1 and after.text() == "honest\n"
    assert session.started == 1


def test_background_process_does_not_run_into_the_next_check(
    unit: tuple[SandboxSession, Path],
) -> None:
    """Children, a new session, a double fork: all gone before the next check starts."""
    session, state = unit
    attack = """
        import os, subprocess, sys, time
        subprocess.Popen(['sleep', '300'])
        subprocess.Popen(['sleep', '301'], start_new_session=True)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execvp('sleep', ['sleep', '302'])
            os._exit(0)
        time.sleep(0.2)
        sys.exit(0)
    """
    look = """
        import os
        me = os.getpid()
        for p in os.listdir('/proc'):
            if p.isdigit() and int(p) != me:
                with open(f'/proc/{p}/cmdline', 'rb') as f:
                    print(f.read().replace(b'\\0', b' ').decode())
    """
    with bounded(60):
        res = py(session, state, attack)
        seen = py(session, state, look)
    assert res.returncode == 0, res.text("stderr")
    assert seen.returncode == 0, seen.text("stderr")
    assert "sleep" not in seen.text(), seen.text()


def test_check_leaves_no_state_for_the_next(unit: tuple[SandboxSession, Path]) -> None:
    """Files (scratch, /tmp, /dev/shm, /run, the state, its run directory) and IPC objects."""
    session, state = unit
    run_dir = state.parent
    places = [
        "$TMPDIR/mark",
        "/tmp/mark",
        "/dev/shm/mark",
        "/run/mark",
        f"{state}/mark",
        f"{run_dir}/mark",
    ]
    write = f"""
        import ctypes, json, os, sys
        wrote = []
        for p in {places!r}:
            p = p.replace('$TMPDIR', os.environ['TMPDIR'])
            try:
                with open(p, 'w') as f:
                    f.write('left by the first check')
                wrote.append(p)
            except OSError:
                pass
        try:
            with open('{state}/answer.txt', 'w') as f:
                f.write('rewritten')
            wrote.append('answer.txt')
        except OSError:
            pass
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.shmget(0x5EED, 4096, 0o1666) >= 0:  # IPC_CREAT | 0666
            wrote.append('shm')
        if libc.msgget(0x5EED, 0o1666) >= 0:
            wrote.append('msg')
        if libc.semget(0x5EED, 1, 0o1666) >= 0:
            wrote.append('sem')
        print(json.dumps(wrote))
        sys.exit(0)
    """
    read = f"""
        import ctypes, glob, os
        marks = glob.glob('/tmp/**/mark', recursive=True) + {places[1:]!r}
        found = [p for p in marks if os.path.exists(p)]
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.shmget(0x5EED, 0, 0) >= 0:
            found.append('shm')
        if libc.msgget(0x5EED, 0) >= 0:
            found.append('msg')
        if libc.semget(0x5EED, 0, 0) >= 0:
            found.append('sem')
        with open('/proc/sysvipc/shm') as f:
            found += [line for line in f.read().splitlines()[1:] if line.strip()]
        print(found, open('{state}/answer.txt').read().strip())
    """
    with bounded(60):
        res = py(session, state, write)
        seen = py(session, state, read)
    assert res.returncode == 0, res.text("stderr")
    # only its own scratch directory was writable
    wrote = json.loads(res.text().strip().splitlines()[-1])
    assert len(wrote) == 1 and wrote[0].startswith("/tmp/.lhbench-worker/"), wrote
    assert seen.text().strip() == "[] the run's answer", seen.text()
    assert not (state / "mark").exists() and not (run_dir / "mark").exists()
    assert (state / "answer.txt").read_text() == "the run's answer\n"


def test_a_scratch_directory_made_hard_to_remove_is_removed_before_the_next_check(
    unit: tuple[SandboxSession, Path],
) -> None:
    """Deeper than PATH_MAX, read-only, without rights, the scratch directory itself
    read-only: the next check finds nothing of it (and neither its memory nor its disk)."""
    session, state = unit
    bury = """
        import os
        t = os.environ['TMPDIR']
        def deep(top, name, levels):
            fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
            for _ in range(levels):
                os.mkdir(name, dir_fd=fd)
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = inner
            out = os.open('secret', os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd)
            os.write(out, b'LEFT-BEHIND')
            os.close(out)
            os.close(fd)
        os.mkdir(f'{t}/long')
        deep(f'{t}/long', 'd' * 250, 17)  # a path of 4,250 bytes, past PATH_MAX
        os.mkdir(f'{t}/many')
        deep(f'{t}/many', 'a', 2100)  # deeper than any recursion would go
        for mode in (0o500, 0o400, 0o100, 0o000):
            d = f'{t}/ro{mode:o}/inner'
            os.makedirs(d)
            with open(f'{d}/secret', 'w') as f:
                f.write('LEFT-BEHIND')
            os.chmod(d, mode)
            os.chmod(os.path.dirname(d), mode)
        with open(f'{t}/secret', 'w') as f:
            f.write('LEFT-BEHIND')
        os.symlink(os.getcwd(), f'{t}/to-state')  # never followed
        os.chmod(t, 0o500)
        print('buried')
    """
    look = """
        import os
        mine = os.environ['TMPDIR']
        left = [d for d in os.listdir('/tmp/.lhbench-worker') if d != os.path.basename(mine)]
        print(left, os.listdir(mine))
    """
    with bounded(120):
        res = py(session, state, bury)
        seen = py(session, state, look)
    assert res.returncode == 0 and res.text().strip() == "buried", res.text("stderr")
    assert seen.returncode == 0 and seen.text().strip() == "[] []", seen.text()
    assert (state / "answer.txt").read_text() == "the run's answer\n"
    assert session.started == 1


def test_only_the_paths_a_command_is_given_are_writable(unit: tuple[SandboxSession, Path]) -> None:
    """A replay writes its state; a check after it, in the same sandbox, cannot."""
    session, state = unit
    code = f"open('{state}/state.db', 'w').write('x')"
    with bounded(60):
        replay = py(session, state, code, write=[state])
        check = py(session, state, f"open('{state}/state.db', 'a').write('tampered')")
    assert replay.returncode == 0, replay.text("stderr")
    assert check.returncode == 1 and "PermissionError" in check.text("stderr")
    assert (state / "state.db").read_text() == "x"


def test_fork_bomb_and_huge_output_are_the_checks_own_failure(
    unit: tuple[SandboxSession, Path],
) -> None:
    """Its process limit and wall time stop it, its output is capped; the next check runs."""
    session, state = unit
    bomb = """
        import os, sys
        sys.stdout.write('x' * (4 << 20)); sys.stdout.flush()
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """
    limits = Limits(wall_s=5, cpu_s=5, memory_mb=256, file_mb=2, processes=32)
    with bounded(90):
        res = py(session, state, bomb, limits=limits, max_output=1 << 20)
        after = py(session, state, HONEST)
    assert res.returncode != 0 or res.timed_out
    assert len(res.stdout) <= (1 << 20) + 200  # capped (and the file size limit held)
    assert after.returncode == 1 and after.text() == "honest\n"


def test_a_runs_session_does_not_show_another_runs_state(tmp_path: Path) -> None:
    """Two runs of one pack: each run's sandbox shows its own state only."""
    from lhbench.config import Settings
    from lhbench.jobs import FixtureJob, StateProvider, resolve_pack, run_job
    from lhbench.store import Store

    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    pack = resolve_pack("aj-ds-mini", Settings(home=tmp_path), store)
    asyncio.run(run_job(FixtureJob(store, pack)))
    run_a, run_b = store.list_runs(pack_id=pack.pack.id)[:2]
    provider = StateProvider(store, pack, tmp_path / "states")
    try:
        a, b = provider.session(run_a), provider.session(run_b)
        assert a is not None and b is not None and a is not b
        secret = tmp_path / "states" / run_b.id / "secret.txt"
        secret.write_text("run b's answer")
        with bounded(60):
            res = a.run(
                [sys.executable, "-I", "-c", f"print(open('{secret}').read())"],
                limits=CHECK,
            )
            own = a.run(["/bin/ls", str(tmp_path / "states" / run_a.id)], limits=CHECK)
        assert res.returncode == 1 and "run b's answer" not in res.text()
        assert "FileNotFoundError" in res.text("stderr")
        assert own.returncode == 0
    finally:
        provider.close()
