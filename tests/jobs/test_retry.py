"""Final vs retryable: transport failures are asked again; answers that do not parse are kept."""

import socket
from pathlib import Path
from typing import Any

from lhbench.api import GradeOutcome, grade
from lhbench.config import Settings
from lhbench.schema import GradeStatus
from lhbench.store import Store
from lhbench.testing import (
    ModelStub,
    StubReply,
    StubRequest,
    hashed_scale_scores,
    rubric_judge_script,
)
from tests.judges.helpers import seed_runs


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _settings(tmp_path: Path, url: str) -> Settings:
    quick = {"max_retries": 1, "backoff_s": 0.01, "backoff_max_s": 0.02, "timeout_s": 5}
    return Settings(
        home=tmp_path / "home",
        models={"j": {"model": "openai:judge", "base_url": url, **quick}},
    )


def _grade(store: Store, settings: Settings, **kw: Any) -> GradeOutcome:
    return grade(
        "figma-mini", rubric="figma-to-code", panel=["j"], store=store, settings=settings, **kw
    )


def test_dead_endpoint_then_live_one_ends_with_every_grade_ok_and_none_duplicated(
    store: Store, tmp_path: Path
) -> None:
    seed_runs(store, 4)
    port = _free_port()
    settings = _settings(tmp_path, f"http://127.0.0.1:{port}/v1")
    dead = _grade(store, settings)
    assert (dead.summary.done, dead.summary.failed) == (0, 4)
    assert dead.summary.failures == {"connection error": 4}
    grades = store.list_grades()
    assert len(grades) == 4 and all(g.status == GradeStatus.ERROR and g.retryable for g in grades)
    with ModelStub(rubric_judge_script(hashed_scale_scores), port=port) as stub:
        live = _grade(store, settings)
        assert (live.summary.retried, live.summary.done, live.summary.failed) == (4, 4, 0)
        assert stub.count == 4
        again = _grade(store, settings)
        assert again.summary.skipped == 4 and stub.count == 4
    grades = store.list_grades()
    assert len(grades) == 4 and len({g.key for g in grades}) == 4
    assert all(g.status == GradeStatus.OK and not g.retryable for g in grades)


def test_a_parse_failure_stays_an_error_unless_retry_errors(store: Store, tmp_path: Path) -> None:
    seed_runs(store, 2)
    good = rubric_judge_script(hashed_scale_scores)
    mode = {"bad": True}

    def script(req: StubRequest) -> StubReply:
        if mode["bad"]:
            return StubReply(content="I would give it a four, roughly.")  # never structured
        return good(req)

    with ModelStub(script) as stub:
        settings = _settings(tmp_path, stub.base_url)
        first = _grade(store, settings)
        assert first.summary.failed == 2
        assert set(first.summary.failures) == {"answer did not fit the rubric (parse error)"}
        parse_errors = store.list_grades(status="parse_error")
        assert len(parse_errors) == 2 and all(
            g.raw_output and not g.retryable for g in parse_errors
        )
        asked = stub.count
        mode["bad"] = False
        kept = _grade(store, settings)
        assert kept.summary.kept_failed == 2 and kept.summary.ran == 0 and stub.count == asked
        # --retry-errors re-asks, bypassing the cached bad answers (the stub sees new requests)
        retried = _grade(store, settings, retry_errors=True)
        assert (retried.summary.retried, retried.summary.done) == (2, 2)
        assert stub.count > asked
    grades = store.list_grades()
    assert len(grades) == 2 and all(g.status == GradeStatus.OK for g in grades)


def test_failed_pairwise_comparisons_are_stored_with_their_reason(
    store: Store, tmp_path: Path
) -> None:
    seed_runs(store, 6)  # one cross-harness pair per task
    port = _free_port()
    settings = _settings(tmp_path, f"http://127.0.0.1:{port}/v1")
    res = _grade(store, settings, pairwise=True)
    assert (res.summary.planned, res.summary.failed) == (3, 3)
    failed = store.list_votes(include_failed=True)
    assert len(failed) == 3 and store.list_votes() == []
    assert all(v.winner is None and v.retryable and "Connection" in (v.error or "") for v in failed)

    def prefers_second(req: StubRequest) -> StubReply:
        return StubReply.call("final_result", {"reasoning": "r", "preferred": "second"})

    with ModelStub(prefers_second, port=port):
        again = _grade(store, settings, pairwise=True)
    assert (again.summary.retried, again.summary.done) == (3, 3)
    votes = store.list_votes(rater_kind="llm")
    assert len(votes) == 3 and {v.winner for v in votes} == {"tie"}  # second in both orders
    assert len(store.list_votes(include_failed=True)) == 3
