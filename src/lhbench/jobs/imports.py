"""Importing transcripts: each file a unit, its runs streamed into the store in batches.

A run's id is derived from the file's content hash and its format, so re-importing a file
is a no-op (the unit is stored), a wrong ``--format`` never blocks the right one, and a run
whose import was interrupted (``import: partial``) is imported again from scratch. A file
that cannot be read as its format (or recognised at all) is a failed unit with the reason;
a directory import goes on past it and sums up at the end. ``replace`` removes the file's
earlier runs (and everything said about them) and imports again.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lhbench.errors import LhbenchError, TranscriptError
from lhbench.ingest import FORMATS, Format, ImportContext, detect_format, read_transcripts
from lhbench.jobs.packs import LoadedPack
from lhbench.jobs.runner import Assessment, Unit
from lhbench.schema import Run, RunStatus, Step
from lhbench.store import ResultState, Store

__all__ = ["ImportJob", "ImportResult", "collect_files", "file_digest"]

_BATCH = 2000


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


@dataclass
class ImportResult:
    """What importing one file did (or why it could not)."""

    path: Path
    format: str | None
    runs: list[str] = field(default_factory=list)
    already: int = 0
    steps: int = 0
    incomplete: int = 0
    skipped_lines: list[TranscriptError] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True)
class _FileUnit:
    path: Path
    format: Format | None
    digest: str
    problem: str | None


class ImportJob:
    """Every file given (the Job protocol)."""

    name = "import"

    def __init__(
        self,
        store: Store,
        files: Sequence[Path],
        *,
        fmt: str = "auto",
        pack: LoadedPack | None = None,
        task: str | None = None,
        harness: str | None = None,
        model: str | None = None,
        versions: dict[str, str] | None = None,
        strict: bool = False,
        replace: bool = False,
    ) -> None:
        if fmt != "auto" and fmt not in FORMATS:
            raise LhbenchError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)} or auto")
        self.store = store
        self.files = list(files)
        self.fmt = fmt
        self.pack = pack
        self.task = task
        self.harness = harness
        self.model = model
        self.versions = dict(versions or {})
        self.strict = strict
        self.replace = replace

    def plan(self) -> list[Unit[_FileUnit]]:
        """One unit per file; its key is the run-id prefix (content hash and format)."""
        out = []
        for path in self.files:
            digest = file_digest(path)
            try:
                form: Format | None = (
                    FORMATS[self.fmt] if self.fmt != "auto" else detect_format(path)
                )
                problem = None
            except TranscriptError as exc:
                form, problem = None, str(exc)
            key = f"imp-{digest[:20]}-{form.name if form else 'unknown'}"
            out.append(Unit(key, str(path), _FileUnit(path, form, digest, problem)))
        return out

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """Files whose runs are all imported whole (``replace`` forgets them)."""
        if self.replace:
            return {}
        return {k: "ok" for k in keys if self.store.imported(k)}

    async def run(self, unit: Unit[_FileUnit]) -> ImportResult:
        """Import one file (in a thread: it streams into the store)."""
        return await asyncio.to_thread(self._import, unit.key, unit.payload)

    def _import(self, prefix: str, u: _FileUnit) -> ImportResult:
        res = ImportResult(u.path, u.format.name if u.format else None)
        if u.format is None:
            res.error = u.problem or "format not recognised"
            return res
        if self.replace:
            for run in self.store.runs_with_prefix(prefix):
                self.store.delete_run(run.id)
        ctx = ImportContext(path=u.path, strict=self.strict)
        try:
            for info, steps in read_transcripts(u.format, ctx):
                self._one(prefix, u, info, steps, ctx, res)
        except TranscriptError as exc:  # --strict: the first bad line stops the file
            res.error = str(exc)
        except (OSError, ValueError) as exc:
            res.error = f"{u.path}: cannot read as {u.format.name}: {exc}"
        res.skipped_lines.extend(ctx.skipped)
        if not res.error and not res.runs and not res.already:
            res.error = f"{u.path}: no transcript found in it as {u.format.name}"
        return res

    def _one(
        self,
        prefix: str,
        u: _FileUnit,
        info: object,
        steps: Iterable[Step],
        ctx: ImportContext,
        res: ImportResult,
    ) -> None:
        from lhbench.ingest import TranscriptInfo

        assert isinstance(info, TranscriptInfo) and u.format is not None
        run_id = prefix + (f"-{_slug(info.key)}" if info.key else "")
        prior = self.store.find_run(run_id)
        if prior is not None and prior.metadata.get("import") == "done":
            res.already += 1
            for _ in steps:  # drain, so a multi-sample reader moves on
                pass
            return
        pack_id = self.pack.pack.id if self.pack else "imported"
        run = Run(
            id=run_id,
            pack_id=pack_id,
            pack_hash=self.pack.pack.content_hash if self.pack else "",
            task_id=self.task or (_slug(u.path.stem) + (f"-{_slug(info.key)}" if info.key else "")),
            harness=self.harness or u.format.harness,
            model=self.model or "unknown",
            versions=dict(self.versions),
            status=RunStatus.RUNNING,
            source=str(u.path),
            metadata={"import": "partial", "format": u.format.name, "sha256": u.digest},
        )
        self.store.save_run(run)
        self.store.delete_steps(run_id)
        batch: list[Step] = []
        count = 0
        skipped_before = len(ctx.skipped)
        try:
            for step in steps:
                batch.append(step)
                if len(batch) >= _BATCH:
                    self.store.append_steps(run_id, batch)
                    count += len(batch)
                    batch = []
            self.store.append_steps(run_id, batch)
            count += len(batch)
        except Exception as exc:
            # never left `running`: the run says why its import stopped
            self.store.save_run(
                run.model_copy(
                    update={"status": RunStatus.FAILED, "error": f"import stopped: {exc}"}
                )
            )
            raise
        if count == 0 and not info.error:
            # nothing this format could read (and no recorded failure): not a run, most
            # likely the wrong format, so nothing is stored under it
            self.store.delete_run(run_id)
            res.error = (
                f"{u.path}: no step could be read as {u.format.name} "
                f"({len(ctx.skipped) - skipped_before} line(s) skipped); is it another format? "
                "(`lhbench import auto` detects it)"
            )
            return
        final = run.model_copy(
            update={
                "model": self.model or info.model or "unknown",
                "harness_version": info.harness_version,
                "status": info.status,
                "started_at": info.started_at,
                "ended_at": info.ended_at
                if info.started_at is None or (info.ended_at and info.ended_at >= info.started_at)
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
                    "skipped_lines": len(ctx.skipped) - skipped_before,
                },
            }
        )
        self.store.save_run(Run.model_validate(final.model_dump()))
        res.runs.append(run_id)
        res.steps += count
        if info.status == RunStatus.INCOMPLETE:
            res.incomplete += 1

    def assess(self, result: ImportResult) -> Assessment:
        """A file is ok when its transcripts were read."""
        if result.error is None:
            return Assessment(True)
        return Assessment(False, "unreadable file" if result.format else "format not recognised")

    def write(self, results: Sequence[ImportResult]) -> None:
        """Nothing: an import streams its runs into the store as it reads."""
