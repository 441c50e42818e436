"""The ``lhbench`` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from lhbench import __version__
from lhbench.config import Settings, load_settings
from lhbench.errors import ConfigError, LhbenchError, PackError
from lhbench.packs import bundled_pack_dirs, find_pack_dirs, load_pack
from lhbench.schema import TaskPack, export_json_schemas
from lhbench.store import Store, current_revision, head_revision, make_engine, upgrade

if TYPE_CHECKING:
    from lhbench.analysis import ReportFiles

__all__ = ["app", "main"]

app = typer.Typer(
    name="lhbench",
    help="Evaluate long-horizon agents: packs, runs, judges, reports.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
packs_app = typer.Typer(help="Validate and list task packs.", no_args_is_help=True)
schema_app = typer.Typer(help="The data model as JSON Schema.", no_args_is_help=True)
db_app = typer.Typer(help="The store's database.", no_args_is_help=True)
runs_app = typer.Typer(help="Runs in the store.", no_args_is_help=True)
users_app = typer.Typer(help="Arena annotator accounts.", no_args_is_help=True)
app.add_typer(packs_app, name="packs")
app.add_typer(schema_app, name="schema")
app.add_typer(db_app, name="db")
app.add_typer(runs_app, name="runs")
app.add_typer(users_app, name="users")


def _aj_app() -> typer.Typer:
    from lhbench.aj_cli import aj_app

    return aj_app


app.add_typer(_aj_app(), name="aj")

out = Console()
err = Console(stderr=True)

DbOption = Annotated[
    str | None, typer.Option("--db", help="Store URL (default: LHBENCH_DB_URL or .lhbench/).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def _settings(db: str | None = None) -> Settings:
    return load_settings(db_url=db) if db else load_settings()


def _open_store(db: str | None) -> Store:
    return Store.open(_settings(db).database_url)


def parse_versions(items: list[str] | None) -> dict[str, str]:
    """``["skill=v1,prompt=v0", "x=y"]`` -> ``{"skill": "v1", "prompt": "v0", "x": "y"}``."""
    versions: dict[str, str] = {}
    for item in items or []:
        for pair in filter(None, (p.strip() for p in item.split(","))):
            key, sep, value = pair.partition("=")
            if not sep or not key.strip() or not value.strip():
                raise ConfigError(f"--versions: expected key=value, found {pair!r}")
            versions[key.strip()] = value.strip()
    return versions


def _pack_table(packs: list[tuple[TaskPack, Path]], title: str) -> Table:
    table = Table(title=title)
    for col in ("pack", "version", "env", "tasks", "rubrics", "skills", "hash"):
        table.add_column(col, justify="right" if col in ("tasks", "rubrics", "skills") else "left")
    for pack, _path in packs:
        table.add_row(
            pack.id,
            pack.version,
            pack.environment.value,
            str(len(pack.tasks)),
            str(len(pack.rubrics)),
            str(len(pack.skills)),
            pack.content_hash[:10],
        )
    return table


def _rubric_table(packs: list[tuple[TaskPack, Path]]) -> Table:
    table = Table(title="Rubrics")
    for col in ("rubric", "family", "version", "author", "tiers (dimensions)"):
        table.add_column(col)
    for pack, _path in packs:
        for r in pack.rubrics:
            tiers = ", ".join(
                f"{t.kind.value}({len(t.dimensions)}{'' if t.enabled else ', off'})"
                for t in r.tiers
            )
            table.add_row(r.id, r.family, r.version, r.author.value, tiers)
    return table


def _all_pack_dirs(settings: Settings) -> list[Path]:
    dirs = list(bundled_pack_dirs())
    for extra in settings.pack_paths:
        dirs.extend(find_pack_dirs(extra))
    return dirs


@app.command()
def demo(db: DbOption = None) -> None:
    """Run the main job on the embedded defaults: bundled packs, SQLite store, summary."""
    settings = _settings(db)
    loaded = [(load_pack(d), d) for d in _all_pack_dirs(settings)]
    out.print(_pack_table(loaded, "Task packs (validated)"))
    out.print(_rubric_table(loaded))
    with Store.open(settings.database_url) as store:
        new = sum(store.save_pack(p) for p, _ in loaded)
        counts = store.counts()
        summary = Table(title="Store")
        summary.add_column("what")
        summary.add_column("count", justify="right")
        for name, n in counts.items():
            summary.add_row(name, str(n))
        out.print(summary)
        out.print(
            f"store: {store.engine.url.render_as_string(hide_password=True)} "
            f"({new} new pack version(s) recorded)"
        )
        _demo_agent_judge(store, settings)
        files = _write_report(store, settings.home / "report", "harness,model", None, None, 0)
    out.print(f"report: {files.html}")
    serve_db = f" --db {db}" if db else ""
    out.print(
        f"to browse the results: uv run lhbench serve{serve_db}  (then open http://127.0.0.1:8765/)"
    )


def _demo_agent_judge(store: Store, settings: Settings) -> None:
    """Replay the AJ sample pack, label it, and judge it when a model is configured."""
    from lhbench.aj_cli import print_meta_table, replay_and_label

    replayed, pg = replay_and_label(store, settings, "aj-ds-mini", settings.aj_postgres_url)
    passed = sum(r.label.passed for r in replayed)
    out.print(
        f"aj-ds-mini: replayed {len(replayed)} trajectories; verify scripts labelled "
        f"{passed} PASS, {len(replayed) - passed} FAIL"
    )
    if pg is not None:
        pg.drop_all()
    if not settings.aj_model:
        out.print(
            "agent and LLM judges skipped: no model configured. Set aj_model in lhbench.toml "
            "(or LHBENCH_AJ_MODEL) to run them; `lhbench aj run --model M` does it by hand."
        )
        return
    import asyncio

    from lhbench.aj import judge_items
    from lhbench.judges import VerdictJudge
    from lhbench.models import ModelPool, resolve_model

    spec = resolve_model(settings.aj_model, settings.models)

    async def go() -> None:
        pool = ModelPool(store)
        async with pool.session():
            for agentic in (True, False):
                judge = VerdictJudge(pool.get(spec), spec, agentic=agentic)
                await judge_items(store, replayed, judge)

    asyncio.run(go())
    print_meta_table(store)


@packs_app.command("validate")
def packs_validate(
    paths: Annotated[list[Path], typer.Argument(help="Pack directories (or parents of packs).")],
) -> None:
    """Check packs; one line per problem (file:line: what was expected), exit code 2."""
    problems: list[str] = []
    for root in paths:
        dirs = find_pack_dirs(root) or [root]
        for pack_dir in dirs:
            try:
                pack = load_pack(pack_dir)
            except PackError as exc:
                problems.extend(exc.lines())
                continue
            out.print(
                f"[green]ok[/green] {pack.id} {pack.version}: {len(pack.tasks)} task(s), "
                f"{len(pack.rubrics)} rubric(s), {len(pack.skills)} skill(s) "
                f"[dim]{pack.content_hash[:12]}[/dim]"
            )
    if problems:
        raise _Problems(problems)


class _Problems(LhbenchError):
    def __init__(self, lines: list[str]) -> None:
        self._lines = lines
        super().__init__("\n".join(lines))

    def lines(self) -> list[str]:
        return self._lines


@packs_app.command("list")
def packs_list(as_json: JsonOption = False) -> None:
    """List the bundled packs and those under ``pack_paths``."""
    settings = _settings()
    loaded = [(load_pack(d), d) for d in _all_pack_dirs(settings)]
    if as_json:
        rows = [
            {
                "id": p.id,
                "version": p.version,
                "environment": p.environment.value,
                "tasks": len(p.tasks),
                "rubrics": [r.id for r in p.rubrics],
                "content_hash": p.content_hash,
                "path": str(d),
            }
            for p, d in loaded
        ]
        out.print_json(json.dumps(rows))
        return
    out.print(_pack_table(loaded, "Task packs"))


@schema_app.command("export")
def schema_export(directory: Annotated[Path, typer.Argument(help="Output directory.")]) -> None:
    """Write one JSON Schema file per model."""
    for path in export_json_schemas(directory):
        out.print(str(path))


@db_app.command("upgrade")
def db_upgrade(db: DbOption = None) -> None:
    """Bring the store's schema to the newest migration."""
    engine = make_engine(_settings(db).database_url)
    before = current_revision(engine)
    upgrade(engine)
    out.print(f"store at revision {head_revision()} (was {before or 'empty'})")


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
    """Runs with harness, model, versions, status and step/tool-call/error counts."""
    with _open_store(db) as store:
        rows = store.run_summaries(
            pack_id=pack,
            task_id=task,
            harness=harness,
            model=model,
            versions=parse_versions(versions),
        )
    if as_json:
        out.print_json(
            json.dumps(
                [
                    {
                        "id": r.run.id,
                        "pack": r.run.pack_id,
                        "task": r.run.task_id,
                        "harness": r.run.harness,
                        "model": r.run.model,
                        "versions": r.run.versions,
                        "status": r.run.status.value,
                        "steps": r.steps,
                        "tool_calls": r.tool_calls,
                        "errors": r.errors,
                    }
                    for r in rows
                ]
            )
        )
        return
    table = Table(title=f"Runs ({len(rows)})")
    for col in ("run", "pack/task", "harness", "model", "versions", "status"):
        table.add_column(col)
    for col in ("steps", "tools", "errors"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            r.run.id,
            f"{r.run.pack_id}/{r.run.task_id}",
            r.run.harness,
            r.run.model,
            ",".join(f"{k}={v}" for k, v in sorted(r.run.versions.items())) or "-",
            r.run.status.value,
            str(r.steps),
            str(r.tool_calls),
            str(r.errors),
        )
    out.print(table)


