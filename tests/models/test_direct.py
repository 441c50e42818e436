"""The direct path of single-shot judges: wire protocols, cache keys, batched cache, failures.

Every test talks to the model stub (a real HTTP server on 127.0.0.1) over lhbench's own
client, in each of the three wire protocols.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from lhbench.judges import RubricJudge
from lhbench.judges.structured import ask_structured
from lhbench.models import (
    Ask,
    ModelPool,
    OutputSchema,
    Reply,
    ReplyCache,
    WireTransport,
    current_ledger,
    request_digest,
    resolve_model,
)
from lhbench.models.replies import CacheRow
from lhbench.models.wire import WIRES
from lhbench.schema import GradeStatus
from lhbench.store import Store
from lhbench.testing import ModelStub, StubReply, StubRequest, rubric_judge_script
from tests.judges.helpers import evidence, process_tier, seed_runs


class Answer(BaseModel):
    """A test answer."""

    verdict: str
    confidence: float


ANSWER = OutputSchema.of(Answer, "final_result")


def spec_for(provider: str, stub: ModelStub, **kw: Any):
    host = stub.base_url.removesuffix("/v1")
    url = stub.base_url if provider == "openai" else host
    return resolve_model(
        "j",
        {
            "j": {
                "model": f"{provider}:judge-{provider}@{url}",
                "backoff_s": 0.01,
                "backoff_max_s": 0.02,
                **kw,
            }
        },
    )


class MemoryCache:
    """A batched cache in memory that counts its queries (what the Store implements)."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.queries: list[int] = []
        self.writes: list[int] = []

    def get_cached_responses(self, keys):
        self.queries.append(len(keys))
        return {k: self.rows[k] for k in keys if k in self.rows}

    def put_cached_responses(self, rows):
        self.writes.append(len(rows))
        new = 0
        for r in rows:
            if r.key not in self.rows:
                self.rows[r.key] = r.response
                new += 1
        return new


def _script(answer: dict[str, Any] | str) -> Any:
    def script(req: StubRequest) -> StubReply:
        assert req.tool_names == ["final_result"], req.tool_names
        return StubReply.call("final_result", answer)

    return script


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google-gla"])
def test_each_wire_protocol_gets_a_validated_answer_from_the_stub(provider: str) -> None:
    with ModelStub(_script({"verdict": "PASS", "confidence": 0.75})) as stub:
        spec = spec_for(provider, stub)

        async def go():
            pool = ModelPool(None)
            async with pool.session():
                client = pool.get(spec).direct
                assert isinstance(client.transport, WireTransport)
                ask = Ask("Decide.", ("The task and the trajectory.",), ANSWER)
                with current_ledger() as ledger:
                    out = await ask_structured(client, ask, Answer, retries=1)
                return out, ledger

        out, ledger = asyncio.run(go())
        assert out.answer == Answer(verdict="PASS", confidence=0.75)
        assert out.failure is None and out.asks == 1
        assert ledger.requests == 1 and ledger.input_tokens > 0
        [logged] = stub.requests
    # the request reached the provider's route as that provider's body
    body = logged.body
    assert "The task and the trajectory." in json.dumps(body)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google-gla"])
def test_a_bad_answer_is_re_asked_with_the_reason_then_a_parse_failure(provider: str) -> None:
    seen: list[StubRequest] = []

    def script(req: StubRequest) -> StubReply:
        seen.append(req)
        return StubReply.call("final_result", {"verdict": "PASS", "confidence": "very"})

    with ModelStub(script) as stub:
        spec = spec_for(provider, stub)

        async def go():
            pool = ModelPool(None)
            async with pool.session():
                ask = Ask("Decide.", ("trajectory",), ANSWER)
                return await ask_structured(pool.get(spec).direct, ask, Answer, retries=2)

        out = asyncio.run(go())
    assert out.answer is None and out.failure is None and out.asks == 3
    assert "confidence" in (out.problem or "") and "Exceeded maximum retries" in (out.problem or "")
    assert '"very"' in out.raw("final_result")
    # each re-ask carries the earlier answer and what was wrong with it
    assert len(seen) == 3
    assert "do not fit its schema" in seen[-1].text() or "do not fit its schema" in json.dumps(
        seen[-1].body
    )


