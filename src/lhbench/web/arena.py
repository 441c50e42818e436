"""The preference arena: which pair an annotator sees next, what each side shows, the vote.

Pairs are two completed runs of the same task by different agents (harness, model). The
next pair is one with the fewest votes so far that this annotator has not yet decided
(voted or skipped); once they have decided every pair, a new round starts. Which run is
shown left is random and recorded. The page only ever gets an opaque token.

Both sides show the same named set: the files the task declares (``arena.artifacts``
paths or globs; every file the runs left when it declares none) found in either run,
and the final answer when declared. Harness-internal files (lhbench's ``manifest.json``,
hidden files, listings without content) never appear: they would say which harness ran.
"""

from __future__ import annotations

import hashlib
import random
import re
import secrets
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from lhbench.judges import candidate_pairs
from lhbench.schema import Artifact, PreferenceVote, RunStatus, Task
from lhbench.store import ComparisonRecord, Store

__all__ = [
    "CHOICES",
    "HARNESS_INTERNAL",
    "ArenaSide",
    "Comparison",
    "Progress",
    "artifact_token",
    "candidate_pairs",
    "current_comparison",
    "get_comparison",
    "match_glob",
    "next_comparison",
    "progress",
    "record_vote",
    "side_sets",
    "skip_comparison",
]

# what a vote can say; "both_bad" is stored as a tie (Chatbot Arena's "tie (bothbad)")
CHOICES = ("left", "right", "tie", "both_bad")
# files a harness writes for itself: they name the harness, so the arena never shows them
HARNESS_INTERNAL = frozenset({"manifest.json"})


@dataclass(frozen=True)
class Comparison:
    """What the comparison page needs: the token, the task, and each side's run (server-side)."""

    token: str
    pack_id: str
    task_id: str
    left_run: str
    right_run: str


def _comparison(row: ComparisonRecord) -> Comparison:
    return Comparison(row.token, row.pack_id, row.task_id, row.left_run, row.right_run)


def _pairs(store: Store) -> list[tuple[str, str, str, str]]:
    return candidate_pairs(store.list_runs(status=RunStatus.COMPLETED.value))


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def next_comparison(
    store: Store, annotator: str, *, rng: random.Random | None = None
) -> Comparison | None:
    """Choose and record the next pair for this annotator (None when nothing to compare).

    This writes a comparison: call it only from a POST.
    """
    rng = rng or random.Random()
    pairs = _pairs(store)
    if not pairs:
        return None
    votes = Counter(_pair(v.run_a, v.run_b) for v in store.list_votes(rater_kind="human"))
    seen = Counter(_pair(c.run_a, c.run_b) for c in store.voted_comparisons(annotator))
    rounds = min(seen.get((a, b), 0) for _, _, a, b in pairs)
    unseen = [p for p in pairs if seen.get((p[2], p[3]), 0) == rounds]
    fewest = min(votes.get((a, b), 0) for _, _, a, b in unseen)
    choices = [p for p in unseen if votes.get((p[2], p[3]), 0) == fewest]
    pack, task, a, b = rng.choice(choices)
    left = rng.choice(["a", "b"])
    token = secrets.token_urlsafe(24)
    store.add_comparison(
        token=token, annotator=annotator, pack_id=pack, task_id=task, run_a=a, run_b=b, left=left
    )
    left_run, right_run = (a, b) if left == "a" else (b, a)
    return Comparison(token, pack, task, left_run, right_run)


def current_comparison(store: Store, annotator: str) -> Comparison | None:
    """The annotator's pair waiting for a decision (read only), or None."""
    row = store.open_comparison(annotator)
    return None if row is None else _comparison(row)


@dataclass(frozen=True)
class Progress:
    """Where an annotator stands: pairs decided in this round, of all pairs; the round."""

    done: int
    total: int
    round: int


