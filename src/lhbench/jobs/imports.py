"""Importing transcripts: each file a unit, its runs streamed into the store in batches.

A run's id is derived from the file's identity and its format, so re-importing a file is
a no-op (the unit is stored), a wrong ``--format`` never blocks the right one, and a run
whose import was interrupted (``import: partial``) is imported again from scratch. A
file's identity is its SHA-256 when it is small; for a large file it is a fingerprint of
its size and sampled content (taken without reading it all), and the full SHA-256,
computed during the one read the import makes, is stored with its runs.

A file that cannot be read as its format (or recognised at all) is a failed unit with
the reason; a directory import goes on past it and sums up at the end. A run whose
import stops is stored ``failed`` with the reason, never left ``running``. ``replace``
removes the file's earlier runs (and everything said about them) and imports again.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lhbench.errors import LhbenchError, TranscriptError
from lhbench.ingest import (
    FORMATS,
    Format,
    ImportContext,
    TranscriptInfo,
    detect_format,
    read_records,
)
from lhbench.jobs.options import ImportOptions
from lhbench.jobs.packs import LoadedPack
from lhbench.jobs.runner import Assessment, Unit
from lhbench.schema import Run, RunStatus
from lhbench.store import ResultState, Store
from lhbench.store.bulk import WRITER_AFTER_ROWS, BatchWriteError, StepAppender

__all__ = ["ImportJob", "ImportResult", "collect_files", "file_digest", "file_identity"]

_BATCH = 5000
# a file at least this large, read as one run, has its steps handed to a writer process
# (SQLite) from the first batch, not after store.bulk.WRITER_AFTER_ROWS: the first batches
# cost the reading thread their insert otherwise (0.04 s of 0.9 for 64 MB), and the writer
# starts while the second batch is read
_WRITER_FROM_START = 16 << 20
_WHOLE = 8 << 20  # files up to this size are identified by their full SHA-256
_SAMPLES = 64
_SAMPLE = 64 << 10


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


def file_identity(path: Path) -> str:
    """The file's SHA-256 up to 8 MiB; above, a SHA-256 of its size and 64 sampled blocks."""
    size = path.stat().st_size
    if size <= _WHOLE:
        return file_digest(path)
    h = hashlib.sha256(b"lhbench-sampled-v1:%d:" % size)
    with path.open("rb") as f:
        for k in range(_SAMPLES):
            f.seek((size - _SAMPLE) * k // (_SAMPLES - 1))
            h.update(f.read(_SAMPLE))
    return h.hexdigest()


@contextlib.contextmanager
def _bulk() -> Iterator[None]:
    """No cyclic garbage collection while rows stream in.

    An import allocates millions of short-lived containers (parsed lines, rows) and no
    cycles; the collector would scan them again and again (a quarter of the import's time).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


_INT64 = 2**63


def _scrub(value: Any, depth: int = 0) -> Any:
    """Values a store keeps and gives back as they were.

    PostgreSQL refuses NUL characters (transcripts may hold them); a number past 64 bits
    is kept as text (JSON encoders refuse such integers, and PostgreSQL gives a float like
    1e21 back as an integer, which no later save could write again).
    """
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value if -_INT64 < value < _INT64 else repr(value)
    if depth > 50:
        return None
    if isinstance(value, dict):
        return {_scrub(k, depth + 1): _scrub(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, depth + 1) for v in value]
    return value


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_.\-]+", "-", text.lower()).strip("-")[:120] or "transcript"


@dataclass
class ImportResult:
    """What importing one file did (or why it could not).

    ``sessions`` counts the sessions found in the file's transcripts; with several and no
    ``split``, they were merged into one run whose status the last one decided.
    """

    path: Path
    format: str | None
    runs: list[str] = field(default_factory=list)
    already: int = 0
    steps: int = 0
    incomplete: int = 0
    skipped_lines: list[TranscriptError] = field(default_factory=list)
    problems: int = 0
    sessions: int = 0
    split: bool = False
    error: str | None = None


@dataclass(frozen=True)
class _FileUnit:
    path: Path
    format: Format | None
    identity: str
    problem: str | None


class ImportJob:
    """Every file given (the Job protocol)."""

    name = "import"

    def __init__(
        self,
        store: Store,
        files: Sequence[Path],
        options: ImportOptions,
        *,
        pack: LoadedPack | None = None,
        versions: Mapping[str, str] | None = None,
    ) -> None:
        """``options`` as the caller gave them; ``pack`` and ``versions`` as resolved."""
        if options.fmt != "auto" and options.fmt not in FORMATS:
            raise LhbenchError(
                f"unknown format {options.fmt!r}; one of {', '.join(FORMATS)} or auto"
            )
        self.store = store
        self.files = list(files)
        self.fmt = options.fmt
        self.pack = pack
        self.task = options.task
        self.harness = options.harness
        self.model = options.model
        self.versions = dict(versions or {})
        self.strict = options.strict
        self.replace = options.replace
        self.split_sessions = options.split_sessions

    def plan(self) -> list[Unit[_FileUnit]]:
        """One unit per file; its key is the run-id prefix (file identity and format)."""
        out = []
        for path in self.files:
            form: Format | None = None
            problem = None
            identity = hashlib.sha256(str(path).encode()).hexdigest()
            try:
                identity = file_identity(path)
                form = FORMATS[self.fmt] if self.fmt != "auto" else detect_format(path)
            except TranscriptError as exc:
                problem = str(exc)
            except OSError as exc:
                problem = f"{path}: cannot read: {exc}"
            key = f"imp-{identity[:20]}-{form.name if form else 'unknown'}"
            out.append(Unit(key, str(path), _FileUnit(path, form, identity, problem)))
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
        res = ImportResult(u.path, u.format.name if u.format else None, split=self.split_sessions)
        if u.format is None:
            res.error = u.problem or "format not recognised"
            return res
        if self.replace:
            for run in self.store.runs_with_prefix(prefix):
                self.store.delete_run(run.id)
        ctx = ImportContext(path=u.path, strict=self.strict)
        finals: dict[str, Run] = {}  # each run as last saved (not read back: see below)
        try:
            for info, rows in read_records(u.format, ctx, split_sessions=self.split_sessions):
                self._one(prefix, u, info, rows, ctx, res, finals)
        except TranscriptError as exc:  # --strict: the first bad line stops the file
            res.error = str(exc)
        except Exception as exc:  # unreadable in a way no check foresaw: reported, not raised
            res.error = f"{u.path}: cannot read as {u.format.name}: {type(exc).__name__}: {exc}"
        if ctx.digest and res.runs:
            # runs finished before the read did: give them the file's hash now it is known.
            # The run as saved, not as read back: a JSON number PostgreSQL kept exactly
            # (a float past 2**64 from a transcript) reads back as an int no encoder takes.
            try:
                for run_id in res.runs:
                    done = finals.get(run_id)
                    if done is not None and done.metadata.get("sha256") != ctx.digest:
                        meta = {**done.metadata, "sha256": ctx.digest}
                        self.store.save_run(done.model_copy(update={"metadata": meta}))
            except Exception as exc:  # the runs are stored whole; only their hash is missing
                res.error = (
                    f"{u.path}: could not record the file's hash: {type(exc).__name__}: {exc}"
                )

        res.skipped_lines.extend(ctx.skipped)
        res.problems = ctx.problems
        if not res.error and not res.runs and not res.already:
            res.error = f"{u.path}: no transcript found in it as {u.format.name}"
        return res

    def _one(
        self,
        prefix: str,
        u: _FileUnit,
        info: TranscriptInfo,
        rows: Iterator[list[Any]],
        ctx: ImportContext,
        res: ImportResult,
        finals: dict[str, Run],
    ) -> None:
        assert u.format is not None
        run_id = prefix + (f"-{_slug(info.key)}" if info.key else "")
        prior = self.store.find_run(run_id)
        if prior is not None and prior.metadata.get("import") == "done":
            res.already += 1
            for _ in rows:  # drain, so a multi-sample reader moves on
                pass
            return
        pack_id = self.pack.pack.id if self.pack else "imported"
        key_part = f"-{_slug(info.key)}" if info.key else ""
        run = Run(
            id=run_id,
            pack_id=pack_id,
            pack_hash=self.pack.pack.content_hash if self.pack else "",
            task_id=self.task or (_slug(u.path.stem) + key_part)[:200],
            harness=self.harness or u.format.harness,
            model=self.model or "unknown",
            versions=dict(self.versions),
            status=RunStatus.RUNNING,
            source=str(u.path),
            metadata={"import": "partial", "format": u.format.name, "identity": u.identity},
        )
        self.store.save_run(run)
        self.store.delete_steps(run_id)
        problems_before = ctx.problems
        batch: list[Any] = []
        out: StepAppender | None = None
        try:
            # every batch its own transaction; on leaving, all of them are committed
            with (
                self.store.step_appender(
                    run_id, writer_after_rows=_writer_after(u, self.split_sessions)
                ) as out,
                _bulk(),
            ):
                for chunk in rows:
                    batch.extend(chunk)
                    if len(batch) >= _BATCH:
                        out.append(batch)
                        batch = []
                out.append(batch)
                batch = []
            count = out.rows
            if count == 0 and not info.error:
                # nothing this format could read (and no recorded failure): not a run, most
                # likely the wrong format, so nothing is stored under it
                self.store.delete_run(run_id)
                res.error = (
                    f"{u.path}: no step could be read as {u.format.name} "
                    f"({ctx.problems - problems_before} problem(s)); is it another format? "
                    "(`lhbench import auto` detects it)"
                )
                return
            final = self._final(run, info, ctx, problems_before)
            self.store.save_run(final)
            finals[run_id] = final
        except Exception as exc:
            # never left `running`: the run keeps what was read and says why its import stopped
            lost = out.failure if out is not None else None
            reason = f"import stopped: {exc}"
            if lost is None and batch:
                # the rows read before the reader stopped (after a failed batch they would
                # leave a gap: the stored steps stay a prefix of the transcript)
                with contextlib.suppress(Exception):
                    self.store.append_step_rows(run_id, batch)
            elif (
                lost is not None
                and not isinstance(exc, BatchWriteError)
                and f"{type(exc).__name__}: {exc}" not in lost  # not the append's own error
            ):
                reason += f"; and {lost}"  # both: what stopped the read, what was not stored
            reason = _scrub(reason[:2000])
            self.store.save_run(
                run.model_copy(update={"status": RunStatus.FAILED, "error": reason})
            )
            raise
        res.runs.append(run_id)
        res.steps += count
        res.sessions += info.sessions
        if info.status == RunStatus.INCOMPLETE:
            res.incomplete += 1

    def _final(
        self, run: Run, info: TranscriptInfo, ctx: ImportContext, problems_before: int
    ) -> Run:
        ended = info.ended_at
        if info.started_at is not None and ended is not None and ended < info.started_at:
            ended = None
        status = info.status
        if status in (RunStatus.RUNNING, RunStatus.PENDING):
            status = RunStatus.INCOMPLETE  # a transcript is never still running once read
        metadata = {
            **run.metadata,
            **{k: v for k, v in info.metadata.items() if v is not None},
            "import": "done",
            "session_id": info.session_id,
            "task_text": (info.task_text or "")[:2000] or None,
            "skipped_lines": ctx.problems - problems_before,
        }
        if info.sessions > 1:
            metadata["sessions"] = info.sessions
        if ctx.digest:
            metadata["sha256"] = ctx.digest
        return Run.model_validate(
            {
                **run.model_dump(),
                "model": self.model or _scrub((info.model or "unknown")[:200]),
                "harness_version": _scrub((info.harness_version or "")[:100]) or None,
                "status": status,
                "started_at": info.started_at,
                "ended_at": ended,
                "usage": info.usage,
                "model_usage": {_scrub(k): u for k, u in info.model_usage.items()},
                "cost_usd": info.cost_usd,
                "error": _scrub(info.error),
                "metadata": _scrub(metadata),
            }
        )

    def assess(self, result: ImportResult) -> Assessment:
        """A file is ok when its transcripts were read."""
        if result.error is None:
            return Assessment(True)
        return Assessment(False, "unreadable file" if result.format else "format not recognised")

    def write(self, results: Sequence[ImportResult]) -> None:
        """Nothing: an import streams its runs into the store as it reads."""


def _writer_after(u: _FileUnit, split_sessions: bool) -> int:
    """Rows appended in-process before a writer process takes the rest.

    From the first batch for a large file read as one run (see _WRITER_FROM_START); a file
    of many runs (an Inspect log's samples, sessions split) would start a process per run.
    """
    if u.format is None or u.format.items is None or split_sessions:
        return WRITER_AFTER_ROWS
    try:
        large = u.path.stat().st_size >= _WRITER_FROM_START
    except OSError:
        large = False
    return 0 if large else WRITER_AFTER_ROWS
