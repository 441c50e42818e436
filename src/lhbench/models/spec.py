"""Model references: a pydantic-ai model string, optionally at an OpenAI-compatible base URL.

Accepted forms:

- ``openai:gpt-5.2``, ``anthropic:claude-sonnet-4-6``, ``google-gla:gemini-3.1-pro``;
- ``openai:qwen2.5-7b@http://127.0.0.1:8000/v1`` (any OpenAI-compatible server: vLLM,
  Ollama, llama.cpp, the lhbench stub);
- an alias defined in ``lhbench.toml`` under ``[models.<alias>]``.
"""

from __future__ import annotations

import functools
import os

from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt

from lhbench.errors import ConfigError
from lhbench.schema import Schema

__all__ = ["PROVIDERS", "ModelSpec", "infer_family", "resolve_model"]

PROVIDERS = ("openai", "anthropic", "google-gla", "test")
# the environment variable each provider's SDK reads for its server when none is given
_BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}

_FAMILY_HINTS = (
    ("claude", "anthropic"),
    ("gpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("gemini", "google"),
    ("gemma", "google"),
    ("llama", "meta"),
    ("qwen", "qwen"),
    ("deepseek", "deepseek"),
    ("mistral", "mistral"),
    ("mixtral", "mistral"),
    ("kimi", "moonshot"),
    ("glm", "zhipu"),
)


def infer_family(provider: str, model_name: str, base_url: str | None) -> str:
    """The model family recorded with each grade (what makes a panel multi-family)."""
    lowered = model_name.lower()
    if base_url is None:
        if provider == "anthropic":
            return "anthropic"
        if provider.startswith("google"):
            return "google"
        if provider == "openai":
            return "openai"
    for hint, family in _FAMILY_HINTS:
        if hint in lowered:
            return family
    return provider if base_url is None else "unknown"


class ModelSpec(Schema):
    """Everything needed to call one model and account for it."""

    ref: str = Field(description="What the user wrote: an alias or a model string.")
    provider: str
    name: str
    base_url: str | None = None
    api_key_env: str | None = None
    family: str = ""
    max_concurrency: PositiveInt = 8
    timeout_s: PositiveFloat = 120.0
    max_retries: int = Field(default=5, ge=0, le=20)
    backoff_s: NonNegativeFloat = Field(default=1.0, description="First retry delay.")
    backoff_max_s: NonNegativeFloat = 30.0
    price_input_per_mtok: NonNegativeFloat | None = None
    price_output_per_mtok: NonNegativeFloat | None = None
    temperature: float | None = 0.0
    seed: int | None = 0

    @property
    def model_string(self) -> str:
        """``provider:name`` (what a grade records as the judge model)."""
        return f"{self.provider}:{self.name}"

    @property
    def endpoint(self) -> str | None:
        """The server asked: ``base_url``, else the SDK's environment override, else None.

        The OpenAI and Anthropic clients read ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``
        when no base URL is given, so a judge pointed at another server by the environment
        is another judge: this is what its identity and the response-cache key record.
        None: the provider's own server.
        """
        if self.base_url:
            return self.base_url
        env = _BASE_URL_ENV.get(self.provider)
        return (os.environ.get(env) or None) if env else None

    @property
    def pool_key(self) -> str:
        """Requests sharing this key share one concurrency limit (one provider endpoint)."""
        return self.endpoint or self.provider

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """USD for a call: configured prices first, else the public price table; None if unknown."""
        if self.price_input_per_mtok is not None and self.price_output_per_mtok is not None:
            return (
                input_tokens * self.price_input_per_mtok
                + output_tokens * self.price_output_per_mtok
            ) / 1e6
        return _table_price(self.provider, self.name, input_tokens, output_tokens)

    @property
    def price_source(self) -> str | None:
        """Where this model's costs come from: ``configured``, the table's entry, or None."""
        if self.price_input_per_mtok is not None and self.price_output_per_mtok is not None:
            return "configured"
        return _table_entry(self.provider, self.name)


# lhbench provider -> genai-prices provider id
_TABLE_PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "google-gla": "google"}


@functools.lru_cache(maxsize=256)
def _table_entry(provider: str, name: str) -> str | None:
    """``genai-prices <version>: <provider>/<model id>`` for a model the table knows."""
    pid = _TABLE_PROVIDERS.get(provider)
    if pid is None:
        return None
    try:
        from importlib.metadata import version

        from genai_prices import Usage, calc_price

        found = calc_price(Usage(input_tokens=0, output_tokens=0), model_ref=name, provider_id=pid)
    except (ImportError, LookupError):
        return None
    return f"genai-prices {version('genai-prices')}: {found.provider.id}/{found.model.id}"


def _table_price(provider: str, name: str, input_tokens: int, output_tokens: int) -> float | None:
    if _table_entry(provider, name) is None:
        return None
    from genai_prices import Usage, calc_price

    found = calc_price(
        Usage(input_tokens=input_tokens, output_tokens=output_tokens),
        model_ref=name,
        provider_id=_TABLE_PROVIDERS[provider],
    )
    return float(found.total_price)


def resolve_model(ref: str, aliases: dict[str, dict[str, object]] | None = None) -> ModelSpec:
    """Turn an alias or model string into a ModelSpec.

    Raises:
        ConfigError: unknown alias, unknown provider, or a malformed string.
    """
    ref = ref.strip()
    table = dict((aliases or {}).get(ref, {}))
    target = str(table.pop("model", ref)) if table or ref in (aliases or {}) else ref
    base_url: str | None = None
    if "@" in target:
        target, base_url = target.split("@", 1)
    provider, sep, name = target.partition(":")
    if not sep or not name:
        raise ConfigError(
            f"model {ref!r}: expected 'provider:model' (e.g. openai:gpt-5.2), "
            f"'provider:model@http://host/v1', or an alias from [models] in lhbench.toml"
        )
    if provider not in PROVIDERS:
        raise ConfigError(
            f"model {ref!r}: unknown provider {provider!r}; known: {', '.join(PROVIDERS)}"
        )
    base_url = str(table.pop("base_url", base_url)) if table.get("base_url") or base_url else None
    family = str(table.pop("family", "")) or infer_family(provider, name, base_url)
    try:
        return ModelSpec.model_validate(
            {
                "ref": ref,
                "provider": provider,
                "name": name,
                "base_url": base_url,
                "family": family,
                **table,
            }
        )
    except Exception as exc:  # pydantic ValidationError: a bad alias table
        raise ConfigError(f"[models.{ref}] in lhbench.toml: {exc}") from None
