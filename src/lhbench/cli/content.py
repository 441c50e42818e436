"""``lhbench content``: extract a data room; check a course; grade runs with the checks."""

from __future__ import annotations

import math
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
    progress_factory,
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
    bool,
    typer.Option(
        "--no-slides",
        help="Skip the sandboxed checks: slide decks in Chromium, rendered scenes with ffprobe.",
    ),
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
    import asyncio

    from lhbench.jobs.content import grade_content

    settings = settings_for(db, unsafe_no_sandbox=unsafe_no_sandbox)
    with open_store(settings, create=False) as store:
        res = asyncio.run(
            grade_content(
                store,
                settings,
                pack=pack,
                run_ids=run_ids,
                slides=not no_slides,
                progress=progress_factory(not as_json),
            )
        )
    say(res.summary.line(), to_err=as_json)
    rows: list[dict[str, object]] = [
        {"run": r.run_id, "stored": True, "tier_score": r.grade.tier_score, "detail": r.detail}
        if r.grade is not None
        else {"run": r.run_id, "stored": False, "detail": r.error or ""}
        for r in res.rows
    ]
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
        typer.Option("--out", help="Also write each rubric as a pack rubric file here."),
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Synthesise 1-3 chapter rubrics per annotated chapter, on the 3- and 5-point scales.

    Each is stored as a rubric version with its provenance (annotations and ground-truth
    hashes, model, prompt version, scale); rerunning with the same inputs reuses the stored
    ones. An answer that is not a valid rubric is sent back (bounded); a chapter whose
    answer never fits is reported and the command exits 1.
    Example: lhbench content synthesize-rubrics content-mini --model claude
    """
    import asyncio

    from lhbench.jobs.content import synthesize_chapter_rubrics

    settings = settings_for(db)
    with open_store(settings) as store:
        res = asyncio.run(
            synthesize_chapter_rubrics(
                store,
                settings,
                pack=pack,
                model=model,
                task=task,
                out_dir=out_dir,
                progress=progress_factory(not as_json),
            )
        )
    say(res.summary.line(), to_err=as_json)
    rows = res.rows
    failed = [r for r in rows if r.error]
    if as_json:
        dump_json(
            [
                {
                    "chapter": r.chapter_id,
                    "scale": r.scale.value,
                    "rubric": r.rubric_id,
                    "new": r.new,
                    "key": r.key,
                    "path": r.path,
                    "error": r.error,
                }
                for r in rows
            ]
        )
    else:
        table = new_table(
            f"chapter rubrics ({len(rows) - len(failed)} stored, {len(failed)} failed)",
            ["chapter", "scale", "rubric", "stored", "error"],
        )
        for r in rows:
            state = "new" if r.new else "reused" if r.rubric_id else "–"
            table.add_row(r.chapter_id, r.scale.value, r.rubric_id or "–", state, r.error or "")
        out.print(table)
    if failed:
        raise typer.Exit(1)


@content_app.command("grade-chapters")
def grade_chapters(
    pack: Annotated[str, typer.Argument(help="Pack id, directory or bundled name.")],
    panel: Annotated[
        str | None, typer.Option(help="Judge models, comma-separated (aliases or model strings).")
    ] = None,
    runs: Annotated[str | None, typer.Option(help="Only these run ids, comma-separated.")] = None,
    repeats: Annotated[int, typer.Option(min=1, help="Grades per chapter, rubric, judge.")] = 1,
    concurrency: Annotated[int, typer.Option(min=1, help="Grades in flight.")] = 16,
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="Re-ask grades stored as parse failures.")
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Grade every chapter of each run with the generic and chapter rubrics, on both scales.

    One grade per (run, chapter, rubric, scale, judge): a rerun does only what is missing;
    an answer that does not parse is stored as an error, never a score. Prints each run's
    course score (normalised mean over graded chapters) on the 3- and 5-point scales.
    Example: lhbench content grade-chapters content-mini --panel claude,gpt
    """
    import asyncio

    from lhbench.jobs import panel_specs
    from lhbench.jobs.content import grade_chapters as run_grading
    from lhbench.stats.course import course_scores

    settings = settings_for(db)
    refs = [r.strip() for r in panel.split(",") if r.strip()] if panel else None
    panel_specs(refs, settings)
    with open_store(settings, create=False) as store:
        res = asyncio.run(
            run_grading(
                store,
                settings,
                pack=pack,
                panel=refs,
                run_ids=[r.strip() for r in runs.split(",") if r.strip()] if runs else None,
                repeats=repeats,
                concurrency=concurrency,
                retry_errors=retry_errors,
            )
        )
    chapters = {
        r.id: sorted({cs.chapter.id for cs in res.sets if cs.task_id == r.task_id})
        for r in res.runs
    }
    scores = course_scores(res.grades, expected=chapters)
    rows = [
        {
            "run": cs.run_id,
            "scale": cs.scale.value,
            "course_score": cs.mean,
            "n_chapters": cs.n,
            "excluded": list(cs.excluded),
            "ci_width": cs.ci_width,
        }
        for cs in scores.values()
    ]
    summary = [s.as_dict() for s in res.summaries]
    if as_json:
        dump_json({"summary": summary, "grades": len(res.grades), "course_scores": rows})
        return
    for s in res.summaries:
        say(s.line())
    table = new_table(
        "course score per run (normalised mean over the run's graded chapters; "
        "`lhbench report` gives LH-Bench's per-agent Table 6)",
        ["run", "scale", "score", "n chapters", "excluded", "95% t-CI width over chapters"],
    )
    for cs in scores.values():
        table.add_row(
            cs.run_id,
            cs.scale.value,
            f"{cs.mean:.3f}",
            str(cs.n),
            ", ".join(cs.excluded) or "–",
            "n/a" if math.isnan(cs.ci_width) else f"{cs.ci_width:.3f}",
        )
    out.print(table)


