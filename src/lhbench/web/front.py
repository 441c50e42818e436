"""The overview's front, saved beside the store's version, and run pages answered from it.

At 100,000 runs the overview's whole summary takes 10 s or more to make, and a restarted
server used to make it before its first answer. What the overview *shows* is small (a
row per agent, counts, notes) and so is what a run page reads of it (the current rubric
and judge combinations, judge names, the grouping): :class:`~lhbench.web.analysis.Front`.
It is saved as JSON in a file, tagged with the store's ``data_version`` and change-log
mark read *before* the summary read the store, and signed with the app's secret. A
restarted server answers from it only while the store is still at that version and mark
and the signature holds; anything else (a write, a re-registered pack, another judge
panel or lhbench version, an edited or foreign file) and the file is ignored. No pickle
is read: JSON, checked before it is parsed, into plain numbers and strings.

Beside it, what the last whole summary read (:func:`save_summary`): the grade cells and
the run, label and verdict facts, at the change-log mark read before it. A restarted
server loads them and reads only what the change log says was written since, rather than
every grade, run, label and verdict again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from pathlib import Path
from typing import Any

import numpy as np

from lhbench import __version__
from lhbench.judges import TierKey
from lhbench.reporting import (
    LeaderboardRow,
    PassRateRow,
    group_label,
    label_is_stale,
    label_outcomes,
)
from lhbench.schema import FailureKind, Grade, Run, RunStatus, Task
from lhbench.store import LabelFact, RunFact, Store, VerdictFact
from lhbench.store.aggregates import (
    CELL_ERRORS,
    CELL_GRADES,
    CELL_PARSE,
    CELL_RETRY,
    CELL_SCORED,
    CELL_TOTAL,
    CELL_TOTAL_SQ,
)
from lhbench.web.analysis import AgentRow, Estimate, Front, SavedSummary, grade_is_current
from lhbench.web.cells import GradeCells

__all__ = [
    "FORMAT",
    "RunContext",
    "front_path",
    "load_front",
    "load_summary",
    "run_context",
    "save_front",
    "save_summary",
    "summary_path",
]

# bumped whenever what a front or a saved summary holds, or how it is computed, changes
FORMAT = 2
# a saved front is a few kB per agent: anything far larger is not ours
MAX_BYTES = 8 * 1024 * 1024

# a saved summary: about 64 bytes a grade cell (1,000,000 grades make 600,000 cells,
# 40 MB), and its facts as JSON (100,000 runs, labels and 50,000 verdicts: 19 MB)
MAX_SUMMARY_BYTES = 256 * 1024 * 1024

Combo = tuple[str, str, str, str, str, str]


def _key(secret: str) -> bytes:
    return hashlib.sha256(b"lhbench overview front\0" + secret.encode()).digest()


def _where(store: Store) -> str:
    return store.engine.url.render_as_string(hide_password=True)


def front_path(directory: Path, store: Store) -> Path:
    """The file a store's front is saved in (one per store URL)."""
    name = hashlib.sha256(_where(store).encode()).hexdigest()[:24]
    return directory / f"overview-{name}.json"


def _est(e: Estimate | None) -> list[Any] | None:
    return None if e is None else [e.value, e.lo, e.hi, e.n, e.k]


def _est_of(v: list[Any] | None) -> Estimate | None:
    return None if v is None else Estimate(v[0], v[1], v[2], v[3], v[4])


def _row(r: AgentRow) -> dict[str, Any]:
    return {
        "label": r.label,
        "harness": r.harness,
        "model": r.model,
        "versions": r.versions,
        "tasks": r.tasks,
        "n_runs": r.n_runs,
        "leaderboard": [
            [list(k), {**vars(lb), "ci": list(lb.ci)}] for k, lb in r.leaderboard.items()
        ],
        "passes": None if r.passes is None else {**vars(r.passes), "ci": list(r.passes.ci)},
        "elo": _est(r.elo),
        "aj": _est(r.aj),
        "noise": r.noise,
        "noise_cells": r.noise_cells,
        "cost_total": r.cost_total,
        "cost_per_run": r.cost_per_run,
        "tokens_per_run": None if r.tokens_per_run is None else list(r.tokens_per_run),
    }


