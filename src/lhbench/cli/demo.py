"""``lhbench demo``: the main job end to end on the embedded defaults.

Bundled packs, a SQLite store under ``home``, the local executor, and — where a model is
needed and none is configured — the local model stub, a scripted HTTP server that speaks
the providers' protocols. It says so loudly: the stub's answers are placeholders, so the
numbers show the pipeline working, not how good any agent or judge is.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lhbench.cli.common import (
    DbOption,
    UnsafeOption,
    open_store,
    out,
    progress_factory,
    say,
    settings_for,
)
from lhbench.cli.packs import pack_table, rubric_table
from lhbench.cli.runs import print_summary

if TYPE_CHECKING:
    from lhbench.config import Settings

__all__ = ["register"]

SAMPLES = "lhbench-samples"
AJ_PACK = "aj-ds-mini"
STUB_PORT = 18765  # a fixed port keeps the stub judges' identity (endpoint) stable across demos

STUB_NOTICE = (
    "No model is configured, so the local model stub answers every model request: a "
    "scripted server on 127.0.0.1, not a model. Its answers are placeholders; the numbers "
    "below show the pipeline working, not the quality of any agent or judge. Configure "
    "judge_panel / aj_model in lhbench.toml (or pass --model) to use real models."
)


def _free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@contextlib.contextmanager
def _stub(needed: bool) -> Iterator[str | None]:
    if not needed:
        yield None
        return
    from lhbench.testing import ModelStub, auto_script

    stub = ModelStub(auto_script(), port=STUB_PORT if _free(STUB_PORT) else 0).start()
    try:
        yield stub.base_url
    finally:
        stub.stop()


def _stub_settings(settings: Settings, url: str) -> Settings:
    models: dict[str, dict[str, Any]] = dict(settings.models)
    for name in ("stub-judge-1", "stub-judge-2", "stub-judge-3", "stub-agent-a", "stub-agent-b"):
        models.setdefault(name, {"model": f"openai:{name}", "base_url": url, "family": "stub"})
    return settings.model_copy(update={"models": models})


def demo(
    model: Annotated[
        str | None, typer.Option(help="Agent model for the sample runs (default: the stub).")
    ] = None,
    unsafe_no_sandbox: UnsafeOption = False,
    db: DbOption = None,
) -> None:
    """Run the main job on the bundled defaults: run, verify, grade, compare, judge, report.

    Example: lhbench demo
    """
    from lhbench.api import grade_async, judge_states_async, report, run_agents_async
    from lhbench.jobs import all_pack_dirs, sandbox_for
    from lhbench.jobs.packs import register_pack
    from lhbench.packs import load_pack

    settings = settings_for(db, unsafe_no_sandbox=unsafe_no_sandbox)
    loaded = [(load_pack(d), d) for d in all_pack_dirs(settings)]
    out.print(pack_table(loaded, "Task packs (validated)"))
    out.print(rubric_table(loaded))
    sandbox = sandbox_for(settings)  # refuses here, before any work, when none works
    say(
        f"sandbox: {sandbox.name} (agents' commands, checks and replays run confined; "
        "`lhbench doctor` says how)"
        if sandbox.name != "none"
        else "sandbox: NONE (--unsafe-no-sandbox): agents' commands run unconfined",
        style=None if sandbox.name != "none" else "bold red",
    )
    needs_stub = not (model and settings.judge_panel and settings.aj_model)
    progress = progress_factory(True)
    with open_store(settings) as store, _stub(needs_stub) as url:
        for pack, pack_dir in loaded:
            register_pack(store, pack, pack_dir)
        if url is not None:
            say(STUB_NOTICE, style="bold yellow")
            say(f"model stub: {url}")
            settings = _stub_settings(settings, url)
        agents = [model] if model else ["stub-agent-a", "stub-agent-b"]
        panel = list(settings.judge_panel) or ["stub-judge-1", "stub-judge-2", "stub-judge-3"]
        aj_model = settings.aj_model or "stub-judge-1"

        place: dict[str, Any] = {"store": store, "settings": settings, "progress": progress}

        async def main() -> None:
            conditions = [(a, {"skill": "default"}) for a in agents]
            conditions.append((agents[0], {"skill": "none"}))
            for agent, versions in conditions:
                res = await run_agents_async(
                    SAMPLES, model=agent, versions=versions, parallel=4, **place
                )
                say(f"runs of {SAMPLES} with {res.model} ({versions['skill']} skill):")
                print_summary(res.summary)
                if res.verify is not None:
                    print_summary(res.verify)
            for tier in ("process", "output"):
                graded = await grade_async(SAMPLES, tier=tier, panel=panel, **place)
                say(f"{graded.rubric.id} ({tier}) by {', '.join(graded.judges)}:")
                print_summary(graded.summary)
            pairs = await grade_async(
                SAMPLES, tier="output", panel=panel[:1], pairwise=True, **place
            )
            print_summary(pairs.summary)
            for kind in ("agent", "llm"):
                aj = await judge_states_async(AJ_PACK, judge=kind, model=aj_model, **place)
                say(f"{AJ_PACK} ({kind} judge): {len(aj.runs)} run(s)")
                for summary in (aj.fixtures, aj.verify, aj.judging):
                    if summary is not None:
                        print_summary(summary)

        asyncio.run(main())
        files = report(
            by="harness,model,versions.skill",
            ablation="skill",
            baseline="none",
            out=settings.home / "report",
            notes=[STUB_NOTICE] if url is not None else [],
            store=store,
            settings=settings,
        ).files
        counts = store.counts()
        say(
            "store: "
            + store.engine.url.render_as_string(hide_password=True)
            + " ("
            + ", ".join(f"{n} {k}" for k, n in counts.items())
            + ")"
        )
    say(f"report: {files.html if files else '-'}")
    serve_db = f" --db {db}" if db else ""
    say(
        f"to browse the results: uv run lhbench serve{serve_db}  (then open http://127.0.0.1:8765/)"
    )


def register(app: typer.Typer) -> None:
    """Add ``demo``."""
    app.command("demo")(demo)