def test_tool_arguments_that_are_not_json_are_never_a_score() -> None:
    with ModelStub(_script('{"verdict": "PASS", "confidence": 0.9')) as stub:  # cut off
        spec = spec_for("openai", stub)

        async def go():
            pool = ModelPool(None)
            async with pool.session():
                ask = Ask("Decide.", ("trajectory",), ANSWER)
                return await ask_structured(pool.get(spec).direct, ask, Answer, retries=1)

        out = asyncio.run(go())
    assert out.answer is None and out.failure is None
    assert "Invalid JSON" in (out.problem or "") or "json" in (out.problem or "").lower()


def test_a_reply_without_the_tool_call_is_re_asked_not_read_from_text() -> None:
    def script(req: StubRequest) -> StubReply:
        return StubReply(content='{"verdict": "PASS", "confidence": 1.0}')

    with ModelStub(script) as stub:
        spec = spec_for("openai", stub)

        async def go():
            pool = ModelPool(None)
            async with pool.session():
                ask = Ask("Decide.", ("trajectory",), ANSWER)
                return await ask_structured(pool.get(spec).direct, ask, Answer, retries=1)

        out = asyncio.run(go())
        assert stub.count == 2
    assert out.answer is None and "did not call the final_result tool" in (out.problem or "")


@pytest.mark.parametrize("fault", ["429", "500", "truncated"])
def test_a_call_that_never_gets_an_answer_is_a_failure_after_retries(fault: str) -> None:
    def script(req: StubRequest) -> StubReply:
        return StubReply(fault=fault)  # type: ignore[arg-type]

    with ModelStub(script) as stub:
        spec = spec_for("openai", stub, max_retries=2)

        async def go():
            pool = ModelPool(None)
            async with pool.session():
                ask = Ask("Decide.", ("trajectory",), ANSWER)
                with current_ledger() as ledger:
                    out = await ask_structured(pool.get(spec).direct, ask, Answer, retries=2)
                return out, ledger

        out, ledger = asyncio.run(go())
        assert stub.count == 3  # one call and two retries, then it gives up
    assert out.answer is None and out.failure is not None
    assert ledger.requests == 3


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"<html>502 Bad Gateway</html>", "not JSON"),
        (b"[1, 2, 3]", "not a JSON object"),
        (b'{"error": {"message": "overloaded"}}', "error in a 200"),
        (b'{"choices": []}', "no choices"),
    ],
)
def test_undecodable_200_bodies_are_transport_errors(body: bytes, why: str) -> None:
    from pydantic_ai.exceptions import ModelAPIError

    with pytest.raises(ModelAPIError, match=why):
        WIRES["openai"].decode(body, "m")


def test_cache_key_is_the_request_bytes_endpoint_and_salt() -> None:
    spec_a = resolve_model("a", {"a": {"model": "openai:j@http://127.0.0.1:1/v1"}})
    spec_b = resolve_model("b", {"b": {"model": "openai:j@http://127.0.0.1:2/v1"}})
    ask = Ask("Decide.", ("trajectory",), ANSWER)
    body = WIRES["openai"].encode(spec_a, ask)
    assert body == WIRES["openai"].encode(spec_a, Ask("Decide.", ("trajectory",), ANSWER))
    k = request_digest("", spec_a.base_url, body)
    assert k != request_digest("repeat=1", spec_a.base_url, body)
    assert k != request_digest("", spec_b.base_url, body)
    other = WIRES["openai"].encode(spec_a, Ask("Decide.", ("trajectory!",), ANSWER))
    assert k != request_digest("", spec_a.base_url, other)
    # the salt and the endpoint cannot be confused with body bytes
    assert request_digest("ab", "c", b"") != request_digest("a", "bc", b"")


def test_reply_cache_looks_a_plan_up_in_one_query_and_writes_in_one_batch() -> None:
    store = MemoryCache()
    cache = ReplyCache(store)
    r = Reply('{"verdict": "PASS", "confidence": 1}', input_tokens=3)
    store.rows["k1"] = r.to_doc()
    store.rows["k2"] = {"not": "a reply"}  # another kind of cache row is not a reply
    assert cache.preload(["k1", "k2", "k3", "k1"]) == 1
    assert store.queries == [3]
    # lookups of preloaded keys make no query
    assert asyncio.run(cache.lookup("k1")) == r
    assert asyncio.run(cache.lookup("k2")) is None
    assert asyncio.run(cache.lookup("k3")) is None
    assert store.queries == [3]
    # a key no preload saw costs one query
    assert asyncio.run(cache.lookup("k4")) is None
    assert store.queries == [3, 1]
    for k in ("k5", "k6", "k5"):
        cache.put(k, "openai:j", Reply("{}"))
    assert cache.pending == 2 and asyncio.run(cache.lookup("k5")) == Reply("{}")
    assert cache.flush() == 2 and store.writes == [2] and cache.pending == 0


