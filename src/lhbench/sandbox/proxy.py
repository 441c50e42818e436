"""The model endpoint as a sandboxed CLI reaches it: an HTTP proxy that holds the real key.

A CLI agent needs its provider's API key to talk to the model, but whatever the CLI can
read, the agent's own shell commands can read too (its environment, its config files).
So the CLI gets a placeholder key and a plain-HTTP base URL on 127.0.0.1 inside the
sandbox; the relay carries each connection over a Unix socket to this proxy, on the host,
which swaps the placeholder for the real key, forwards the request to the one upstream base
URL it was made for (TLS on the host side) and streams the answer back. The key never
enters the sandbox, and the proxy reaches nothing but its upstream.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path
from typing import Any

__all__ = ["PLACEHOLDER_KEY", "KeyProxy"]

PLACEHOLDER_KEY = "lhbench-sandbox-placeholder-key"
# headers a proxy must not pass on (RFC 9110 §7.6.1), plus those it sets itself
_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
}


class KeyProxy:
    """A reverse proxy on a Unix socket to ``upstream``, the real ``key`` for the placeholder.

    Use as a context manager; ``path`` is the socket to bind into the sandbox. With
    ``key`` empty (a local server that checks none), requests pass unchanged.
    """

    def __init__(
        self,
        path: Path,
        upstream: str,
        key: str,
        *,
        max_concurrent: int = 16,
        timeout_s: float = 900.0,
    ) -> None:
        self.path = path
        self.upstream = upstream.rstrip("/")
        self.key = key
        self.max_concurrent = max_concurrent
        self.timeout_s = timeout_s
        self.requests = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None

    def _swap(self, value: str) -> str:
        return value.replace(PLACEHOLDER_KEY, self.key) if self.key else value

    async def _serve(self) -> None:
        from aiohttp import ClientSession, ClientTimeout, web

        gate = asyncio.Semaphore(self.max_concurrent)
        client = ClientSession(timeout=ClientTimeout(total=self.timeout_s), auto_decompress=False)

        async def handle(request: web.Request) -> web.StreamResponse:
            async with gate:
                self.requests += 1
                headers = {
                    k: self._swap(v) for k, v in request.headers.items() if k.lower() not in _HOP
                }
                url = self.upstream + self._swap(request.rel_url.path_qs)
                body = await request.read()
                async with client.request(
                    request.method, url, headers=headers, data=body, allow_redirects=False
                ) as upstream:
                    response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
                    for k, v in upstream.headers.items():
                        if k.lower() not in _HOP:
                            response.headers[k] = v
                    await response.prepare(request)
                    async for chunk in upstream.content.iter_any():
                        await response.write(chunk)
                    await response.write_eof()
                    return response

        app = web.Application(client_max_size=64 << 20)
        app.router.add_route("*", "/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.UnixSite(runner, str(self.path))
        await site.start()
        self.path.chmod(0o777)  # the sandboxed uid is mapped, not the same user
        self._stop = asyncio.Event()
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await runner.cleanup()
            await client.close()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:  # reported to __enter__'s caller
            self._error = exc
            self._ready.set()
        finally:
            loop.close()

    def __enter__(self) -> KeyProxy:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._thread = threading.Thread(target=self._run, daemon=True, name="lhbench-key-proxy")
        self._thread.start()
        self._ready.wait(timeout=30)
        if self._error is not None or self._stop is None:
            raise RuntimeError(f"the model proxy did not start: {self._error}")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=10)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def __repr__(self) -> str:
        return f"KeyProxy({self.path} -> {self.upstream})"

    @property
    def stats(self) -> dict[str, Any]:
        """Requests served (for tests and logs)."""
        return {"requests": self.requests}
