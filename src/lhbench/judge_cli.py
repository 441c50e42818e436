"""``lhbench judge``: grade stored runs with a panel of rubric judges."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from lhbench.config import Settings
from lhbench.errors import ConfigError, LhbenchError
from lhbench.judges import JudgeJobSummary, RubricJudge, noise_floor, run_judge_job
from lhbench.models import ModelPool, ModelSpec, resolve_model
from lhbench.packs import bundled_pack_dirs, find_pack_dirs, load_pack
from lhbench.schema import GradeStatus, Rubric, Run, Tier, TierKind
from lhbench.store import Store

__all__ = ["find_rubric", "judge_command", "panel_specs"]


def panel_specs(panel: str | None, settings: Settings) -> list[ModelSpec]:
    """The judges named by ``--panel`` or ``judge_panel``; a clear error when there are none."""
    refs = [r.strip() for r in panel.split(",") if r.strip()] if panel else settings.judge_panel
    if not refs:
        raise ConfigError(
            "no judge models configured: pass --panel M1,M2,M3 or set judge_panel in "
            "lhbench.toml (LHBENCH_JUDGE_PANEL); LLM judges are skipped, never faked"
        )
    return [resolve_model(r, settings.models) for r in refs]


def find_rubric(
    store: Store,
    settings: Settings,
    pack_id: str,
    rubric_id: str | None,
    tier: str,
    runs: list[Run],
) -> tuple[Rubric, Tier]:
    """The rubric to grade with.

    ``--rubric`` is looked up in the pack, then the bundled library; without it, the first
    rubric of the runs' tasks that has the tier.
    """
    candidates: list[Rubric] = []
    pack_hash = store.latest_pack_hash(pack_id)
    task_rubrics: list[str] = []
    if pack_hash:
        pack = store.get_pack(pack_hash)
        candidates.extend(pack.rubrics)
        wanted = {r.task_id for r in runs}
        task_rubrics = [rid for t in pack.tasks if t.id in wanted for rid in t.rubrics]
    dirs = list(bundled_pack_dirs()) + [d for p in settings.pack_paths for d in find_pack_dirs(p)]
    for d in dirs:
        candidates.extend(load_pack(d).rubrics)
    by_id: dict[str, Rubric] = {}
    for r in candidates:
        by_id.setdefault(r.id, r)
    names = [rubric_id] if rubric_id else list(dict.fromkeys(task_rubrics))
    for name in names:
        rubric = by_id.get(name)
        if rubric is None:
            if rubric_id:
                raise ConfigError(
                    f"--rubric {rubric_id!r}: no such rubric (known: {', '.join(sorted(by_id))})"
                )
            continue
        try:
            return rubric, rubric.tier(tier)
        except KeyError:
            if rubric_id:
                raise ConfigError(
                    f"rubric {rubric_id!r} has no {tier!r} tier "
                    f"(it has {', '.join(t.kind.value for t in rubric.tiers)})"
                ) from None
    raise ConfigError(f"no rubric with a {tier!r} tier for pack {pack_id!r}: pass --rubric ID")


async def _run(
    store: Store,
    runs: list[Run],
    rubric: Rubric,
    tier: Tier,
    specs: list[ModelSpec],
    repeats: int,
    concurrency: int,
    use_cache: bool,
    console: Console,
    show_progress: bool,
) -> JudgeJobSummary:
    pool = ModelPool(store if use_cache else None)
    async with pool.session():
        judges = [RubricJudge(pool.get(s), s) for s in specs]
        with Progress(
            TextColumn("[bold]grading"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            disable=not show_progress,
            transient=True,
        ) as progress:
            task = progress.add_task("grades", total=None)

            def planned(todo: int, skipped: int) -> None:
                progress.update(task, total=todo)
                if skipped:
                    console.print(f"{skipped} grade(s) already stored: skipped")

            return await run_judge_job(
                store,
                runs,
                rubric,
                tier,
                judges,
                repeats=repeats,
                concurrency=concurrency,
                on_planned=planned,
                on_grade=lambda _g: progress.advance(task),
            )


async def _pairwise(
    store: Store,
    runs: list[Run],
    rubric: Rubric,
    tier: Tier,
    specs: list[ModelSpec],
    concurrency: int,
    use_cache: bool,
) -> tuple[int, int, int]:
    """Each judge compares each pair of runs of a task (both orders): (stored, skipped, failed)."""
    from lhbench.judges import PairwiseJudge, candidate_pairs, load_evidence

    by_id = {r.id: r for r in runs}
    existing = {v.id for v in store.list_votes(rater_kind="llm")}
    tasks: dict[tuple[str, str], Any] = {}
    made = skipped = failed = 0
    gate = asyncio.Semaphore(concurrency)
    pool = ModelPool(store if use_cache else None)
    async with pool.session():
        judges = [PairwiseJudge(pool.get(s), s) for s in specs]

        async def one(judge: PairwiseJudge, a: str, b: str) -> None:
            nonlocal made, skipped, failed
            if judge.vote_id(rubric, tier, a, b) in existing:
                skipped += 1
                return
            ea, eb = load_evidence(store, by_id[a], tasks), load_evidence(store, by_id[b], tasks)
            async with gate:
                out = await judge.compare(ea, eb, rubric, tier)
            if out.vote is None:
                failed += 1
            else:
                store.save_vote(out.vote)
                made += 1

        await asyncio.gather(
            *(one(j, a, b) for j in judges for _, _, a, b in candidate_pairs(runs))
        )
    return made, skipped, failed


def judge_command(
    *,
    pack: str,
    tier: str,
    panel: str | None,
    rubric: str | None,
    runs: str | None,
    repeats: int,
    concurrency: int,
    no_cache: bool,
    as_json: bool,
    db: str | None,
    pairwise: bool = False,
) -> None:
    """Grade stored runs with a rubric-judge panel; a restarted job does only what is missing."""
    from lhbench.config import load_settings

    if tier not in {t.value for t in TierKind}:
        raise ConfigError(f"--tier {tier!r}: expected one of process, output, behavior")
    settings = load_settings(db_url=db) if db else load_settings()
    specs = panel_specs(panel, settings)
    console = Console(stderr=as_json)
    families = [s.family for s in specs]
    if len(set(families)) < len(families):
        console.print(
            f"[yellow]note:[/yellow] the panel repeats a model family ({', '.join(families)})"
        )
    with Store.open(settings.database_url) as store:
        run_list = store.list_runs(pack_id=pack)
        if runs:
            wanted = {r.strip() for r in runs.split(",") if r.strip()}
            missing = wanted - {r.id for r in run_list}
            if missing:
                raise LhbenchError(f"--runs: not in pack {pack!r}: {', '.join(sorted(missing))}")
            run_list = [r for r in run_list if r.id in wanted]
        if not run_list:
            raise LhbenchError(f"no runs of pack {pack!r} in the store (import or run some first)")
        rub, tier_obj = find_rubric(store, settings, pack, rubric, tier, run_list)
        if pairwise:
            made, skipped, failed = asyncio.run(
                _pairwise(store, run_list, rub, tier_obj, specs, concurrency, not no_cache)
            )
            result = {"pairwise_votes": made, "skipped": skipped, "failed": failed}
            if as_json:
                typer.echo(json.dumps(result))
            else:
                console.print(
                    f"pairwise: {made} vote(s) stored (rater_kind llm), {skipped} already stored, "
                    f"{failed} failed; `lhbench report` compares them with human votes"
                )
            return
        summary = asyncio.run(
            _run(
                store,
                run_list,
                rub,
                tier_obj,
                specs,
                repeats,
                concurrency,
                not no_cache,
                console,
                not as_json,
            )
        )
        grades = [
            g
            for g in store.list_grades(rubric_id=rub.id, tier=tier)
            if g.rubric_version == rub.version
            and g.run_id in {r.id for r in run_list}
            and g.judge.model in {s.model_string for s in specs}
        ]
    totals = {
        "rubric": rub.id,
        "rubric_version": rub.version,
        "tier": tier,
        "planned": summary.planned,
        "skipped": summary.skipped,
        "graded": summary.graded,
        "ok": summary.ok,
        "parse_errors": summary.parse_errors,
        "errors": summary.errors,
        "unscorable_dimensions": summary.unscorable_dimensions,
        "requests": summary.requests,
        "input_tokens": summary.input_tokens,
        "output_tokens": summary.output_tokens,
        "cost_usd": round(summary.cost_usd, 6),
    }
    per_run: dict[str, dict[str, float]] = {}
    run_cost: dict[str, list[float]] = {}
    for g in grades:
        c = run_cost.setdefault(g.run_id, [0.0, 0.0, 0.0])
        c[0] += g.cost_usd or 0.0
        c[1] += g.usage.input_tokens
        c[2] += g.usage.output_tokens
        if g.repeat == 0 and g.status == GradeStatus.OK and g.tier_score is not None:
            per_run.setdefault(g.run_id, {})[g.judge.model] = g.tier_score
    rows = []
    for r in run_list:
        scores = per_run.get(r.id, {})
        vals = list(scores.values())
        mean = sum(vals) / len(vals) if vals else math.nan
        var = sum((v - mean) ** 2 for v in vals) / len(vals) if vals else math.nan
        cost = run_cost.get(r.id, [0.0, 0.0, 0.0])
        rows.append(
            {
                "cost_usd": round(cost[0], 6),
                "input_tokens": int(cost[1]),
                "output_tokens": int(cost[2]),
                "run": r.id,
                "harness": r.harness,
                "model": r.model,
                "judges": scores,
                "mean": mean,
                "variance": var,
            }
        )
    floor = noise_floor(grades) if repeats > 1 else {}
    if as_json:
        payload = {**totals, "runs": rows, "noise_floor": floor}
        typer.echo(
            json.dumps(
                payload, default=lambda x: None if isinstance(x, float) and math.isnan(x) else x
            )
        )
        return
    table = Table(title=f"{rub.id} v{rub.version} · {tier}: panel scores")
    table.add_column("run")
    table.add_column("harness / model")
    for s in specs:
        table.add_column(s.model_string, justify="right")
    table.add_column("mean", justify="right")
    table.add_column("var", justify="right")
    for row in rows:
        judges_scores = row["judges"]
        assert isinstance(judges_scores, dict)
        table.add_row(
            str(row["run"]),
            f"{row['harness']} / {row['model']}",
            *[
                f"{judges_scores[s.model_string]:.2f}" if s.model_string in judges_scores else "-"
                for s in specs
            ],
            f"{row['mean']:.2f}",
            f"{row['variance']:.3f}",
        )
    console.print(table)
    console.print(
        f"graded {summary.graded} (ok {summary.ok}, parse errors {summary.parse_errors}, errors "
        f"{summary.errors}), skipped {summary.skipped} already stored; "
        f"{summary.requests} request(s), "
        f"{summary.input_tokens}+{summary.output_tokens} tokens"
        + (f", ${summary.cost_usd:.4f}" if summary.cost_usd else "")
    )
    if floor:
        console.print(
            "noise floor (mean SD of a judge's own repeated scores): "
            + ", ".join(f"{k} {v:.3f}" for k, v in floor.items())
        )
