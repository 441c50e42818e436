"""A small Figma REST client: the fixture server or, given a token, the real API.

Errors are raised as :class:`FigmaApiError` carrying the status, Figma's body and the
rate-limit headers, and print as LH-Bench's tools reported them
(``Figma API error: 429 - {"status":429,"err":"Rate limit exceeded"}``), so an agent
sees what it would see against Figma. The client does not retry by itself: recovering
from a 429 is the agent's job (``retries`` turns on waiting for ``Retry-After``).
"""

from __future__ import annotations

import os
import time
from typing import Any

import httpx

__all__ = ["FIGMA_API", "FigmaApiError", "FigmaClient"]

FIGMA_API = "https://api.figma.com"
_RATE_HEADERS = (
    "retry-after",
    "x-figma-plan-tier",
    "x-figma-rate-limit-type",
    "x-figma-upgrade-link",
)


class FigmaApiError(RuntimeError):
    """A non-2xx answer (or no answer) from the Figma API."""

    def __init__(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.body = body
        self.headers = headers or {}
        super().__init__(f"Figma API error: {status} - {body[:2000]}")

    @property
    def retry_after(self) -> float | None:
        """Seconds to wait before retrying (a 429's ``Retry-After``)."""
        raw = self.headers.get("retry-after")
        try:
            return float(raw) if raw is not None else None
        except ValueError:
            return None


class FigmaClient:
    """``FigmaClient(base_url, token)``; the token defaults to ``FIGMA_API_KEY``.

    Args:
        base_url: ``https://api.figma.com`` or a fixture server's URL.
        token: Personal access token, sent as ``X-Figma-Token``.
        timeout: Seconds per request.
        retries: How many 429s to wait out (``Retry-After``, capped at 60 s each).
    """

    def __init__(
        self,
        base_url: str = FIGMA_API,
        token: str | None = None,
        *,
        timeout: float = 60.0,
        retries: int = 0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = (
            token or os.environ.get("FIGMA_API_KEY") or os.environ.get("FIGMA_ACCESS_TOKEN", "")
        )
        self.retries = retries
        self._http = httpx.Client(timeout=timeout, follow_redirects=True)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> FigmaClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _get(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        attempt = 0
        while True:
            try:
                resp = self._http.get(
                    self.base_url + path, params=clean, headers={"X-Figma-Token": self.token}
                )
            except httpx.HTTPError as exc:
                raise FigmaApiError(0, f"request failed: {type(exc).__name__}: {exc}") from None
            if resp.status_code == 429 and attempt < self.retries:
                attempt += 1
                wait = float(resp.headers.get("retry-after", "1") or 1)
                time.sleep(min(max(wait, 0.0), 60.0))
                continue
            if resp.status_code >= 400:
                headers = {k: resp.headers[k] for k in _RATE_HEADERS if k in resp.headers}
                raise FigmaApiError(resp.status_code, resp.text.strip(), headers)
            try:
                doc = resp.json()
            except ValueError:
                raise FigmaApiError(resp.status_code, "answer is not JSON") from None
            if not isinstance(doc, dict):
                raise FigmaApiError(resp.status_code, "answer is not a JSON object")
            return doc

    def file(self, key: str, *, ids: str | None = None, depth: int | None = None) -> dict[str, Any]:
        """``GET /v1/files/:key``."""
        return self._get(f"/v1/files/{key}", {"ids": ids, "depth": depth})

    def nodes(self, key: str, ids: str, *, depth: int | None = None) -> dict[str, Any]:
        """``GET /v1/files/:key/nodes``."""
        return self._get(f"/v1/files/{key}/nodes", {"ids": ids, "depth": depth})

    def images(
        self, key: str, ids: str, *, scale: float = 1.0, fmt: str = "png"
    ) -> dict[str, str | None]:
        """``GET /v1/images/:key``: node id -> URL of its render (None: render failed)."""
        doc = self._get(f"/v1/images/{key}", {"ids": ids, "scale": scale, "format": fmt})
        if doc.get("err"):
            raise FigmaApiError(int(doc.get("status", 400) or 400), str(doc["err"]))
        images = doc.get("images") or {}
        return {str(k): (str(v) if v else None) for k, v in images.items()}

    def image_fills(self, key: str) -> dict[str, str]:
        """``GET /v1/files/:key/images``: imageRef -> URL."""
        doc = self._get(f"/v1/files/{key}/images")
        images = (doc.get("meta") or {}).get("images") or {}
        return {str(k): str(v) for k, v in images.items() if v}

    def variables(self, key: str) -> dict[str, Any]:
        """``GET /v1/files/:key/variables/local`` (Enterprise only on real Figma)."""
        return self._get(f"/v1/files/{key}/variables/local")

    def download(self, url: str, *, limit: int = 64 << 20) -> bytes:
        """The bytes behind an image URL (not rate-limited, as S3 URLs are not)."""
        try:
            with self._http.stream("GET", url) as resp:
                if resp.status_code >= 400:
                    raise FigmaApiError(resp.status_code, f"download of {url} failed")
                chunks, got = [], 0
                for chunk in resp.iter_bytes():
                    got += len(chunk)
                    if got > limit:
                        raise FigmaApiError(413, f"{url}: larger than {limit} bytes")
                    chunks.append(chunk)
                return b"".join(chunks)
        except httpx.HTTPError as exc:
            raise FigmaApiError(0, f"download failed: {type(exc).__name__}: {exc}") from None
