"""A rich progress bar for jobs (shown on a terminal, silent in pipes and with --json)."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

__all__ = ["RichProgress"]


class RichProgress:
    """A :class:`~lhbench.jobs.runner.ProgressSink` drawing one bar per job."""

    def __init__(self, label: str, console: Console, *, enabled: bool = True) -> None:
        self.label = label
        self.failed = 0
        self._progress = Progress(
            TextColumn(f"[bold]{label}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            disable=not enabled or not console.is_terminal,
            transient=True,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> RichProgress:
        self._progress.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.__exit__(exc_type, exc, tb)

    def start(self, total: int, skipped: int) -> None:
        """Show the bar for ``total`` units."""
        self._task = self._progress.add_task(self.label, total=total, failed="")

    def advance(self, ok: bool) -> None:
        """One unit done."""
        if not ok:
            self.failed += 1
        if self._task is not None:
            failed = f"[red]{self.failed} failed[/red]" if self.failed else ""
            self._progress.update(self._task, advance=1, failed=failed)
