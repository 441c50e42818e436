"""Verify scripts: a task's own Python check of a final state; its result is the label.

A verify script is run as ``python verify.py --root DIR`` (filesystem) or
``python verify.py --db URL`` (SQL). Exit code 0 means the task was done, 1 that it was
not; anything else (an uncaught exception included: the script runs through
:func:`~lhbench.sandbox.script_argv`), or a timeout, is an error, never a label. The
script may print one JSON object ``{"detail": "..."}`` as its last line; when that object
has ``"ok"``, it must agree with the exit code (a script printing ``{"ok": false}`` and
exiting 0 gives no label). The answer is read by :func:`lhbench.sandbox.read_check_answer`,
as hook checks' are.

A script is pack code: each runs as a fresh process in the sandbox, seeing its task's
directory and the state read-only, its database through the forwarder, nothing else, with
time, memory and process limits. A script that patches ``sys.exit``, calls ``os._exit`` or
hangs affects only itself. Given the run's :class:`~lhbench.sandbox.SandboxSession` (one
sandbox for the run's replay and checks), the script is a fresh process in that sandbox,
writing nothing a later check could see; otherwise it gets a sandbox of its own.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url

from lhbench.envs.pg_guard import PgRoleError, require_read_only_url
from lhbench.sandbox import (
    AnswerFault,
    CheckAnswerError,
    Endpoint,
    Limits,
    Sandbox,
    SandboxSession,
    finished_answer,
    get_sandbox,
    policy_for,
    run_sandboxed_sync,
    sandbox_env,
    script_argv,
)
from lhbench.sandbox.pg_gate import PgAccess

__all__ = [
    "VerifyError",
    "VerifyResult",
    "check_limits",
    "database_access",
    "run_state_check",
    "run_verify",
]


class VerifyError(RuntimeError):
    """The verify script gave no verdict (see :func:`~lhbench.sandbox.read_check_answer`).

    ``fault`` says how: ``timeout``, ``crash``, ``exit``, ``shape`` or ``disagree`` (its
    exit code and its printed ``ok`` differ).
    """

    def __init__(self, message: str, *, fault: AnswerFault = "crash") -> None:
        self.fault = fault
        super().__init__(message)


@dataclass(frozen=True)
class VerifyResult:
    """The label a verify script gave, and why."""

    passed: bool
    detail: str
    seconds: float


def database_access(
    db_url: str | None, *, statement_s: float | None = 60.0
) -> tuple[list[Path], list[Endpoint]]:
    """What a sandboxed reader of ``db_url`` needs.

    The SQLite file's directory (read-only), or the PostgreSQL server as an endpoint whose
    forwarder admits only the URL's role and database (the gate cancels a query running
    past ``statement_s``). A PostgreSQL URL whose role can do more than read is refused
    here, before any untrusted code gets it.

    Raises:
        PgRoleError: the PostgreSQL role is a superuser, can write, or cannot be checked.
    """
    if db_url is None:
        return [], []
    url = make_url(db_url.replace("postgresql://", "postgresql+psycopg://", 1))
    if url.get_backend_name() == "sqlite":
        return ([Path(url.database).parent] if url.database else []), []
    import getpass

    require_read_only_url(db_url, "the database URL given to untrusted code")
    host, port = url.host or "127.0.0.1", int(url.port or 5432)
    role = url.username or getpass.getuser()
    access = PgAccess(role, url.database or role, statement_s=statement_s)
    return [], [Endpoint(host, port, port, postgres=access)]


def check_limits(timeout: float) -> Limits:
    """What one check may use: ``timeout`` of wall and CPU time, 1 GiB, 64 MiB files."""
    return Limits(
        wall_s=timeout, cpu_s=max(1, int(timeout)), memory_mb=1024, file_mb=64, processes=32
    )


def run_verify(
    script: Path,
    *,
    root: Path | None = None,
    db_url: str | None = None,
    timeout: float = 60,
    sandbox: Sandbox | None = None,
    session: SandboxSession | None = None,
) -> VerifyResult:
    """Run a verify script against a final state, in the sandbox (``session``'s when given).

    Raises:
        VerifyError: it crashed, timed out, exited with neither 0 nor 1, or its exit code
            and its printed ``ok`` disagree.
    """
    return _run_check(
        script_argv,
        script,
        str(script),
        readable=[script.parent],
        cwd=script.parent,
        root=root,
        db_url=db_url,
        timeout=timeout,
        sandbox=sandbox,
        session=session,
    )


def run_state_check(
    name: str,
    *,
    root: Path | None = None,
    db_url: str | None = None,
    timeout: float = 60,
    sandbox: Sandbox | None = None,
    session: SandboxSession | None = None,
) -> VerifyResult:
    """Run a registered state check (``lhbench plugins list``) in the sandbox, as verify runs.

    Raises:
        VerifyError: it crashed, timed out, or answered with neither pass nor fail.
    """
    import sys

    def argv(_: Path, *extra: str) -> list[str]:
        return [sys.executable, "-I", "-m", "lhbench.plugins", "check", name, *extra]

    return _run_check(
        argv,
        Path(name),
        f"state check {name!r}",
        readable=[],
        cwd=None,
        root=root,
        db_url=db_url,
        timeout=timeout,
        sandbox=sandbox,
        session=session,
    )


def _run_check(
    argv: Callable[..., list[str]],
    script: Path,
    what: str,
    *,
    readable: list[Path],
    cwd: Path | None,
    root: Path | None,
    db_url: str | None,
    timeout: float,
    sandbox: Sandbox | None,
    session: SandboxSession | None = None,
) -> VerifyResult:
    extra: list[str] = []
    readable = list(readable)
    if root is not None:
        extra += ["--root", str(root)]
        readable.append(root)
    try:
        dirs, endpoints = database_access(db_url, statement_s=timeout)
    except PgRoleError as exc:
        raise VerifyError(f"{what}: not run: {exc}") from None
    readable += dirs
    if db_url is not None:
        extra += ["--db", db_url]
    args = argv(script, *extra)
    limits = check_limits(timeout)
    t0 = time.perf_counter()
    if (
        session is not None
        and not endpoints
        and session.covers([*readable, *([cwd] if cwd else [])])
    ):
        # the run's own sandbox: a fresh process there, writing nothing a later check sees
        workdir = root or cwd or session.policy.cwd
        env = sandbox_env(workdir, env={"LHBENCH_IN_SANDBOX": "1"})
        res = session.run(args, cwd=workdir, env=env, limits=limits)
    else:
        workdir = root or cwd or Path(tempfile.mkdtemp(prefix="lhbench-check-"))
        policy = policy_for(
            workdir,
            readable=readable,
            endpoints=endpoints,
            env={"LHBENCH_IN_SANDBOX": "1"},
            limits=limits,
        )
        res = run_sandboxed_sync(sandbox or get_sandbox(), args, policy)
    seconds = time.perf_counter() - t0
    try:
        answer = finished_answer(what, res, timeout=timeout)
    except CheckAnswerError as exc:
        raise VerifyError(str(exc), fault=exc.fault) from exc
    return VerifyResult(passed=answer.passed, detail=answer.detail[:2000], seconds=seconds)
