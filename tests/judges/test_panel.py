import asyncio
import statistics

import pytest

from lhbench.judges import JudgePanel, RubricJudge
from lhbench.models import ModelPool
from lhbench.schema import GradeStatus
from lhbench.store import Store
from lhbench.testing import ModelStub, hashed_scores, rubric_judge_script
from lhbench.testing.stub import StubRequest
from tests.judges.helpers import (
    JUDGE_NAMES,
    WEIGHTS,
    evidence,
    grade_job,
    process_tier,
    seed_runs,
    stub_specs,
)


def expected_dims(model: str, run_id: str) -> dict[str, int]:
    req = StubRequest(
        index=0, model=model, body={"messages": [{"role": "user", "content": f"RUN-MARK:{run_id}"}]}
    )
    return {d: hashed_scores(model, d, req) for d in WEIGHTS}


def test_panel_of_three_stub_judges_matches_hand_computed_values(store: Store) -> None:
    runs = seed_runs(store, 6)
    rubric, tier = process_tier()
    with ModelStub(rubric_judge_script()) as stub:

        async def go() -> None:
            pool = ModelPool(store)
            async with pool.session():
                judges = [RubricJudge(pool.get(s), s) for s in stub_specs(stub.base_url)]
                summary = await grade_job(store, runs, rubric, tier, judges)
                assert (summary.planned, summary.done, summary.failed) == (18, 18, 0)
                # the panel API gives the same numbers for one run, from the cache (no calls)
                before = stub.count
                panel = JudgePanel(judges)
                result = await panel.grade(evidence(store, runs[0]), rubric, tier)
                assert stub.count == before
                tiers = [
                    sum(WEIGHTS[d] * s for d, s in expected_dims(n, runs[0].id).items())
                    for n in JUDGE_NAMES
                ]
                assert result.mean == pytest.approx(sum(tiers) / 3)
                assert result.variance == pytest.approx(statistics.pvariance(tiers))
                assert panel.families == ["anthropic", "google", "openai"]

        asyncio.run(go())
        assert stub.count == 18
    for run in runs:
        grades = store.list_grades(run_id=run.id)
        assert sorted(g.judge.model for g in grades) == [f"openai:{n}" for n in JUDGE_NAMES]
        for g in grades:
            dims = expected_dims(g.judge.model.removeprefix("openai:"), run.id)
            assert g.status == GradeStatus.OK
            assert g.score_map() == dims
            assert g.tier_score == pytest.approx(sum(WEIGHTS[d] * s for d, s in dims.items()))
            assert g.judge.family in ("anthropic", "google", "openai")
            assert g.judge.settings["temperature"] == 0.0 and g.judge.prompt_version == "rubric-v1"
            assert g.usage.requests == 1 and g.usage.input_tokens > 0
            assert all(s.matched_level for s in g.scores)


def test_rerun_makes_no_requests_and_cache_returns_identical_grades(store: Store) -> None:
    runs = seed_runs(store, 3)
    rubric, tier = process_tier()
    with ModelStub(rubric_judge_script()) as stub:

        async def job() -> tuple[int, int]:
            pool = ModelPool(store)
            async with pool.session():
                judges = [RubricJudge(pool.get(s), s) for s in stub_specs(stub.base_url)]
                s = await grade_job(store, runs, rubric, tier, judges)
                return s.done, s.skipped

        assert asyncio.run(job()) == (9, 0)
        assert asyncio.run(job()) == (0, 9)
        assert stub.count == 9

        async def regrade(use_cache: bool) -> list[dict[str, int | None]]:
            pool = ModelPool(store if use_cache else None)
            async with pool.session():
                spec = stub_specs(stub.base_url)[0]
                judge = RubricJudge(pool.get(spec), spec)
                grades = [await judge.grade(evidence(store, r), rubric, tier) for r in runs]
                return [g.score_map() for g in grades]

        first = [
            g.score_map()
            for r in runs
            for g in store.list_grades(run_id=r.id)
            if g.judge.model.endswith(JUDGE_NAMES[0])
        ]
        assert asyncio.run(regrade(True)) == first
        assert stub.count == 9  # answered from the response cache
        assert asyncio.run(regrade(False)) == first
        assert stub.count == 12  # --no-cache: real calls


def test_repeats_are_separate_calls(store: Store) -> None:
    runs = seed_runs(store, 2)
    rubric, tier = process_tier()
    with ModelStub(rubric_judge_script()) as stub:

        async def job() -> int:
            pool = ModelPool(store)
            async with pool.session():
                spec = stub_specs(stub.base_url)[:1]
                judges = [RubricJudge(pool.get(s), s) for s in spec]
                return (await grade_job(store, runs, rubric, tier, judges, repeats=3)).done

        assert asyncio.run(job()) == 6
        assert stub.count == 6
    assert sorted(g.repeat for g in store.list_grades(run_id=runs[0].id)) == [0, 1, 2]
