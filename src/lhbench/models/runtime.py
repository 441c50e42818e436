"""Calling models the way an evaluation needs: bounded, retried, cached, accounted.

``ModelPool`` builds one pydantic-ai model per spec, wrapped in ``ManagedModel``:

- a concurrency limit per provider endpoint (one ``asyncio.Semaphore`` per pool key);
- retries with exponential backoff and full jitter on rate limits, 5xx, connection
  errors, timeouts and undecodable responses (the SDK's own retries are off, so the
  request count is ours);
- a per-call timeout;
- a content-addressed response cache (same model, endpoint, settings, messages and tools
  -> the stored response, no call), and one call for identical requests in flight at once;
- a ledger of every call (tokens, cost, latency, attempts, cache hits) that the judge
  reading it sums per grade, per run and per job.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import json
import os
import random
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelContextWindowExceededError,
    ModelQuotaExceededError,
    ModelRequestRejectedError,
)
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from lhbench.errors import ConfigError
from lhbench.models.spec import ModelSpec
from lhbench.schema import Usage

__all__ = [
    "CallRecord",
    "Ledger",
    "ManagedModel",
    "ModelPool",
    "ResponseCache",
    "cache_refresh",
    "cache_salt",
    "current_ledger",
    "is_transport_error",
    "request_key",
]


@dataclass(frozen=True)
class CallRecord:
    """One model call as accounted."""

    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    latency_s: float
    attempts: int
    cached: bool


@dataclass
class Ledger:
    """Calls made inside one unit of work (a grade, a verdict)."""

    calls: list[CallRecord] = field(default_factory=list)

    @property
    def input_tokens(self) -> int:
        """Input tokens of calls actually made (cache hits cost nothing)."""
        return sum(c.input_tokens for c in self.calls if not c.cached)

    @property
    def output_tokens(self) -> int:
        """Output tokens of calls actually made."""
        return sum(c.output_tokens for c in self.calls if not c.cached)

    @property
    def requests(self) -> int:
        """HTTP attempts made, retries included."""
        return sum(c.attempts for c in self.calls if not c.cached)

    @property
    def cost_usd(self) -> float | None:
        """Summed cost, None when no price is known."""
        costs = [c.cost_usd for c in self.calls if not c.cached and c.cost_usd is not None]
        return sum(costs) if costs else None

    def usage(self) -> Usage:
        """The ledger as schema Usage (what a grade or verdict records)."""
        return Usage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            requests=self.requests,
            cost_usd=self.cost_usd,
        )

    @property
    def cache_hits(self) -> int:
        """Calls answered from the cache."""
        return sum(1 for c in self.calls if c.cached)


_LEDGER: contextvars.ContextVar[Ledger | None] = contextvars.ContextVar(
    "lhbench_ledger", default=None
)


_SALT: contextvars.ContextVar[str] = contextvars.ContextVar("lhbench_cache_salt", default="")


@contextlib.contextmanager
def cache_salt(salt: str) -> Iterator[None]:
    """Give requests in this context their own cache entries (repeats that must not share)."""
    token = _SALT.set(salt)
    try:
        yield
    finally:
        _SALT.reset(token)


_REFRESH: contextvars.ContextVar[bool] = contextvars.ContextVar("lhbench_refresh", default=False)


@contextlib.contextmanager
def cache_refresh(refresh: bool = True) -> Iterator[None]:
    """Ask the model again in this context, ignoring cached answers (and caching the new ones).

    Used when a final result (a judge answer that did not parse) is re-asked on purpose:
    the cached answer is the one that failed.
    """
    token = _REFRESH.set(refresh)
    try:
        yield
    finally:
        _REFRESH.reset(token)


@contextlib.contextmanager
def current_ledger() -> Iterator[Ledger]:
    """Collect the calls made in this context (and the tasks it starts) into a new Ledger."""
    ledger = Ledger()
    token = _LEDGER.set(ledger)
    try:
        yield ledger
    finally:
        _LEDGER.reset(token)


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


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, ModelRequestRejectedError | ModelQuotaExceededError):
        return False
    return isinstance(exc, ModelAPIError | asyncio.TimeoutError)


def is_transport_error(exc: BaseException) -> bool:
    """Whether a failed call never got an answer from the model (so asking again may work).

    Timeouts, refused connections, rate limits, server errors, refused or cut-off bodies:
    everything the model layer raises except an answer that does not fit (which pydantic-ai
    reports as ``UnexpectedModelBehavior`` and a judge records as a final parse failure).
    """
    if isinstance(exc, ModelRequestRejectedError | ModelContextWindowExceededError):
        return False  # the request itself is refused: asking the same again cannot help
    return isinstance(exc, ModelAPIError | TimeoutError | OSError)


class ManagedModel(WrapperModel):
    """A pydantic-ai model with limits, retries, a response cache and accounting."""

    def __init__(
        self,
        wrapped: Model,
        spec: ModelSpec,
        semaphore: asyncio.Semaphore,
        cache: ResponseCache | None,
        *,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(wrapped)
        self.spec = spec
        self.semaphore = semaphore
        self.cache = cache
        self._rng = rng or random.Random()
        # identical requests in flight at once make one call (the cache cannot: it is only
        # written when the first answer arrives)
        self._inflight: dict[str, asyncio.Future[ModelResponse]] = {}

    @property
    def model_name(self) -> str:
        """The spec's model string (what grades record)."""
        return self.spec.model_string

    def _pinned_settings(self, settings: ModelSettings | None) -> ModelSettings:
        pinned: dict[str, Any] = {}
        if self.spec.temperature is not None:
            pinned["temperature"] = self.spec.temperature
        if self.spec.seed is not None and self.spec.provider == "openai":
            pinned["seed"] = self.spec.seed
        return ModelSettings(**{**pinned, **(settings or {})})  # type: ignore[typeddict-item]

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
            endpoint=self.spec.base_url,
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
                if not _retryable(exc) or attempts > self.spec.max_retries:
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
                await asyncio.sleep(self._delay(attempts, exc))
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

    def _delay(self, attempt: int, exc: BaseException) -> float:
        """Exponential backoff with full jitter, never shorter than the server's Retry-After."""
        cap = min(self.spec.backoff_max_s, self.spec.backoff_s * 2 ** (attempt - 1))
        delay = self._rng.uniform(0, cap)
        retry_after = getattr(exc, "retry_after", None)
        if isinstance(retry_after, int | float):
            delay = max(delay, float(retry_after))
        return delay


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


class ModelPool:
    """Models for one job, sharing a semaphore per provider endpoint. Create inside the loop."""

    def __init__(self, cache: ResponseCache | None = None, *, seed: int | None = None) -> None:
        self.cache = cache
        self._semaphores: dict[str, asyncio.Semaphore] = {}
        self._models: dict[str, ManagedModel] = {}
        self._rng = random.Random(seed)

    def get(self, spec: ModelSpec, *, wrapped: Model | None = None) -> ManagedModel:
        """The managed model for ``spec``; ``wrapped`` substitutes the model (a FunctionModel)."""
        if spec.ref in self._models and wrapped is None:
            return self._models[spec.ref]
        sem = self._semaphores.setdefault(spec.pool_key, asyncio.Semaphore(spec.max_concurrency))
        api_key = None if wrapped is not None else _api_key(spec)
        model = ManagedModel(
            wrapped or build_model(spec, api_key), spec, sem, self.cache, rng=self._rng
        )
        if wrapped is None:
            self._models[spec.ref] = model
        return model

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[ModelPool]:
        """Close every model's HTTP client when the job ends."""
        try:
            yield self
        finally:
            for m in self._models.values():
                with contextlib.suppress(Exception):
                    await m.wrapped.__aexit__(None, None, None)
