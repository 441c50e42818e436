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
from lhbench.errors import ConfigError, LhbenchError

if TYPE_CHECKING:
    from lhbench.config import Settings
    from lhbench.reporting import ReportData, ReportFiles
    from lhbench.store import Store

__all__ = ["load_report_data", "register", "write_report_files"]


def load_report_data(store: Store, settings: Settings, *, include_stale: bool) -> ReportData:
    """Report data with current judgements (``include_stale`` keeps all)."""
    from lhbench.reporting.data import ReportData, configured_panel

    return ReportData.from_store(
        store, include_stale=include_stale, panel=configured_panel(settings)
    )


def write_report_files(
    data: ReportData,
    directory: Path,
    by: str,
    ablation: str | None,
    baseline: str | None,
    seed: int,
    *,
    notes: list[str] | None = None,
) -> ReportFiles:
    """Write the report's files."""
    from lhbench.reporting import write_report

    keys = [k.strip() for k in by.split(",") if k.strip()]
    if not keys:
        raise ConfigError("--by: give at least one key (harness, model, task, versions.K)")
    return write_report(
        data,
        directory,
        by=keys,
        ablation=ablation,
        baseline=baseline,
        seed=seed,
        notes=notes,
    )


def report(
    db: DbOption = None,
    out_dir: Annotated[
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
    settings = settings_for(db)
    with open_store(settings, create=False) as store:
        data = load_report_data(store, settings, include_stale=include_stale)
        files = write_report_files(
            data, out_dir or settings.home / "report", by, ablation, baseline, seed
        )
    for note in data.excluded.notes():
        say(note, style="yellow")
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
