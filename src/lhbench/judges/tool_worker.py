"""A judge's tools served by a sandboxed tool worker (:mod:`lhbench.tools.worker`).

The worker runs the tool functions inside the sandbox; this side, in the judge's process,
turns its tool list into a pydantic-ai toolset and forwards each call. A tool's refusal
reaches the model as MCP toolsets give it (a retry prompt with the error's text); a worker
that dies, hangs past :data:`CALL_TIMEOUT_S` or answers out of protocol fails the call, is
stopped, and every later call fails with the same reason. The worker's answers are read
with a size limit: it reads untrusted state, so nothing it sends is trusted beyond text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic_ai import ModelRetry, Tool
from pydantic_ai.toolsets import FunctionToolset

from lhbench.sandbox import Prepared

__all__ = ["CALL_TIMEOUT_S", "MAX_ANSWER_BYTES", "ToolWorker", "ToolWorkerError"]

CALL_TIMEOUT_S = 120.0  # one tool call (the tools bound their own work well within it)
MAX_ANSWER_BYTES = 8 << 20  # one answer line (tools cut theirs at 200 kB of text)
MAX_TOOLS = 64


class ToolWorkerError(OSError):
    """The tool worker could not start, died, hung or broke the protocol."""


class ToolWorker:
    """One worker process for one verdict: ``async with ToolWorker(p, log) as toolset``."""

    def __init__(
        self,
        prepared: Prepared,
        log: Path,
        *,
        start_timeout: float,
        call_timeout: float = CALL_TIMEOUT_S,
    ) -> None:
        self.prepared = prepared
        self.log = log
        self.start_timeout = start_timeout
        self.call_timeout = call_timeout
        self._proc: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._broken: str | None = None
        self._next = 0

    async def __aenter__(self) -> FunctionToolset[Any]:
        p = self.prepared
        with self.log.open("ab") as log:
            self._proc = await asyncio.create_subprocess_exec(
                *p.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                env=p.env,
                cwd=p.cwd,
                limit=MAX_ANSWER_BYTES,
                start_new_session=True,
            )
        try:
            hello = await self._read(self.start_timeout, "start")
            if "error" in hello:
                raise ToolWorkerError(f"the judge's tools did not start: {hello['error']}")
            return FunctionToolset(self._tools(hello.get("tools")))
        except BaseException:
            await self.close()
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _tools(self, listed: object) -> list[Tool[Any]]:
        if not isinstance(listed, list) or len(listed) > MAX_TOOLS:
            raise ToolWorkerError("the tool worker's tool list is not a list of tools")
        tools = []
        for d in listed:
            if not (
                isinstance(d, dict)
                and isinstance(d.get("name"), str)
                and isinstance(d.get("description"), str)
                and isinstance(d.get("parameters"), dict)
            ):
                raise ToolWorkerError("the tool worker's tool list is not a list of tools")
            tools.append(
                Tool.from_schema(
                    self._caller(d["name"]), d["name"], d["description"], d["parameters"]
                )
            )
        return tools

    def _caller(self, name: str) -> Any:
        async def call(**args: Any) -> str:
            return await self.call(name, args)

        return call

    async def call(self, name: str, args: dict[str, Any]) -> str:
        """The tool's text answer; a refusal raises ModelRetry with the tool's message."""
        async with self._lock:  # the worker answers one request at a time
            if self._broken is not None:
                raise ModelRetry(self._broken)
            assert self._proc is not None and self._proc.stdin is not None
            self._next += 1
            rid = self._next
            try:
                self._proc.stdin.write(
                    (json.dumps({"id": rid, "tool": name, "args": args}) + "\n").encode()
                )
                await self._proc.stdin.drain()
                answer = await self._read(self.call_timeout, f"call of {name}")
            except ToolWorkerError as exc:
                self._broken = f"Error executing tool {name}: {exc}"
                await self.close()
                raise ModelRetry(self._broken) from None
            except (ConnectionError, OSError) as exc:
                self._broken = f"Error executing tool {name}: the tool worker ended ({exc})"
                await self.close()
                raise ModelRetry(self._broken) from None
            if answer.get("id") != rid:
                self._broken = f"Error executing tool {name}: the tool worker broke its protocol"
                await self.close()
                raise ModelRetry(self._broken)
            if isinstance(answer.get("ok"), str):
                return str(answer["ok"])
            raise ModelRetry(str(answer.get("error") or f"Error executing tool {name}"))

    async def _read(self, timeout: float, what: str) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        try:
            line = await asyncio.wait_for(self._proc.stdout.readline(), timeout)
        except TimeoutError:
            raise ToolWorkerError(
                f"the tool worker did not answer in {timeout:g} s ({what})"
            ) from None
        except (ValueError, asyncio.LimitOverrunError):
            raise ToolWorkerError(
                f"the tool worker sent over {MAX_ANSWER_BYTES} bytes ({what})"
            ) from None
        if not line:
            code = await self._exit_code()
            raise ToolWorkerError(f"the tool worker ended (exit {code}) at its {what}")
        try:
            doc = json.loads(line)
        except ValueError:
            raise ToolWorkerError(f"the tool worker sent something not JSON ({what})") from None
        if not isinstance(doc, dict):
            raise ToolWorkerError(f"the tool worker sent something not an object ({what})")
        return doc

    async def _exit_code(self) -> int | None:
        assert self._proc is not None
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(self._proc.wait(), 5)
        return None

    async def close(self) -> None:
        """End the worker (end of input, then a kill if it lingers) and release its sandbox."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.stdin is not None:
                with contextlib.suppress(Exception):
                    proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except TimeoutError:
                # its own session (start_new_session): the sandbox and all in it
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
        self.prepared.close()
