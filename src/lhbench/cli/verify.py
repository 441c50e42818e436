"""``lhbench verify``: the tasks' checks on stored runs' final states."""

from __future__ import annotations

from typing import Annotated

import typer

from lhbench.cli.common import (
    DbOption,
    JsonOption,
    UnsafeOption,
    dump_json,
    open_store,
    progress_factory,
    say,
    settings_for,
)
from lhbench.cli.runs import print_summary

__all__ = ["register"]


def verify(
    pack: Annotated[str | None, typer.Option(help="Only runs of this pack.")] = None,
    run_ids: Annotated[
        str | None, typer.Option("--runs", help="Only these run ids, comma-separated.")
    ] = None,
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="Re-run checks that crashed or timed out.")
    ] = False,
    as_json: JsonOption = False,
    unsafe_no_sandbox: UnsafeOption = False,
    db: DbOption = None,
) -> None:
    """Label stored runs: each task's verify script (and hook checks) on the run's final state.

    A kept workspace is the final state of a run lhbench ran; an imported run's state is
    replayed from its trajectory. Checks already run on the same task content are skipped.
    Example: lhbench verify --pack lhbench-samples
    """
    from lhbench.api import verify as verify_runs

    settings = settings_for(db, unsafe_no_sandbox=unsafe_no_sandbox)
    with open_store(settings, create=False) as store:
        results = verify_runs(
            pack,
            run_ids=run_ids,
            retry_errors=retry_errors,
            store=store,
            settings=settings,
            progress=progress_factory(not as_json),
        ).packs
    if as_json:
        dump_json({pack_id: s.as_dict() for pack_id, s in results})
        return
    if not results:
        say("no runs with a known pack to verify (import with --pack/--task, or lhbench run)")
    for pack_id, summary in results:
        say(f"{pack_id}:")
        print_summary(summary)


def register(app: typer.Typer) -> None:
    """Add ``verify``."""
    app.command("verify")(verify)