def test_a_poisoned_cache_row_is_not_a_reply() -> None:
    for doc in ({"v": 2, "tool_args": "{}"}, {"tool_args": "{}"}, {}):
        assert Reply.from_doc(doc) is None
    with pytest.raises((TypeError, ValueError)):
        Reply.from_doc({"v": 1, "tool_args": None, "input_tokens": "lots"})


def test_grade_job_preloads_keys_in_one_query_and_writes_cache_rows_with_grades(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Second run of the same grades: every answer comes from the cache, no request is made."""
    from lhbench.jobs import GradeJob, run_job

    store = Store.open(f"sqlite:///{tmp_path / 'g.db'}")
    queries: list[int] = []
    real_get = store.get_cached_responses

    def counting_get(keys):
        queries.append(len(keys))
        return real_get(keys)

    monkeypatch.setattr(store, "get_cached_responses", counting_get)
    runs = seed_runs(store, 6)
    rubric, tier = process_tier()
    with ModelStub(rubric_judge_script()) as stub:
        spec = spec_for("openai", stub)

        async def job(repeats: int = 1):
            pool = ModelPool(store, seed=0)
            async with pool.session():
                judge = RubricJudge(pool.get(spec), spec)
                job = GradeJob(store, runs, rubric, tier, [judge], tasks={}, repeats=repeats)
                summary = await run_job(job, concurrency=4)
                return summary, pool

        summary, pool = asyncio.run(job())
        assert summary.done == 6 and stub.count == 6
        assert queries == [6]  # the whole plan in one query, none per call
        # the responses were written with the grades (nothing left for the pool to flush)
        assert store.cached_response_count() == 6
        assert pool.replies is not None and pool.replies.pending == 0
        grades = store.list_grades()
        assert {g.status for g in grades} == {GradeStatus.OK}
        # a new job for a repeat of the same requests, salted: new calls
        summary2, _ = asyncio.run(job(repeats=2))
        assert stub.count == 12 and summary2.done == 6

    # the same requests through a fresh pool, the grades deleted: answered from the cache
    # with the stub gone (a request would fail)
    with store.engine.begin() as conn:
        from lhbench.store.tables import GradeRow

        conn.execute(GradeRow.__table__.delete())
    queries.clear()
    summary3, _ = asyncio.run(job())
    assert summary3.done == 6 and queries == [6]
    again = store.list_grades()
    assert {g.status for g in again} == {GradeStatus.OK}
    assert all(g.usage.requests == 0 for g in again)
    store.close()


def test_store_batched_cache_first_write_wins(tmp_path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'c.db'}")
    rows = [CacheRow(f"k{i}", "m", Reply(str(i)).to_doc()) for i in range(700)]
    assert store.put_cached_responses(rows) == 700
    assert store.put_cached_responses([CacheRow("k1", "m", Reply("other").to_doc())]) == 0
    got = store.get_cached_responses([f"k{i}" for i in range(0, 900, 3)])
    assert len(got) == 234  # k0, k3, … k699 exist; k702… do not
    assert Reply.from_doc(got["k3"]) == Reply("3")
    store.close()


def test_rubric_judge_on_each_wire_scores_through_the_tool(tmp_path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'w.db'}")
    [run] = seed_runs(store, 1)
    rubric, tier = process_tier()
    with ModelStub(rubric_judge_script()) as stub:

        async def go():
            pool = ModelPool(None)
            async with pool.session():
                out = []
                for provider in ("openai", "anthropic", "google-gla"):
                    spec = spec_for(provider, stub)
                    judge = RubricJudge(pool.get(spec), spec)
                    out.append(await judge.grade(evidence(store, run), rubric, tier))
                return out

        grades = asyncio.run(go())
    for g in grades:
        assert g.status == GradeStatus.OK, (g.judge.model, g.error)
        assert len(g.scores) == 4 and g.tier_score is not None
    store.close()
