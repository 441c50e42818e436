"""``lhbench run`` (agents on a pack's tasks) and ``lhbench runs`` (list, remove)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from lhbench.cli.common import (
    DbOption,
    JsonOption,
    RayAddressOption,
    UnsafeOption,
    dump_json,
    dump_json_array,
    new_table,
    open_store,
    out,
    parse_versions,
    progress_factory,
    say,
    settings_for,
)

__all__ = ["print_summary", "register"]

runs_app = typer.Typer(help="Runs in the store.", no_args_is_help=True)


def print_summary(summary: object) -> None:
    """A job summary line (and its failures) as the user reads it."""
    line = getattr(summary, "line")()  # noqa: B009
    say(line, style="red" if getattr(summary, "failed", 0) else None)


@runs_app.command("list")
def runs_list(
    db: DbOption = None,
    pack: Annotated[str | None, typer.Option(help="Only this pack id.")] = None,
    task: Annotated[str | None, typer.Option(help="Only this task id.")] = None,
    harness: Annotated[str | None, typer.Option(help="Only this harness.")] = None,
    model: Annotated[str | None, typer.Option(help="Only this model.")] = None,
    versions: Annotated[
        list[str] | None, typer.Option("--versions", help="Only runs with key=value,…")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Runs with harness, model, versions, status and step/tool-call/error counts.

    Example: lhbench runs list --pack lhbench-samples --versions skill=none
    """
    filters: dict[str, Any] = {
        "pack_id": pack,
        "task_id": task,
        "harness": harness,
        "model": model,
        "versions": parse_versions(versions),
    }
    with open_store(settings_for(db), create=False) as store:
        if as_json:  # streamed a page at a time: a store of any size lists in constant memory
            dump_json_array(
                {
                    "id": r.run.id,
                    "pack": r.run.pack_id,
                    "task": r.run.task_id,
                    "harness": r.run.harness,
                    "model": r.run.model,
                    "versions": r.run.versions,
                    "status": r.run.status.value,
                    "passed": r.passed,
                    "steps": r.steps,
                    "tool_calls": r.tool_calls,
                    "errors": r.errors,
                }
                for r in store.iter_run_summaries(**filters)
            )
            return
        rows = store.run_summaries(**filters)
    table = new_table(
        f"Runs ({len(rows)})",
        [
            "run",
            "pack/task",
            "harness",
            "model",
            "versions",
            "status",
            "check",
            "steps",
            "tools",
            "errors",
        ],
        right=("steps", "tools", "errors"),
    )
    for r in rows:
        table.add_row(
            r.run.id,
            f"{r.run.pack_id}/{r.run.task_id}",
            r.run.harness,
            r.run.model,
            ",".join(f"{k}={v}" for k, v in sorted(r.run.versions.items())) or "-",
            r.run.status.value,
            "-" if r.passed is None else "pass" if r.passed else "fail",
            str(r.steps),
            str(r.tool_calls),
            str(r.errors),
        )
    out.print(table)


@runs_app.command("rm")
def runs_rm(
    run_ids: Annotated[list[str], typer.Argument(help="Run ids to remove.")],
    db: DbOption = None,
) -> None:
    """Remove runs with their steps, artifacts, grades, verdicts, labels and votes.

    Example: lhbench runs rm imp-3f2a…-codex
    """
    with open_store(settings_for(db), create=False) as store:
        for run_id in run_ids:
            removed = store.delete_run(run_id)
            detail = ", ".join(f"{n} {k}" for k, n in removed.items() if n and k != "runs")
            say(f"removed {run_id}" + (f" ({detail})" if detail else ""))


def run_(
    pack: Annotated[str, typer.Argument(help="Pack directory, bundled pack name or pack id.")],
    harness: Annotated[
        str,
        typer.Option(
            help="native (ours), claude-code, codex, gemini-cli, or a plugin's harness "
            "(lhbench plugins list)."
        ),
    ] = "native",
    model: Annotated[str, typer.Option(help="Model string or alias.")] = "",
    tasks: Annotated[str | None, typer.Option(help="Only these task ids, comma-separated.")] = None,
    repeats: Annotated[int, typer.Option(min=1)] = 1,
    versions: Annotated[
        list[str] | None, typer.Option("--versions", help="skill=v1,prompt=v0")
    ] = None,
    parallel: Annotated[int, typer.Option(min=1, help="Runs at once.")] = 2,
    executor: Annotated[str, typer.Option(help="local or ray.")] = "local",
    ray_address: RayAddressOption = None,
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="Also rerun timed-out or over-limit runs.")
    ] = False,
    verify: Annotated[
        bool, typer.Option("--verify/--no-verify", help="Run the tasks' checks afterwards.")
    ] = True,
    as_json: JsonOption = False,
    unsafe_no_sandbox: UnsafeOption = False,
    db: DbOption = None,
) -> None:
    """Run a harness on a pack's tasks; finished runs are skipped, interrupted ones resume.

    Every run that ends is checked by its task's verify script (a pass/fail label).
    Example: lhbench run lhbench-samples --model openai:qwen@http://127.0.0.1:8000/v1
    """
    from lhbench.api import run_agents

    settings = settings_for(db, unsafe_no_sandbox=unsafe_no_sandbox)
    with open_store(settings) as store:
        res = run_agents(
            pack,
            model=model,
            harness=harness,
            tasks=tasks,
            repeats=repeats,
            versions=parse_versions(versions),
            parallel=parallel,
            executor=executor,
            ray_address=ray_address,
            retry_errors=retry_errors,
            verify=verify,
            store=store,
            settings=settings,
            progress=progress_factory(not as_json),
        )
    outcomes = res.summary.results
    labels = {lab.run_id: lab for lab in res.labels}
    if as_json:
        dump_json(
            {
                **res.summary.as_dict(),
                "verify": res.verify.as_dict() if res.verify else None,
                "runs": [
                    {
                        "id": o.run.id,
                        "task": o.run.task_id,
                        "status": o.run.status.value,
                        "passed": labels[o.run.id].passed if o.run.id in labels else None,
                        "steps": len(o.trajectory.steps),
                    }
                    for o in outcomes
                ],
            }
        )
        return
    table = new_table(
        f"{len(outcomes)} run(s) of {res.pack.pack.id} with {harness} / {res.model}",
        ["run", "task", "status", "check", "steps", "tool calls", "errors", "tokens"],
    )
    for o in outcomes:
        lab = labels.get(o.run.id)
        table.add_row(
            o.run.id,
            o.run.task_id,
            o.run.status.value,
            "-"
            if lab is None
            else "undecided"
            if lab.passed is None
            else "pass"
            if lab.passed
            else "fail",
            str(len(o.trajectory.steps)),
            str(len(o.trajectory.tool_calls)),
            str(len(o.trajectory.errors)),
            f"{o.run.usage.input_tokens}+{o.run.usage.output_tokens}",
        )
    if outcomes:
        out.print(table)
    print_summary(res.summary)
    if res.verify is not None:
        print_summary(res.verify)


def register(app: typer.Typer) -> None:
    """Add ``run`` and the runs group."""
    app.command("run")(run_)
    app.add_typer(runs_app, name="runs")