@app.command("judge")
def judge(
    pack: Annotated[str, typer.Option(help="Pack id whose stored runs are graded.")],
    tier: Annotated[str, typer.Option(help="process, output or behavior.")] = "process",
    panel: Annotated[
        str | None, typer.Option(help="Judge models, comma-separated (aliases or model strings).")
    ] = None,
    rubric: Annotated[str | None, typer.Option(help="Rubric id (default: the tasks' own).")] = None,
    runs: Annotated[str | None, typer.Option(help="Only these run ids, comma-separated.")] = None,
    repeats: Annotated[
        int, typer.Option(min=1, help="Grades per run and judge (noise floor).")
    ] = 1,
    concurrency: Annotated[int, typer.Option(min=1, help="Grades in flight.")] = 32,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Bypass the response cache.")
    ] = False,
    pairwise: Annotated[
        bool, typer.Option("--pairwise", help="Compare runs of a task pairwise instead.")
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Grade stored runs with a rubric-judge panel; a restarted job does only what is missing."""
    from lhbench.judge_cli import judge_command  # pydantic-ai loads only when judging

    judge_command(
        pack=pack,
        tier=tier,
        panel=panel,
        rubric=rubric,
        runs=runs,
        repeats=repeats,
        concurrency=concurrency,
        no_cache=no_cache,
        as_json=as_json,
        db=db,
        pairwise=pairwise,
    )


@app.command("import")
def import_(
    fmt: Annotated[
        str,
        typer.Argument(
            metavar="FORMAT",
            help="claude-code, codex, gemini-cli, osworld, inspect, jsonl or auto.",
        ),
    ],
    paths: Annotated[list[Path], typer.Argument(help="Files, or directories to import whole.")],
    pack: Annotated[str | None, typer.Option(help="File the runs under this pack id.")] = None,
    task: Annotated[str | None, typer.Option(help="…and this task id.")] = None,
    harness: Annotated[
        str | None, typer.Option(help="Harness name (default: the format's).")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Model string (default: from the transcript).")
    ] = None,
    versions: Annotated[
        list[str] | None, typer.Option("--versions", help="Version tags key=value,…")
    ] = None,
    strict: Annotated[bool, typer.Option(help="Stop at the first unreadable line.")] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Import existing transcripts as runs; re-importing a file is a no-op."""
    from rich.progress import Progress

    from lhbench.import_cli import collect_files, import_paths

    files = collect_files(paths)
    with (
        _open_store(db) as store,
        Progress(console=err, disable=as_json or len(files) < 2, transient=True) as bar,
    ):
        job = bar.add_task("importing", total=len(files))
        summary = import_paths(
            store,
            files,
            fmt=fmt,
            pack=pack,
            task=task,
            harness=harness,
            model=model,
            versions=parse_versions(versions),
            strict=strict,
            on_file=lambda _p: bar.advance(job),
        )
    result = {
        "files": summary.files,
        "runs": summary.runs,
        "already_imported": summary.already,
        "incomplete": summary.incomplete,
        "steps": summary.steps,
        "skipped_lines": [str(e) for e in summary.skipped_lines],
        "run_ids": summary.run_ids,
        "by_format": summary.by_format,
    }
    if as_json:
        out.print_json(json.dumps(result))
        return
    for e in summary.skipped_lines[:20]:
        err.print(f"[yellow]skipped[/yellow] {e}", highlight=False, soft_wrap=True)
    if len(summary.skipped_lines) > 20:
        err.print(f"… and {len(summary.skipped_lines) - 20} more skipped line(s)")
    out.print(
        f"imported {summary.runs} run(s) ({summary.steps} steps) from {summary.files} file(s); "
        f"{summary.already} already imported; {summary.incomplete} incomplete; "
        f"{len(summary.skipped_lines)} line(s) skipped",
        soft_wrap=True,
    )


@app.command()
def report(
    db: DbOption = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Output directory (default: <home>/report).")
    ] = None,
    by: Annotated[
        str, typer.Option(help="Group runs by these keys (harness, model, versions.K …).")
    ] = "harness,model",
    ablation: Annotated[
        str | None, typer.Option(help="A versions key to report deltas for (e.g. skill).")
    ] = None,
    baseline: Annotated[str | None, typer.Option(help="The ablation's baseline value.")] = None,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
) -> None:
    """Write Markdown, CSV and a self-contained HTML report of what the store holds."""
    settings = _settings(db)
    with Store.open(settings.database_url) as store:
        files = _write_report(
            store, out_dir or settings.home / "report", by, ablation, baseline, seed
        )
    out.print(
        f"report: {files.html} (Markdown: {files.markdown.name}, {len(files.csv)} CSV file(s))"
    )


