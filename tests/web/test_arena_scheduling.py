import random
from collections import Counter
from pathlib import Path

from lhbench.store import Store
from lhbench.web.arena import candidate_pairs, next_comparison, record_vote
from tests.factories import make_run


def test_pairs_are_same_task_different_groups(tmp_path: Path) -> None:
    runs = [
        make_run("a1", task_id="t1", harness="x"),
        make_run("b1", task_id="t1", harness="y"),
        make_run("c1", task_id="t1", harness="x"),
        make_run("a2", task_id="t2", harness="x"),
    ]
    pairs = candidate_pairs(runs)
    assert {(p[2], p[3]) for p in pairs} == {("a1", "b1"), ("b1", "c1")}


def test_fewest_votes_first_and_no_repeat_until_all_seen(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'a.db'}")
    for t in ("t1", "t2"):
        for h in ("x", "y", "z"):
            store.save_run(make_run(f"{h}-{t}", task_id=t, harness=h))
    rng = random.Random(1)
    all_pairs = {tuple(sorted((p[2], p[3]))) for p in candidate_pairs(store.list_runs())}
    assert len(all_pairs) == 6
    # another annotator has already voted on one pair: it comes last for ann
    comp = next_comparison(store, "bob", rng=rng)
    assert comp is not None
    record_vote(store, comp.token, "bob", "left", 4)
    bobs = tuple(sorted((comp.left_run, comp.right_run)))
    seen = []
    for _ in range(6):
        c = next_comparison(store, "ann", rng=rng)
        assert c is not None
        record_vote(store, c.token, "ann", "tie", 3)
        seen.append(tuple(sorted((c.left_run, c.right_run))))
    assert len(set(seen)) == 6 and set(seen) == all_pairs  # every pair once before any repeat
    assert seen[-1] == bobs  # the pair that already had a vote came last
    # the next round starts over
    c = next_comparison(store, "ann", rng=rng)
    assert c is not None and tuple(sorted((c.left_run, c.right_run))) in all_pairs
    # every vote records which run was shown left, as its comparison did, and the winner
    # follows from it: bob chose "left" (the left run won), ann chose ties
    votes = store.list_votes()
    assert len(votes) == 7
    for v in votes:
        [comp] = [c for c in store.list_comparisons() if c.vote_id == v.id]
        assert (v.run_a, v.run_b, v.left) == (comp.run_a, comp.run_b, comp.left)
        assert v.winner == (comp.left if v.annotator == "bob" else "tie")
    # the side shown left is drawn at random: with this seed both sides occur
    assert Counter(v.left for v in votes) == Counter(c.left for c in store.list_comparisons()[:7])
    assert set(Counter(v.left for v in votes)) == {"a", "b"}
    store.close()
