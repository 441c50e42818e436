"""The stub's Gemini wire (what Gemini CLI speaks), through the official google-genai SDK."""

import asyncio

from google import genai
from google.genai import types
from pydantic_ai import Agent
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.providers.google import GoogleProvider

from lhbench.testing import ModelStub, StubReply


def script(req):
    results = req.tool_results()
    if "lookup" in req.tool_names and not results:
        return StubReply.call("lookup", {"city": "Oslo"})
    if results:
        return StubReply(content=f"The tool said: {results[-1]}")
    return StubReply(content=f"echo: {req.last_user_text()}")


def _client(stub: ModelStub) -> genai.Client:
    return genai.Client(
        api_key="x",
        http_options=types.HttpOptions(base_url=stub.base_url.removesuffix("/v1")),
    )


def test_generate_content_plain_and_streamed_with_the_official_sdk() -> None:
    with ModelStub(script) as stub:
        client = _client(stub)
        plain = client.models.generate_content(
            model="gemini-stub",
            contents="hi there",
            config=types.GenerateContentConfig(system_instruction="be brief"),
        )
        chunks = list(client.models.generate_content_stream(model="gemini-stub", contents="s"))
        requests = stub.requests
    assert plain.text == "echo: hi there"
    assert plain.usage_metadata is not None and plain.usage_metadata.candidates_token_count > 0
    assert "".join(c.text or "" for c in chunks) == "echo: s"
    assert requests[0].body["messages"][0] == {"role": "system", "content": "be brief"}
    assert requests[0].model == "gemini-stub"


def test_pydantic_ai_google_model_round_trips_a_tool_call() -> None:
    with ModelStub(script) as stub:

        async def go():
            provider = GoogleProvider(client=_client(stub))
            agent = Agent(GoogleModel("gemini-stub", provider=provider))

            @agent.tool_plain
            def lookup(city: str) -> str:
                """Weather for a city."""
                return f"{city}: 4 degrees and rain"

            return await agent.run("What is the weather in Oslo?")

        result = asyncio.run(go())
        second = stub.requests[1].body["messages"]
    # Gemini carries a tool's answer as a functionResponse object; pydantic-ai wraps a plain
    # value as {"return_value": ...}, which the script saw as the tool message's JSON
    assert result.output == 'The tool said: {"return_value": "Oslo: 4 degrees and rain"}'
    assert second[-1]["role"] == "tool" and "4 degrees and rain" in second[-1]["content"]


def test_gemini_faults_use_the_apis_error_shape() -> None:
    from google.genai import errors

    with ModelStub(lambda req: StubReply(content="x", fault="429")) as stub:
        client = _client(stub)
        try:
            client.models.generate_content(model="m", contents="hi")
            raised = None
        except errors.APIError as exc:
            raised = exc
    assert raised is not None and raised.code == 429