def _write_report(
    store: Store, directory: Path, by: str, ablation: str | None, baseline: str | None, seed: int
) -> ReportFiles:
    from lhbench.analysis import ReportData, write_report  # numpy/scipy: only when reporting

    keys = [k.strip() for k in by.split(",") if k.strip()]
    if not keys:
        raise ConfigError("--by: give at least one key (harness, model, versions.K)")
    return write_report(
        ReportData.from_store(store),
        directory,
        by=keys,
        ablation=ablation,
        baseline=baseline,
        seed=seed,
    )


@app.command("run")
def run_(
    pack: Annotated[str, typer.Argument(help="Pack directory or bundled pack name.")],
    harness: Annotated[
        str, typer.Option(help="native (ours), claude-code, codex or gemini-cli.")
    ] = "native",
    model: Annotated[str, typer.Option(help="Model string or alias.")] = "",
    tasks: Annotated[str | None, typer.Option(help="Only these task ids, comma-separated.")] = None,
    repeats: Annotated[int, typer.Option(min=1)] = 1,
    versions: Annotated[
        list[str] | None, typer.Option("--versions", help="skill=v1,prompt=v0")
    ] = None,
    parallel: Annotated[int, typer.Option(min=1, help="Runs at once.")] = 2,
    executor: Annotated[str, typer.Option(help="local or ray.")] = "local",
    db: DbOption = None,
) -> None:
    """Run a harness on a pack's tasks; finished runs are skipped, interrupted ones resume."""
    from lhbench.run_cli import run_command

    if not model:
        raise ConfigError("--model is required (a model string or an alias from lhbench.toml)")
    run_command(
        _settings(db),
        pack=pack,
        harness=harness,
        model=model,
        tasks=[t.strip() for t in tasks.split(",") if t.strip()] if tasks else None,
        repeats=repeats,
        versions=parse_versions(versions),
        parallel=parallel,
        executor=executor,
        console=out,
    )


