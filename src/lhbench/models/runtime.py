"""Calling models the way an evaluation needs: bounded, retried, cached, accounted.

``ModelPool`` gives each spec two ways in, sharing one concurrency limit per endpoint:

- ``ManagedModel``, a pydantic-ai model for agents (the harness, the agent judge): a
  per-call timeout, retries with backoff and jitter (the SDK's own are off, so the request
  count is ours), a content-addressed response cache (same model, endpoint, settings,
  messages and tools -> the stored response, no call), one call for identical requests in
  flight, and a ledger of every call;
- its ``direct`` client (:class:`~lhbench.models.direct.DirectClient`) for single-shot
  judges: the same limits, retries, cache and ledger without the agent machinery, over
  lhbench's own client per wire protocol with one HTTP session per endpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import inspect
import json
import os
import random
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from lhbench.errors import ConfigError
from lhbench.models.calls import (
    _LEDGER,
    _REFRESH,
    _SALT,
    CallRecord,
    Ledger,
    backoff_delay,
    retryable,
)
from lhbench.models.direct import DirectClient, PydanticAITransport, WireTransport, pinned_settings
from lhbench.models.replies import BatchedResponseCache, CacheRow, ReplyCache
from lhbench.models.spec import ModelSpec
from lhbench.models.wire import wire_for

if TYPE_CHECKING:
    import aiohttp

__all__ = [
    "DirectPath",
    "ManagedModel",
    "ModelPool",
    "ResponseCache",
    "build_model",
    "direct_client",
    "request_key",
]

DirectPath = Literal["wire", "pydantic-ai"]


class ResponseCache(Protocol):
    """Where responses are kept by request key (the Store implements it)."""

    def get_cached_response(self, key: str) -> dict[str, Any] | None:
        """The stored response document, or None."""

    def put_cached_response(self, key: str, model: str, response: dict[str, Any]) -> None:
        """Keep a response document."""


_VOLATILE = {
    "timestamp",
    "run_id",
    "conversation_id",
    "tool_call_id",
    "id",
    "usage",
    "provider_details",
    "provider_response_id",
    "provider_name",
    "provider_url",
    "model_name",
    "model_id",
    "finish_reason",
    "metadata",
    "state",
}


def _strip(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in sorted(obj.items()) if k not in _VOLATILE}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def _params(params: ModelRequestParameters) -> Any:
    """What of the request parameters changes the answer: the tools and the output mode."""
    tools = [
        [t.name, t.description, t.parameters_json_schema, t.strict]
        for t in (*params.function_tools, *params.output_tools)
    ]
    return [tools, str(params.output_mode), params.allow_text_output]


def request_key(
    model: str,
    settings: ModelSettings | None,
    messages: list[ModelMessage],
    params: ModelRequestParameters,
    endpoint: str | None = None,
) -> str:
    """Content address of a request: what is asked of which server, not when or for which run.

    Two servers behind one model name are different judges: the endpoint is part of the key.
    """
    doc = {
        "salt": _SALT.get(),
        "model": model,
        "endpoint": endpoint,
        "settings": {k: v for k, v in sorted((settings or {}).items()) if k not in ("timeout",)},
        "messages": _strip(ModelMessagesTypeAdapter.dump_python(messages, mode="json")),
        "params": _params(params),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


class ManagedModel(WrapperModel):
    """A pydantic-ai model with limits, retries, a response cache and accounting.

    ``direct`` is the same model's client for single-shot judges (same limit and cache).
    """

    def __init__(
        self,
        wrapped: Model | Callable[[], Model],
        spec: ModelSpec,
        semaphore: asyncio.Semaphore,
        cache: ResponseCache | None,
        *,
        rng: random.Random | None = None,
        direct: DirectClient | None = None,
    ) -> None:
        # the provider SDK's client is built on first use: a judge on the direct path never
        # needs it (building one loads TLS certificates: ~90 ms of CPU)
        Model.__init__(self)
        self._wrapped: Model | None = wrapped if isinstance(wrapped, Model) else None
        self._factory = None if isinstance(wrapped, Model) else wrapped
        self.spec = spec
        self.semaphore = semaphore
        self.cache = cache
        self._rng = rng or random.Random()
        self._direct = direct
        # identical requests in flight at once make one call (the cache cannot: it is only
        # written when the first answer arrives)
        self._inflight: dict[str, asyncio.Future[ModelResponse]] = {}

    async def __aenter__(self) -> ManagedModel:
        """Nothing to open: the pool owns the model's HTTP client for the whole job."""
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Nothing to close here: the pool closes the client when the job ends.

        An agent run that ends must not close the client other runs share (pydantic-ai's
        ``Model.__aexit__`` closes its provider on every exit; see ``ModelPool.session``).
        """
        return None

    @property
    def wrapped(self) -> Model:
        """The pydantic-ai model (built on first use)."""
        if self._wrapped is None:
            assert self._factory is not None
            self._wrapped = self._factory()
        return self._wrapped

    @wrapped.setter
    def wrapped(self, value: Model) -> None:
        self._wrapped = value

    @property
    def built(self) -> bool:
        """Whether the pydantic-ai model exists yet."""
        return self._wrapped is not None

    @property
    def model_name(self) -> str:
        """The spec's model string (what grades record)."""
        return self.spec.model_string

    @property
    def direct(self) -> DirectClient:
        """The client single-shot judges use (same limit and cache).

        Pydantic-ai's request API over the wrapped model when the pool did not give one.
        """
        if self._direct is None:
            replies = ReplyCache(_batched(self.cache)) if self.cache is not None else None
            self._direct = DirectClient(
                self.spec,
                PydanticAITransport(self.spec, self.wrapped),
                self.semaphore,
                replies,
                rng=self._rng,
            )
        return self._direct

    def _pinned_settings(self, settings: ModelSettings | None) -> ModelSettings:
        return ModelSettings(**{**pinned_settings(self.spec), **(settings or {})})

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """One request: from the cache, or sent under the limit with retries."""
        settings = self._pinned_settings(model_settings)
        ledger = _LEDGER.get()
        key = request_key(
            self.spec.model_string,
            settings,
            messages,
            model_request_parameters,
            endpoint=self.spec.endpoint,
        )
        if self.cache is not None and not _REFRESH.get():
            doc = await asyncio.to_thread(self.cache.get_cached_response, key)
            if doc is not None:
                response = ModelMessagesTypeAdapter.validate_python([doc])[0]
                assert isinstance(response, ModelResponse)
                if ledger is not None:
                    ledger.calls.append(
                        CallRecord(self.model_name, 0, 0, None, 0.0, 0, cached=True)
                    )
                return response
        pending = self._inflight.get(key)
        if pending is not None:
            response = await asyncio.shield(pending)
            if ledger is not None:
                ledger.calls.append(CallRecord(self.model_name, 0, 0, None, 0.0, 0, cached=True))
            return response
        future: asyncio.Future[ModelResponse] = asyncio.get_running_loop().create_future()
        # a failure nobody else waited for must not be reported as never retrieved
        future.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._inflight[key] = future
        try:
            response = await self._call(key, messages, settings, model_request_parameters, ledger)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            raise
        else:
            future.set_result(response)
            return response
        finally:
            del self._inflight[key]

    async def _call(
        self,
        key: str,
        messages: list[ModelMessage],
        settings: ModelSettings,
        model_request_parameters: ModelRequestParameters,
        ledger: Ledger | None,
    ) -> ModelResponse:
        """The request sent under the limit with retries, accounted and cached."""
        attempts = 0
        started = time.monotonic()
        while True:
            attempts += 1
            try:
                async with self.semaphore:
                    response = await asyncio.wait_for(
                        self.wrapped.request(messages, settings, model_request_parameters),
                        timeout=self.spec.timeout_s,
                    )
                break
            except Exception as exc:
                if not retryable(exc) or attempts > self.spec.max_retries:
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
                await asyncio.sleep(backoff_delay(self.spec, self._rng, attempts, exc))
        usage = response.usage
        if ledger is not None:
            ledger.calls.append(
                CallRecord(
                    model=self.model_name,
                    input_tokens=usage.input_tokens,
                    output_tokens=usage.output_tokens,
                    cost_usd=self.spec.cost(usage.input_tokens, usage.output_tokens),
                    latency_s=time.monotonic() - started,
                    attempts=attempts,
                    cached=False,
                )
            )
        if self.cache is not None:
            doc = ModelMessagesTypeAdapter.dump_python([response], mode="json")[0]
            await asyncio.to_thread(self.cache.put_cached_response, key, self.model_name, doc)
        return response


