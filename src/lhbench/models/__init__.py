"""Model access on pydantic-ai: model strings, limits, retries, response cache, accounting."""

from lhbench.models.runtime import (
    CallRecord,
    Ledger,
    ManagedModel,
    ModelPool,
    ResponseCache,
    build_model,
    cache_refresh,
    cache_salt,
    current_ledger,
    is_transport_error,
    request_key,
)
from lhbench.models.spec import PROVIDERS, ModelSpec, infer_family, resolve_model

__all__ = [
    "PROVIDERS",
    "CallRecord",
    "Ledger",
    "ManagedModel",
    "ModelPool",
    "ModelSpec",
    "ResponseCache",
    "build_model",
    "cache_refresh",
    "cache_salt",
    "current_ledger",
    "infer_family",
    "is_transport_error",
    "request_key",
    "resolve_model",
]
