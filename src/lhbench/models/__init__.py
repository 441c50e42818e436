"""Model access: model strings, limits, retries, response cache, accounting.

Agents (the harness, the agent judge) use pydantic-ai models wrapped in ``ManagedModel``;
single-shot judges use the same model's ``direct`` client (one request, one structured
answer) over lhbench's own client per wire protocol.
"""

from lhbench.models.ask import (
    Ask,
    Exchange,
    ImagePart,
    OutputSchema,
    PreparedRequest,
    Reply,
    UserPart,
    request_digest,
)
from lhbench.models.calls import (
    CallRecord,
    Ledger,
    cache_refresh,
    cache_salt,
    current_ledger,
    is_transport_error,
)
from lhbench.models.direct import DirectClient, PydanticAITransport, Transport, WireTransport
from lhbench.models.replies import BatchedResponseCache, CacheRow, ReplyCache
from lhbench.models.runtime import (
    DirectPath,
    ManagedModel,
    ModelPool,
    ResponseCache,
    build_model,
    direct_client,
    request_key,
)
from lhbench.models.spec import PROVIDERS, ModelSpec, infer_family, resolve_model
from lhbench.models.wire import WIRES, WireProtocol, wire_for

__all__ = [
    "PROVIDERS",
    "WIRES",
    "Ask",
    "BatchedResponseCache",
    "CacheRow",
    "CallRecord",
    "DirectClient",
    "DirectPath",
    "Exchange",
    "ImagePart",
    "Ledger",
    "ManagedModel",
    "ModelPool",
    "ModelSpec",
    "OutputSchema",
    "PreparedRequest",
    "PydanticAITransport",
    "Reply",
    "ReplyCache",
    "ResponseCache",
    "Transport",
    "UserPart",
    "WireProtocol",
    "WireTransport",
    "build_model",
    "cache_refresh",
    "cache_salt",
    "current_ledger",
    "direct_client",
    "infer_family",
    "is_transport_error",
    "request_digest",
    "request_key",
    "resolve_model",
    "wire_for",
]
