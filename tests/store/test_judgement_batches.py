"""Votes as integer columns for the Elo fit, and the response cache read and written in bulk."""

from __future__ import annotations

import pytest

from lhbench.models import CacheRow, Reply
from lhbench.schema import JudgeKind, PreferenceVote
from lhbench.stats import bradley_terry_elo
from lhbench.stats.elo import VoteArrays
from lhbench.store import Store


def vote(i: int, a: str, b: str, winner: str | None, rater=JudgeKind.HUMAN, task="t1"):
    failed = winner is None
    return PreferenceVote(
        id=f"v{i}",
        pack_id="p",
        task_id=task,
        run_a=a,
        run_b=b,
        left="a",
        winner=winner,
        annotator="someone",
        rater_kind=rater,
        status="parse_error" if failed else "ok",
        error="no answer" if failed else None,
    )


def test_vote_columns_are_one_query_of_decided_votes(store: Store) -> None:
    votes = [
        vote(0, "r1", "r2", "a"),
        vote(1, "r2", "r3", "tie"),
        vote(2, "r3", "r1", "b"),
        vote(3, "r1", "r3", None),  # failed comparison: not a vote for Elo
        vote(4, "r1", "r2", "b", rater=JudgeKind.LLM),
        vote(5, "r4", "r1", "a", task="t2"),
    ]
    store.save_votes(votes)
    cols = store.vote_columns()
    assert len(cols) == 5 and cols.runs == ["r1", "r2", "r3", "r4"]
    triples = {
        (cols.runs[a], cols.runs[b], ["a", "tie", "b"][o])
        for a, b, o in zip(cols.a, cols.b, cols.outcome, strict=True)
    }
    assert triples == {
        ("r1", "r2", "a"),
        ("r2", "r3", "tie"),
        ("r3", "r1", "b"),
        ("r1", "r2", "b"),
        ("r4", "r1", "a"),
    }
    human = store.vote_columns(rater_kind="human")
    assert len(human) == 4 and set(human.raters) == {"human"}
    assert len(store.vote_columns(task_id="t2")) == 1
    assert len(store.vote_columns(run_ids=["r1", "r2"])) == 2
    assert len(store.vote_columns(rater_kind="nobody")) == 0
    # the columns are what the Elo fit reads, with the same result as the vote tuples
    arrays = VoteArrays(cols.runs, cols.a, cols.b, cols.outcome)
    by_arrays = bradley_terry_elo(arrays, n_bootstrap=20, seed=1)
    by_tuples = bradley_terry_elo(sorted(triples), n_bootstrap=0)
    assert by_arrays.ratings == pytest.approx(by_tuples.ratings, abs=1e-9)


def test_vote_codes_are_numpys_unique_and_inverse() -> None:
    """The dict coding of run ids, raters and tasks equals ``np.unique(return_inverse)``."""
    import numpy as np

    from lhbench._codes import sorted_codes

    rng = np.random.default_rng(7)
    pool = ["run-b", "run-a", "Run-Z", "run-10", "run-9", "ä-run", "", "run-a ", "日本"]
    values = [pool[i] for i in rng.integers(0, len(pool), 500)]
    distinct, codes = sorted_codes(values, np.int32)
    want, inverse = np.unique(np.array(values, dtype=object), return_inverse=True)
    assert distinct == [str(v) for v in want] and codes.dtype == np.int32
    assert codes.tolist() == inverse.tolist()
    assert [distinct[c] for c in codes] == values
    empty, none = sorted_codes([], np.int8)
    assert empty == [] and none.dtype == np.int8 and none.size == 0


def test_cache_rows_are_written_with_the_votes_in_one_transaction(store: Store) -> None:
    rows = [CacheRow(f"k{i}", "openai:j", Reply(f'{{"i": {i}}}').to_doc()) for i in range(3)]
    store.save_votes([vote(0, "r1", "r2", "a")], cache=rows)
    assert store.cached_response_count() == 3
    got = store.get_cached_responses(["k0", "k2", "missing"])
    assert set(got) == {"k0", "k2"} and Reply.from_doc(got["k2"]) == Reply('{"i": 2}')
    # a cache row that cannot be written (not JSON) fails the batch: its votes are not kept
    bad = [CacheRow("k8", "openai:j", {"v": 1}), CacheRow("k9", "openai:j", {"x": {1, 2}})]
    with pytest.raises(Exception):  # noqa: B017 - the driver's serialisation error
        store.save_votes([vote(1, "r1", "r3", "a")], cache=bad)
    assert store.cached_response_count() == 3 and len(store.list_votes()) == 1
