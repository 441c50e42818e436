"""What every response carries, and the checks in front of every state change.

- Pages get a strict Content-Security-Policy (scripts and styles from this app only, no
  inline script or style, no plugins, no framing, Trusted Types required), ``nosniff``,
  no referrer, and ``no-store`` when they are personal.
- Run artifacts are served from their own paths (``/files/…``, ``/arena/f/…``) with a
  policy that sandboxes them: an HTML or SVG file a run wrote is shown in an opaque
  origin with scripts off, or downloaded (``Content-Disposition: attachment``); it never
  runs as the app.
- Redirect targets must be local paths (``/runs/x``), never ``//host`` or a URL.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import quote, urlsplit

__all__ = [
    "FILE_CSP",
    "INLINE_MEDIA",
    "PAGE_CSP",
    "SecurityHeaders",
    "content_disposition",
    "safe_next",
    "same_origin_post",
]

# the app's own scripts only (no inline script, no eval), and Trusted Types: in Chromium
# no script of the page can hand a string to an HTML or script sink (innerHTML, srcdoc,
# script.src…), so the app's JavaScript cannot turn text into markup even by mistake
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; frame-src 'self'; form-action 'self'; "
    "base-uri 'none'; object-src 'none'; frame-ancestors 'none'; "
    "require-trusted-types-for 'script'; trusted-types 'none'"
)
# a run's file: no script at all, an opaque origin, and framable only by this app
FILE_CSP = (
    "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; font-src data:; "
    "sandbox; frame-ancestors 'self'"
)
# media types a browser may show inline from /files (everything else is downloaded)
INLINE_MEDIA = frozenset(
    {
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "image/svg+xml",
        "image/avif",
        "text/html",
    }
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class SecurityHeaders:
    """ASGI middleware: security headers on every response; the files' own policy on theirs.

    A handler that sets ``Content-Security-Policy`` itself (the artifact routes) keeps it.
    """

    def __init__(self, app: ASGIApp, *, hsts: bool = False) -> None:
        self.app = app
        self.hsts = hsts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; add the headers to the response's start."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        static = path.startswith("/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: list[tuple[bytes, bytes]] = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}

                def put(name: bytes, value: str) -> None:
                    if name not in present:
                        headers.append((name, value.encode("latin-1")))

                put(b"content-security-policy", PAGE_CSP)
                put(b"x-content-type-options", "nosniff")
                put(b"x-frame-options", "DENY")
                put(b"referrer-policy", "same-origin")
                put(b"cross-origin-opener-policy", "same-origin")
                put(b"cross-origin-resource-policy", "same-origin")
                put(b"permissions-policy", "camera=(), microphone=(), geolocation=(), usb=()")
                put(b"cache-control", "public, max-age=3600" if static else "no-store")
                if self.hsts:
                    put(b"strict-transport-security", "max-age=31536000")
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


_CONTROL = re.compile(r"[\x00-\x1f\x7f\\]")


def safe_next(target: str | None, default: str = "/") -> str:
    r"""``target`` if it is a path on this site, else ``default``.

    Refuses absolute URLs, scheme-relative ``//host``, backslashes (``/\\host`` is a host
    to some browsers), control characters and anything with a scheme or host.
    """
    if not target or not target.startswith("/") or target.startswith("//"):
        return default
    if _CONTROL.search(target):
        return default
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return default
    return target


def content_disposition(kind: str, name: str | None = None) -> str:
    """``inline`` or ``attachment``, with an RFC 5987 file name (never raw header text)."""
    if not name:
        return kind
    base = name.rsplit("/", 1)[-1] or "file"
    ascii_name = re.sub(r"[^A-Za-z0-9._-]", "_", base)[:100] or "file"
    return f"{kind}; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(base[:200], safe='')}"


def same_origin_post(headers: MutableMapping[str, str] | Any, host: str | None) -> bool:
    """Whether a form post came from this site (Fetch metadata, then Origin).

    Browsers send ``Sec-Fetch-Site`` and ``Origin`` with every POST; a request without
    them (a script, a test client) is left to the CSRF token.
    """
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = headers.get("origin")
    if origin and origin != "null" and host:
        return urlsplit(origin).netloc == host
    return origin != "null"
