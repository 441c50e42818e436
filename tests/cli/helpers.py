"""Running the CLI in-process (Typer's runner), with user errors mapped as ``main`` maps them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from lhbench.cli import app
from lhbench.errors import LhbenchError


@dataclass
class Ran:
    """A command's exit code and output, as a user would see them."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def returncode(self) -> int:
        """The exit code, named as subprocess names it."""
        return self.exit_code


def cli(
    *args: str,
    env: dict[str, str] | None = None,
    input: str | None = None,
    cwd: Path | None = None,
) -> Ran:
    """``lhbench ARGS`` in this process; a LhbenchError exits 2 with its lines on stderr.

    With ``cwd``, it runs there with no ``LHBENCH_*`` variable of the caller's (as a user's
    shell in that directory would), plus ``env``.
    """
    if cwd is None:
        return _invoke(list(args), env, input)
    clean: dict[str, str | None] = {k: None for k in os.environ if k.startswith("LHBENCH_")}
    clean.update(env or {})
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return _invoke(list(args), clean, input)
    finally:
        os.chdir(old)


def _invoke(args: list[str], env: Mapping[str, str | None] | None, input: str | None) -> Ran:
    runner = CliRunner()
    result = runner.invoke(app, args, env=env, input=input, catch_exceptions=True)
    stderr = result.stderr if result.stderr_bytes is not None else ""
    if isinstance(result.exception, LhbenchError):
        lines = "\n".join(f"error: {line}" for line in result.exception.lines())
        return Ran(2, result.stdout, stderr + lines + "\n")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, stderr)
