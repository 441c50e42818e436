"""The server a judge asks is part of who it is, even when the environment chooses it.

The OpenAI and Anthropic SDKs read ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL`` when a
model has no base URL: a grade from another server is another judge's, and the response
cache must not serve one server's answer for another.
"""

from __future__ import annotations

import asyncio

import pytest

from lhbench.judges import PairwiseJudge, rubric_judge_identity
from lhbench.models import Ask, ModelPool, OutputSchema, resolve_model
from lhbench.testing import ModelStub, StubReply, StubRequest
from tests.models.test_direct import Answer, MemoryCache

ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_environment_endpoint_is_in_the_judge_identity(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = resolve_model(f"{provider}:judge", {})
    monkeypatch.delenv(ENV[provider], raising=False)
    default = rubric_judge_identity(spec)
    assert default.endpoint is None
    monkeypatch.setenv(ENV[provider], "http://127.0.0.1:9/v1")
    moved = rubric_judge_identity(spec)
    assert moved.endpoint == "http://127.0.0.1:9/v1"
    assert moved.key != default.key
    assert moved.label == f"{provider}:judge@127.0.0.1:9"
    monkeypatch.setenv(ENV[provider], "http://127.0.0.1:10/v1")
    assert rubric_judge_identity(spec).key != moved.key
    # the pairwise judge records the same endpoint
    monkeypatch.setenv(f"{provider.upper()}_API_KEY", "unused")
    pool = ModelPool(None)
    assert PairwiseJudge(pool.get(spec), spec).identity.endpoint == "http://127.0.0.1:10/v1"


def test_the_cache_does_not_serve_one_environment_servers_answer_for_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schema = OutputSchema.of(Answer, "final_result")

    def script(verdict: str):
        def answer(req: StubRequest) -> StubReply:
            return StubReply.call("final_result", {"verdict": verdict, "confidence": 0.5})

        return answer

    spec = resolve_model("j", {"j": {"model": "openai:judge", "api_key_env": "LH_NO_KEY"}})
    monkeypatch.setenv("LH_NO_KEY", "unused")
    cache = MemoryCache()

    async def ask_once() -> str:
        from lhbench.judges.structured import ask_structured

        pool = ModelPool(cache)  # type: ignore[arg-type]
        async with pool.session():
            out = await ask_structured(
                pool.get(spec).direct, Ask("Decide.", ("t",), schema), Answer, retries=0
            )
        assert out.answer is not None, out.failure
        return out.answer.verdict

    with ModelStub(script("PASS")) as one, ModelStub(script("FAIL")) as two:
        monkeypatch.setenv("OPENAI_BASE_URL", one.base_url)
        assert asyncio.run(ask_once()) == "PASS"
        monkeypatch.setenv("OPENAI_BASE_URL", two.base_url)
        assert asyncio.run(ask_once()) == "FAIL"
        assert len(two.requests) == 1
        # the same server again is answered from the cache
        monkeypatch.setenv("OPENAI_BASE_URL", one.base_url)
        assert asyncio.run(ask_once()) == "PASS"
        assert len(one.requests) == 1
