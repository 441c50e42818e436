"""A sandbox session: one sandbox per unit of work, each command a fork+exec in it."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lhbench.sandbox import (
    Limits,
    SandboxSession,
    UnsafeNoSandbox,
    get_sandbox,
    policy_for,
    session_support,
)

needs_session = pytest.mark.skipif(
    session_support(get_sandbox()) is not None,
    reason=f"no sandbox session here: {session_support(get_sandbox())}",
)
LIMITS = Limits(wall_s=20, cpu_s=20, memory_mb=512, file_mb=8, processes=16)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[SandboxSession]:
    policy = policy_for(tmp_path, writable=[tmp_path])
    with SandboxSession(get_sandbox(), policy) as s:
        yield s


@needs_session
def test_commands_run_in_one_sandbox_with_their_own_answers(session: SandboxSession) -> None:
    codes = [
        session.run(
            [sys.executable, "-I", "-c", f"import sys; print({i}); sys.exit({i})"], limits=LIMITS
        )
        for i in range(4)
    ]
    assert [c.returncode for c in codes] == [0, 1, 2, 3]
    assert [c.text() for c in codes] == [f"{i}\n" for i in range(4)]
    assert session.started == 1 and session.commands == 4
    assert codes[0].backend == "bubblewrap+worker" and codes[0].usage is not None


@needs_session
def test_stdin_env_cwd_and_signals(session: SandboxSession, tmp_path: Path) -> None:
    res = session.run(
        ["/bin/sh", "-c", 'read x; echo "$x $FOO $(pwd)"'],
        limits=LIMITS,
        stdin=b"hello\n",
        env={"FOO": "bar", "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
    )
    assert res.text() == f"hello bar {tmp_path}\n"
    killed = session.run(["/bin/sh", "-c", "kill -9 $$"], limits=LIMITS)
    assert killed.returncode == 128 + 9  # as bwrap reports a command killed by a signal


@needs_session
def test_wall_and_cpu_limits_stop_the_command_only(session: SandboxSession) -> None:
    slow = session.run(["/bin/sleep", "30"], limits=Limits(wall_s=1))
    assert slow.timed_out and slow.returncode is None
    spin = session.run(
        [sys.executable, "-I", "-c", "while True: pass"], limits=Limits(wall_s=30, cpu_s=1)
    )
    assert spin.returncode == 128 + 9 or spin.returncode == 128 + 24  # SIGKILL / SIGXCPU
    ok = session.run(["/bin/echo", "still here"], limits=LIMITS)
    assert ok.text() == "still here\n" and session.started == 1


@needs_session
def test_disk_limit_on_what_a_command_may_write(session: SandboxSession, tmp_path: Path) -> None:
    # each file under the file-size limit, together past the disk limit
    fill = (
        f"for i in 1 2 3 4 5; do dd if=/dev/zero of={tmp_path}/big$i bs=1M count=6; done; sleep 20"
    )
    res = session.run(
        ["/bin/sh", "-c", fill], limits=Limits(wall_s=30, disk_mb=8, file_mb=64), write=[tmp_path]
    )
    assert res.disk_limit is not None and res.returncode is None  # stopped, not finished


def test_no_session_where_the_backend_runs_one_command_per_sandbox() -> None:
    assert session_support(UnsafeNoSandbox()) is not None


@needs_session
def test_verify_job_checks_a_run_in_its_own_session(tmp_path: Path) -> None:
    """Labels through sessions equal those of one sandbox per check (the fallback)."""
    from lhbench.config import Settings
    from lhbench.jobs import FixtureJob, StateProvider, VerifyJob, resolve_pack, run_job
    from lhbench.store import Store

    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    pack = resolve_pack("aj-ds-mini", Settings(home=tmp_path), store)
    asyncio.run(run_job(FixtureJob(store, pack)))
    runs = [r for r in store.list_runs(pack_id=pack.pack.id)][:6]
    labels = {}
    for mode in ("session", "per-command"):
        provider = StateProvider(store, pack, tmp_path / mode)
        if mode == "per-command":
            provider.session = lambda run: None  # type: ignore[method-assign]
        used: list[SandboxSession] = []
        real = provider.session

        def spy(run, real=real, used=used):  # type: ignore[no-untyped-def]
            s = real(run)
            if s is not None:
                used.append(s)
            return s

        provider.session = spy  # type: ignore[method-assign]
        job = VerifyJob(None, runs, provider)
        got = [asyncio.run(job.run(u)) for u in job.plan()]
        provider.close()
        labels[mode] = [(lab.run_id, lab.passed, lab.error) for lab in got]
        if mode == "session":
            assert used and all(s.closed for s in used)
            assert sum(s.commands for s in set(used)) >= len(runs)
    assert labels["session"] == labels["per-command"]
    assert any(p is True for _, p, _ in labels["session"])
    assert any(p is False for _, p, _ in labels["session"])


@needs_session
def test_a_closed_session_runs_the_command_in_a_sandbox_of_its_own(tmp_path: Path) -> None:
    """Evicted under its caller: the command still runs, and still cannot write the state."""
    state = tmp_path / "state"
    state.mkdir()
    policy = policy_for(tmp_path, writable=[tmp_path])
    s = SandboxSession(get_sandbox(), policy).start()
    s.close()
    res = s.run(["/bin/sh", "-c", f"echo hi; echo x > {state}/f"], limits=LIMITS)
    assert res.text() == "hi\n" and res.returncode != 0 and not (state / "f").exists()
    assert res.backend == "bubblewrap" and s.started <= 1
    ok = s.run(["/bin/sh", "-c", f"echo x > {state}/f"], limits=LIMITS, write=[state])
    assert ok.returncode == 0 and (state / "f").exists()


@needs_session
def test_a_runs_sandbox_closes_in_the_background_and_close_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """end_session hands the close (~10 ms) to a thread; the provider's close waits for it."""
    from lhbench.config import Settings
    from lhbench.jobs import FixtureJob, StateProvider, resolve_pack, run_job
    from lhbench.store import Store

    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    pack = resolve_pack("aj-ds-mini", Settings(home=tmp_path), store)
    asyncio.run(run_job(FixtureJob(store, pack)))
    run = store.list_runs(pack_id=pack.pack.id)[0]
    real_close = SandboxSession.close
    closed: list[float] = []

    def slow_close(self: SandboxSession) -> None:
        time.sleep(0.5)
        real_close(self)
        closed.append(time.monotonic())

    monkeypatch.setattr(SandboxSession, "close", slow_close)
    provider = StateProvider(store, pack, tmp_path / "w")
    session = provider.session(run)
    assert session is not None
    session.run(["/bin/true"], limits=LIMITS)
    t0 = time.monotonic()
    provider.end_session(run.id)
    assert time.monotonic() - t0 < 0.25 and not closed  # not waited for here
    # the run's sandbox is no longer handed out: a later use builds another
    again = provider.session(run)
    assert again is not None and again is not session
    provider.close()
    done = time.monotonic()
    assert len(closed) == 2 and max(closed) <= done  # both closed when close() returned
    assert session.closed and again.closed
    store.close()
