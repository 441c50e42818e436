"""Serving a built app on 127.0.0.1: strictly (as static hosting does) and leniently.

Strict: a path is a file, or a directory with ``index.html``; anything else is 404, as on
GCS or S3 static hosting. Lenient adds the two fallbacks agent-built apps usually need:
an asset path under a route (``/product/assets/x.js``, from ``base: './'`` with nested
routes) is retried without the leading segments, and any other unknown path gets
``/index.html`` (single-page-app routing). Every fallback used is logged, so a check can
say the app works only thanks to one. Files are read without following symbolic links.
"""

from __future__ import annotations

import mimetypes
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from lhbench.envs.paths import EscapeError, NotARegularFile, read_beneath

__all__ = ["AppServer", "ServedRequest"]

_MAX_FILE = 64 << 20


@dataclass(frozen=True)
class ServedRequest:
    """One request the server answered."""

    path: str
    status: int
    fallback: str | None = None  # "asset" or "spa"


@dataclass
class AppServer:
    """``with AppServer(dist, lenient=True) as srv: srv.url``."""

    root: Path
    lenient: bool = True
    host: str = "127.0.0.1"
    log: list[ServedRequest] = field(default_factory=list)
    _httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """Base URL."""
        if self._httpd is None:
            raise RuntimeError("the app server is not running")
        return f"http://{self.host}:{self._httpd.server_address[1]}"

    def __enter__(self) -> AppServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> AppServer:
        """Serve in a background thread."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                server._get(self, head=False)

            def do_HEAD(self) -> None:
                server._get(self, head=True)

        self._httpd = ThreadingHTTPServer((self.host, 0), Handler)
        self._httpd.daemon_threads = True
        httpd = self._httpd
        threading.Thread(target=lambda: httpd.serve_forever(0.05), daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def _read(self, rel: str) -> bytes | None:
        rel = rel.strip("/")
        for cand in ([rel] if rel else []) + [f"{rel}/index.html".lstrip("/")]:
            try:
                data, size = read_beneath(self.root, cand, limit=_MAX_FILE)
            except (IsADirectoryError, NotADirectoryError, FileNotFoundError):
                continue
            except (EscapeError, NotARegularFile, OSError):
                return None
            if size > _MAX_FILE:
                return None
            return data
        return None

    def resolve(self, raw_path: str) -> tuple[int, bytes, str, str | None]:
        """(status, body, content type, fallback used) for a request path."""
        path = unquote(urlsplit(raw_path).path)
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if ".." in parts:
            return 404, b"not found", "text/plain", None
        rel = "/".join(parts)
        data = self._read(rel)
        name = parts[-1] if parts else "index.html"
        if data is not None:
            kind = "index.html" if (not parts or "." not in name) else name
            return 200, data, self._type(kind, data), None
        if self.lenient:
            for i in range(1, len(parts)):
                tail = "/".join(parts[i:])
                if "." in parts[-1]:
                    data = self._read(tail)
                    if data is not None:
                        return 200, data, self._type(parts[-1], data), "asset"
            if "." not in name or name.endswith(".html"):
                data = self._read("index.html")
                if data is not None:
                    return 200, data, "text/html; charset=utf-8", "spa"
        return 404, b"not found", "text/plain", None

    @staticmethod
    def _type(name: str, data: bytes) -> str:
        if name.endswith((".html", ".htm")) or name == "index.html":
            return "text/html; charset=utf-8"
        guess = mimetypes.guess_type(name)[0]
        if name.endswith((".js", ".mjs", ".jsx")):
            return "text/javascript"
        return guess or ("image/png" if data[:4] == b"\x89PNG" else "application/octet-stream")

    def _get(self, h: BaseHTTPRequestHandler, *, head: bool) -> None:
        status, body, ctype, fallback = self.resolve(h.path)
        self.log.append(ServedRequest(urlsplit(h.path).path, status, fallback))
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        h.send_header("Cache-Control", "no-store")
        h.end_headers()
        if not head:
            h.wfile.write(body)
