"""Human chapter-level preferences into the store (LH-Bench §8.6, Table 10 and App. J).

LH-Bench's human SMEs compared two agents' versions of one chapter of one course and
chose one or a tie; those 275 matched chapter-level comparisons are what the VLM's chapter
scores are checked against. :func:`import_chapter_votes` reads such votes from a JSON
Lines file, one vote per line, and stores each as a human :class:`PreferenceVote` with its
``chapter_id``. A line names:

- ``id``: the vote's id in the file (required; importing the file again stores nothing new);
- the two runs: ``run_a`` and ``run_b`` (lhbench run ids), or ``harness_a`` and ``harness_b``
  (optionally ``model_a``, ``model_b``) naming each agent's one run of the task, as the
  public preference data (``metaphilabs/remotion-video-preferences``) does;
- the chapter: ``chapter_id``, or ``chapter_index``, its 0-based position in the task's
  annotated chapters (``ground_truth/<task>/chapters.json``);
- ``winner``: ``a``, ``b``, or ``t``/``tie``;
- optionally ``task`` (default: the command's task), ``annotator``, ``left`` (``a``/``b``:
  which output was shown first; default ``a``) and ``quality`` (1-5).

Other fields (``reasoning``, ``duration_seconds``, output URLs, …) are ignored. Every line is
checked before anything is stored; a file with any problem stores nothing and raises
:class:`DataFileError` naming each file:line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lhbench.config import Settings
from lhbench.errors import ConfigError, DataFileError, LhbenchError, Problem
from lhbench.jobs.content import content_task
from lhbench.jobs.packs import LoadedPack, resolve_pack
from lhbench.schema import JudgeKind, PreferenceVote, Run
from lhbench.store import Store

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_VOTES",
    "ChapterVoteImport",
    "import_chapter_votes",
    "read_chapter_votes",
]

MAX_LINE_BYTES = 64 * 1024
MAX_VOTES = 200_000
_MAX_PROBLEMS = 50
_WINNERS = {"a": "a", "b": "b", "t": "tie", "tie": "tie"}


@dataclass(frozen=True)
class ChapterVoteImport:
    """What an import did: votes read, newly stored, and already stored before."""

    path: Path
    votes: list[PreferenceVote]
    stored: int

    @property
    def already(self) -> int:
        """Votes of the file that were stored by an earlier import."""
        return len(self.votes) - self.stored


def _text(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise ValueError(f"'{key}' must be a non-empty string of at most 200 characters")
    return value


def _run_of(
    obj: Mapping[str, Any], side: str, task_id: str, runs: Sequence[Run], by_id: Mapping[str, Run]
) -> Run:
    run_id = _text(obj, f"run_{side}")
    if run_id is not None:
        run = by_id.get(run_id)
        if run is None:
            raise ValueError(f"run_{side} {run_id!r}: no such run of this pack in the store")
        if run.task_id != task_id:
            raise ValueError(f"run_{side} {run_id!r} is a run of task {run.task_id}, not {task_id}")
        return run
    harness = _text(obj, f"harness_{side}")
    if harness is None:
        raise ValueError(f"name run_{side}, or harness_{side} (with model_{side} if needed)")
    model = _text(obj, f"model_{side}")
    found = [
        r
        for r in runs
        if r.task_id == task_id and r.harness == harness and (model is None or r.model == model)
    ]
    if len(found) != 1:
        who = harness + (f" / {model}" if model else "")
        if not found:
            raise ValueError(f"{who} has no run of task {task_id} in the store")
        ids = ", ".join(sorted(r.id for r in found))
        raise ValueError(f"{who} has {len(found)} runs of task {task_id} ({ids}): give run_{side}")
    return found[0]


def _vote(
    obj: Any,
    *,
    pack_id: str,
    default_task: str | None,
    chapters: Mapping[str, list[str]],
    runs: Sequence[Run],
    by_id: Mapping[str, Run],
    annotator: str,
) -> PreferenceVote:
    """One line's vote (ValueError saying what is wrong)."""
    if not isinstance(obj, dict):
        raise ValueError(f"a vote is a JSON object, not {type(obj).__name__}")
    vote_id = _text(obj, "id")
    if vote_id is None:
        raise ValueError("'id' is required (the vote's id in this file)")
    task_id = _text(obj, "task") or default_task
    if task_id is None:
        raise ValueError("no task: give 'task' on the line or --task")
    if task_id not in chapters:
        known = ", ".join(sorted(chapters))
        raise ValueError(f"task {task_id!r} has no annotated chapters in this pack ({known})")
    order = chapters[task_id]
    chapter = _text(obj, "chapter_id")
    index = obj.get("chapter_index")
    if index is not None:
        if isinstance(index, bool) or not isinstance(index, int):
            raise ValueError("'chapter_index' must be an integer")
        if not 0 <= index < len(order):
            raise ValueError(
                f"chapter_index {index} is outside the task's {len(order)} chapters (0-based)"
            )
        if chapter is not None and chapter != order[index]:
            raise ValueError(f"chapter_index {index} is {order[index]!r}, not {chapter!r}")
        chapter = order[index]
    if chapter is None:
        raise ValueError("name the chapter: 'chapter_id', or 'chapter_index' (0-based)")
    if chapter not in order:
        raise ValueError(f"chapter {chapter!r} is not one of the task's ({', '.join(order)})")
    winner = obj.get("winner")
    if not isinstance(winner, str) or winner.lower() not in _WINNERS:
        raise ValueError(f"'winner' must be a, b or t (tie), not {winner!r}")
    left = obj.get("left", "a")
    if left not in ("a", "b"):
        raise ValueError(f"'left' must be a or b, not {left!r}")
    quality = obj.get("quality")
    if quality is not None and (
        isinstance(quality, bool) or not isinstance(quality, int) or not 1 <= quality <= 5
    ):
        raise ValueError(f"'quality' must be an integer from 1 to 5, not {quality!r}")
    run_a = _run_of(obj, "a", task_id, runs, by_id)
    run_b = _run_of(obj, "b", task_id, runs, by_id)
    if run_a.id == run_b.id:
        raise ValueError(f"both sides are run {run_a.id}: a vote compares two runs")
    digest = hashlib.sha256(json.dumps([pack_id, task_id, vote_id]).encode()).hexdigest()
    return PreferenceVote(
        id=f"chapter-vote-{digest[:32]}",
        pack_id=pack_id,
        task_id=task_id,
        run_a=run_a.id,
        run_b=run_b.id,
        left=left,
        winner=_WINNERS[winner.lower()],
        quality=quality,
        annotator=_text(obj, "annotator") or annotator,
        rater_kind=JudgeKind.HUMAN,
        chapter_id=chapter,
    )


