"""Verify scripts: a task's own Python check of a replayed final state; its result is the label.

A verify script is run as ``python verify.py --root DIR`` (filesystem) or
``python verify.py --db URL`` (SQL). Exit code 0 means the task was done, 1 that it was
not; anything else, or a timeout, is an error, never a label. The script may print one
JSON object ``{"detail": "..."}`` as its last line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["VerifyError", "VerifyPool", "VerifyResult", "run_verify"]


class VerifyError(RuntimeError):
    """The verify script crashed or timed out: there is no label."""


@dataclass(frozen=True)
class VerifyResult:
    """The label a verify script gave, and why."""

    passed: bool
    detail: str
    seconds: float


def run_verify(
    script: Path, *, root: Path | None = None, db_url: str | None = None, timeout: float = 60
) -> VerifyResult:
    """Run a verify script against a replayed state."""
    import time

    args = [sys.executable, str(script)]
    if root is not None:
        args += ["--root", str(root)]
    if db_url is not None:
        args += ["--db", db_url]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            args, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        raise VerifyError(f"{script}: timed out after {timeout}s") from None
    seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise VerifyError(f"{script}: exited {proc.returncode}: {' | '.join(tail)}")
    detail = ""
    lines = proc.stdout.strip().splitlines()
    if lines:
        try:
            detail = str(json.loads(lines[-1]).get("detail", ""))
        except (json.JSONDecodeError, AttributeError):
            detail = lines[-1]
    return VerifyResult(passed=proc.returncode == 0, detail=detail, seconds=seconds)


def _run_in_worker(script: str, argv: list[str]) -> tuple[int, str, str]:
    """Run a verify script inside a pool worker process (argv and stdout are per-process)."""
    import contextlib
    import io
    import runpy

    out, err = io.StringIO(), io.StringIO()
    code = 0
    saved = sys.argv
    sys.argv = [script, *argv]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except BaseException as exc:  # a crashing script: no label
        code = 3
        err.write(f"{type(exc).__name__}: {exc}")
    finally:
        sys.argv = saved
    return code, out.getvalue(), err.getvalue()


def _warm() -> None:
    # what verify scripts import, loaded once per worker rather than once per check
    import sqlalchemy  # noqa: F401

    import lhbench.envs.checks  # noqa: F401


class VerifyPool:
    """Verify scripts in a pool of warm worker processes.

    Isolated from the caller and from each other's argv and output, without a Python
    start-up per check.
    """

    def __init__(self, workers: int = 2) -> None:
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        self._pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=get_context("spawn"), initializer=_warm
        )

    def run(
        self,
        script: Path,
        *,
        root: Path | None = None,
        db_url: str | None = None,
        timeout: float = 60,
    ) -> VerifyResult:
        """Like :func:`run_verify`, in a warm worker."""
        import time
        from concurrent.futures import TimeoutError as FutureTimeout

        argv: list[str] = []
        if root is not None:
            argv += ["--root", str(root)]
        if db_url is not None:
            argv += ["--db", db_url]
        t0 = time.perf_counter()
        try:
            code, out, err = self._pool.submit(_run_in_worker, str(script), argv).result(
                timeout=timeout
            )
        except FutureTimeout:
            raise VerifyError(f"{script}: timed out after {timeout}s") from None
        if code not in (0, 1):
            raise VerifyError(f"{script}: exited {code}: {(err or out).strip()[-300:]}")
        detail = ""
        lines = out.strip().splitlines()
        if lines:
            try:
                detail = str(json.loads(lines[-1]).get("detail", ""))
            except (json.JSONDecodeError, AttributeError):
                detail = lines[-1]
        return VerifyResult(passed=code == 0, detail=detail, seconds=time.perf_counter() - t0)

    def close(self) -> None:
        """Stop the workers."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> VerifyPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