@app.command()
def failures(
    pack: Annotated[str | None, typer.Option(help="Only runs of this pack.")] = None,
    llm: Annotated[
        str | None, typer.Option(help="Also extract with this model and print the agreement.")
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Failure taxonomy and recovery (LH-Bench Tables 11–12) of stored runs."""
    from lhbench.analysis.failures import agent_table, agreement, error_events, type_table

    settings = _settings(db)
    with Store.open(settings.database_url) as store:
        runs = store.list_runs(pack_id=pack)
        loaded = [(f"{r.harness} / {r.model}", r, store.get_trajectory(r.id)) for r in runs]
    loaded = [x for x in loaded if x[2].steps]
    events = {run.id: error_events(traj) for _, run, traj in loaded}
    types = type_table(e for ev in events.values() for e in ev)
    agents = agent_table(loaded)
    result: dict[str, object] = {
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
        import asyncio

        from lhbench.judges import ExtractedError, FailureExtractor
        from lhbench.models import ModelPool, resolve_model

        spec = resolve_model(llm, settings.models)

        async def extract() -> list[list[ExtractedError]]:
            pool = ModelPool()
            async with pool.session():
                ex = FailureExtractor(pool.get(spec))
                return list(await asyncio.gather(*(ex.extract(traj) for _, _, traj in loaded)))

        extracted = asyncio.run(extract())
        agree = agreement(
            [(run.id, e) for _, run, _ in loaded for e in events[run.id]],
            [(run.id, m) for (_, run, _), ms in zip(loaded, extracted, strict=True) for m in ms],
        )
        result["llm_agreement"] = agree.__dict__
    if as_json:
        out.print_json(json.dumps(result, default=str))
        return
    table = Table(
        title=f"Failure taxonomy ({sum(r.count for r in types)} errors in {len(loaded)} runs)"
    )
    for col in ("error type", "count", "recovered", "recovery %"):
        table.add_column(col, justify="left" if col == "error type" else "right")
    for r in types:
        table.add_row(r.type.value, str(r.count), str(r.recovered), f"{100 * r.rate:.1f}")
    out.print(table)
    if "llm_agreement" in result:
        out.print(f"rules vs {llm}: {result['llm_agreement']}")


@users_app.command("add")
def users_add(
    name: Annotated[str, typer.Argument(help="Annotator name (their login).")],
    admin: Annotated[
        bool, typer.Option(help="May see run identities in the vote history.")
    ] = False,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from standard input.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Create an annotator (or reset their password); asks for the password unless piped."""
    from lhbench.web.auth import add_user

    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    with _open_store(db) as store:
        add_user(store, name, password, admin=admin)
    out.print(f"user {name!r} saved{' (admin)' if admin else ''}")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8765,
    db: DbOption = None,
) -> None:
    """Serve the leaderboard, run pages, judge dashboards and the preference arena."""
    import secrets as _secrets

    import uvicorn

    from lhbench.web import create_app

    settings = _settings(db)
    secret_file = settings.home / "web-secret"
    if not secret_file.exists():
        secret_file.parent.mkdir(parents=True, exist_ok=True)
        secret_file.write_text(_secrets.token_urlsafe(32))
        secret_file.chmod(0o600)
    store = Store.open(settings.database_url)
    where = store.engine.url.render_as_string(hide_password=True)
    out.print(f"lhbench web: http://{host}:{port}/ (store {where})")
    uvicorn.run(
        create_app(store, secret=secret_file.read_text().strip()),
        host=host,
        port=port,
        log_level="warning",
    )


@app.command()
def version() -> None:
    """Print the lhbench version."""
    out.print(__version__)


def main() -> None:
    """Console entry point: user mistakes print as short lines and exit 2, no traceback."""
    try:
        app()
    except LhbenchError as exc:
        for line in exc.lines():
            err.print(f"[red]error:[/red] {line}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
