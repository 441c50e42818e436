"""The stub's OpenAI Responses wire (what Codex CLI speaks), through the official SDK."""

import asyncio

from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider

from lhbench.testing import ModelStub, StubReply


def script(req):
    results = req.tool_results()
    if "lookup" in req.tool_names and not results:
        return StubReply.call("lookup", {"city": "Oslo"})
    if results:
        return StubReply(content=f"The tool said: {results[-1]}")
    return StubReply(content=f"echo: {req.last_user_text()}")


def test_responses_plain_and_streamed_with_the_official_sdk() -> None:
    with ModelStub(script) as stub:

        async def go():
            client = AsyncOpenAI(base_url=stub.base_url, api_key="x", max_retries=0)
            plain = await client.responses.create(
                model="gpt-stub", input="hi there", instructions="be brief"
            )
            events = []
            stream = await client.responses.create(
                model="gpt-stub",
                input=[{"role": "developer", "content": "rules"}, {"role": "user", "content": "s"}],
                stream=True,
            )
            async for event in stream:
                events.append(event)
            return plain, events

        plain, events = asyncio.run(go())
    assert plain.output_text == "echo: hi there" and plain.status == "completed"
    assert plain.usage is not None and plain.usage.output_tokens > 0
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.output_text.delta" in kinds and "response.output_item.done" in kinds
    assert events[-1].response.output_text == "echo: s"
    # the instructions and the developer message reached the script as system messages
    first, second = stub.requests
    assert first.body["messages"][0] == {"role": "system", "content": "be brief"}
    assert second.body["messages"][0] == {"role": "system", "content": "rules"}


def test_pydantic_ai_responses_model_round_trips_a_tool_call() -> None:
    with ModelStub(script) as stub:

        async def go():
            provider = OpenAIProvider(
                openai_client=AsyncOpenAI(base_url=stub.base_url, api_key="x", max_retries=0)
            )
            agent = Agent(OpenAIResponsesModel("gpt-stub", provider=provider))

            @agent.tool_plain
            def lookup(city: str) -> str:
                """Weather for a city."""
                return f"{city}: 4 degrees and rain"

            return await agent.run("What is the weather in Oslo?")

        result = asyncio.run(go())
    assert result.output == "The tool said: Oslo: 4 degrees and rain"
    # the second request carried the call and its function_call_output back
    assert [m["role"] for m in stub.requests[1].body["messages"]][-2:] == ["assistant", "tool"]
    assert stub.requests[1].body["messages"][-1]["content"] == "Oslo: 4 degrees and rain"


def test_freeform_tools_are_answered_as_custom_tool_calls() -> None:
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"
    with ModelStub(lambda req: StubReply.call("apply_patch", patch)) as stub:

        async def go():
            client = AsyncOpenAI(base_url=stub.base_url, api_key="x", max_retries=0)
            return await client.responses.create(
                model="gpt-stub",
                input="patch it",
                tools=[{"type": "custom", "name": "apply_patch", "description": "edit files"}],
            )

        res = asyncio.run(go())
    [item] = res.output
    assert item.type == "custom_tool_call" and item.name == "apply_patch" and item.input == patch


def test_responses_faults_use_the_apis_error_shape() -> None:
    with ModelStub(lambda req: StubReply(content="x", fault="429")) as stub:

        async def go():
            client = AsyncOpenAI(base_url=stub.base_url, api_key="x", max_retries=0)
            try:
                await client.responses.create(model="m", input="hi")
            except Exception as exc:  # the SDK's RateLimitError
                return exc
            return None

        exc = asyncio.run(go())
    assert type(exc).__name__ == "RateLimitError"
