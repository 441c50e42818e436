"""The Python API: lhbench's main jobs as plain functions, for scripts and notebooks.

Each function is a thin, synchronous front on the same job the CLI runs (``lhbench.jobs``),
so a notebook and ``lhbench run`` store the same runs under the same keys, skip the same
stored work and resume the same interrupted work. Each takes an open ``store`` (see
:func:`open_store`) or opens the configured one, and ``settings`` (default: ``lhbench.toml``
and ``LHBENCH_*``, as the CLI reads them). They return the schema objects that were stored.

Example:
    >>> import lhbench
    >>> store = lhbench.open_store("sqlite:///my-eval.db")
    >>> runs = lhbench.run_agents("lhbench-samples", model="openai:gpt-5.2", store=store)
    >>> grades = lhbench.grade("lhbench-samples", panel=["openai:gpt-5.2"], store=store)
    >>> board = lhbench.report(store=store).table("leaderboard")
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from lhbench.config import Settings, load_settings
from lhbench.errors import ConfigError
from lhbench.schema import Grade, Label, PreferenceVote, Run, Verdict
from lhbench.store import Store

__all__ = [
    "Report",
    "export_inspect",
    "grade",
    "import_transcripts",
    "judge_states",
    "open_store",
    "report",
    "run_agents",
    "verify",
]

T = TypeVar("T")


def _sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to the end, also from inside a running event loop (a notebook cell)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="lhbench-api")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def open_store(url: str | None = None, *, settings: Settings | None = None) -> Store:
    """Open (and create or migrate) the store at ``url``, or the configured one.

    The caller closes it (``store.close()``, or use it as a context manager).
    """
    settings = settings or load_settings()
    return Store.open(url or settings.database_url)


@contextlib.contextmanager
def _store(store: Store | None, settings: Settings) -> Iterator[Store]:
    if store is not None:
        yield store
        return
    own = Store.open(settings.database_url)
    try:
        yield own
    finally:
        own.close()


def run_agents(
    pack: str,
    *,
    model: str,
    harness: str = "native",
    tasks: Sequence[str] | None = None,
    repeats: int = 1,
    versions: dict[str, str] | None = None,
    parallel: int = 2,
    verify: bool = True,
    retry_errors: bool = False,
    store: Store | None = None,
    settings: Settings | None = None,
) -> list[Run]:
    """Run ``harness`` with ``model`` on a pack's tasks (as ``lhbench run``); the runs.

    Finished runs are skipped, interrupted ones resume; each run that ends is verified by
    its task's checks (see :func:`verify`). ``pack`` is a bundled pack id, a pack under
    ``pack_paths``, or a directory.
    """
    from lhbench.jobs import run_agents as job

    settings = settings or load_settings()
    with _store(store, settings) as st:
        res = _sync(
            job(
                st,
                settings,
                pack=pack,
                harness=harness,
                model=model,
                tasks=list(tasks) if tasks else None,
                repeats=repeats,
                versions=dict(versions or {}),
                parallel=parallel,
                retry_errors=retry_errors,
                verify=verify,
            )
        )
        from lhbench.jobs import check_versions

        chosen = [t for t in res.pack.pack.tasks if not tasks or t.id in set(tasks)]
        tagged = check_versions(res.pack.pack, dict(versions or {}), chosen)
        wanted = {t.id for t in chosen}
        return [
            r
            for r in st.list_runs(pack_id=res.pack.pack.id, harness=harness, model=res.model)
            if r.task_id in wanted and r.repeat < repeats and r.versions == tagged
        ]


def grade(
    pack: str,
    *,
    panel: Sequence[str] | None = None,
    tier: str = "process",
    rubric: str | None = None,
    run_ids: Sequence[str] | None = None,
    repeats: int = 1,
    pairwise: bool = False,
    retry_errors: bool = False,
    store: Store | None = None,
    settings: Settings | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> list[Grade] | list[PreferenceVote]:
    """Grade a pack's stored runs with a judge panel (as ``lhbench judge``).

    Returns the grades of the graded runs on that rubric and tier (stored ones included),
    or with ``pairwise`` the pairwise judges' votes. ``panel`` defaults to ``judge_panel``.
    ``executor="ray"`` makes the rubric grades on Ray workers (``ray_address``: an existing
    cluster); they are stored here.
    """
    from lhbench.jobs import grade_runs

    settings = settings or load_settings()
    with _store(store, settings) as st:
        out = _sync(
            grade_runs(
                st,
                settings,
                pack=pack,
                tier=tier,
                panel=list(panel) if panel else None,
                rubric=rubric,
                run_ids=list(run_ids) if run_ids else None,
                repeats=repeats,
                retry_errors=retry_errors,
                pairwise=pairwise,
                executor=executor,
                ray_address=ray_address,
            )
        )
        ids = {r.id for r in out.runs}
        if pairwise:
            return [
                v
                for v in st.list_votes()
                if v.rater_kind != "human" and (v.run_a in ids or v.run_b in ids)
            ]
        return [
            g
            for g in st.list_grades(rubric_id=out.rubric.id, tier=out.tier.kind.value)
            if g.run_id in ids
        ]


def import_transcripts(
    paths: Sequence[str | Path],
    *,
    fmt: str = "auto",
    pack: str | None = None,
    task: str | None = None,
    harness: str | None = None,
    model: str | None = None,
    versions: dict[str, str] | None = None,
    store: Store | None = None,
    settings: Settings | None = None,
) -> list[Run]:
    """Import transcript files or directories as runs (as ``lhbench import``); the runs.

    A file that cannot be read raises ConfigError naming it (the CLI reports and goes on);
    with ``pack`` and ``task`` the runs are verified on their replayed final state.
    """
    from lhbench.jobs import import_transcripts as job

    settings = settings or load_settings()
    with _store(store, settings) as st:
        res = _sync(
            job(
                st,
                settings,
                [Path(p) for p in paths],
                fmt=fmt,
                pack=pack,
                task=task,
                harness=harness,
                model=model,
                versions=dict(versions or {}),
            )
        )
        failed = [f for f in res.files if f.error]
        if failed:
            raise ConfigError(
                "could not import: " + "; ".join(f"{f.path}: {f.error}" for f in failed)
            )
        return [st.get_run(rid) for f in res.files for rid in f.runs]


def verify(
    pack: str | None = None,
    *,
    run_ids: Sequence[str] | None = None,
    retry_errors: bool = False,
    store: Store | None = None,
    settings: Settings | None = None,
) -> list[Label]:
    """Run the tasks' checks on stored runs' final states (as ``lhbench verify``); the labels."""
    from lhbench.jobs import verify_runs

    settings = settings or load_settings()
    with _store(store, settings) as st:
        _sync(
            verify_runs(
                st,
                settings,
                pack=pack,
                run_ids=list(run_ids) if run_ids else None,
                retry_errors=retry_errors,
            )
        )
        wanted = set(run_ids) if run_ids else None
        pack_runs = {r.id for r in st.list_runs()} if pack is None else None
        labels = st.list_labels()
        if wanted is not None:
            return [lab for lab in labels if lab.run_id in wanted]
        if pack_runs is not None:
            return [lab for lab in labels if lab.run_id in pack_runs]
        from lhbench.jobs import resolve_pack

        pid = resolve_pack(pack, settings, st).pack.id  # type: ignore[arg-type]
        ids = {r.id for r in st.list_runs(pack_id=pid)}
        return [lab for lab in labels if lab.run_id in ids]


def judge_states(
    pack: str,
    *,
    model: str | None = None,
    judge: str = "agent",
    repeats: int = 1,
    budget: int = 20,
    concurrency: int = 4,
    postgres_url: str | None = None,
    tool_set: str | None = None,
    modality: str | None = None,
    retry_errors: bool = False,
    store: Store | None = None,
    settings: Settings | None = None,
) -> list[Verdict]:
    """Agent-as-a-Judge on a pack (as ``lhbench aj run``); the verdicts of ``judge``'s kind.

    ``judge`` is ``agent`` (a tool-using judge in the replayed final state) or ``llm`` (the
    plain judge reading the transcript); ``model`` defaults to ``aj_model``. The pack's
    environment decides what a run is (a search answer's item, an office trajectory, a
    replayed workspace) and takes its own options: ``postgres_url`` (SQL), ``tool_set``
    (search), ``modality`` (GUI).
    """
    from lhbench.jobs import judge_states as job

    if judge not in ("agent", "llm"):
        raise ConfigError(f"judge={judge!r}: expected 'agent' or 'llm'")
    settings = settings or load_settings()
    with _store(store, settings) as st:
        res = _sync(
            job(
                st,
                settings,
                pack=pack,
                judge=judge,
                model=model,
                repeats=repeats,
                budget=budget,
                concurrency=concurrency,
                postgres_url=postgres_url,
                tool_set=tool_set,
                modality=modality,
                retry_errors=retry_errors,
            )
        )
        ids = {r.id for r in st.list_runs(pack_id=res.pack.pack.id)}
        return [v for v in st.list_verdicts() if v.run_id in ids and v.judge.kind.value == judge]


@dataclass
class Report:
    """The report's sections, computed from the store's current judgements.

    ``table(slug)`` gives one table as a list of dicts (column -> value), ready for
    ``pandas.DataFrame``; ``files`` is where it was written, when ``out`` was given.
    """

    sections: list[Any]
    files: Any = None

    def tables(self) -> list[str]:
        """The slugs of every table, in report order."""
        return [t.slug for s in self.sections for t in s.tables]

    def table(self, slug: str) -> list[dict[str, Any]]:
        """One table's rows; ``slug`` may be a prefix (``leaderboard`` for the first one)."""
        found = [t for s in self.sections for t in s.tables if t.slug.startswith(slug)]
        if not found:
            raise ConfigError(f"no table {slug!r}; the report has: {', '.join(self.tables())}")
        t = found[0]
        return [dict(zip(t.columns, row, strict=True)) for row in t.rows]


