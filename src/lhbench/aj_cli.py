"""``lhbench aj``: Agent-as-a-Judge runs, scores and reviewer tags."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table as RichTable

from lhbench.config import Settings, load_settings
from lhbench.errors import ConfigError, LhbenchError
from lhbench.schema import EnvironmentKind
from lhbench.store import Store

# pydantic-ai, the MCP client and the envs load inside the commands: `lhbench --help`
# and every other command stay fast.

__all__ = ["aj_app", "print_meta_table", "replay_and_label"]

aj_app = typer.Typer(help="Agent-as-a-Judge: replay, judge, score.", no_args_is_help=True)
console = Console()


def _settings(db: str | None) -> Settings:
    return load_settings(db_url=db) if db else load_settings()


def replay_and_label(store: Store, settings: Settings, pack: str, postgres_url: str | None = None):  # type: ignore[no-untyped-def]
    """Replay every trajectory of a pack, label it with its verify script, store both."""
    from lhbench.aj import load_items, replay_items
    from lhbench.envs import PostgresDatabases
    from lhbench.packs import resolve_pack_dir

    pack_dir = resolve_pack_dir(pack)
    items = load_items(pack_dir)
    pg = PostgresDatabases(postgres_url) if postgres_url else None
    work = settings.home / "aj" / ("postgres" if pg else "sqlite")
    replayed = replay_items(items, work, postgres=pg, store=store)
    return replayed, pg


def print_meta_table(store: Store, as_json: bool = False) -> dict[str, object]:
    """The AJ-Bench table from stored verdicts and labels (and print it)."""
    from lhbench.analysis import ReportData
    from lhbench.analysis.meta import aj_section

    data = ReportData.from_store(store)
    sec = aj_section(data)
    result: dict[str, object] = {
        "empty": sec.empty,
        "tables": [{"title": t.title, "columns": t.columns, "rows": t.rows} for t in sec.tables],
    }
    if as_json:
        typer.echo(json.dumps(result, default=str))
        return result
    if sec.empty:
        console.print(sec.empty)
        return result
    for t in sec.tables:
        rt = RichTable(title=t.title)
        for c in t.columns:
            rt.add_column(c)
        from lhbench.analysis.tables import fmt

        for row in t.rows:
            rt.add_row(*[fmt(c, t.digits) for c in row])
        console.print(rt)
    return result


@aj_app.command("run")
def aj_run(
    pack: Annotated[
        str, typer.Argument(help="Pack directory or bundled pack name.")
    ] = "aj-ds-mini",
    judge: Annotated[str, typer.Option(help="agent (with tools) or llm (without).")] = "agent",
    model: Annotated[
        str | None, typer.Option(help="Judge model (default: aj_model setting).")
    ] = None,
    repeats: Annotated[int, typer.Option(min=1)] = 1,
    budget: Annotated[int, typer.Option(min=1, help="Tool calls allowed per verdict.")] = 20,
    concurrency: Annotated[int, typer.Option(min=1)] = 4,
    postgres_url: Annotated[
        str | None, typer.Option(help="Replay SQL tasks on PostgreSQL.")
    ] = None,
    db: Annotated[str | None, typer.Option("--db", help="Store URL.")] = None,
) -> None:
    """Replay and label a pack's trajectories, then judge each one (re-runs skip what is stored)."""
    from lhbench.aj import judge_items
    from lhbench.judges import VerdictJudge
    from lhbench.models import ModelPool, resolve_model

    if judge not in ("agent", "llm"):
        raise ConfigError(f"--judge {judge!r}: expected agent or llm")
    settings = _settings(db)
    ref = model or settings.aj_model
    if not ref:
        raise ConfigError(
            "no judge model: pass --model or set aj_model in lhbench.toml (LHBENCH_AJ_MODEL)"
        )
    spec = resolve_model(ref, settings.models)
    with Store.open(settings.database_url) as store:
        replayed, pg = replay_and_label(
            store, settings, pack, postgres_url or settings.aj_postgres_url
        )
        console.print(
            f"replayed and labelled {len(replayed)} trajectories "
            f"({sum(r.label.passed for r in replayed)} pass)"
        )

        async def go() -> tuple[int, int]:
            pool = ModelPool(store)
            async with pool.session():
                vj = VerdictJudge(
                    pool.get(spec), spec, agentic=judge == "agent", tool_budget=budget
                )
                return await judge_items(
                    store, replayed, vj, repeats=repeats, concurrency=concurrency
                )

        try:
            new, skipped = asyncio.run(go())
        finally:
            if pg is not None:
                pg.drop_all()
        console.print(f"{new} verdict(s) made, {skipped} already stored")
        print_meta_table(store)


@aj_app.command("score")
def aj_score(
    as_json: Annotated[bool, typer.Option("--json")] = False,
    db: Annotated[str | None, typer.Option("--db", help="Store URL.")] = None,
) -> None:
    """F1, precision, recall, FPR, FNR per subdomain from stored verdicts and labels."""
    with Store.open(_settings(db).database_url) as store:
        result = print_meta_table(store, as_json=as_json)
        if not as_json:
            modes = _failure_modes(store)
            if modes:
                console.print(
                    "failure modes of wrong agent verdicts: "
                    + ", ".join(f"({k}) {v}" for k, v in sorted(modes.items()))
                )
        if result.get("empty") and as_json:
            raise typer.Exit(0)


def _failure_modes(store: Store) -> dict[str, int]:
    from lhbench.aj import auto_failure_mode

    labels = {lab.run_id: lab.passed for lab in store.list_labels()}
    kinds: dict[str, EnvironmentKind] = {}
    counts: dict[str, int] = {}
    for v in store.list_verdicts(judge_kind="agent"):
        if v.run_id not in labels:
            continue
        if v.run_id not in kinds:
            run = store.get_run(v.run_id)
            task = store.get_task(run.pack_hash, run.task_id)
            kinds[v.run_id] = (
                task.environment.kind
                if task and task.environment.kind
                else EnvironmentKind.FILESYSTEM
            )
        mode = auto_failure_mode(v, labels[v.run_id], kinds[v.run_id])
        if mode:
            counts[mode] = counts.get(mode, 0) + 1
    return counts


@aj_app.command("tag")
def aj_tag(
    verdict_id: Annotated[str, typer.Argument(help="The verdict to tag.")],
    mode: Annotated[
        str, typer.Argument(help="a, b, c (misread tool output) or d (wrong reasoning).")
    ],
    db: Annotated[str | None, typer.Option("--db", help="Store URL.")] = None,
) -> None:
    """Record a reviewer's failure-mode tag on a wrong verdict."""
    if mode not in ("a", "b", "c", "d"):
        raise ConfigError(f"mode {mode!r}: expected a, b, c or d")
    with Store.open(_settings(db).database_url) as store:
        if not store.set_verdict_failure_mode(verdict_id, mode):
            raise LhbenchError(f"no verdict {verdict_id!r} in the store")
    console.print(f"tagged {verdict_id}: ({mode})")
