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
import base64
import binascii
import contextlib
import json
import os
import re
import signal
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn

from pydantic_ai import BinaryContent, ModelRetry, Tool
from pydantic_ai.toolsets import FunctionToolset

from lhbench.sandbox import Prepared

__all__ = ["CALL_TIMEOUT_S", "MAX_ANSWER_BYTES", "Answer", "ToolWorker", "ToolWorkerError"]

CALL_TIMEOUT_S = 120.0  # one tool call (the tools bound their own work well within it)
MAX_ANSWER_BYTES = 32 << 20  # one answer line (text is cut at 200 kB; a few page images)
IMAGE_FORMATS = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}
MAX_TOOLS = 64
MAX_DESCRIPTION_CHARS = 4_000
MAX_SCHEMA_CHARS = 20_000
MAX_ERROR_CHARS = 500  # a worker's reason, as kept in a verdict's error
MAX_ARGS_BYTES = 1 << 20  # a call's arguments (the worker refuses a longer request line)
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


Answer = str | BinaryContent | list[str | BinaryContent]


class ToolWorkerError(OSError):
    """The tool worker could not start, died, hung or broke the protocol.

    ``final``: asking again cannot help (the worker refused its target, or its tool list
    is not one), so a verdict it fails is not retried.
    """

    def __init__(self, message: str, *, final: bool = False) -> None:
        super().__init__(message[:MAX_ERROR_CHARS])
        self.final = final


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
                reason = str(hello["error"])
                raise ToolWorkerError(f"the judge's tools did not start: {reason}", final=True)
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
        """The worker's tool list as pydantic-ai tools, checked: it comes from the sandbox."""
        bad = ToolWorkerError("the tool worker's tool list is not a list of tools", final=True)
        if not isinstance(listed, list) or not 0 < len(listed) <= MAX_TOOLS:
            raise bad
        tools, names = [], set()
        for d in listed:
            if not (
                isinstance(d, dict)
                and isinstance(d.get("name"), str)
                and _NAME.fullmatch(d["name"])
                and d["name"] not in names
                and not d["name"].startswith("final_result")  # the verdict's output tool
                and isinstance(d.get("description"), str)
                and len(d["description"]) <= MAX_DESCRIPTION_CHARS
                and isinstance(d.get("parameters"), dict)
                and d["parameters"].get("type") == "object"
                and len(json.dumps(d["parameters"])) <= MAX_SCHEMA_CHARS
            ):
                raise bad
            names.add(d["name"])
            tools.append(
                Tool.from_schema(
                    self._caller(d["name"]), d["name"], d["description"], d["parameters"]
                )
            )
        return tools

    def _caller(self, name: str) -> Any:
        async def call(**args: Any) -> Answer:
            return await self.call(name, args)

        return call

    async def call(self, name: str, args: dict[str, Any]) -> Answer:
        """The tool's answer (text, or text and images); a refusal raises ModelRetry.

        A one-part answer is that part, as pydantic-ai's MCP toolset gives it.
        """
        encoded = json.dumps(args)  # once: its size is checked before the worker is asked
        if len(encoded) > MAX_ARGS_BYTES:
            raise ModelRetry(f"Error executing tool {name}: the arguments are over 1 MB")
        async with self._lock:  # the worker answers one request at a time
            if self._broken is not None:
                raise ModelRetry(self._broken)
            assert self._proc is not None and self._proc.stdin is not None
            self._next += 1
            rid = self._next
            request = f'{{"id": {rid}, "tool": {json.dumps(name)}, "args": {encoded}}}\n'.encode()
            try:
                # writing, and reading the answer, under one deadline: a worker that stops
                # reading its input must not hold the judge either
                async with asyncio.timeout(self.call_timeout):
                    self._proc.stdin.write(request)
                    await self._proc.stdin.drain()
                    answer = await self._read(None, f"call of {name}")
            except TimeoutError:
                reason = f"the tool worker did not answer in {self.call_timeout:g} s"
                await self._break(f"Error executing tool {name}: {reason}")
            except ToolWorkerError as exc:
                await self._break(f"Error executing tool {name}: {exc}")
            except (ConnectionError, OSError) as exc:
                await self._break(f"Error executing tool {name}: the tool worker ended ({exc})")
            except asyncio.CancelledError:
                # its answer may still come: the next call must not read it as its own
                await self._stop(f"Error executing tool {name}: the call was cancelled")
                raise
            if answer.get("id") != rid:
                await self._break(
                    f"Error executing tool {name}: the tool worker broke its protocol"
                )
            ok = answer.get("ok")
            if isinstance(ok, str):
                return _clean(ok)
            if isinstance(ok, list):
                parts = _parts(ok)
                if parts is None:
                    await self._break(
                        f"Error executing tool {name}: the tool worker broke its protocol"
                    )
                return parts[0] if len(parts) == 1 else parts
            raise ModelRetry(_clean(str(answer.get("error") or f"Error executing tool {name}")))

    async def _stop(self, reason: str) -> None:
        """Stop the worker; every later call fails with ``reason``."""
        self._broken = reason[:MAX_ERROR_CHARS]
        await self.close()

    async def _break(self, reason: str) -> NoReturn:
        """Stop the worker; this call and every later one fail with ``reason``."""
        await self._stop(reason)
        raise ModelRetry(self._broken or reason)

    async def _read(self, timeout: float | None, what: str) -> dict[str, Any]:
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


def _parts(listed: list[Any]) -> list[str | BinaryContent] | None:
    """An answer's text and images, or None when it is not made of them."""
    out: list[str | BinaryContent] = []
    for p in listed:
        if isinstance(p, dict) and isinstance(p.get("text"), str) and len(p) == 1:
            out.append(_clean(p["text"]))
        elif isinstance(p, dict) and isinstance(p.get("image"), str):
            media = IMAGE_FORMATS.get(str(p.get("format")))
            if media is None:
                return None
            try:
                data = base64.b64decode(p["image"], validate=True)
            except (binascii.Error, ValueError):
                return None
            out.append(BinaryContent(data=data, media_type=media))
        else:
            return None
    return out


def _clean(text: str) -> str:
    """``text`` as valid UTF-8 (a lone surrogate, escaped in JSON, cannot reach a model)."""
    return text.encode("utf-8", "replace").decode("utf-8")