def report(
    *,
    by: Sequence[str] = ("harness", "model"),
    ablation: str | None = None,
    baseline: str | None = None,
    include_stale: bool = False,
    out: str | Path | None = None,
    store: Store | None = None,
    settings: Settings | None = None,
) -> Report:
    """The report over the store (as ``lhbench report``); written to ``out`` when given."""
    from lhbench.reporting import ReportData, build_sections, write_report
    from lhbench.reporting.data import configured_panel

    settings = settings or load_settings()
    with _store(store, settings) as st:
        data = ReportData.from_store(
            st, include_stale=include_stale, panel=configured_panel(settings)
        )
    sections = build_sections(data, by=by, ablation=ablation, baseline=baseline)
    files = (
        write_report(data, Path(out), by=by, ablation=ablation, baseline=baseline)
        if out is not None
        else None
    )
    return Report(sections=sections, files=files)


def export_inspect(
    out: str | Path,
    *,
    pack: str | None = None,
    formats: Sequence[str] = ("eval", "json"),
    include_stale: bool = False,
    store: Store | None = None,
    settings: Settings | None = None,
) -> list[Path]:
    """Inspect AI logs of the store's runs (as ``lhbench export inspect``): the files written.

    One log per (pack, harness, model, versions) group; scores from the current grades,
    as in the report. Example::

        paths = lhbench.export_inspect("inspect-logs", pack="lhbench-samples")
    """
    from lhbench.reporting import ReportData
    from lhbench.reporting.data import configured_panel
    from lhbench.reporting.inspect_log import export_inspect as _export

    bad = [f for f in formats if f not in ("eval", "json")]
    if bad:
        raise ConfigError(f"unknown Inspect log format(s) {bad}: use 'eval' and/or 'json'")
    settings = settings or load_settings()
    with _store(store, settings) as st:
        data = ReportData.from_store(
            st, include_stale=include_stale, panel=configured_panel(settings)
        )
        logs = _export(data, Path(out), pack=pack, formats=tuple(formats))  # type: ignore[arg-type]
    return [p for log in logs for p in log.paths]
