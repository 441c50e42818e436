"""Running the CLI in-process (Typer's runner), with user errors mapped as ``main`` maps them."""

from __future__ import annotations

from dataclasses import dataclass

from typer.testing import CliRunner

from lhbench.cli import app
from lhbench.errors import LhbenchError


@dataclass
class Ran:
    """A command's exit code and output, as a user would see them."""

    exit_code: int
    stdout: str
    stderr: str


def cli(*args: str, env: dict[str, str] | None = None, input: str | None = None) -> Ran:
    """``lhbench ARGS`` in this process; a LhbenchError exits 2 with its lines on stderr."""
    runner = CliRunner()
    result = runner.invoke(app, list(args), env=env, input=input, catch_exceptions=True)
    stderr = result.stderr if result.stderr_bytes is not None else ""
    if isinstance(result.exception, LhbenchError):
        lines = "\n".join(f"error: {line}" for line in result.exception.lines())
        return Ran(2, result.stdout, stderr + lines + "\n")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, stderr)
