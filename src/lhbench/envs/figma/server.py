"""A real HTTP server answering the Figma REST subset the design tools use, from fixtures.

Endpoints (shapes from Figma's OpenAPI spec): ``GET /v1/files/:key`` (``ids``, ``depth``),
``/v1/files/:key/nodes`` (``ids`` required, ``depth``), ``/v1/images/:key`` (``ids``,
``scale`` 0.01–4, ``format`` png/jpg/svg/pdf, the 32-megapixel cap),
``/v1/files/:key/images`` (image fills), ``/v1/files/:key/variables/local`` (403 unless
the fixture has ``variables_local.json``), ``/v1/files/:key/meta`` and ``/v1/me``. Image
URLs point back at this server (``/__render/…``, ``/__fill/…``), as Figma's point at S3.

Errors carry Figma's bodies: ``{"status": n, "err": "…"}``, or ``{"error": true, "status":
n, "message": "…"}`` on the variables endpoint. Every ``/v1`` request needs the
``X-Figma-Token`` (or ``Authorization: Bearer``) the server was given, and passes the
injectable rate limiter (429 with ``Retry-After`` and Figma's rate-limit headers).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from lhbench.envs.figma.design import Node, dash_id, iter_nodes, node_path, truncate
from lhbench.envs.figma.ratelimit import RateLimit, RateLimiter
from lhbench.envs.figma.store import FixtureError, FixtureStore

__all__ = ["FigmaFixtureServer", "nodes_answer"]

_FILE_META = ("name", "role", "lastModified", "editorType", "thumbnailUrl", "version")
_FORMATS = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "svg": "image/svg+xml",
    "pdf": "application/pdf",
}
_KEY = r"(?P<key>[A-Za-z0-9_-]{1,128})"
_ROUTES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"^/v1/files/{_KEY}$"), "file"),
    (re.compile(rf"^/v1/files/{_KEY}/nodes$"), "nodes"),
    (re.compile(rf"^/v1/images/{_KEY}$"), "images"),
    (re.compile(rf"^/v1/files/{_KEY}/images$"), "fills"),
    (re.compile(rf"^/v1/files/{_KEY}/variables/local$"), "variables"),
    (re.compile(rf"^/v1/files/{_KEY}/meta$"), "meta"),
    (re.compile(r"^/v1/me$"), "me"),
]


class _HttpError(Exception):
    def __init__(self, status: int, body: dict[str, Any], headers: Iterable[tuple[str, str]] = ()):
        super().__init__(status)
        self.status = status
        self.body = body
        self.headers = list(headers)


def _json(doc: object) -> bytes:
    """Compact JSON, as Figma's API writes it."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def _err(status: int, message: str) -> _HttpError:
    return _HttpError(status, {"status": status, "err": message})