def _row_of(d: dict[str, Any]) -> AgentRow:
    leaderboard = {
        TierKey(*k): LeaderboardRow(**{**lb, "ci": tuple(lb["ci"])}) for k, lb in d["leaderboard"]
    }
    passes = d["passes"]
    tokens = d["tokens_per_run"]
    return AgentRow(
        label=d["label"],
        harness=d["harness"],
        model=d["model"],
        versions=dict(d["versions"]),
        run_ids=[],
        tasks=d["tasks"],
        n_runs=d["n_runs"],
        leaderboard=leaderboard,
        passes=None if passes is None else PassRateRow(**{**passes, "ci": tuple(passes["ci"])}),
        elo=_est_of(d["elo"]),
        aj=_est_of(d["aj"]),
        noise=d["noise"],
        noise_cells=d["noise_cells"],
        cost_total=d["cost_total"],
        cost_per_run=d["cost_per_run"],
        tokens_per_run=None if tokens is None else (tokens[0], tokens[1]),
    )


def _body(front: Front) -> dict[str, Any]:
    return {
        "by": list(front.by),
        "runs": front.runs,
        "tasks": front.tasks,
        "verdicts": front.verdicts,
        "grades_total": front.grades_total,
        "grades_used": front.grades_used,
        "votes": front.votes,
        "notes": front.notes,
        "tier_keys": [list(k) for k in front.tier_keys],
        "tier_runs": front.tier_runs,
        "tier_notes": front.tier_notes,
        "agents": [_row(r) for r in front.agents],
        "current": sorted(list(c) for c in front.current),
        "judge_names": front.judge_names,
    }


def _front_of(d: dict[str, Any]) -> Front:
    return Front(
        by=tuple(d["by"]),
        runs=d["runs"],
        tasks=d["tasks"],
        verdicts=d["verdicts"],
        grades_total=d["grades_total"],
        grades_used=d["grades_used"],
        votes=d["votes"],
        notes=list(d["notes"]),
        tier_keys=[TierKey(*k) for k in d["tier_keys"]],
        tier_runs=list(d["tier_runs"]),
        tier_notes=[list(n) for n in d["tier_notes"]],
        agents=[_row_of(r) for r in d["agents"]],
        current={(c[0], c[1], c[2], c[3], c[4], c[5]) for c in d["current"]},
        judge_names=dict(d["judge_names"]),
    )


def _tag(store: Store, version: int, mark: int, panel: set[str] | None) -> dict[str, Any]:
    """What a front is valid for: this store, at this version and mark, this code."""
    return {
        "format": FORMAT,
        "lhbench": __version__,
        "store": _where(store),
        "identity": store.identity(),
        "version": version,
        "mark": mark,
        "panel": None if panel is None else sorted(panel),
    }


def save_front(
    path: Path,
    secret: str,
    store: Store,
    front: Front,
    *,
    version: int,
    mark: int,
    panel: set[str] | None,
) -> None:
    """Write ``front``, read from the store at ``version`` and ``mark``, signed, atomically.

    ``version`` and ``mark`` must be read before the summary read the store: a write
    during it then moves the store past them, and the file is never used.
    """
    text = json.dumps({"tag": _tag(store, version, mark, panel), "front": _body(front)})
    sig = hmac.new(_key(secret), text.encode(), hashlib.sha256).hexdigest()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".overview-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(sig + "\n" + text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _signed_body(path: Path, key: bytes, max_bytes: int) -> memoryview | None:
    """What follows the first line of ``path`` if that line is its HMAC-SHA256 under ``key``.

    None when the file is missing, over ``max_bytes``, or not signed so (checked before
    anything in it is read). A view of the file's bytes, not a copy (64 MB of grade cells
    and facts at 100,000 runs).
    """
    try:
        if path.stat().st_size > max_bytes:
            return None
        raw = path.read_bytes()
    except OSError:
        return None
    cut = raw.find(b"\n")
    if cut < 0:
        return None
    body = memoryview(raw)[cut + 1 :]
    good = hmac.new(key, body, hashlib.sha256).hexdigest().encode()
    return body if hmac.compare_digest(raw[:cut], good) else None


