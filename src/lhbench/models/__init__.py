"""Model access: model strings, limits, retries, response cache, accounting.

Agents (the harness, the agent judge) use pydantic-ai models wrapped in ``ManagedModel``;
single-shot judges use the same model's ``direct`` client (one request, one structured
answer) over lhbench's own client per wire protocol.
"""

from typing import TYPE_CHECKING

from lhbench._lazy import lazy_names

if TYPE_CHECKING:
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
        cache_refreshing,
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
    "cache_refreshing",
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

# Each name loads its module on first use: the job runner needs the call context, not
# pydantic-ai's agent stack that building a model needs.
_MODULES = {
    "Ask": "lhbench.models.ask",
    "BatchedResponseCache": "lhbench.models.replies",
    "CacheRow": "lhbench.models.replies",
    "CallRecord": "lhbench.models.calls",
    "DirectClient": "lhbench.models.direct",
    "DirectPath": "lhbench.models.runtime",
    "Exchange": "lhbench.models.ask",
    "ImagePart": "lhbench.models.ask",
    "Ledger": "lhbench.models.calls",
    "ManagedModel": "lhbench.models.runtime",
    "ModelPool": "lhbench.models.runtime",
    "ModelSpec": "lhbench.models.spec",
    "OutputSchema": "lhbench.models.ask",
    "PROVIDERS": "lhbench.models.spec",
    "PreparedRequest": "lhbench.models.ask",
    "PydanticAITransport": "lhbench.models.direct",
    "Reply": "lhbench.models.ask",
    "ReplyCache": "lhbench.models.replies",
    "ResponseCache": "lhbench.models.runtime",
    "Transport": "lhbench.models.direct",
    "UserPart": "lhbench.models.ask",
    "WIRES": "lhbench.models.wire",
    "WireProtocol": "lhbench.models.wire",
    "WireTransport": "lhbench.models.direct",
    "build_model": "lhbench.models.runtime",
    "cache_refresh": "lhbench.models.calls",
    "cache_refreshing": "lhbench.models.calls",
    "cache_salt": "lhbench.models.calls",
    "current_ledger": "lhbench.models.calls",
    "direct_client": "lhbench.models.runtime",
    "infer_family": "lhbench.models.spec",
    "is_transport_error": "lhbench.models.calls",
    "request_digest": "lhbench.models.ask",
    "request_key": "lhbench.models.runtime",
    "resolve_model": "lhbench.models.spec",
    "wire_for": "lhbench.models.wire",
}


__getattr__ = lazy_names(__name__, _MODULES, globals())
