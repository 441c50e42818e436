"""The SME annotation tool: sources, a line-numbered viewer, chapters with cited spans.

The page (``/annotate/<pack>/<task>``) is a shell; its script reads the state and the
sources as JSON and saves each edit as a new immutable version. Every JSON route needs a
session (401 otherwise); the save needs the session's CSRF token in ``X-CSRF-Token``, a
same-origin request and a JSON body under :data:`MAX_BODY` bytes. A save on a stale
parent is refused with 409, a span that does not hold with 400. Source ids are looked up
in the task's ``sources.json`` only, never joined into a path.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, Response

from lhbench.annotate import (
    AnnotationError,
    AnnotationSet,
    AnnotationTarget,
    find_targets,
    from_ground_truth,
    ground_truth_json,
    save_version,
)
from lhbench.envs.content import SourceError, SourceSet
from lhbench.store import AnnotationVersion, StaleVersionError
from lhbench.web.auth import csrf_ok
from lhbench.web.deps import SignedIn, Viewer, viewer, web
from lhbench.web.security import content_disposition, same_origin_post

__all__ = ["MAX_BODY", "router"]

# a saved version's number: bounded, so a huge one is a bad request, not an overflow in the store
VersionParam = Annotated[int | None, Query(ge=1, le=2**31 - 1)]

router = APIRouter()

MAX_BODY = 4 * 1024 * 1024
_SOURCE_ID = re.compile(r"^[a-z0-9][a-z0-9_.\-]{0,119}$")
_KINDS = {".pdf": "PDF", ".docx": "DOCX", ".pptx": "PPTX", ".html": "HTML", ".htm": "HTML"}


def _targets(request: Request) -> dict[tuple[str, str], AnnotationTarget]:
    state = request.app.state
    found: dict[tuple[str, str], AnnotationTarget] | None = getattr(state, "annotate_targets", None)
    if found is None:
        found = find_targets(web(request).settings.pack_paths)
        state.annotate_targets = found
    return found


def _target(request: Request, pack_id: str, task_id: str) -> AnnotationTarget:
    t = _targets(request).get((pack_id, task_id))
    if t is None:
        raise HTTPException(404, "No annotatable task with this pack and task id.")
    return t


def _sources(request: Request, t: AnnotationTarget) -> SourceSet:
    state = request.app.state
    cache: dict[tuple[str, str], SourceSet] = getattr(state, "annotate_sources", {})
    state.annotate_sources = cache
    key = (t.pack_id, t.task_id)
    if key not in cache:
        try:
            cache[key] = t.sources()
        except SourceError as exc:
            raise HTTPException(500, f"The task's sources cannot be read: {exc}") from None
    return cache[key]


def _api_user(request: Request) -> Viewer | JSONResponse:
    v = viewer(request)
    if not v.signed_in:
        return JSONResponse({"error": "Sign in to use the annotation tool."}, status_code=401)
    return v


def _version_info(saved: AnnotationVersion) -> dict[str, Any]:
    return {
        "version": saved.version,
        "parent": saved.parent,
        "author": saved.author,
        "created_at": saved.created_at.isoformat(timespec="seconds"),
    }


@router.get("/annotate", response_class=HTMLResponse)
def annotate_index(request: Request, v: SignedIn) -> Response:
    """The tasks whose sources can be annotated, with their newest saved version."""
    app = web(request)
    rows = []
    for (pack_id, task_id), t in sorted(_targets(request).items()):
        head = app.store.get_annotations(pack_id, task_id)
        rows.append({"target": t, "title": t.task.title or task_id, "head": head})
    return app.render(request, v, "annotate_list.html", rows=rows)


@router.get("/annotate/{pack_id}/{task_id}", response_class=HTMLResponse)
def annotate_page(request: Request, pack_id: str, task_id: str, v: SignedIn) -> Response:
    """The three-panel annotation tool (its script loads the state as JSON)."""
    t = _target(request, pack_id, task_id)
    base = f"/annotate/{pack_id}/{task_id}"
    return web(request).render(
        request,
        v,
        "annotate.html",
        target=t,
        title=t.task.title or task_id,
        base=base,
        gt_path=str(t.ground_truth_file.relative_to(t.pack_dir)),
    )


@router.get("/annotate/{pack_id}/{task_id}/state")
def annotate_state(
    request: Request, pack_id: str, task_id: str, version: VersionParam = None
) -> Response:
    """A saved version (default: the newest; none saved: the pack's ground truth as a draft)."""
    v = _api_user(request)
    if isinstance(v, JSONResponse):
        return v
    t = _target(request, pack_id, task_id)
    sources = _sources(request, t)
    store = web(request).store
    saved = store.get_annotations(pack_id, task_id, version)
    if version is not None and saved is None:
        return JSONResponse({"error": f"There is no version {version}."}, status_code=404)
    head = saved if version is None else store.get_annotations(pack_id, task_id)
    draft = None
    if saved is not None:
        content = AnnotationSet.model_validate(saved.content)
    else:
        try:
            gt = t.ground_truth()
        except SourceError:
            gt = None
        content = from_ground_truth(gt, sources) if gt else AnnotationSet()
        draft = "the pack's ground truth" if gt else None
    history = store.annotation_history(pack_id, task_id, limit=100)
    return JSONResponse(
        {
            "pack_id": pack_id,
            "task_id": task_id,
            "saved": None if saved is None else _version_info(saved),
            "head": None if head is None else head.version,
            "draft_from": draft,
            "content": content.model_dump(mode="json"),
            "sources": [
                {
                    "id": sid,
                    "title": rec.title or sid,
                    "origin": rec.origin,
                    "kind": next(
                        (k for ext, k in _KINDS.items() if rec.origin.lower().endswith(ext)),
                        "TEXT",
                    ),
                    "lines": sources.line_count(sid),
                }
                for sid, rec in ((s, sources.records[s]) for s in sources.ids)
            ],
            "history": [_version_info(h) for h in history],
        }
    )


@router.get("/annotate/{pack_id}/{task_id}/sources/{source_id}")
def annotate_source(request: Request, pack_id: str, task_id: str, source_id: str) -> Response:
    """A source's lines (looked up by id in ``sources.json``; anything else is a 404)."""
    v = _api_user(request)
    if isinstance(v, JSONResponse):
        return v
    t = _target(request, pack_id, task_id)
    sources = _sources(request, t)
    if not _SOURCE_ID.match(source_id) or source_id not in sources:
        return JSONResponse({"error": "No such source in this data room."}, status_code=404)
    return JSONResponse({"id": source_id, "lines": sources.lines[source_id]})


async def _body(request: Request) -> bytes | JSONResponse:
    declared = request.headers.get("content-length")
    too_big = JSONResponse(
        {"error": f"The annotations are larger than {MAX_BODY // (1024 * 1024)} MB."},
        status_code=413,
    )
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        return too_big
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return too_big
        chunks.append(chunk)
    return b"".join(chunks)


@router.post("/annotate/{pack_id}/{task_id}/versions")
async def annotate_save(request: Request, pack_id: str, task_id: str) -> Response:
    """Save the annotations as a new version on top of ``parent`` (JSON in, JSON out)."""
    v = _api_user(request)
    if isinstance(v, JSONResponse):
        return v
    if not same_origin_post(request.headers, request.headers.get("host")) or not csrf_ok(
        v.csrf, request.headers.get("x-csrf-token")
    ):
        return JSONResponse(
            {"error": "This page expired or the request came from another site; reload it."},
            status_code=403,
        )
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return JSONResponse({"error": "Send the annotations as JSON."}, status_code=415)
    t = _target(request, pack_id, task_id)
    raw = await _body(request)
    if isinstance(raw, JSONResponse):
        return raw
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return JSONResponse({"error": "The request body is not JSON."}, status_code=400)
    if not isinstance(body, dict) or set(body) != {"parent", "content"}:
        return JSONResponse(
            {"error": 'Send {"parent": <version or null>, "content": {...}}.'}, status_code=400
        )
    parent = body["parent"]
    if parent is not None and (not isinstance(parent, int) or isinstance(parent, bool)):
        return JSONResponse({"error": "parent is a version number or null."}, status_code=400)
    assert v.user is not None
    try:
        # validation and the write off the event loop: a large save does not stall others
        saved = await run_in_threadpool(
            save_version,
            web(request).store,
            t,
            body["content"],
            author=v.user,
            parent=parent,
            sources=_sources(request, t),
        )
    except AnnotationError as exc:
        return JSONResponse(
            {"error": exc.message, "where": exc.where, "detail": str(exc)}, status_code=400
        )
    except StaleVersionError as exc:
        return JSONResponse({"error": str(exc), "head": exc.head}, status_code=409)
    return JSONResponse(_version_info(saved), status_code=201)


@router.get("/annotate/{pack_id}/{task_id}/export")
def annotate_export(
    request: Request, pack_id: str, task_id: str, version: VersionParam = None
) -> Response:
    """A saved version as the pack's ``chapters.json`` (a download; nothing is written)."""
    v = _api_user(request)
    if isinstance(v, JSONResponse):
        return v
    _target(request, pack_id, task_id)  # a 404 for a pack or task that is not annotatable
    saved = web(request).store.get_annotations(pack_id, task_id, version)
    if saved is None:
        return JSONResponse({"error": "No such saved version."}, status_code=404)
    try:
        text = ground_truth_json(AnnotationSet.model_validate(saved.content))
    except AnnotationError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    return Response(
        text.encode("utf-8"),
        media_type="application/json",
        headers={"Content-Disposition": content_disposition("attachment", "chapters.json")},
    )
