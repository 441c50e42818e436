"""The preference arena: which pair an annotator sees next, and recording the vote.

Pairs are two runs of the same task (from different harness/model groups). The next pair
is one with the fewest votes so far that this annotator has not yet seen; once they have
seen every pair, they start over. Which run is shown left is random and recorded. The
page only ever gets an opaque per-comparison token.
"""

from __future__ import annotations

import hashlib
import random
import secrets
from collections import Counter
from dataclasses import dataclass

from lhbench.judges import candidate_pairs
from lhbench.schema import Artifact, PreferenceVote
from lhbench.store import ComparisonRecord, Store

__all__ = ["Comparison", "artifact_token", "candidate_pairs", "next_comparison", "record_vote"]


@dataclass(frozen=True)
class Comparison:
    """What the comparison page needs: the token, the task, and each side's run (server-side)."""

    token: str
    pack_id: str
    task_id: str
    left_run: str
    right_run: str


def next_comparison(
    store: Store, annotator: str, *, rng: random.Random | None = None
) -> Comparison | None:
    """The next pair for this annotator (None when there is nothing to compare)."""
    rng = rng or random.Random()
    pairs = candidate_pairs([r for r in store.list_runs() if r.status.value != "failed"])
    if not pairs:
        return None
    votes = Counter(tuple(sorted((v.run_a, v.run_b))) for v in store.list_votes(rater_kind="human"))
    seen = Counter(tuple(sorted((c.run_a, c.run_b))) for c in store.voted_comparisons(annotator))
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


def get_comparison(store: Store, token: str, annotator: str) -> ComparisonRecord | None:
    """The comparison behind a token, if it is this annotator's."""
    row = store.get_comparison(token)
    return row if row is not None and row.annotator == annotator else None


def record_vote(
    store: Store, token: str, annotator: str, choice: str, quality: int | None
) -> PreferenceVote | None:
    """Store the vote for a comparison (once); ``choice`` is left, right or tie."""
    row = store.get_comparison(token)
    if row is None or row.annotator != annotator or not store.mark_voted(token, annotator):
        return None
    if choice == "tie":
        winner = "tie"
    else:
        shown_left_is_a = row.left == "a"
        winner = "a" if (choice == "left") == shown_left_is_a else "b"
    vote = PreferenceVote(
        id=f"vote-{hashlib.sha256(token.encode()).hexdigest()[:24]}",
        pack_id=row.pack_id,
        task_id=row.task_id,
        run_a=row.run_a,
        run_b=row.run_b,
        left=row.left,
        winner=winner,
        quality=quality,
        annotator=annotator,
    )
    store.save_vote(vote)
    return vote


def artifact_token(secret: str, comparison_token: str, side: str, name: str) -> str:
    """An opaque, unguessable name for one artifact of one side of a comparison."""
    return hashlib.sha256(f"{secret}|{comparison_token}|{side}|{name}".encode()).hexdigest()[:32]


def side_artifacts(store: Store, run_id: str) -> list[Artifact]:
    """The artifacts a comparison shows for a run (images first, then text)."""
    arts = store.list_artifacts(run_id)
    return sorted(arts, key=lambda a: (not a.media_type.startswith("image/"), a.name))