def progress(store: Store, annotator: str) -> Progress:
    """How far the annotator is through the current round of pairs."""
    pairs = [(a, b) for _, _, a, b in _pairs(store)]
    if not pairs:
        return Progress(0, 0, 1)
    seen = Counter(_pair(c.run_a, c.run_b) for c in store.voted_comparisons(annotator))
    rounds = min(seen.get(p, 0) for p in pairs)
    done = sum(1 for p in pairs if seen.get(p, 0) > rounds)
    return Progress(done, len(pairs), rounds + 1)


def get_comparison(store: Store, token: str, annotator: str) -> ComparisonRecord | None:
    """The comparison behind a token, if it is this annotator's."""
    row = store.get_comparison(token)
    return row if row is not None and row.annotator == annotator else None


def record_vote(
    store: Store, token: str, annotator: str, choice: str, quality: int | None
) -> PreferenceVote | None:
    """Store the vote for a comparison, once (None when it is not this annotator's open pair).

    ``choice`` is left, right, tie or both_bad (a tie without a quality rating).
    """
    if choice not in CHOICES:
        raise ValueError(f"choice must be one of {CHOICES}, not {choice!r}")
    row = get_comparison(store, token, annotator)
    if row is None or row.decided:
        return None
    if choice in ("tie", "both_bad"):
        winner = "tie"
    else:
        winner = "a" if (choice == "left") == (row.left == "a") else "b"
    vote = PreferenceVote(
        id=f"vote-{hashlib.sha256(token.encode()).hexdigest()[:24]}",
        pack_id=row.pack_id,
        task_id=row.task_id,
        run_a=row.run_a,
        run_b=row.run_b,
        left=row.left,
        winner=winner,
        quality=None if choice == "both_bad" else quality,
        annotator=annotator,
    )
    return vote if store.record_arena_vote(token, annotator, choice, vote) else None


def skip_comparison(store: Store, token: str, annotator: str) -> bool:
    """Skip a pair (no vote); False when it is not this annotator's open pair."""
    return store.skip_comparison(token, annotator)


def artifact_token(secret: str, comparison_token: str, side: str, name: str) -> str:
    """An opaque, unguessable name for one artifact of one side of a comparison."""
    return hashlib.sha256(f"{secret}|{comparison_token}|{side}|{name}".encode()).hexdigest()[:32]


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def match_glob(pattern: str, name: str) -> bool:
    """Whether a workspace path matches a path or glob (``*`` in a segment, ``**`` across)."""
    pattern = pattern.strip()
    if pattern.startswith("./"):
        pattern = pattern[2:]
    return _glob(pattern).match(name) is not None


def _internal(a: Artifact) -> bool:
    parts = a.name.split("/")
    return (
        a.name in HARNESS_INTERNAL
        or any(p.startswith(".") for p in parts)
        or a.status == "omitted"
        or a.name.endswith("/")
    )


@dataclass(frozen=True)
class ArenaSide:
    """One named item of a comparison: what each side has under that name (None: nothing)."""

    name: str
    left: Artifact | None
    right: Artifact | None


def side_sets(
    task: Task | None, left: Iterable[Artifact], right: Iterable[Artifact]
) -> tuple[list[ArenaSide], bool]:
    """The named set both sides show, and whether the final answers are compared too."""
    lefts = {a.name: a for a in left if not _internal(a)}
    rights = {a.name: a for a in right if not _internal(a)}
    spec = task.arena if task is not None else None
    names = set(lefts) | set(rights)
    if spec is not None:
        names = {n for n in names if any(match_glob(p, n) for p in spec.artifacts)}
        # a declared path neither run produced is still named, on both sides
        names |= {p for p in spec.artifacts if not any(c in p for c in "*?")}
        final = spec.final_answer
    else:
        final = True
    sides = [ArenaSide(n, lefts.get(n), rights.get(n)) for n in sorted(names)]
    # images first: a reviewer looks at a design before its code
    sides.sort(
        key=lambda s: (
            not any(x is not None and x.media_type.startswith("image/") for x in (s.left, s.right))
        )
    )
    return sides, final