def load_front(path: Path, secret: str, store: Store, panel: set[str] | None) -> Front | None:
    """The front saved at ``path`` if it is ours and the store is still where it was read.

    None when the file is missing, too large, not signed with ``secret``, made by other
    code or for another store or panel, or when the store's version or change-log mark
    moved since (checked after the signature, before anything is trusted).
    """
    text = _signed_body(path, _key(secret), MAX_BYTES)
    if text is None:
        return None
    try:
        doc = json.loads(text.tobytes())
        tag = doc["tag"]
        want = _tag(store, store.data_version(), store.change_mark(), panel)
        if tag != want:
            return None
        return _front_of(doc["front"])
    except (ValueError, KeyError, TypeError, IndexError, RecursionError):
        return None


def summary_path(directory: Path, store: Store) -> Path:
    """The file a store's saved summary is kept in (one per store URL)."""
    name = hashlib.sha256(_where(store).encode()).hexdigest()[:24]
    return directory / f"summary-{name}.bin"


def _grades_key(secret: str) -> bytes:
    # another key than the front's: neither file is ever taken for the other
    return hashlib.sha256(b"lhbench summary grades\0" + secret.encode()).digest()


def _grades_tag(store: Store, mark: int) -> dict[str, Any]:
    # the database's identity: another one made at the same URL has marks of its own
    return {
        "format": FORMAT,
        "lhbench": __version__,
        "store": _where(store),
        "identity": store.identity(),
        "mark": mark,
    }


# a cell's integer sums and its float sums (Σ score, Σ score²), by their places in a cell
_INTS = (CELL_GRADES, CELL_SCORED, CELL_PARSE, CELL_ERRORS, CELL_RETRY)
_FLOATS = (CELL_TOTAL, CELL_TOTAL_SQ)
_CHUNK = 65_536