@content_app.command("export-annotations")
def export_annotations_cmd(
    pack_dir: Annotated[Path, typer.Argument(help="The pack directory to write into.")],
    task: Annotated[str, typer.Argument(help="The task whose annotations to export.")],
    version: Annotated[
        int | None, typer.Option("--version", help="A saved version (default: the newest).")
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Write saved annotations as the task's ground_truth/<task>/chapters.json.

    The file has the exact GroundTruth format the citation-coverage check reads.
    Example: lhbench content export-annotations ./packs/content-mini course --version 3
    """
    from lhbench.annotate import annotation_target, export_annotations

    if not (pack_dir / "pack.yaml").is_file():
        raise ConfigError(f"{pack_dir}: not a pack directory (no pack.yaml)")
    target = annotation_target(pack_dir, task)
    store = open_store(settings_for(db), create=False)
    try:
        path, saved = export_annotations(store, target, version)
    finally:
        store.close()
    chapters = len(saved.content.get("chapters", []))
    if as_json:
        dump_json({"path": str(path), "version": saved.version, "chapters": chapters})
        return
    say(f"wrote {path} (version {saved.version} by {saved.author}, {chapters} chapters)")


@content_app.command("import-votes")
def import_votes(
    path: Annotated[Path, typer.Argument(help="JSON Lines file, one chapter-level vote a line.")],
    pack: Annotated[str, typer.Option(help="Pack id, directory or bundled name.")],
    task: Annotated[
        str | None, typer.Option(help="Task of lines that name none (default: the only one).")
    ] = None,
    annotator: Annotated[str, typer.Option(help="Annotator of lines that name none.")] = "sme",
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Store human chapter-level preferences (one chapter of two runs' courses per vote).

    Each line: "id", the runs ("run_a"/"run_b", or "harness_a"/"harness_b"), the chapter
    ("chapter_id", or "chapter_index" 0-based), "winner" (a, b or t). The report sets them
    against the chapter scores (LH-Bench Table 10, App. J). A file with any problem stores
    nothing; importing it again stores nothing new.
    Example: lhbench content import-votes votes.jsonl --pack content-mini
    """
    from lhbench.jobs.content_votes import import_chapter_votes

    settings = settings_for(db)
    with open_store(settings, create=False) as store:
        res = import_chapter_votes(
            store, settings, pack=pack, path=path, task=task, annotator=annotator
        )
    if as_json:
        dump_json({"path": str(path), "votes": len(res.votes), "stored": res.stored})
        return
    ties = sum(1 for v in res.votes if v.winner == "tie")
    say(
        f"{len(res.votes)} chapter-level vote(s) read ({ties} tie(s)): {res.stored} stored, "
        f"{res.already} already stored"
    )


def register(app: typer.Typer) -> None:
    """Add the ``content`` group."""
    app.add_typer(content_app)
