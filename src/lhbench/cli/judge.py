"""``lhbench judge``: grade stored runs with a panel of rubric judges (or pairwise)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated

import typer

from lhbench.cli.common import (
    DbOption,
    JsonOption,
    RayAddressOption,
    dump_json,
    new_table,
    open_store,
    out,
    progress_factory,
    say,
    settings_for,
    warn,
)
from lhbench.cli.runs import print_summary

if TYPE_CHECKING:
    from lhbench.jobs.grading import RunFiguresRow

__all__ = ["register"]

# the figures of a run with no grade
_UNGRADED: RunFiguresRow = ({}, math.nan, math.nan, 0, 0.0, 0, 0)


def judge(
    pack: Annotated[str, typer.Option(help="Pack id (or directory) whose stored runs are graded.")],
    tier: Annotated[str, typer.Option(help="process, output or behavior.")] = "process",
    panel: Annotated[
        str | None, typer.Option(help="Judge models, comma-separated (aliases or model strings).")
    ] = None,
    rubric: Annotated[str | None, typer.Option(help="Rubric id (default: the tasks' own).")] = None,
    run_ids: Annotated[
        str | None, typer.Option("--runs", help="Only these run ids, comma-separated.")
    ] = None,
    repeats: Annotated[
        int, typer.Option(min=1, help="Grades per run and judge (noise floor).")
    ] = 1,
    concurrency: Annotated[int, typer.Option(min=1, help="Grades in flight.")] = 32,
    use_cache: Annotated[
        bool,
        typer.Option("--cache/--no-cache", help="Read and write the response cache (or neither)."),
    ] = True,
    retry_errors: Annotated[
        bool,
        typer.Option(
            "--retry-errors", help="Re-ask grades stored as final failures (parse errors)."
        ),
    ] = False,
    pairwise: Annotated[
        bool, typer.Option("--pairwise", help="Compare runs of a task pairwise instead.")
    ] = False,
    executor: Annotated[
        str, typer.Option(help="local, or ray: rubric grades made on Ray workers, stored here.")
    ] = "local",
    ray_address: RayAddressOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Grade stored runs with a rubric-judge panel; a restarted job does only what is missing.

    A grade is one (run, judge config, rubric content, tier, repeat). Grades that failed
    because the model was not reached are asked again on the next run; answers that did not
    parse are kept as errors unless --retry-errors.
    Example: lhbench judge --pack lhbench-samples --panel claude,gpt,gemini --repeats 3
    """
    from lhbench.api import grade
    from lhbench.jobs import panel_specs

    settings = settings_for(db)
    panel_specs(panel.split(",") if panel else None, settings)  # a bad panel: said first
    with open_store(settings, create=False) as store:
        res = grade(
            pack,
            tier=tier,
            panel=panel,
            rubric=rubric,
            run_ids=run_ids,
            repeats=repeats,
            concurrency=concurrency,
            use_cache=use_cache,
            retry_errors=retry_errors,
            pairwise=pairwise,
            with_grades=False,  # the figures are read from the grades' columns
            store=store,
            settings=settings,
            progress=progress_factory(not as_json),
            executor=executor,
            ray_address=ray_address,
        )
    families = {j.split(":", 1)[0] for j in res.judges}
    if len(res.judges) > 1 and len(families) < len(res.judges) and not as_json:
        warn(f"note: the panel repeats a provider ({', '.join(res.judges)})")
    head = {
        "rubric": res.rubric.id,
        "rubric_version": res.rubric.version,
        "rubric_hash": res.rubric.content_hash,
        "tier": tier,
        **res.summary.as_dict(),
        "not_graded_infrastructure": {r.id: r.error for r in res.infra_skipped},
    }
    if res.infra_skipped and not as_json:
        warn(
            f"not graded: {len(res.infra_skipped)} run(s) that failed for infrastructure "
            f"(no score; run them again): {', '.join(r.id for r in res.infra_skipped[:10])}"
        )
    if pairwise:
        if as_json:
            dump_json(head)
        else:
            print_summary(res.summary)
            say("`lhbench report` compares pairwise-judge votes with human votes")
        return
    figures = res.figures
    assert figures is not None  # rubric grading sums its grades per run
    usage = {
        "requests": sum(g.usage.requests for g in res.summary.results),
        "input_tokens": sum(g.usage.input_tokens for g in res.summary.results),
        "output_tokens": sum(g.usage.output_tokens for g in res.summary.results),
        "cost_usd": round(sum(g.cost_usd or 0.0 for g in res.summary.results), 6),
    }
    floor = figures.noise_floor if repeats > 1 else {}
    rows = []
    for r in res.graded:
        fig = figures.run_row(r.id)  # plain values: no object per run
        scores, mean, variance, failed, cost, tokens_in, tokens_out = fig or _UNGRADED
        rows.append(
            {
                "run": r.id,
                "harness": r.harness,
                "model": r.model,
                "judges": scores,  # shared by runs with the same scores (read, never changed)
                "mean": mean,
                "variance": variance,
                "failed": failed,
                "cost_usd": round(cost, 6) if fig else 0,
                "input_tokens": tokens_in,
                "output_tokens": tokens_out,
            }
        )
    if as_json:
        dump_json(
            {**head, **usage, "ok_grades": figures.ok_grades, "runs": rows, "noise_floor": floor},
            str_keys=True,  # ids, labels and the summary's reasons
        )
        return
    table = new_table(
        f"{res.rubric.id} v{res.rubric.version} · {tier}: panel scores",
        ["run", "harness / model", *res.judges, "mean", "var", "failed"],
        right=(*res.judges, "mean", "var", "failed"),
    )
    for row in rows:
        judges = row["judges"]
        assert isinstance(judges, dict)
        table.add_row(
            str(row["run"]),
            f"{row['harness']} / {row['model']}",
            *[f"{judges[j]:.2f}" if j in judges else "-" for j in res.judges],
            "-" if math.isnan(row["mean"]) else f"{row['mean']:.2f}",  # type: ignore[arg-type]
            "-" if math.isnan(row["variance"]) else f"{row['variance']:.3f}",  # type: ignore[arg-type]
            str(row["failed"]),
        )
    out.print(table)
    print_summary(res.summary)
    say(
        f"{usage['requests']} request(s), {usage['input_tokens']}+{usage['output_tokens']} "
        "tokens" + (f", ${usage['cost_usd']:.4f}" if usage["cost_usd"] else "")
    )
    if floor:
        say(
            "noise floor (mean SD of a judge's own repeated scores): "
            + ", ".join(f"{k} {v:.3f}" for k, v in floor.items())
        )


def register(app: typer.Typer) -> None:
    """Add ``judge``."""
    app.command("judge")(judge)
