"""``lhbench report`` and ``lhbench failures``: what the store's judgements add up to."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lhbench.cli.common import (
    DbOption,
    JsonOption,
    dump_json,
    new_table,
    open_store,
    out,
    say,
    settings_for,
)
from lhbench.errors import LhbenchError

if TYPE_CHECKING:
    pass

__all__ = ["register"]


def report(
    db: DbOption = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Output directory (default: <home>/report).")
    ] = None,
    by: Annotated[
        str, typer.Option(help="Group runs by these keys (harness, model, task, versions.K …).")
    ] = "harness,model",
    ablation: Annotated[
        str | None, typer.Option(help="A versions key to report paired deltas for (e.g. skill).")
    ] = None,
    baseline: Annotated[str | None, typer.Option(help="The ablation's baseline value.")] = None,
    include_stale: Annotated[
        bool,
        typer.Option(
            "--include-stale",
            help="Keep grades made with an earlier rubric content or judge settings.",
        ),
    ] = False,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
) -> None:
    """Write Markdown, CSV and a self-contained HTML report of what the store holds.

    By default only grades for each rubric's current content by the current judges count;
    the report says how many it left out.
    Example: lhbench report --by harness,model,versions.skill --ablation skill --baseline none
    """
    from lhbench.api import report as make_report

    settings = settings_for(db)
    with open_store(settings, create=False) as store:
        res = make_report(
            by=by,
            ablation=ablation,
            baseline=baseline,
            include_stale=include_stale,
            out=out or settings.home / "report",
            seed=seed,
            store=store,
            settings=settings,
        )
    for note in res.notes:
        say(note, style="yellow")
    files = res.files
    assert files is not None  # written: out was given
    say(f"report: {files.html} (Markdown: {files.markdown.name}, {len(files.csv)} CSV file(s))")


def failures(
    pack: Annotated[str | None, typer.Option(help="Only runs of this pack.")] = None,
    llm: Annotated[
        str | None, typer.Option(help="Also extract with this model and print the agreement.")
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Failure taxonomy and recovery (LH-Bench Tables 11–12) of stored runs.

    Example: lhbench failures --pack lhbench-samples --json
    """
    from lhbench.stats import agent_table, error_events, extraction_agreement, type_table

    settings = settings_for(db)
    with open_store(settings, create=False) as store:
        runs = store.list_runs(pack_id=pack)
        loaded = [(f"{r.harness} / {r.model}", r, store.get_trajectory(r.id)) for r in runs]
    loaded = [x for x in loaded if x[2].steps]
    events = {run.id: error_events(traj) for _, run, traj in loaded}
    types = type_table(e for ev in events.values() for e in ev)
    agents = agent_table(loaded)
    result: dict[str, Any] = {
        "types": [
            {"type": r.type.value, "count": r.count, "recovered": r.recovered} for r in types
        ],
        "agents": [
            {
                "group": a.group,
                "runs": a.runs,
                "errors": a.errors,
                "failure_rate": a.failure_rate,
                "recovery_rate": a.recovery_rate,
                "tool_calls": a.tool_calls,
            }
            for a in agents
        ],
    }
    if llm:
        from lhbench.jobs.failures import extract_failures

        with open_store(settings, create=False) as store:
            res = asyncio.run(
                extract_failures(store, settings, [r for _, r, _ in loaded], model=llm)
            )
        ok = {k: x for k, x in res.extractions.items() if x.status == "ok"}
        if loaded and not ok:  # a model that answers badly or not at all: say so, no trace
            raise LhbenchError(f"--llm {llm}: extraction failed ({res.summary.line()})"[:400])
        say(res.summary.line(), to_err=as_json)
        agree = extraction_agreement(
            [(run.id, e) for _, run, _ in loaded if run.id in ok for e in events[run.id]],
            [(rid, m) for rid, x in ok.items() for m in x.events],
        )
        result["llm_agreement"] = agree.__dict__
    if as_json:
        dump_json(result)
        return
    table = new_table(
        f"Failure taxonomy ({sum(r.count for r in types)} errors in {len(loaded)} runs)",
        ["error type", "count", "recovered", "recovery %"],
        right=("count", "recovered", "recovery %"),
    )
    for r in types:
        table.add_row(r.type.value, str(r.count), str(r.recovered), f"{100 * r.rate:.1f}")
    out.print(table)
    if "llm_agreement" in result:
        say(f"rules vs {llm}: {result['llm_agreement']}")


def register(app: typer.Typer) -> None:
    """Add ``report`` and ``failures``."""
    app.command("report")(report)
    app.command("failures")(failures)
