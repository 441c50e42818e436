"""``lhbench aj``: Agent-as-a-Judge runs, scores and reviewer tags."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from lhbench.cli.common import (
    DbOption,
    JsonOption,
    UnsafeOption,
    dump_json,
    new_table,
    open_store,
    out,
    progress_factory,
    say,
    settings_for,
)
from lhbench.cli.runs import print_summary
from lhbench.errors import ConfigError, LhbenchError

if TYPE_CHECKING:
    from lhbench.stats.aj_modes import VerdictReads
    from lhbench.store import Store

__all__ = ["meta_tables", "print_meta_tables", "register"]

aj_app = typer.Typer(help="Agent-as-a-Judge: replay, judge, score.", no_args_is_help=True)


def meta_tables(store: Store, reads: VerdictReads | None = None) -> dict[str, Any]:
    """The AJ-Bench tables from stored verdicts and labels (``reads``: columns already read)."""
    from lhbench.reporting.aj import aj_section
    from lhbench.reporting.aj_breakdown import aj_breakdown_section
    from lhbench.reporting.aj_data import AjData
    from lhbench.reporting.recorded import recorded_agreement_table, recorded_outcomes

    data = AjData.from_store(store, reads=reads)  # columns only: no run, grade or vote model
    sec = aj_section(data)
    # the per-domain, failure-mode and turn-budget tables follow AJ-Bench's main ones
    more = aj_breakdown_section(data).tables
    # imported runs' recorded outcomes (MCPMark's) against lhbench's labels
    if recorded := recorded_outcomes(store):
        table = recorded_agreement_table(recorded, store.label_facts())
        if table is not None:
            more.append(table)
    return {
        "empty": sec.empty,
        "tables": [
            {
                "slug": t.slug,
                "title": t.title,
                "columns": t.columns,
                "rows": t.rows,
                "notes": t.notes,
            }
            for t in [*sec.tables, *more]
        ],
    }


def print_meta_tables(result: dict[str, Any]) -> None:
    """The AJ-Bench tables, as rich tables."""
    from lhbench.reporting import fmt

    if result["empty"]:
        say(result["empty"])
    for t in result["tables"]:
        table = new_table(t["title"], t["columns"])
        for row in t["rows"]:
            table.add_row(*[fmt(c) for c in row])
        out.print(table)
        for note in t["notes"]:
            say(note, style="dim")


@aj_app.command("run")
def aj_run(
    pack: Annotated[
        str, typer.Argument(help="Pack directory, bundled pack name or pack id.")
    ] = "aj-ds-mini",
    judge: Annotated[
        str, typer.Option(help="agent (with tools), llm (without), or none (label only).")
    ] = "agent",
    model: Annotated[
        str | None, typer.Option(help="Judge model (default: aj_model setting).")
    ] = None,
    repeats: Annotated[int, typer.Option(min=1)] = 1,
    budget: Annotated[int, typer.Option(min=1, help="Tool calls allowed per verdict.")] = 20,
    concurrency: Annotated[int, typer.Option(min=1)] = 4,
    postgres_url: Annotated[
        str | None, typer.Option(help="Replay SQL tasks on PostgreSQL.")
    ] = None,
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="Re-ask verdicts that failed to parse.")
    ] = False,
    tool_set: Annotated[
        str | None,
        typer.Option(help="Agent judge's tools (search packs): state or state+trajectory."),
    ] = None,
    modality: Annotated[
        str | None,
        typer.Option(help="Agent judge's perception (GUI packs): screenshot, a11y or both."),
    ] = None,
    as_json: JsonOption = False,
    unsafe_no_sandbox: UnsafeOption = False,
    db: DbOption = None,
) -> None:
    """Label a pack's runs with their checks, then judge each one (re-runs skip what is stored).

    The pack's fixture trajectories become runs; every run of the pack (fixtures, `lhbench
    run`, imports with --pack) is labelled on its final state and judged there
    (`--judge none`: labelled only, no model needed).
    Example: lhbench aj run aj-ds-mini --judge agent --model openai:m@http://127.0.0.1:8000/v1
    """
    from lhbench.api import judge_states
    from lhbench.jobs import aj_judge_spec

    settings = settings_for(db, unsafe_no_sandbox=unsafe_no_sandbox)
    aj_judge_spec(None if judge == "none" else judge, model, settings)  # said before any work
    with open_store(settings) as store:
        res = judge_states(
            pack,
            judge=judge,
            model=model,
            repeats=repeats,
            budget=budget,
            concurrency=concurrency,
            postgres_url=postgres_url,
            tool_set=tool_set,
            modality=modality,
            retry_errors=retry_errors,
            store=store,
            settings=settings,
            progress=progress_factory(not as_json),
        )
        tables = meta_tables(store)
    decided = [lab for lab in res.labels if lab.passed is not None]
    passed = sum(1 for lab in decided if lab.passed)
    if as_json:
        dump_json(
            {
                "fixtures": res.fixtures.as_dict(),
                "verify": res.verify.as_dict(),
                "verdicts": res.judging.as_dict() if res.judging else None,
                **tables,
            }
        )
        return
    say(f"{res.pack.pack.id}: {len(res.runs)} run(s); {len(decided)} labelled ({passed} pass)")
    for summary in (res.fixtures, res.verify, res.judging):
        if summary is not None:
            print_summary(summary)
    print_meta_tables(tables)


def _failure_modes(store: Store, reads: VerdictReads) -> dict[str, int]:
    # how many wrong agent verdicts of each failure mode (a stored tag wins over the rule)
    from lhbench.stats.aj_modes import verdict_failure_modes

    counts: dict[str, int] = {}
    for mode, _stored in verdict_failure_modes(store, reads=reads).values():
        counts[mode] = counts.get(mode, 0) + 1
    return counts


@aj_app.command("score")
def aj_score(as_json: JsonOption = False, db: DbOption = None) -> None:
    """F1, precision, recall, FPR, FNR per subdomain from stored verdicts and labels.

    Example: lhbench aj score --json
    """
    from lhbench.stats.aj_modes import VerdictReads

    with open_store(settings_for(db), create=False) as store:
        reads = VerdictReads.of(store)  # one read for the tables and the failure modes
        result = meta_tables(store, reads)
        modes = _failure_modes(store, reads)
    if as_json:
        dump_json({**result, "failure_modes": modes})
        return
    print_meta_tables(result)
    if modes:
        say(
            "failure modes of wrong agent verdicts: "
            + ", ".join(f"({k}) {v}" for k, v in sorted(modes.items()))
        )


@aj_app.command("tag")
def aj_tag(
    verdict_id: Annotated[str, typer.Argument(help="The verdict to tag.")],
    mode: Annotated[
        str, typer.Argument(help="a, b, c (misread tool output) or d (wrong reasoning).")
    ],
    db: DbOption = None,
) -> None:
    """Record a reviewer's failure-mode tag on a wrong verdict.

    Example: lhbench aj tag verdict-3f2a… c
    """
    if mode not in ("a", "b", "c", "d"):
        raise ConfigError(f"mode {mode!r}: expected a, b, c or d")
    with open_store(settings_for(db), create=False) as store:
        if not store.set_verdict_failure_mode(verdict_id, mode):
            raise LhbenchError(f"no verdict {verdict_id!r} in the store")
    say(f"tagged {verdict_id}: ({mode})")


@aj_app.command("import-mcpmark")
def aj_import_mcpmark(
    src: Annotated[str, typer.Argument(help="An MCPMark folder (tasks/, results/, states).")],
    out: Annotated[str, typer.Option(help="Where to write the pack.")] = "mcpmark-pack",
    pack_id: Annotated[str, typer.Option(help="The pack's id.")] = "mcpmark",
    as_json: JsonOption = False,
) -> None:
    """Turn MCPMark's filesystem and postgres tasks and run logs into a pack to judge.

    Each task's own verify.py labels the runs (through MCPMark's environment variables).
    Example: lhbench aj import-mcpmark ./mcpmark --out ./mcpmark-pack; lhbench aj run ./mcpmark-pack
    """
    from pathlib import Path

    from lhbench.ingest.mcpmark import import_mcpmark

    res = import_mcpmark(Path(src), Path(out), pack_id=pack_id)
    if as_json:
        dump_json(
            {
                "pack": str(res.pack_dir),
                "tasks": res.tasks,
                "trajectories": res.trajectories,
                "skipped": res.skipped,
                "refused": res.refused,
            }
        )
        return
    say(f"{res.pack_dir}: {len(res.tasks)} task(s), {res.trajectories} trajectory(ies)")
    for why in res.skipped:
        say(f"skipped {why}", style="dim")
    for why in res.refused:
        say(f"not replayable (its run's checks will be undecided): {why}", style="yellow")


@aj_app.command("import-osworld")
def aj_import_osworld(
    src: Annotated[str, typer.Argument(help="An OSWorld result directory (traj.jsonl, PNGs).")],
    pack: Annotated[str, typer.Option(help="The GUI pack directory to add it to.")],
    task: Annotated[str, typer.Option(help="The pack's task it is a trajectory of.")],
    name: Annotated[str, typer.Option(help="The trajectory's name in the pack.")],
    document: Annotated[
        str | None,
        typer.Option(help="The final document (default: the one in SRC/final/)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Add an OSWorld result directory (and its final document) to a GUI pack's task.

    Copies traj.jsonl, result.txt, the screenshots and accessibility trees the steps name,
    and the final document into tasks/TASK/trajectories/NAME/ (nothing else).
    Example: lhbench aj import-osworld results/.../<example id> --pack ./my-gui-pack
    --task fix-budget --name gpt-run-1 --document cache/<example id>/budget.xlsx
    """
    import re
    from pathlib import Path

    from lhbench.envs.gui import import_osworld

    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,79}", name):
        raise ConfigError(f"--name {name!r}: lower-case letters, digits, '.', '_', '-'")
    task_dir = Path(pack) / "tasks" / task
    if not (task_dir / "task.yaml").is_file() or not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", task):
        raise ConfigError(f"--task {task!r}: no tasks/{task}/task.yaml in {pack}")
    rec = import_osworld(
        Path(src), Path(document) if document else None, task_dir / "trajectories" / name
    )
    if as_json:
        dump_json(
            {
                "trajectory": str(rec.directory),
                "steps": len(rec.steps),
                "document": rec.document.name,
                "score": rec.score,
            }
        )
        return
    say(f"{rec.directory}: {len(rec.steps)} step(s), final {rec.document.name}, score {rec.score}")


def register(app: typer.Typer) -> None:
    """Add the aj group."""
    app.add_typer(aj_app, name="aj")
