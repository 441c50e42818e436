"""``lhbench import``: bring existing transcripts into the store as runs with trajectories.

Steps are streamed into the store in batches (constant memory for any file size). A run's
id is derived from the file's content hash, so re-importing a file is a no-op; a run whose
import was interrupted (marked ``import: partial``) is imported again from scratch.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lhbench.errors import LhbenchError, TranscriptError
from lhbench.ingest import FORMATS, ImportContext, detect_format, read_transcripts
from lhbench.schema import Run, RunStatus, Step
from lhbench.store import Store

__all__ = ["ImportSummary", "collect_files", "import_paths"]

_BATCH = 2000


@dataclass
class ImportSummary:
    """What an import did."""

    files: int = 0
    runs: int = 0
    already: int = 0
    incomplete: int = 0
    steps: int = 0
    skipped_lines: list[TranscriptError] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    by_format: dict[str, int] = field(default_factory=dict)


def collect_files(paths: Iterable[Path]) -> list[Path]:
    """Files named, and every regular non-hidden file under directories named."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(
                f
                for f in sorted(p.rglob("*"))
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
        elif p.is_file():
            out.append(p)
        else:
            raise LhbenchError(f"{p}: no such file or directory")
    return out


def file_digest(path: Path) -> str:
    """SHA-256 of a file, read in chunks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_.\-]+", "-", text.lower()).strip("-") or "transcript"


def import_paths(
    store: Store,
    paths: Iterable[Path],
    *,
    fmt: str = "auto",
    pack: str | None = None,
    task: str | None = None,
    harness: str | None = None,
    model: str | None = None,
    versions: dict[str, str] | None = None,
    strict: bool = False,
    on_file: Callable[[Path], None] | None = None,
) -> ImportSummary:
    """Import every transcript in ``paths``; see the module docstring for the rules."""
    if fmt != "auto" and fmt not in FORMATS:
        raise LhbenchError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)} or auto")
    summary = ImportSummary()
    for path in collect_files(paths):
        summary.files += 1
        form = FORMATS[fmt] if fmt != "auto" else detect_format(path)
        digest = file_digest(path)
        ctx = ImportContext(path=path, strict=strict)
        for info, steps in read_transcripts(form, ctx):
            run_id = f"imp-{digest[:20]}" + (f"-{_slug(info.key)}" if info.key else "")
            try:
                prior = store.get_run(run_id)
            except LhbenchError:
                prior = None
            if prior is not None and prior.metadata.get("import") == "done":
                summary.already += 1
                for _ in steps:  # drain, so a multi-sample reader moves on
                    pass
                continue
            run = Run(
                id=run_id,
                pack_id=pack or "imported",
                task_id=task or (_slug(path.stem) + (f"-{_slug(info.key)}" if info.key else "")),
                harness=harness or form.harness,
                model=model or "unknown",
                versions=dict(versions or {}),
                status=RunStatus.RUNNING,
                source=str(path),
                metadata={"import": "partial", "format": form.name, "sha256": digest},
            )
            store.save_run(run)
            store.delete_steps(run_id)
            batch: list[Step] = []
            count = 0
            for step in steps:
                batch.append(step)
                if len(batch) >= _BATCH:
                    store.append_steps(run_id, batch)
                    count += len(batch)
                    batch = []
            store.append_steps(run_id, batch)
            count += len(batch)
            final = run.model_copy(
                update={
                    "model": model or info.model or "unknown",
                    "harness_version": info.harness_version,
                    "status": info.status,
                    "started_at": info.started_at,
                    "ended_at": info.ended_at
                    if info.started_at is None
                    or (info.ended_at and info.ended_at >= info.started_at)
                    else None,
                    "usage": info.usage,
                    "cost_usd": info.cost_usd,
                    "error": info.error,
                    "metadata": {
                        **run.metadata,
                        **{k: v for k, v in info.metadata.items() if v is not None},
                        "import": "done",
                        "session_id": info.session_id,
                        "task_text": (info.task_text or "")[:2000] or None,
                        "skipped_lines": len(ctx.skipped),
                    },
                }
            )
            store.save_run(Run.model_validate(final.model_dump()))
            summary.runs += 1
            summary.steps += count
            summary.run_ids.append(run_id)
            summary.by_format[form.name] = summary.by_format.get(form.name, 0) + 1
            if info.status == RunStatus.INCOMPLETE:
                summary.incomplete += 1
        summary.skipped_lines.extend(ctx.skipped)
        if on_file:
            on_file(path)
    return summary
