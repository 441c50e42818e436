"""A real HTTP server on 127.0.0.1 speaking OpenAI chat and Responses, Anthropic Messages, Gemini.

Each wire protocol is one object in ``lhbench.testing.protocols`` (request parsing and
reply rendering, plain and SSE), routed by its path; all are answered by the same script.

It answers from a script the caller gives (a function of the request), with optional
latency and injected faults, and logs every request so tests can count calls. Tests,
``bench/`` scripts and users dry-running a judge configuration offline all use it; it
never pretends to be a model: every answer comes from the script.

Faults: ``"429"`` (rate limited, with Retry-After), ``"500"``, ``"timeout"`` (the server
holds the request past any sensible client timeout), ``"truncated"`` (a 200 whose JSON body
is cut off mid-way), ``"malformed"`` (a well-formed response whose tool-call arguments are
not valid JSON, as a model that emits broken JSON would produce).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import random
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from lhbench.testing.protocols import PROTOCOLS, WireProtocol

__all__ = [
    "FAULTS",
    "Fault",
    "ModelStub",
    "StubReply",
    "StubRequest",
    "StubScript",
    "load_script",
]

Fault = Literal["429", "500", "timeout", "truncated", "malformed"]
FAULTS: tuple[Fault, ...] = ("429", "500", "timeout", "truncated", "malformed")


@dataclass
class StubRequest:
    """One chat-completions request as the script sees it."""

    index: int
    model: str
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The request's messages."""
        return list(self.body.get("messages", []))

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The function tools offered."""
        return list(self.body.get("tools", []) or [])

    @property
    def tool_names(self) -> list[str]:
        """Names of the offered tools, in order."""
        return [t.get("function", {}).get("name", "") for t in self.tools]

    def text(self) -> str:
        """Every text part of every message, joined (what a model would read)."""
        parts: list[str] = []
        for m in self.messages:
            content = m.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(p.get("text", "") for p in content if isinstance(p, dict))
            for call in m.get("tool_calls", []) or []:
                parts.append(call.get("function", {}).get("arguments", ""))
        return "\n".join(parts)

    def last_user_text(self) -> str:
        """The text of the last user message."""
        for m in reversed(self.messages):
            if m.get("role") == "user":
                content = m.get("content")
                if isinstance(content, str):
                    return content
                if isinstance(content, list):
                    return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
        return ""

    def tool_results(self) -> list[str]:
        """Contents of the tool-result messages, in order."""
        return [str(m.get("content", "")) for m in self.messages if m.get("role") == "tool"]


@dataclass
class StubReply:
    """What the stub answers: text, tool calls, or a fault; with optional latency and usage."""

    content: str | None = None
    tool_calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)
    fault: Fault | None = None
    latency: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @classmethod
    def call(cls, name: str, arguments: dict[str, Any] | str) -> StubReply:
        """A reply that calls one tool."""
        return cls(tool_calls=[(name, arguments)])


StubScript = Callable[[StubRequest], "StubReply | Awaitable[StubReply]"]


@dataclass
class LoggedRequest:
    """One request as logged at arrival; ``status`` and ``finished`` are set when answered."""

    index: int
    model: str
    fault: Fault | None
    status: int
    started: float
    finished: float
    body: dict[str, Any]


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ModelStub:
    """The stub server. Use as a context manager, or ``start()``/``stop()``.

    Args:
        script: Called for every request; returns the StubReply to send.
        latency: Seconds to wait before every answer (a reply may set its own).
        fault_rate: Share of requests turned into a fault chosen from ``faults``, drawn
            from a seeded RNG (so a run is reproducible).
        faults: The faults to draw from.
        seed: RNG seed for fault injection.
        timeout_hold: How long a ``"timeout"`` fault holds the request.
        port: 0 picks a free port.
    """

    def __init__(
        self,
        script: StubScript,
        *,
        latency: float = 0.0,
        fault_rate: float = 0.0,
        faults: tuple[Fault, ...] = FAULTS,
        seed: int = 0,
        timeout_hold: float = 30.0,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.script = script
        self.latency = latency
        self.fault_rate = fault_rate
        self.faults = faults
        self.timeout_hold = timeout_hold
        self.host = host
        self.port = port
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._log: list[LoggedRequest] = []
        self._counter = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.app = Starlette(
            routes=[
                *(Route(p.path, self._handler(p), methods=["POST"]) for p in PROTOCOLS),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/_stub/requests", self._requests, methods=["GET"]),
                Route("/_stub/reset", self._reset, methods=["POST"]),
            ]
        )

    # lifecycle --------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, e.g. ``http://127.0.0.1:43121/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> ModelStub:
        """Start serving in a background thread; returns when the port accepts connections."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=30
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[sock])),  # type: ignore[union-attr]
            name="lhbench-model-stub",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("model stub did not start within 10 s")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> ModelStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # the log ----------------------------------------------------------------------------

    @property
    def requests(self) -> list[LoggedRequest]:
        """Every request so far, in arrival order."""
        with self._lock:
            return list(self._log)

    @property
    def count(self) -> int:
        """How many chat-completions requests arrived."""
        with self._lock:
            return len(self._log)

    def reset(self) -> None:
        """Forget the log."""
        with self._lock:
            self._log.clear()

    # handlers ---------------------------------------------------------------------------

    async def _models(self, _request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "stub", "object": "model"}]})

    async def _requests(self, _request: Request) -> Response:
        return JSONResponse(
            [
                {"index": r.index, "model": r.model, "fault": r.fault, "status": r.status}
                for r in self.requests
            ]
        )

    async def _reset(self, _request: Request) -> Response:
        self.reset()
        return JSONResponse({"ok": True})

    def _log_request(self, req: LoggedRequest) -> None:
        with self._lock:
            self._log.append(req)

    def _handler(self, protocol: WireProtocol) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            body = await protocol.parse(request)
            if isinstance(body, Response):
                return body
            return await self._answer(body, protocol)

        return handle

    async def _answer(self, body: dict[str, Any], protocol: WireProtocol) -> Response:
        """The script's reply to a request, in the request's protocol (or the fault drawn)."""
        started = time.monotonic()
        with self._lock:
            index = self._counter
            self._counter += 1
            injected: Fault | None = (
                self._rng.choice(self.faults)
                if self.fault_rate and self._rng.random() < self.fault_rate
                else None
            )
        stub_req = StubRequest(index=index, model=str(body.get("model", "")), body=body)
        reply = self.script(stub_req)
        if inspect.isawaitable(reply):
            reply = await reply
        fault = injected or reply.fault
        # logged on arrival, so a request is counted even if its client goes away
        entry = LoggedRequest(index, stub_req.model, fault, 0, started, started, body)
        self._log_request(entry)
        delay = reply.latency if reply.latency is not None else self.latency
        if delay:
            await asyncio.sleep(delay)
        response: Response
        if fault in ("429", "500"):
            response = protocol.fault(fault)
        elif fault == "timeout":
            await asyncio.sleep(self.timeout_hold)
            response = JSONResponse({"error": {"message": "held past timeout"}}, status_code=504)
        else:
            completion = self._completion(stub_req, reply, malformed=fault == "malformed")
            response = protocol.render(completion, body, truncated=fault == "truncated")
        entry.status = response.status_code
        entry.finished = time.monotonic()
        return response

    def _completion(self, req: StubRequest, reply: StubReply, *, malformed: bool) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        calls: list[dict[str, Any]] = []
        for k, (name, args) in enumerate(reply.tool_calls):
            arguments = args if isinstance(args, str) else json.dumps(args)
            if malformed:
                arguments = arguments[: max(1, len(arguments) // 2)]
            calls.append(
                {
                    "id": f"call_{req.index}_{k}",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
            )
        if malformed and not calls:
            message["content"] = (reply.content or "{}")[: max(1, len(reply.content or "{}") // 2)]
        if calls:
            message["tool_calls"] = calls
        out_text = (reply.content or "") + "".join(c["function"]["arguments"] for c in calls)
        prompt_tokens = (
            reply.prompt_tokens if reply.prompt_tokens is not None else _estimate_tokens(req.text())
        )
        completion_tokens = (
            reply.completion_tokens
            if reply.completion_tokens is not None
            else _estimate_tokens(out_text)
        )
        return {
            "id": f"chatcmpl-stub-{req.index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if calls else "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def load_script(ref: str) -> StubScript:
    """Import ``package.module:attribute`` as a script (for running the stub as a process)."""
    module_name, sep, attr = ref.partition(":")
    if not sep:
        raise ValueError(f"script must be 'module:attribute', got {ref!r}")
    obj = getattr(importlib.import_module(module_name), attr)
    # a class or a zero-argument factory is called once to make the script
    takes_request = not inspect.isclass(obj) and len(inspect.signature(obj).parameters) >= 1
    needs_args = [
        p
        for p in inspect.signature(obj).parameters.values()
        if p.default is inspect.Parameter.empty
    ]
    script = obj if takes_request and needs_args else obj()
    if not callable(script):
        raise ValueError(f"{ref!r} is not callable")
    return script  # type: ignore[no-any-return]