def read_chapter_votes(
    path: Path,
    *,
    pack_id: str,
    chapters: Mapping[str, list[str]],
    runs: Sequence[Run],
    task: str | None = None,
    annotator: str = "sme",
) -> list[PreferenceVote]:
    """Every vote of a JSON Lines file, checked against the pack's tasks, chapters and runs.

    Args:
        path: The file.
        pack_id: The pack the runs belong to.
        chapters: Task id -> its annotated chapters' ids, in order.
        runs: The pack's runs.
        task: The task of lines that do not name one.
        annotator: The annotator of lines that do not name one.

    Raises:
        DataFileError: every problem found (file:line and what was expected); nothing is
            returned when there is any.
    """
    problems: list[Problem] = []
    votes: list[PreferenceVote] = []
    seen: dict[str, int] = {}
    by_id = {r.id: r for r in runs}
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise DataFileError([Problem(file=path, message=f"cannot read: {exc.strerror}")]) from None
    with handle:
        for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), 1):
            if len(problems) >= _MAX_PROBLEMS:
                problems.append(Problem(file=path, line=number, message="too many problems: stop"))
                break
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                problems.append(
                    Problem(file=path, line=number, message=f"longer than {MAX_LINE_BYTES} bytes")
                )
                # skip the rest of the overlong line
                while (more := handle.readline(MAX_LINE_BYTES + 1)) and not more.endswith(b"\n"):
                    pass
                continue
            if not raw.strip():
                continue
            if len(votes) + len(problems) >= MAX_VOTES:
                problems.append(
                    Problem(file=path, line=number, message=f"more than {MAX_VOTES} votes")
                )
                break
            try:
                obj = json.loads(raw)
            except (ValueError, UnicodeDecodeError) as exc:
                problems.append(Problem(file=path, line=number, message=f"not JSON: {exc}"))
                continue
            try:
                vote = _vote(
                    obj,
                    pack_id=pack_id,
                    default_task=task,
                    chapters=chapters,
                    runs=runs,
                    by_id=by_id,
                    annotator=annotator,
                )
            except ValueError as exc:
                problems.append(Problem(file=path, line=number, message=str(exc)))
                continue
            if vote.id in seen:
                problems.append(
                    Problem(
                        file=path,
                        line=number,
                        message=f"vote id {obj['id']!r} already on line {seen[vote.id]}",
                    )
                )
                continue
            seen[vote.id] = number
            votes.append(vote)
    if problems:
        raise DataFileError(problems)
    if not votes:
        raise DataFileError([Problem(file=path, message="no votes in the file")])
    return votes


def _annotated_chapters(loaded: LoadedPack) -> dict[str, list[str]]:
    """Task id -> its annotated chapters' ids, for every task of the pack that has them."""
    out = {}
    for t in loaded.pack.tasks:
        try:
            _dir, _task, gt = content_task(loaded, t.id)
        except LhbenchError:  # no annotated chapters (or no sources): not votable
            continue
        out[t.id] = [c.id for c in gt.chapters]
    return out


def import_chapter_votes(
    store: Store,
    settings: Settings,
    *,
    pack: str,
    path: Path,
    task: str | None = None,
    annotator: str = "sme",
) -> ChapterVoteImport:
    """Read a file of chapter-level human votes (see module) and store them.

    Args:
        store: Where the votes go (the runs must be there).
        settings: Settings (pack paths).
        pack: Pack directory, bundled name or id.
        path: The JSON Lines file.
        task: Task of lines that name none (default: the pack's only annotated task).
        annotator: Annotator of lines that name none.

    Raises:
        DataFileError: a problem in the file (nothing stored).
        ConfigError: the pack has no annotated chapters, or the task is not one of them.
    """
    loaded = resolve_pack(pack, settings, store)
    chapters = _annotated_chapters(loaded)
    if not chapters:
        raise ConfigError(f"{loaded.pack.id}: no task has annotated chapters to vote on")
    if task is None and len(chapters) == 1:
        task = next(iter(chapters))
    if task is not None and task not in chapters:
        raise ConfigError(
            f"{loaded.pack.id}: task {task!r} has no annotated chapters "
            f"(tasks with them: {', '.join(sorted(chapters))})"
        )
    runs = store.list_runs(pack_id=loaded.pack.id)
    votes = read_chapter_votes(
        path, pack_id=loaded.pack.id, chapters=chapters, runs=runs, task=task, annotator=annotator
    )
    return ChapterVoteImport(path=path, votes=votes, stored=store.save_votes(votes))