def _used_refs(node: Node, doc: Node) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The components, component sets and styles referenced inside ``node``."""
    comps: dict[str, Any] = {}
    sets: dict[str, Any] = {}
    styles: dict[str, Any] = {}
    all_comps = doc.get("components") or {}
    all_sets = doc.get("componentSets") or {}
    all_styles = doc.get("styles") or {}
    for n in iter_nodes(node):
        cid = n.get("componentId") if n.get("type") == "INSTANCE" else None
        if n.get("type") == "COMPONENT":
            cid = n.get("id")
        if isinstance(cid, str) and cid in all_comps:
            comps[cid] = all_comps[cid]
            set_id = all_comps[cid].get("componentSetId")
            if set_id in all_sets:
                sets[set_id] = all_sets[set_id]
        for sid in (n.get("styles") or {}).values():
            if sid in all_styles:
                styles[sid] = all_styles[sid]
    return comps, sets, styles


def nodes_answer(doc: Node, ids: list[str], depth: int | None) -> dict[str, Any]:
    """The body of ``GET /v1/files/:key/nodes`` for these ids (None for unknown ones)."""
    out: dict[str, Any] = {k: doc.get(k) for k in _FILE_META if k in doc}
    nodes: dict[str, Any] = {}
    for nid in ids:
        path = node_path(doc["document"], nid)
        if path is None:
            nodes[nid] = None
            continue
        node = path[-1]
        comps, sets, styles = _used_refs(node, doc)
        nodes[nid] = {
            "document": truncate(node, depth),
            "components": comps,
            "componentSets": sets,
            "schemaVersion": doc.get("schemaVersion", 0),
            "styles": styles,
        }
    out["nodes"] = nodes
    return out


def _file_answer(doc: Node, ids: list[str] | None, depth: int | None) -> dict[str, Any]:
    body = {k: v for k, v in doc.items() if k != "document"}
    root = doc["document"]
    if not ids:
        body["document"] = truncate(root, depth)
        return body

    def prune(node: Node, wanted: set[str]) -> Node | None:
        if node.get("id") in wanted:
            return truncate(node, depth)
        kept = [c for c in (prune(ch, wanted) for ch in node.get("children") or ()) if c]
        if not kept:
            return None
        return {**{k: v for k, v in node.items() if k != "children"}, "children": kept}

    pruned = prune(root, set(ids))
    body["document"] = pruned or {
        **{k: v for k, v in root.items() if k != "children"},
        "children": [],
    }
    return body


class FigmaFixtureServer:
    """``with FigmaFixtureServer(store, token="t") as srv: srv.url`` serves on 127.0.0.1.

    Args:
        store: The fixtures to answer from.
        token: The token requests must carry (None: any non-empty token is accepted).
        rate_limit: What to refuse with 429 (default: nothing).
        host: Interface to listen on.
        port: 0 picks a free port.
    """

    def __init__(
        self,
        store: FixtureStore,
        *,
        token: str | None = None,
        rate_limit: RateLimit | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.store = store
        self.token = token
        self.limiter = RateLimiter(rate_limit or RateLimit())
        self.log: list[tuple[str, int]] = []
        self._host, self._port = host, port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL (``http://127.0.0.1:PORT``)."""
        if self._httpd is None:
            raise RuntimeError("the fixture server is not running")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FigmaFixtureServer:
        """Listen and serve in a background thread."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                server._handle(self)

        self._httpd = ThreadingHTTPServer((self._host, self._port), Handler)
        self._httpd.daemon_threads = True
        httpd = self._httpd
        self._thread = threading.Thread(target=lambda: httpd.serve_forever(0.05), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FigmaFixtureServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # request handling ----------------------------------------------------------------------

    def _send(
        self,
        h: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        ctype: str,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        path = unquote(parts.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        headers: list[tuple[str, str]] = []
        try:
            if path.startswith("/__render/") or path.startswith("/__fill/"):
                status, (data, ctype) = 200, self._asset(path)
            else:
                body = self._api(h, path, query)
                status, data, ctype = 200, _json(body), "application/json; charset=utf-8"
        except _HttpError as exc:
            status, data, ctype = exc.status, _json(exc.body), "application/json"
            headers = exc.headers
        except FixtureError as exc:
            body500 = {"status": 500, "err": f"Internal server error ({exc})"}
            status, data, ctype = 500, _json(body500), "application/json"
        # logged before the answer leaves: a client that has its answer sees it in the log
        self.log.append((path, status))
        self._send(h, status, data, ctype, headers)

    def _authorised(self, h: BaseHTTPRequestHandler) -> str:
        token = h.headers.get("X-Figma-Token", "")
        auth = h.headers.get("Authorization", "")
        if not token and auth.lower().startswith("bearer "):
            token = auth[7:].strip()
        if not token or (self.token is not None and token != self.token):
            raise _err(403, "Invalid token")
        return token

    def _api(self, h: BaseHTTPRequestHandler, path: str, query: dict[str, str]) -> dict[str, Any]:
        found = next(((m, n) for p, n in _ROUTES if (m := p.match(path))), None)
        if found is None:
            raise _err(404, "Not found")
        m, name = found
        token = self._authorised(h)
        decision = self.limiter.check(token, path)
        if not decision.allowed:
            raise _HttpError(
                429,
                {"status": 429, "err": "Rate limit exceeded"},
                self.limiter.headers(decision),
            )
        if name == "me":
            return {
                "id": "1",
                "email": "fixtures@lhbench.local",
                "handle": "lhbench",
                "img_url": "",
            }
        key = m["key"]
        if not self.store.has(key):
            if name == "variables":
                raise _HttpError(404, {"error": True, "status": 404, "message": "Not found"})
            raise _err(404, "Not found")
        doc = self.store.file(key)
        depth = self._depth(query)
        ids = [i.strip() for i in query.get("ids", "").split(",") if i.strip()]
        if name == "file":
            return _file_answer(doc, ids or None, depth)
        if name == "nodes":
            if not ids:
                raise _err(400, "ids is required")
            return nodes_answer(doc, ids, depth)
        if name == "images":
            return self._images(self._base(h), key, ids, query)
        if name == "fills":
            base = self._base(h)
            refs = self.store.image_fill_refs(key)
            return {
                "error": False,
                "status": 200,
                "meta": {
                    "images": {
                        r: f"{base}/__fill/{key}/{r}"
                        for r in refs
                        if self.store.image_fill(key, r) is not None
                    }
                },
            }
        if name == "variables":
            variables = self.store.variables(key)
            if variables is None:
                raise _HttpError(
                    403,
                    {
                        "error": True,
                        "status": 403,
                        "message": "Limited by Figma plan: the Variables REST API is "
                        "available to full members of Enterprise organizations",
                    },
                )
            return {"status": 200, "error": False, **variables}
        return {  # meta
            "file": {
                "name": doc.get("name"),
                "folder_name": "Fixtures",
                "last_touched_at": doc.get("lastModified"),
                "editorType": doc.get("editorType", "figma"),
                "thumbnail_url": doc.get("thumbnailUrl"),
                "version": doc.get("version"),
                "role": doc.get("role", "viewer"),
                "url": f"https://www.figma.com/design/{key}",
            }
        }

    @staticmethod
    def _depth(query: dict[str, str]) -> int | None:
        raw = query.get("depth")
        if raw is None or raw == "":
            return None
        try:
            depth = int(raw)
        except ValueError:
            raise _err(400, "depth must be a positive integer") from None
        if depth < 1:
            raise _err(400, "depth must be a positive integer")
        return depth

    @staticmethod
    def _base(h: BaseHTTPRequestHandler) -> str:
        addr = h.server.server_address
        port = addr[1] if isinstance(addr, tuple) else 0
        host = h.headers.get("Host") or f"127.0.0.1:{port}"
        return f"http://{host}"

    def _images(self, base: str, key: str, ids: list[str], query: dict[str, str]) -> dict[str, Any]:
        if not ids:
            raise _err(400, "ids is required")
        fmt = query.get("format", "png").lower()
        if fmt not in _FORMATS:
            raise _err(400, "format must be one of jpg, png, svg, pdf")
        try:
            scale = float(query.get("scale", "1"))
        except ValueError:
            raise _err(400, "scale must be a number between 0.01 and 4") from None
        if not 0.01 <= scale <= 4:
            raise _err(400, "scale must be a number between 0.01 and 4")
        images: dict[str, str | None] = {}
        for nid in ids:
            node = self.store.node(key, nid)
            renderable = (
                node is not None
                and node.get("type") not in ("DOCUMENT", "CANVAS")
                and isinstance(node.get("absoluteBoundingBox"), dict)
            )
            images[nid] = (
                f"{base}/__render/{key}/{quote(dash_id(nid))}@{scale:g}.{fmt}"
                if renderable
                else None
            )
        return {"err": None, "images": images}

    def _asset(self, path: str) -> tuple[bytes, str]:
        if path.startswith("/__fill/"):
            _, _, key, ref = path.split("/", 3)
            data = self.store.image_fill(key, ref) if self.store.has(key) else None
            if data is None:
                raise _err(404, "Not found")
            ctype = "image/png" if data[:4] == b"\x89PNG" else "image/jpeg"
            return data, ctype
        m = re.match(rf"^/__render/{_KEY}/(?P<id>[^@/]+)@(?P<s>[0-9.]+)\.(?P<fmt>\w+)$", path)
        if m is None or not self.store.has(m["key"]) or m["fmt"] not in _FORMATS:
            raise _err(404, "Not found")
        scale = float(m["s"]) if m["s"].count(".") <= 1 else 0.0
        if not 0.01 <= scale <= 4:  # a crafted URL gets no more than /v1/images allows
            raise _err(404, "Not found")
        node_id = m["id"].replace("-", ":").replace("_", ";")
        data = self.store.render(m["key"], node_id, scale=scale, fmt=m["fmt"])
        if data is None:
            raise _err(404, "Not found")
        return data, _FORMATS[m["fmt"]]
