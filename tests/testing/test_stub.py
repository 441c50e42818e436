import asyncio
import json

import httpx
import pytest
from openai import AsyncOpenAI

from lhbench.testing import ModelStub, StubReply


def script(req):
    if "tool please" in req.last_user_text():
        return StubReply.call("lookup", {"q": "x"})
    return StubReply(content=f"echo: {req.last_user_text()}")


def post(stub: ModelStub, **body):
    payload = {"model": "m", "messages": [{"role": "user", "content": "hi"}], **body}
    return httpx.post(f"{stub.base_url}/chat/completions", json=payload, timeout=5)


def test_plain_and_tool_call_answers_and_the_log() -> None:
    with ModelStub(script) as stub:
        r = post(stub)
        assert r.status_code == 200
        body = r.json()
        assert body["choices"][0]["message"]["content"] == "echo: hi"
        assert (
            body["usage"]["total_tokens"]
            == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
        )
        r = post(stub, messages=[{"role": "user", "content": "tool please"}])
        call = r.json()["choices"][0]["message"]["tool_calls"][0]
        assert call["function"]["name"] == "lookup" and json.loads(
            call["function"]["arguments"]
        ) == {"q": "x"}
        assert r.json()["choices"][0]["finish_reason"] == "tool_calls"
        assert stub.count == 2
        log = httpx.get(stub.base_url.replace("/v1", "/_stub/requests")).json()
        assert [e["status"] for e in log] == [200, 200]


@pytest.mark.parametrize("fault", ["429", "500", "truncated", "malformed"])
def test_faults_on_the_wire(fault: str) -> None:
    with ModelStub(lambda req: StubReply(tool_calls=[("t", {"a": 1})], fault=fault)) as stub:
        r = post(stub)
        if fault == "429":
            assert r.status_code == 429 and r.headers["retry-after-ms"] == "10"
        elif fault == "500":
            assert r.status_code == 500
        elif fault == "truncated":
            assert r.status_code == 200
            with pytest.raises(json.JSONDecodeError):
                json.loads(r.text)
        else:
            args = r.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
            with pytest.raises(json.JSONDecodeError):
                json.loads(args)
        assert [e.fault for e in stub.requests] == [fault]


def test_timeout_fault_holds_the_request() -> None:
    with ModelStub(
        lambda req: StubReply(content="late", fault="timeout"), timeout_hold=1.0
    ) as stub:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(
                f"{stub.base_url}/chat/completions",
                json={"model": "m", "messages": []},
                timeout=0.2,
            )
        assert stub.count == 1


def test_streaming_with_the_openai_sdk_and_latency() -> None:
    with ModelStub(script, latency=0.2) as stub:

        async def go():
            client = AsyncOpenAI(base_url=stub.base_url, api_key="x", max_retries=0)
            stream = await client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "a longer message to stream"}],
                stream=True,
                stream_options={"include_usage": True},
            )
            text, usage = "", None
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    text += chunk.choices[0].delta.content
                usage = chunk.usage or usage
            return text, usage

        loop_start = asyncio.new_event_loop()
        t0 = loop_start.time()
        text, usage = loop_start.run_until_complete(go())
        assert loop_start.time() - t0 >= 0.2
        loop_start.close()
        assert text == "echo: a longer message to stream"
        assert usage is not None and usage.completion_tokens > 0


def test_seeded_fault_rate_is_reproducible() -> None:
    def faults_of(seed: int) -> list[str | None]:
        with ModelStub(script, fault_rate=0.5, faults=("429", "500"), seed=seed) as stub:
            for _ in range(20):
                post(stub)
            return [e.fault for e in stub.requests]

    a, b = faults_of(3), faults_of(3)
    assert a == b and 4 <= sum(f is not None for f in a) <= 16
    assert faults_of(4) != a