def save_summary(path: Path, secret: str, store: Store, state: SavedSummary) -> None:
    """Write what a summary read, signed, atomically (JSON and arrays, never pickle).

    The file: the HMAC-SHA256 of the rest in hex, a newline, a JSON header (tag, run ids,
    parts, combinations, judges' newest times, cell count) and a newline; the run, label
    and verdict facts, a JSON list per field and line (:func:`_fact_lines`); then the
    cells as little-endian arrays: run index and part index (int32), integer sums (int64 ×
    5) and float sums (float64 × 2), written a chunk at a time.
    """
    runs, parts, run_idx, part_idx, values = state.cells.columns()
    header = {
        "tag": _grades_tag(store, state.mark),
        "runs": runs,
        "parts": [list(p) for p in parts],
        "combos": [[*k, n] for k, n in state.combo_counts.items()],
        "newest": [[k, t.isoformat()] for k, t in state.newest.items()],
        "n": len(values),
    }
    mac = hmac.new(_grades_key(secret), digestmod=hashlib.sha256)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".summary-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(b"0" * 64 + b"\n")

            def put(data: bytes) -> None:
                mac.update(data)
                f.write(data)

            put(json.dumps(header).encode() + b"\n")
            for line in _fact_lines(state):
                put(json.dumps(line).encode() + b"\n")
            put(np.asarray(run_idx, dtype="<i4").tobytes())
            put(np.asarray(part_idx, dtype="<i4").tobytes())
            for cols, dtype in ((list(_INTS), "<i8"), (list(_FLOATS), "<f8")):
                for lo in range(0, len(values), _CHUNK):
                    # counts are far below 2**53: exact as float64 on the way
                    put(values[lo : lo + _CHUNK][:, cols].astype(dtype).tobytes())
            f.seek(0)
            f.write(mac.hexdigest().encode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_summary(path: Path, secret: str, store: Store) -> SavedSummary | None:
    """The summary saved at ``path`` if the file is ours, whole and for this store.

    None when it is missing, over :data:`MAX_SUMMARY_BYTES`, not signed with ``secret``,
    made by other code or for another store, or malformed in any way. Whether its mark
    can still be brought up to date is :func:`lhbench.web.analysis.analyse`'s to check.
    """
    body = _signed_body(path, _grades_key(secret), MAX_SUMMARY_BYTES)
    if body is None:
        return None
    try:
        return _summary_of(body, store)
    except (ValueError, KeyError, TypeError, IndexError, OverflowError, RecursionError):
        return None


def _summary_of(body: memoryview, store: Store) -> SavedSummary | None:
    # the header's and the facts' lines, found in the file's bytes the view is of (no
    # copy of the cells); a line at a time, so no parse holds the interpreter for long
    raw = body.obj
    if not isinstance(raw, bytes):
        return None
    pos = len(raw) - len(body)
    lines: list[Any] = []
    for _ in range(1 + _FACT_LINES):
        cut = raw.find(b"\n", pos)
        if cut < 0:
            return None
        lines.append(json.loads(raw[pos:cut]))
        pos = cut + 1
    head = lines[0]
    data = body[pos - (len(raw) - len(body)) :]
    tag, n = head["tag"], head["n"]
    mark = tag["mark"]
    if type(mark) is not int or tag != _grades_tag(store, mark):
        return None
    if type(n) is not int or n < 0 or len(data) != n * 64:
        return None
    (runs,) = _columns_of([head["runs"]], (("runs", _STR),))
    parts = [_strings(p, 5) for p in head["parts"]]
    run_idx = np.frombuffer(data, dtype="<i4", count=n, offset=0)
    part_idx = np.frombuffer(data, dtype="<i4", count=n, offset=4 * n)
    ints = np.frombuffer(data, dtype="<i8", count=5 * n, offset=8 * n).reshape(n, 5)
    floats = np.frombuffer(data, dtype="<f8", count=2 * n, offset=48 * n).reshape(n, 2)
    if n and (
        run_idx.min() < 0
        or run_idx.max() >= len(runs)
        or part_idx.min() < 0
        or part_idx.max() >= len(parts)
    ):
        return None
    if len(set(runs)) != len(runs) or len(set(map(tuple, parts))) != len(parts):
        return None
    values = np.empty((n, len(_INTS) + len(_FLOATS)), dtype=np.float64)
    values[:, list(_INTS)] = ints
    values[:, list(_FLOATS)] = floats
    cells = GradeCells(
        runs,
        [(p[0], p[1], p[2], p[3], p[4]) for p in parts],
        run_idx.astype(np.int64),
        part_idx.astype(np.int64),
        values,
    )
    combos: dict[tuple[str | None, str, str, str, str, str], int] = {}
    for c in head["combos"]:
        if not isinstance(c, list) or len(c) != 7 or type(c[6]) is not int:
            return None
        pack = None if c[0] is None else _text(c[0])
        r_id, ver, rh, tier, judge = _strings(c[1:6], 5)
        combos[(pack, r_id, ver, rh, tier, judge)] = c[6]
    newest = {_text(k): datetime.fromisoformat(_text(t)) for k, t in head["newest"]}
    facts, labels, verdicts = _facts_of(lines[1:])
    return SavedSummary(mark, cells, combos, newest, facts, labels, verdicts)


# the facts' fields as the file holds them (a list per field), with the types each may take
_Fields = tuple[tuple[str, frozenset[object]], ...]
_STR: frozenset[object] = frozenset({str})
_OPT_STR: frozenset[object] = frozenset({str, type(None)})
_INT: frozenset[object] = frozenset({int})
_OPT_FLOAT: frozenset[object] = frozenset({float, type(None)})
_RUN_FIELDS: _Fields = (
    ("id", _STR),
    ("pack_id", _STR),
    ("task_id", _STR),
    ("harness", _STR),
    ("harness_version", _OPT_STR),
    ("model", _STR),
    ("status", _STR),
    ("repeat", _INT),
    ("cost_usd", _OPT_FLOAT),
    ("input_tokens", _INT),
    ("output_tokens", _INT),
    ("failure_kind", _OPT_STR),
)
_LABEL_FIELDS: _Fields = (
    ("run_id", _STR),
    ("source", _STR),
    ("passed", frozenset({bool, type(None)})),
    ("check_hash", _STR),
    ("failure_kind", _OPT_STR),
)
_VERDICT_FIELDS: _Fields = (
    ("run_id", _STR),
    ("judge_kind", _STR),
    ("judge_model", _STR),
    ("judge_key", _STR),
    ("verdict", _OPT_STR),
    ("repeat", _INT),
)


def _columns(facts: Sequence[Any], fields: _Fields) -> list[list[Any]]:
    """The facts as a list per field (C-level reads: 100,000 facts in a few ms a field)."""
    return [list(map(attrgetter(name), facts)) for name, _ in fields]


def _columns_of(doc: Any, fields: _Fields, n: int | None = None) -> list[list[Any]]:
    """A list per field, each of one length (``n`` if given), every value of its types.

    An integer field's values are within 64 bits, as the store's columns hold them.
    """
    if not isinstance(doc, list) or len(doc) != len(fields):
        raise TypeError("expected a list per field")
    sizes = {n} if n is not None else set()
    for col, (_, types) in zip(doc, fields, strict=True):
        if not isinstance(col, list) or not set(map(type, col)) <= types:
            raise TypeError("a field holds a value of another type")
        if types is _INT and col and (min(col) < -(2**63) or max(col) >= 2**63):
            raise ValueError("a number out of range")
        sizes.add(len(col))
    if len(sizes) > 1:
        raise ValueError("the fields are of different lengths")
    return doc


# tags over all runs (each run's own dict: ~100 bytes a pair), and the values a run's
# status and failure kind take
_MAX_TAG_PAIRS = 4_000_000
_STATUSES = frozenset(s.value for s in RunStatus)
_FAILURE_KINDS = frozenset({None, *(k.value for k in FailureKind)})

# the run facts' lines: their fields, then when each started, its tag set's number, the
# tag sets; then the labels' fields and the verdicts'
_FACT_LINES = len(_RUN_FIELDS) + 3 + len(_LABEL_FIELDS) + len(_VERDICT_FIELDS)


def _fact_lines(state: SavedSummary) -> list[list[Any]]:
    """The summary's facts as :data:`_FACT_LINES` lists; a run's tag set once per set."""
    facts = state.runs
    tags: dict[tuple[tuple[str, str], ...], int] = {}
    tag_of = [tags.setdefault(tuple(f.versions.items()), len(tags)) for f in facts]
    return [
        *_columns(facts, _RUN_FIELDS),
        [None if f.started_at is None else f.started_at.isoformat() for f in facts],
        tag_of,
        [[list(kv) for kv in t] for t in tags],
        *_columns(state.labels, _LABEL_FIELDS),
        *_columns(state.verdicts, _VERDICT_FIELDS),
    ]


def _facts_of(
    lines: list[Any],
) -> tuple[list[RunFact], list[LabelFact], list[VerdictFact]]:
    """The facts :func:`_fact_lines` wrote (a TypeError or ValueError if malformed)."""
    k = len(_RUN_FIELDS)
    f = _columns_of(lines[:k], _RUN_FIELDS)
    started, tag_of = _columns_of(
        lines[k : k + 2], (("started_at", _OPT_STR), ("tag_of", _INT)), len(f[0])
    )
    tags = lines[k + 2]
    if not isinstance(tags, list):
        raise TypeError("expected the tag sets")
    sets = [dict(_strings(kv, 2) for kv in t) for t in tags]
    if any(len(d) != len(t) for d, t in zip(sets, tags, strict=True)):
        raise ValueError("a tag set names a key twice")
    if tag_of and (min(tag_of) < 0 or max(tag_of) >= len(sets)):
        raise ValueError("a run's tag set is not in the file")
    # every run gets a dict of its own: a few tag sets cannot ask for gigabytes of them
    if sum(np.bincount(tag_of, minlength=len(sets)) * [len(d) for d in sets]) > _MAX_TAG_PAIRS:
        raise ValueError("too many tags")
    if len(set(f[0])) != len(f[0]):
        raise ValueError("a run is named twice")
    if not set(f[6]) <= _STATUSES or not set(f[11]) <= _FAILURE_KINDS:
        raise ValueError("a run status or failure kind lhbench does not know")
    # each run its own dict, as Store.run_facts gives them
    versions = [dict(sets[i]) for i in tag_of]
    starts = [None if t is None else datetime.fromisoformat(t) for t in started]
    runs = list(map(RunFact, f[0], f[1], f[2], f[3], f[4], f[5], versions, *f[6:11], starts, f[11]))
    k += 3
    labels = _columns_of(lines[k : k + len(_LABEL_FIELDS)], _LABEL_FIELDS)
    k += len(_LABEL_FIELDS)
    verdicts = _columns_of(lines[k:], _VERDICT_FIELDS)
    return runs, list(map(LabelFact, *labels)), list(map(VerdictFact, *verdicts))


def _text(v: Any) -> str:
    if not isinstance(v, str):
        raise TypeError("expected a string")
    return v


def _strings(v: Any, n: int) -> list[str]:
    if not isinstance(v, list) or len(v) != n:
        raise TypeError(f"expected {n} strings")
    return [_text(x) for x in v]


@dataclass
class RunContext:
    """What a run page reads of an analysis, for one run, without the per-run summary.

    The same answers as :class:`~lhbench.web.analysis.Analysis` gives for that run:
    ``agent_of``, ``labels`` and ``tasks`` are looked up with ``.get``.
    """

    current: set[Combo]
    judge_names: dict[str, str]
    tasks: Mapping[tuple[str, str], Task]
    agent_of: dict[str, str]
    labels: dict[str, bool | None]

    def is_current(self, pack_id: str, grade: Grade) -> bool:
        """Whether a stored grade of a run of ``pack_id`` counts (current rubric and judge)."""
        return grade_is_current(self.current, pack_id, grade)


def run_context(
    store: Store, front: Front, tasks: Mapping[tuple[str, str], Task], run: Run
) -> RunContext:
    """A run's agent, check outcome and the grade policy, as the full analysis has them.

    A run that failed for infrastructure is in no figure: no agent, no outcome. Its
    other labels count as :meth:`lhbench.web.analysis._Summary._set_labels` counts them:
    those of a script or check made on another content of the task are stale.
    """
    if run.failure_kind == FailureKind.INFRASTRUCTURE:
        return RunContext(front.current, front.judge_names, tasks, {}, {})
    task = tasks.get((run.pack_id, run.task_id))
    now = task.content_hash if task is not None else None
    counted = [
        lab
        for lab in store.label_facts([run.id])
        if not label_is_stale(lab.source, lab.check_hash, now)
    ]
    return RunContext(
        front.current,
        front.judge_names,
        tasks,
        {run.id: group_label(run, front.by)},
        label_outcomes(counted),
    )
