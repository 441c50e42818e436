"""The direct path for single-shot judges: one request, one structured answer, no agent loop.

A rubric grade, a pairwise vote or a plain LLM verdict is one request answered through
one output tool. :class:`DirectClient` sends it the way an evaluation needs — under the
endpoint's concurrency limit, retried with backoff on rate limits, 5xx, connection errors,
timeouts and cut-off bodies, answered from the response cache when it can be, one call
for identical requests in flight, every attempt in the ledger — over a transport:

- :class:`WireTransport`: lhbench's own client per wire protocol (OpenAI chat, Anthropic
  Messages, Gemini) over one long-lived aiohttp session per endpoint. The default: it
  costs about a tenth of the CPU of a provider SDK per call (``bench/judge_throughput.py``).
- :class:`PydanticAITransport`: pydantic-ai's lower-level request API
  (``pydantic_ai.direct.model_request``) over any pydantic-ai model: what tests'
  ``FunctionModel``/``TestModel`` and models without a wire protocol use.

The request is encoded once; its bytes are the response-cache key
(:func:`~lhbench.models.ask.request_digest`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import orjson
from pydantic_ai.exceptions import (
    ModelAuthenticationError,
    ModelConnectionError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelOverloadedError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelRequestRejectedError,
    ModelServerError,
    ModelUnavailableError,
)
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from lhbench.models.ask import Ask, ImagePart, PreparedRequest, Reply, request_digest
from lhbench.models.calls import (
    _LEDGER,
    _REFRESH,
    CallRecord,
    Ledger,
    backoff_delay,
    retryable,
)
from lhbench.models.replies import ReplyCache
from lhbench.models.spec import ModelSpec
from lhbench.models.wire import WireProtocol

if TYPE_CHECKING:
    import aiohttp

__all__ = [
    "DirectClient",
    "PydanticAITransport",
    "Transport",
    "WireTransport",
    "http_error",
    "pinned_settings",
]


def pinned_settings(spec: ModelSpec) -> ModelSettings:
    """The settings a spec pins on every request (temperature; seed where OpenAI takes one)."""
    pinned = ModelSettings()
    if spec.temperature is not None:
        pinned["temperature"] = spec.temperature
    if spec.seed is not None and spec.provider == "openai":
        pinned["seed"] = spec.seed
    return pinned


class Transport(Protocol):
    """How a request reaches the model: encode once, send per attempt."""

    def encode(self, ask: Ask) -> bytes:
        """The request's bytes (what the cache key hashes)."""
        ...

    async def send(self, request: PreparedRequest) -> Reply:
        """One attempt; raises ``ModelAPIError`` (or ``OSError``) when no answer came."""
        ...


_CATEGORIES: dict[int, Any] = {
    400: ModelRequestRejectedError,
    401: ModelAuthenticationError,
    402: ModelQuotaExceededError,
    403: ModelAuthenticationError,
    404: ModelNotFoundError,
    422: ModelRequestRejectedError,
    429: ModelRateLimitError,
    503: ModelUnavailableError,
    529: ModelOverloadedError,
}


def http_error(status: int, model: str, body: bytes, headers: Mapping[str, str]) -> ModelHTTPError:
    """The error for a non-2xx response, in pydantic-ai's categories (so retries treat it alike)."""
    category = _CATEGORIES.get(status) or (ModelServerError if status >= 500 else None)
    try:
        detail: object = orjson.loads(body)
    except orjson.JSONDecodeError:
        detail = body[:2000].decode("utf-8", errors="replace")
    return ModelHTTPError.for_category(
        category, status_code=status, model_name=model, body=detail, headers=dict(headers)
    )