class _SingleKeyCache:
    """A cache with one-key methods only, read and written many keys at a time."""

    def __init__(self, cache: ResponseCache) -> None:
        self.cache = cache

    def get_cached_responses(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        out = {}
        for k in keys:
            doc = self.cache.get_cached_response(k)
            if doc is not None:
                out[k] = doc
        return out

    def put_cached_responses(self, rows: Sequence[CacheRow]) -> int:
        for r in rows:
            self.cache.put_cached_response(r.key, r.model, r.response)
        return len(rows)


def _batched(cache: ResponseCache) -> BatchedResponseCache:
    return cache if isinstance(cache, BatchedResponseCache) else _SingleKeyCache(cache)


_KEY_ENV = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google-gla": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}


def _api_key(spec: ModelSpec) -> str | None:
    """The key for a spec; a hosted provider without one is a ConfigError naming the setting."""
    names = (spec.api_key_env,) if spec.api_key_env else _KEY_ENV.get(spec.provider, ())
    for name in names:
        if name and os.environ.get(name):
            return os.environ[name]
    if spec.base_url is None and spec.provider in _KEY_ENV:
        raise ConfigError(
            f"model {spec.ref!r} needs an API key: set {' or '.join(names)} "
            f"(or api_key_env under [models.{spec.ref}] in lhbench.toml)"
        )
    return None


def build_model(spec: ModelSpec, api_key: str | None) -> Model:
    """The pydantic-ai model for a spec (SDK retries off: ManagedModel retries)."""
    if spec.provider == "test":
        from pydantic_ai.models.test import TestModel

        return TestModel()
    if spec.provider == "openai":
        from openai import AsyncOpenAI
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        client = AsyncOpenAI(
            base_url=spec.base_url,
            api_key=api_key or ("unused" if spec.base_url else None),
            max_retries=0,
            timeout=spec.timeout_s,
        )
        return OpenAIChatModel(spec.name, provider=OpenAIProvider(openai_client=client))
    if spec.provider == "anthropic":
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        aclient = AsyncAnthropic(
            api_key=api_key, base_url=spec.base_url, max_retries=0, timeout=spec.timeout_s
        )
        return AnthropicModel(spec.name, provider=AnthropicProvider(anthropic_client=aclient))
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    return GoogleModel(
        spec.name,
        provider=GoogleProvider(api_key=api_key, base_url=spec.base_url),
    )


async def _close_sdk_client(model: Model) -> None:
    """Close a provider SDK client the pool made, inside the loop that used it.

    Left to the garbage collector, its HTTP client would try to close on a loop that is
    already closed (and print a traceback).
    """
    client = getattr(model, "client", None)
    close = getattr(client, "close", None)
    if close is None:
        return
    with contextlib.suppress(Exception):
        result = close()
        if inspect.isawaitable(result):
            await result


def direct_client(model: Model, spec: ModelSpec) -> DirectClient:
    """The single-shot client for a judge's model.

    A ``ManagedModel`` (from a pool) gives its own, sharing the endpoint's limit and the
    pool's cache; any other pydantic-ai model is asked through pydantic-ai's request API
    with its own limit and no cache.
    """
    if isinstance(model, ManagedModel):
        return model.direct
    return DirectClient(
        spec,
        PydanticAITransport(spec, model),
        asyncio.Semaphore(spec.max_concurrency),
        None,
    )


class ModelPool:
    """Models for one job, sharing a semaphore per provider endpoint. Create inside the loop.

    Args:
        cache: The response cache (the Store); None neither reads nor writes one.
        seed: Seed of the backoff jitter.
        direct: How single-shot judges reach a model with a wire protocol: ``"wire"``
            (lhbench's own client, the default) or ``"pydantic-ai"`` (pydantic-ai's
            ``model_request`` over the provider SDK, measured in ``bench/judge_throughput.py``).
    """

    def __init__(
        self,
        cache: ResponseCache | None = None,
        *,
        seed: int | None = None,
        direct: DirectPath = "wire",
    ) -> None:
        self.cache = cache
        self.replies = ReplyCache(_batched(cache)) if cache is not None else None
        self.direct_path = direct
        self._semaphores: dict[str, asyncio.Semaphore] = {}
        self._limits: dict[str, int] = {}
        self._models: dict[str, ManagedModel] = {}
        self._http: dict[str, aiohttp.ClientSession] = {}
        self._rng = random.Random(seed)

    def _semaphore(self, spec: ModelSpec) -> asyncio.Semaphore:
        """The endpoint's limit: the first spec seen for an endpoint sets it."""
        sem = self._semaphores.get(spec.pool_key)
        if sem is None:
            sem = self._semaphores[spec.pool_key] = asyncio.Semaphore(spec.max_concurrency)
            self._limits[spec.pool_key] = spec.max_concurrency
        return sem

    def _http_session(self, spec: ModelSpec) -> aiohttp.ClientSession:
        """The endpoint's one long-lived HTTP session (made on first use, inside the loop)."""
        session = self._http.get(spec.pool_key)
        if session is None or session.closed:
            import aiohttp

            self._semaphore(spec)
            # proxies from the environment are read once per endpoint by the transport
            # (trust_env would read them, and ~/.netrc, in a thread on every request);
            # API answers set no cookies worth keeping
            session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._limits[spec.pool_key]),
                timeout=aiohttp.ClientTimeout(total=None),
                cookie_jar=aiohttp.DummyCookieJar(),
            )
            self._http[spec.pool_key] = session
        return session

    def get(self, spec: ModelSpec, *, wrapped: Model | None = None) -> ManagedModel:
        """The managed model for ``spec``; ``wrapped`` substitutes the model (a FunctionModel)."""
        if spec.ref in self._models and wrapped is None:
            return self._models[spec.ref]
        sem = self._semaphore(spec)
        api_key = None if wrapped is not None else _api_key(spec)
        model: Model | Callable[[], Model] = wrapped or (lambda: build_model(spec, api_key))
        wire = wire_for(spec) if wrapped is None and self.direct_path == "wire" else None
        managed = ManagedModel(model, spec, sem, self.cache, rng=self._rng)
        transport = (
            WireTransport(spec, wire, api_key, lambda: self._http_session(spec))
            if wire is not None
            else PydanticAITransport(spec, managed.wrapped)
        )
        managed._direct = DirectClient(spec, transport, sem, self.replies, rng=self._rng)
        if wrapped is None:
            self._models[spec.ref] = managed
        return managed

    def flush(self) -> int:
        """Write cached replies no job has written yet; returns how many were new."""
        return self.replies.flush() if self.replies is not None else 0

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[ModelPool]:
        """Close every HTTP client when the job ends, after writing what is left to cache."""
        try:
            yield self
        finally:
            if self.replies is not None and self.replies.pending:
                await asyncio.to_thread(self.flush)
            for http in self._http.values():
                with contextlib.suppress(Exception):
                    await http.close()
            for m in self._models.values():
                if m.built:
                    with contextlib.suppress(Exception):
                        await m.wrapped.__aexit__(None, None, None)
                    await _close_sdk_client(m.wrapped)
