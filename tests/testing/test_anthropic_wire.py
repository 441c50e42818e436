import asyncio

from anthropic import AsyncAnthropic
from pydantic_ai import Agent
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

from lhbench.testing import ModelStub, StubReply


def script(req):
    results = req.tool_results()
    if "lookup" in req.tool_names and not results:
        return StubReply.call("lookup", {"city": "Oslo"})
    if results:
        return StubReply(content=f"The tool said: {results[-1]}")
    return StubReply(content=f"echo: {req.last_user_text()}")


def test_messages_api_plain_and_streamed_with_the_official_sdk() -> None:
    with ModelStub(script) as stub:
        base = stub.base_url.removesuffix("/v1")

        async def go():
            client = AsyncAnthropic(base_url=base, api_key="x", max_retries=0)
            msg = await client.messages.create(
                model="claude-stub",
                max_tokens=100,
                messages=[{"role": "user", "content": "hi there"}],
            )
            async with client.messages.stream(
                model="claude-stub",
                max_tokens=100,
                messages=[{"role": "user", "content": "streamed"}],
            ) as s:
                final = await s.get_final_message()
            return msg, final

        msg, final = asyncio.run(go())
        assert msg.content[0].text == "echo: hi there" and msg.stop_reason == "end_turn"
        assert msg.usage.output_tokens > 0
        assert final.content[0].text == "echo: streamed"
        assert stub.count == 2


def test_pydantic_ai_anthropic_model_round_trips_a_tool_call() -> None:
    with ModelStub(script) as stub:
        base = stub.base_url.removesuffix("/v1")

        async def go():
            model = AnthropicModel(
                "claude-stub",
                provider=AnthropicProvider(
                    anthropic_client=AsyncAnthropic(base_url=base, api_key="x", max_retries=0)
                ),
            )
            agent = Agent(model)

            @agent.tool_plain
            def lookup(city: str) -> str:
                """Weather for a city."""
                return f"{city}: 4 degrees and rain"

            return await agent.run("What is the weather in Oslo?")

        result = asyncio.run(go())
        assert result.output == "The tool said: Oslo: 4 degrees and rain"
        assert stub.count == 2
        # the second request carried the tool result back as a tool_result block
        assert "lookup" in str(stub.requests[1].body) and "4 degrees" in str(stub.requests[1].body)


def test_anthropic_faults_use_the_apis_error_shape() -> None:
    with ModelStub(lambda req: StubReply(content="x", fault="429")) as stub:
        base = stub.base_url.removesuffix("/v1")

        async def go():
            client = AsyncAnthropic(base_url=base, api_key="x", max_retries=0)
            try:
                await client.messages.create(
                    model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
                )
            except Exception as exc:  # the SDK's RateLimitError
                return exc
            return None

        exc = asyncio.run(go())
        assert type(exc).__name__ == "RateLimitError" and "rate_limit_error" in str(exc)
