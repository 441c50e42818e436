"""``lhbench content``: extract a data room; check a course; grade runs with the checks."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lhbench.cli.common import (
    DbOption,
    JsonOption,
    UnsafeOption,
    dump_json,
    new_table,
    open_store,
    out,
    say,
    settings_for,
)
from lhbench.errors import ConfigError

__all__ = ["register"]

content_app = typer.Typer(
    name="content",
    help="The programmatic-content environment: extraction, citation and slide checks.",
    no_args_is_help=True,
)

NoSlidesOption = Annotated[
    bool, typer.Option("--no-slides", help="Skip rendering the slide decks in Chromium.")
]


@content_app.command("extract")
def extract(
    data_room: Annotated[Path, typer.Argument(help="Directory of PDF, DOCX, PPTX, HTML files.")],
    out_dir: Annotated[
        Path, typer.Option("--out", help="Where <source_id>.md and sources.json go.")
    ] = Path("context"),
    as_json: JsonOption = False,
) -> None:
    """Turn a data room into line-addressable Markdown plus sources.json (byte-stable).

    PDF with pdfplumber, DOCX with python-docx, PPTX with python-pptx (speaker notes
    kept), HTML with trafilatura; one sentence per line so citations can be precise.
    Example: lhbench content extract ./data_room --out ./context
    """
    from lhbench.envs.content import extract_data_room

    sources = extract_data_room(data_room, out_dir)
    if as_json:
        dump_json([s.record() for s in sources])
        return
    table = new_table(
        f"{len(sources)} sources in {out_dir}", ["id", "extractor", "lines", "origin"]
    )
    for s in sources:
        table.add_row(s.id, f"{s.extractor} {s.extractor_version}", str(s.lines), s.origin)
    out.print(table)


def _pack_task(pack: str, task_id: str | None) -> tuple[Path, object]:
    from lhbench.packs import load_pack
    from lhbench.packs.bundled import resolve_pack_dir

    pack_dir = resolve_pack_dir(pack)
    loaded = load_pack(pack_dir)
    if task_id is None:
        if len(loaded.tasks) != 1:
            raise ConfigError(
                f"{pack}: give --task (one of {', '.join(t.id for t in loaded.tasks)})"
            )
        return pack_dir, loaded.tasks[0]
    try:
        return pack_dir, loaded.task(task_id)
    except KeyError:
        raise ConfigError(f"{pack}: no task {task_id!r}") from None


def _print_report(report: object) -> None:
    from lhbench.envs.content import CourseReport

    assert isinstance(report, CourseReport)
    say(report.detail().split(". First:")[0])
    if report.findings:
        table = new_table("findings", ["check", "where", "citation / evidence", "why"])
        for f in report.findings[:200]:
            table.add_row(f.check, f.where, f.evidence, f.message)
        out.print(table)
    if report.coverage:
        cov = new_table(
            "annotated-span coverage", ["chapter", "span hit", "line recall", "precision"]
        )
        for c in report.coverage:
            prec = "–" if c.line_precision is None else f"{c.line_precision:.2f}"
            cov.add_row(c.chapter, f"{c.span_hit_rate:.2f}", f"{c.line_recall:.2f}", prec)
        out.print(cov)


@content_app.command("check")
def check(
    workspace: Annotated[Path, typer.Argument(help="The course's workspace directory.")],
    pack: Annotated[str, typer.Option(help="Pack directory or bundled pack name.")],
    task: Annotated[
        str | None, typer.Option(help="Task id (default: the pack's only task).")
    ] = None,
    no_slides: NoSlidesOption = False,
    as_json: JsonOption = False,
    unsafe_no_sandbox: UnsafeOption = False,
) -> None:
    """Check a course's citations, annotated-span coverage and slides (exit 1 on a finding).

    Example: lhbench content check ./workspace --pack content-mini
    """
    from lhbench.envs.content.grading import check_task_workspace
    from lhbench.sandbox import get_sandbox
    from lhbench.schema import Task

    if not workspace.is_dir():
        raise ConfigError(f"{workspace}: not a directory")
    pack_dir, t = _pack_task(pack, task)
    assert isinstance(t, Task)
    settings = settings_for(unsafe_no_sandbox=unsafe_no_sandbox)
    sandbox = None
    if not no_slides:
        sandbox = get_sandbox(
            settings.sandbox, unsafe=settings.unsafe_no_sandbox, image=settings.sandbox_image
        )
    report = check_task_workspace(pack_dir, t, workspace, sandbox=sandbox)
    if as_json:
        dump_json(report.as_dict())
    else:
        _print_report(report)
    raise typer.Exit(0 if report.passed() else 1)


@content_app.command("grade")
def grade(
    pack: Annotated[str, typer.Argument(help="Pack directory or bundled pack name.")],
    run_ids: Annotated[
        list[str] | None, typer.Option("--run", help="Only these runs (default: all of the pack).")
    ] = None,
    no_slides: NoSlidesOption = False,
    as_json: JsonOption = False,
    unsafe_no_sandbox: UnsafeOption = False,
    db: DbOption = None,
) -> None:
    """Store a programmatic grade on the pack's content-checks rubric for each run.

    Each run's kept workspace is checked; the findings (the offending citations, the
    slides that overflow) are the grade's evidence.
    Example: lhbench content grade content-mini
    """
    from lhbench.envs.content import SourceError
    from lhbench.envs.content.grading import check_task_workspace, checks_rubric
    from lhbench.jobs.states import kept_workspace
    from lhbench.packs import load_pack
    from lhbench.packs.bundled import resolve_pack_dir
    from lhbench.sandbox import get_sandbox

    pack_dir = resolve_pack_dir(pack)
    loaded = load_pack(pack_dir)
    rubric = checks_rubric(loaded)
    if rubric is None:
        raise ConfigError(f"{pack}: the pack has no content-checks rubric")
    settings = settings_for(db, unsafe_no_sandbox=unsafe_no_sandbox)
    sandbox = None
    if not no_slides:
        sandbox = get_sandbox(
            settings.sandbox, unsafe=settings.unsafe_no_sandbox, image=settings.sandbox_image
        )
    rows = []
    with open_store(settings, create=False) as store:
        runs = (
            [store.get_run(r) for r in run_ids] if run_ids else store.list_runs(pack_id=loaded.id)
        )
        for run in runs:
            # only a workspace lhbench's harness kept (an imported run's word is not taken)
            ws = kept_workspace(run)
            if run.pack_id != loaded.id or ws is None:
                rows.append({"run": run.id, "stored": False, "detail": "no kept workspace"})
                continue
            try:
                report = check_task_workspace(
                    pack_dir, loaded.task(run.task_id), ws, sandbox=sandbox
                )
            except SourceError as exc:  # never a coerced score: no grade, and why
                rows.append({"run": run.id, "stored": False, "detail": f"not graded: {exc}"})
                continue
            g = report.grade(run.id, rubric)
            store.save_grades([g])
            rows.append(
                {
                    "run": run.id,
                    "stored": True,
                    "tier_score": g.tier_score,
                    "detail": report.detail(),
                }
            )
    if as_json:
        dump_json(rows)
        return
    table = new_table(f"content-checks grades ({len(rows)})", ["run", "score", "detail"])
    for r in rows:
        score = r.get("tier_score")
        table.add_row(str(r["run"]), "–" if score is None else f"{score:.2f}", str(r["detail"]))
    out.print(table)


@content_app.command("synthesize-rubrics")
def synthesize_rubrics(
    pack: Annotated[str, typer.Argument(help="Pack directory or bundled pack name.")],
    model: Annotated[str, typer.Option(help="Model string or alias that writes the rubrics.")],
    task: Annotated[
        str | None, typer.Option(help="Task id (default: the pack's only task).")
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Where the rubric files go (default: PACK/rubrics)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Write 1-3 chapter-specific rubrics per annotated chapter, on the 5- and 3-point scales.

    The model reads each chapter's instruction, design notes and evaluation criteria; an
    answer that is not a valid rubric is sent back (bounded), then the command fails.
    Example: lhbench content synthesize-rubrics ./my-pack --model claude --out ./rubrics
    """
    import asyncio

    from lhbench.envs.content.chapter_rubrics import synthesise_chapter_rubric, write_rubric
    from lhbench.envs.content.grading import task_materials
    from lhbench.models import ModelPool, resolve_model
    from lhbench.schema import Scale, Task

    pack_dir, t = _pack_task(pack, task)
    assert isinstance(t, Task)
    gt = task_materials(pack_dir, t).ground_truth
    if gt is None:
        raise ConfigError(f"{pack}: task {t.id} has no annotated chapters (chapters.json)")
    settings = settings_for()
    spec = resolve_model(model, settings.models)
    target = out_dir or pack_dir / "rubrics"

    async def go() -> list[Path]:
        pool = ModelPool()
        written = []
        async with pool.session():
            managed = pool.get(spec)
            for chapter in gt.chapters:
                for scale in (Scale.ONE_TO_FIVE, Scale.ZERO_TO_TWO):
                    rubric = await synthesise_chapter_rubric(
                        managed,
                        chapter,
                        scale,
                        global_notes=gt.global_notes,
                        model_name=spec.model_string,
                    )
                    written.append(write_rubric(rubric, target))
        return written

    paths = asyncio.run(go())
    if as_json:
        dump_json([str(p) for p in paths])
        return
    for p in paths:
        say(f"wrote {p}")


def register(app: typer.Typer) -> None:
    """Add the ``content`` group."""
    app.add_typer(content_app)
