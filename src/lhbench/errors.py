"""Typed errors for user mistakes: each names the file, the place, and what was expected."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ConfigError",
    "DataFileError",
    "InfrastructureError",
    "LhbenchError",
    "MissingDependency",
    "PackError",
    "Problem",
    "StoreError",
    "TranscriptError",
]


@dataclass(frozen=True)
class Problem:
    """One problem in one file: where it is and what was expected.

    Attributes:
        file: The file the problem is in.
        line: 1-based line number, when the format has lines.
        where: A JSON-path-like location inside the document (``tiers[0].weight``).
        message: What is wrong and what was expected.
    """

    file: Path | str
    message: str
    line: int | None = None
    where: str | None = None

    def __str__(self) -> str:
        place = f"{self.file}:{self.line}" if self.line is not None else f"{self.file}"
        where = f" {self.where}:" if self.where else ""
        return f"{place}:{where} {self.message}"


class LhbenchError(Exception):
    """Base of every error that is the user's to fix; the CLI prints it without a traceback."""

    exit_code = 2

    def lines(self) -> list[str]:
        """The error as the short lines the CLI prints."""
        return [str(self)]


class PackError(LhbenchError):
    """A task pack on disk is broken; carries one Problem per thing wrong."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))

    def lines(self) -> list[str]:
        """One line per problem."""
        return [str(p) for p in self.problems]


class DataFileError(LhbenchError):
    """A data file given to a command (e.g. preference votes) is broken; one Problem each."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))

    def lines(self) -> list[str]:
        """One line per problem."""
        return [str(p) for p in self.problems]


class TranscriptError(LhbenchError):
    """A transcript line could not be read as the format it claims to be."""

    def __init__(self, file: Path | str, line: int, message: str) -> None:
        self.problem = Problem(file=file, line=line, message=message)
        super().__init__(str(self.problem))


class ConfigError(LhbenchError):
    """A setting in lhbench.toml, the environment, or a flag is invalid."""


class StoreError(LhbenchError):
    """The store cannot be opened or does not hold what was asked for."""


class InfrastructureError(LhbenchError):
    """What running or checking needs is missing or unreachable: not the agent's doing.

    A missing package or browser, an unreachable package registry or model endpoint, a
    sandbox that cannot start. It is never a score: the CLI exits 2, the unit is retried by
    the next run of the command, and reports count it as infrastructure, apart.
    """

    retryable = True


class MissingDependency(InfrastructureError):
    """A program or package an environment needs at run time is not installed here.

    Attributes:
        what: What is missing (``playwright``, ``Chromium``).
        needed_for: What needs it (``the Figma capture``).
        install: How to install it (``pip install 'lhbench[figma]'``).
    """

    def __init__(self, what: str, *, needed_for: str, install: str) -> None:
        self.what = what
        self.needed_for = needed_for
        self.install = install
        super().__init__(f"{what} is not installed; {needed_for} needs it: {install}")