class WireTransport:
    """One provider wire protocol over an aiohttp session shared by the endpoint's requests."""

    def __init__(
        self,
        spec: ModelSpec,
        wire: WireProtocol,
        api_key: str | None,
        session: Callable[[], aiohttp.ClientSession],
    ) -> None:
        self.spec = spec
        self.wire = wire
        self.url = wire.url(spec)
        self.headers = wire.headers(api_key)
        self._session = session
        # the environment's proxy for this URL, read once (aiohttp's trust_env would look
        # it and ~/.netrc up in a worker thread on every request: two thread hops per call)
        self.proxy, self.proxy_auth = _env_proxy(self.url)

    def encode(self, ask: Ask) -> bytes:
        """The protocol's request body."""
        return self.wire.encode(self.spec, ask)

    async def send(self, request: PreparedRequest) -> Reply:
        """POST the body; a non-2xx status or an unreadable body raises."""
        import aiohttp

        model = self.spec.name
        try:
            async with self._session().post(
                self.url,
                data=request.body,
                headers=self.headers,
                proxy=self.proxy,
                proxy_auth=self.proxy_auth,
            ) as resp:
                body = await resp.read()
                status = resp.status
                if status >= 300:
                    raise http_error(status, model, body, resp.headers)
        except aiohttp.ClientConnectorError as exc:
            raise ModelConnectionError(model, f"Connection error: {exc}", phase="connect") from exc
        except aiohttp.ClientError as exc:
            raise ModelConnectionError(
                model, f"Connection error: {type(exc).__name__}: {exc}"
            ) from exc
        return self.wire.decode(body, model)


def _env_proxy(url: str) -> tuple[str | None, aiohttp.BasicAuth | None]:
    """The proxy ``HTTPS_PROXY``/``HTTP_PROXY`` name for ``url`` (``NO_PROXY`` honoured)."""
    from aiohttp.helpers import get_env_proxy_for_url
    from yarl import URL

    try:
        proxy, auth = get_env_proxy_for_url(URL(url))
    except LookupError:
        return None, None
    return str(proxy), auth


def _image_digest(part: ImagePart) -> str:
    return f"{part.media_type};sha256={hashlib.sha256(part.data).hexdigest()}"


class PydanticAITransport:
    """Any pydantic-ai model through ``pydantic_ai.direct.model_request`` (no agent graph)."""

    def __init__(self, spec: ModelSpec, model: Model) -> None:
        self.spec = spec
        self.model = model
        self.settings = pinned_settings(spec)

    def encode(self, ask: Ask) -> bytes:
        """A canonical document of the request (what the cache key hashes)."""
        doc = {
            "model": self.spec.model_string,
            "settings": dict(self.settings),
            "instructions": ask.instructions,
            "user": [p if isinstance(p, str) else _image_digest(p) for p in ask.user],
            "output": [ask.output.name, ask.output.description, ask.output.json_schema],
            "history": [
                [e.reply.tool_args, e.reply.text, e.reply.call_id, e.feedback] for e in ask.history
            ],
        }
        return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)

    def messages(self, ask: Ask) -> tuple[list[ModelMessage], ModelRequestParameters]:
        """The ask as pydantic-ai messages and request parameters (one output tool)."""
        content: list[UserContent] = [
            p if isinstance(p, str) else BinaryContent(data=p.data, media_type=p.media_type)
            for p in ask.user
        ]
        tool = ask.output.name
        first = content[0] if len(content) == 1 and isinstance(content[0], str) else content
        msgs: list[ModelMessage] = [
            ModelRequest(parts=[UserPromptPart(content=first)], instructions=ask.instructions)
        ]
        for k, ex in enumerate(ask.history):
            r = ex.reply
            parts: list[TextPart | ToolCallPart] = [TextPart(r.text)] if r.text else []
            if r.tool_args is not None:
                call_id = r.call_id or f"call_{k}"
                parts.append(ToolCallPart(tool, r.tool_args, tool_call_id=call_id))
                feedback: ToolReturnPart | RetryFeedbackPart = ToolReturnPart(
                    tool_name=tool,
                    content=ex.feedback,
                    tool_call_id=call_id,
                    outcome="retried",
                    retry=RetryInfo(cause="model_retry"),
                )
            else:
                feedback = RetryFeedbackPart(
                    content=ex.feedback, retry=RetryInfo(cause="no_output")
                )
            msgs.append(ModelResponse(parts=parts or [TextPart("")]))
            msgs.append(ModelRequest(parts=[feedback], instructions=ask.instructions))
        params = ModelRequestParameters(
            output_tools=[
                ToolDefinition(
                    name=tool,
                    description=ask.output.description,
                    parameters_json_schema=dict(ask.output.json_schema),
                    kind="output",
                )
            ],
            output_mode="tool",
            allow_text_output=False,
        )
        return msgs, params

    async def send(self, request: PreparedRequest) -> Reply:
        """``model_request`` with the pinned settings; the first tool call is the answer."""
        from pydantic_ai.direct import model_request

        msgs, params = self.messages(request.ask)
        response = await model_request(
            self.model, msgs, model_settings=self.settings, model_request_parameters=params
        )
        texts = [p.content for p in response.parts if isinstance(p, TextPart)]
        call = next((p for p in response.parts if isinstance(p, ToolCallPart)), None)
        args = None
        if call is not None:
            # arguments a model gave as an object are kept as pydantic-ai rendered them
            args = call.args if isinstance(call.args, str) else json.dumps(call.args)
        return Reply(
            tool_args=args,
            text="\n".join(texts),
            call_id=call.tool_call_id if call is not None else None,
            input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
        )


