"""``lhbench export``: what the store holds, in formats other tools read."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from lhbench.cli.common import (
    DbOption,
    JsonOption,
    dump_json,
    new_table,
    open_store,
    say,
    settings_for,
)
from lhbench.cli.common import out as console

__all__ = ["register"]

export_app = typer.Typer(
    help="Export runs, grades and verdicts for other tools.", no_args_is_help=True
)


class LogFormat(StrEnum):
    """Which Inspect log files to write."""

    EVAL = "eval"
    JSON = "json"
    BOTH = "both"


@export_app.command("inspect")
def inspect(
    out: Annotated[
        Path, typer.Argument(metavar="DIRECTORY", help="Directory to write the logs into.")
    ],
    pack: Annotated[str | None, typer.Option(help="Only runs of this pack.")] = None,
    formats: Annotated[
        LogFormat, typer.Option("--format", help="eval (zip), json, or both.")
    ] = LogFormat.BOTH,
    include_stale: Annotated[
        bool,
        typer.Option(
            "--include-stale",
            help="Score with every grade, also those made with earlier rubric content or "
            "judge settings (left out by default, as in the report).",
        ),
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Write one Inspect AI log per (pack, harness, model, versions) group.

    Samples are runs (id = task, epoch = repeat + 1) with the transcript as messages and
    events; scores are the panel mean of current grades per rubric tier, the task's
    checks (``verify``) and agent-judge verdicts. Read them with ``inspect view``.
    Example: lhbench export inspect ./inspect-logs --pack lhbench-samples
    """
    from lhbench.api import export_inspect

    settings = settings_for(db)
    with open_store(settings, create=False) as store:
        logs = export_inspect(
            out,
            pack=pack,
            formats=formats.value,
            include_stale=include_stale,
            store=store,
            settings=settings,
        ).logs
    if as_json:
        dump_json(
            [
                {
                    "group": list(log.group),
                    "paths": [str(p) for p in log.paths],
                    "samples": log.samples,
                    "scores": log.scores,
                    "excluded": log.excluded,
                }
                for log in logs
            ]
        )
        return
    if not logs:
        say("no runs to export")
        return
    table = new_table(
        "Inspect logs",
        ["pack", "harness", "model", "versions", "samples", "scores", "files"],
        right=("samples", "scores"),
    )
    for log in logs:
        pack_id, _hash, harness, model, versions = log.group
        table.add_row(
            pack_id,
            harness,
            model,
            versions or "-",
            str(log.samples),
            str(log.scores),
            "\n".join(p.name for p in log.paths),
        )
    console.print(table)
    for note in logs[0].excluded:
        say(f"note: {note}")
    say(
        f"wrote {sum(len(log.paths) for log in logs)} file(s) to {out} "
        f"(read them with: inspect view --log-dir {out})"
    )


def register(app: typer.Typer) -> None:
    """Add ``export``."""
    app.add_typer(export_app, name="export")
