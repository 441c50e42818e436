"""``lhbench import``: existing transcripts into the store as runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lhbench.cli.common import (
    DbOption,
    JsonOption,
    UnsafeOption,
    dump_json,
    err,
    open_store,
    parse_versions,
    progress_factory,
    say,
    settings_for,
)
from lhbench.cli.runs import print_summary

__all__ = ["register"]


def import_(
    fmt: Annotated[
        str,
        typer.Argument(
            metavar="FORMAT",
            help="claude-code, codex, gemini-cli, osworld, inspect, jsonl, a plugin's format "
            "(lhbench plugins list) or auto.",
        ),
    ],
    paths: Annotated[list[Path], typer.Argument(help="Files, or directories to import whole.")],
    pack: Annotated[
        str | None, typer.Option(help="File the runs under this pack (id, name or directory).")
    ] = None,
    task: Annotated[
        str | None, typer.Option(help="…and this task id (then they are checked).")
    ] = None,
    harness: Annotated[
        str | None, typer.Option(help="Harness name (default: the format's).")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Model string (default: from the transcript).")
    ] = None,
    versions: Annotated[
        list[str] | None, typer.Option("--versions", help="Version tags key=value,…")
    ] = None,
    strict: Annotated[bool, typer.Option(help="Stop a file at its first unreadable line.")] = False,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace", help="Remove these files' earlier runs (and their grades) and re-import."
        ),
    ] = False,
    split_sessions: Annotated[
        bool,
        typer.Option(
            "--split-sessions",
            help="A file holding several sessions becomes one run per session "
            "(default: one run, whose status the last session decides).",
        ),
    ] = False,
    as_json: JsonOption = False,
    unsafe_no_sandbox: UnsafeOption = False,
    db: DbOption = None,
) -> None:
    """Import existing transcripts as runs; re-importing a file is a no-op.

    A file that cannot be read is reported and skipped (exit code 2 at the end).

    With --pack and --task the runs are filed under that task and checked by its verify
    script on their replayed final state.
    Example: lhbench import auto ./transcripts --pack my-pack --task t1 --versions skill=v1
    """
    from lhbench.api import import_transcripts

    settings = settings_for(db, unsafe_no_sandbox=unsafe_no_sandbox)
    with open_store(settings) as store:
        res = import_transcripts(
            paths,
            fmt=fmt,
            pack=pack,
            task=task,
            harness=harness,
            model=model,
            versions=parse_versions(versions),
            strict=strict,
            replace=replace,
            split_sessions=split_sessions,
            store=store,
            settings=settings,
            progress=progress_factory(not as_json),
        )
    files = res.files
    skipped = [str(e) for f in files for e in f.skipped_lines]
    problems = sum(f.problems for f in files)
    failed = [
        f.error if str(f.path) in f.error else f"{f.path}: {f.error}" for f in files if f.error
    ]
    multi = [f for f in files if f.sessions > len(f.runs) or (f.split and len(f.runs) > 1)]
    totals = {
        "files": len(files) + res.summary.skipped,
        "runs": sum(len(f.runs) for f in files),
        "already_imported": res.summary.skipped + sum(f.already for f in files),
        "incomplete": sum(f.incomplete for f in files),
        "steps": sum(f.steps for f in files),
        "failed_files": failed,
        "skipped_lines": skipped,
        "problems": problems,
        "multi_session_files": [
            {"path": str(f.path), "sessions": f.sessions, "runs": len(f.runs)} for f in multi
        ],
        "sessions": "split" if split_sessions else "merged",
        "run_ids": [r for f in files for r in f.runs],
        "by_format": {
            fm: sum(len(f.runs) for f in files if f.format == fm)
            for fm in sorted({f.format for f in files if f.format})
        },
        "verify": res.verify.as_dict() if res.verify else None,
    }
    if as_json:
        dump_json({**res.summary.as_dict(), **totals})
        if failed:
            raise typer.Exit(2)
        return
    for e in skipped[:20]:
        err.print(f"skipped {e}", markup=False, style="yellow", soft_wrap=True)
    if problems > 20:
        err.print(f"… and {problems - 20} more skipped line(s)", markup=False)
    for f in failed:
        err.print(f"failed {f}", markup=False, style="red", soft_wrap=True)
    say(
        f"imported {totals['runs']} run(s) ({totals['steps']} steps) from {totals['files']} "
        f"file(s); {totals['already_imported']} already imported; {totals['incomplete']} "
        f"incomplete; {problems} line(s) skipped; {len(failed)} "
        "file(s) failed"
    )
    for m in multi:
        how = (
            f"split into {len(m.runs)} runs"
            if m.split
            else "merged into one run (the last session decides its status; "
            "--split-sessions imports one run per session)"
        )
        say(f"{m.path}: {m.sessions} sessions, {how}")
    print_summary(res.summary)
    if res.verify is not None:
        print_summary(res.verify)
    if failed:
        raise typer.Exit(2)  # bad input: the other files were imported, this one was not


def register(app: typer.Typer) -> None:
    """Add ``import``."""
    app.command("import")(import_)