class DirectClient:
    """Single-shot requests to one model: limits, retries, cache, in-flight sharing, ledger.

    Args:
        spec: The model's spec (limits, retries, timeout, prices, identity).
        transport: How requests reach it.
        semaphore: The endpoint's concurrency limit (shared with every model on it).
        cache: The response cache (None: neither read nor written).
        rng: Jitter for backoff.
    """

    def __init__(
        self,
        spec: ModelSpec,
        transport: Transport,
        semaphore: asyncio.Semaphore,
        cache: ReplyCache | None,
        *,
        rng: random.Random | None = None,
    ) -> None:
        self.spec = spec
        self.transport = transport
        self.semaphore = semaphore
        self.cache = cache
        self._rng = rng or random.Random()
        self._inflight: dict[str, asyncio.Future[Reply]] = {}

    @property
    def model_name(self) -> str:
        """``provider:name`` (what grades record)."""
        return self.spec.model_string

    def prepare(self, ask: Ask, *, salt: str = "") -> PreparedRequest:
        """Encode ``ask`` once; the key hashes the bytes, the endpoint and the salt."""
        body = self.transport.encode(ask)
        return PreparedRequest(ask, body, request_digest(salt, self.spec.endpoint, body))

    async def send(self, request: PreparedRequest) -> Reply:
        """The reply: from the cache, shared with an identical request in flight, or asked."""
        ledger = _LEDGER.get()
        key = request.key
        cache = self.cache
        if cache is not None and not _REFRESH.get():
            reply = await cache.lookup(key)
            if reply is not None:
                if ledger is not None:
                    ledger.calls.append(CallRecord(self.model_name, 0, 0, None, 0.0, 0, True))
                return reply
        pending = self._inflight.get(key)
        if pending is not None:
            reply = await asyncio.shield(pending)
            if ledger is not None:
                ledger.calls.append(CallRecord(self.model_name, 0, 0, None, 0.0, 0, True))
            return reply
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        # a failure nobody else waited for must not be reported as never retrieved
        future.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._inflight[key] = future
        try:
            reply = await self._call(request, ledger)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            raise
        else:
            future.set_result(reply)
            if cache is not None:
                cache.put(key, self.model_name, reply)
            return reply
        finally:
            del self._inflight[key]

    async def _call(self, request: PreparedRequest, ledger: Ledger | None) -> Reply:
        """Attempts under the limit, each timed out on its own, with backoff between."""
        attempts = 0
        started = time.monotonic()
        spec = self.spec
        while True:
            attempts += 1
            try:
                async with self.semaphore, asyncio.timeout(spec.timeout_s):
                    reply = await self.transport.send(request)
                break
            except Exception as exc:
                if not retryable(exc) or attempts > spec.max_retries:
                    if ledger is not None:
                        ledger.calls.append(
                            CallRecord(
                                self.model_name,
                                0,
                                0,
                                None,
                                time.monotonic() - started,
                                attempts,
                                False,
                            )
                        )
                    raise
                await asyncio.sleep(backoff_delay(spec, self._rng, attempts, exc))
        if ledger is not None:
            ledger.calls.append(
                CallRecord(
                    self.model_name,
                    reply.input_tokens,
                    reply.output_tokens,
                    spec.cost(reply.input_tokens, reply.output_tokens),
                    time.monotonic() - started,
                    attempts,
                    False,
                )
            )
        return reply
