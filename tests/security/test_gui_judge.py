"""The GUI judge's tools and LibreOffice asked to change the final document or reach out.

The tools read a materialized state (a read-only copy of the final document, screenshots
and trees); after every call — with path escapes, symlinks, huge ranges, a zip bomb — the
document and the whole state must be byte-for-byte what they were. LibreOffice renders in
the sandbox: a document that links a file beside it, or a URL, must render without it.
"""

from __future__ import annotations

import asyncio
import hashlib
import http.server
import io
import os
import re
import shutil
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docx
import pytest
from docx.shared import Inches
from fastmcp import Client
from PIL import Image
from pydantic_ai import BinaryContent, ModelRetry

from lhbench.envs.gui import load_result_dir, materialize, render_document
from lhbench.judges import StateRef, VerdictItem
from lhbench.judges.gui_judge import GuiJudge
from lhbench.judges.tool_worker import ToolWorker
from lhbench.models import resolve_model
from lhbench.packs import resolve_pack_dir
from lhbench.sandbox import private_paths
from lhbench.schema import Run, Trajectory
from lhbench.tools.gui_server import build_gui_server, gui_tools_for
from tests.envs.gui.helpers import zip_bomb
from tests.security.helpers import CANARY, bounded, shell

PACK = resolve_pack_dir("aj-gui-mini")
TRAJ = PACK / "tasks" / "excel-total-formula" / "trajectories" / "pass-sum"


def tree_hash(root: Path) -> str:
    """Every file's path, mode and bytes under ``root`` (symlinks by their target)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            h.update(str(p.relative_to(root)).encode())
            st = p.lstat()
            h.update(oct(st.st_mode).encode())
            h.update(os.readlink(p).encode() if p.is_symlink() else p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pass-sum state, rendered by LibreOffice in the sandbox."""
    out = tmp_path_factory.mktemp("gui") / "state"
    return materialize(load_result_dir(TRAJ), out, render=render_document)


def attacks() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("document_info", {}),
        ("list_steps", {}),
        ("read_document", {}),
        ("read_document", {"sheet": "../../../../etc/passwd"}),
        ("read_document", {"sheet": "Sheet1", "cells": "A1:XFD1048576"}),
        ("read_document", {"cells": "../../steps.json"}),
        ("read_document", {"cells": '=HYPERLINK("http://127.0.0.1:9/")'}),
        ("read_document", {"start": -5, "count": 10**9}),
        ("read_document", {"start": 10**12}),
        ("render_pages", {"first": -1, "last": 10**9}),
        ("render_pages", {"first": 10**9, "last": 10**9 + 5}),
        ("view_screenshot", {"step": -1}),
        ("view_screenshot", {"step": 10**12}),
        ("view_screenshot", {"step": 2}),
        ("view_a11y_tree", {"step": 2, "offset": -10}),
        ("view_a11y_tree", {"step": 2, "offset": 10**12}),
        ("view_a11y_tree", {"step": "../../etc/passwd"}),
    ]


def _text(res: Any) -> str:
    return "\n".join(getattr(c, "text", "") or "" for c in res.content)


def test_no_tool_changes_the_final_document(state: Path) -> None:
    original = hashlib.sha256((TRAJ / "final" / "budget.xlsx").read_bytes()).hexdigest()
    doc = state / "document.xlsx"
    before, whole = hashlib.sha256(doc.read_bytes()).hexdigest(), tree_hash(state)
    assert before == original

    async def go() -> None:
        async with Client(build_gui_server(state, "both")) as c:
            for tool, args in attacks():
                with bounded(60, mb=400):
                    res = await c.call_tool(tool, args, raise_on_error=False)
                text = _text(res)
                assert "root:" not in text and CANARY not in text, (tool, args)
                assert len(text) < 60_000, (tool, args)
                # after EVERY call: the document and the whole state as they were
                assert hashlib.sha256(doc.read_bytes()).hexdigest() == before, (tool, args)
                assert tree_hash(state) == whole, (tool, args)
            pages = await c.call_tool("render_pages", {"first": 1, "last": 1})
            assert any(getattr(p, "mime_type", "") == "image/png" for p in pages.content)
            cells = await c.call_tool("read_document", {"cells": "B6"})
            assert "=SUM(B2:B5)" in _text(cells)

    asyncio.run(go())
    assert hashlib.sha256((TRAJ / "final" / "budget.xlsx").read_bytes()).hexdigest() == original


def test_planted_symlinks_and_a_zip_bomb_read_nothing_outside(state: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.xml"
    secret.write_text(f"<x>{CANARY}</x>")
    forged = tmp_path / "forged"
    shutil.copytree(state, forged, symlinks=True)
    for dirpath, _, _ in os.walk(forged):
        os.chmod(dirpath, 0o755)
    (forged / "steps" / "step-2.xml").unlink()
    (forged / "steps" / "step-2.xml").symlink_to(secret)
    (forged / "steps" / "step-3.png").unlink()
    (forged / "steps" / "step-3.png").symlink_to("/etc/passwd")
    (forged / "render" / "page-1.png").unlink()
    (forged / "render" / "page-1.png").symlink_to(secret)
    (forged / "document.xlsx").unlink()
    zip_bomb(forged / "document.xlsx", inner="xl/workbook.xml")
    before = tree_hash(forged)

    async def go() -> None:
        async with Client(build_gui_server(forged, "both")) as c:
            for tool, args in [*attacks(), ("view_a11y_tree", {"step": 2}),
                               ("view_screenshot", {"step": 3}),
                               ("render_pages", {"first": 1, "last": 1})]:  # fmt: skip
                with bounded(60, mb=400):
                    res = await c.call_tool(tool, args, raise_on_error=False)
                text = _text(res)
                assert CANARY not in text and "root:" not in text, (tool, args)
                assert tree_hash(forged) == before, (tool, args)
            doc = await c.call_tool("read_document", {})
            assert "inflates" in _text(doc)  # refused before any library inflated it

    asyncio.run(go())


@pytest.mark.parametrize("modality", ["screenshot", "a11y", "both"])
def test_sandboxed_server_offers_only_its_modality(
    state: Path, modality: str, tmp_path: Path
) -> None:
    spec = resolve_model("openai:judge@http://127.0.0.1:9/v1", {})
    judge = GuiJudge(object(), spec, agentic=True, modality=modality)  # type: ignore[arg-type]
    traj = tmp_path / "trajectory.json"
    traj.write_text(Trajectory(run_id="r").model_dump_json())
    run = Run(id="r", pack_id="p", task_id="t", harness="fixture", model="m")
    item = VerdictItem(run, None, Trajectory(run_id="r"), StateRef("s", state, None, traj))
    [prepared] = judge._tool_commands(item)
    before = tree_hash(state)

    async def go() -> None:
        # the judge's side of the worker, as the agent judge runs it
        worker = ToolWorker(prepared, tmp_path / "tools.log", start_timeout=120)
        async with worker as toolset:
            names = set(toolset.tools)
            assert names == gui_tools_for(modality) | {"view_trajectory_step", "trajectory_length"}
            assert not names & {"write_file", "query", "fetch", "run", "save"}
            for tool, args in attacks():
                if tool in names:
                    try:
                        got = await worker.call(tool, args)
                    except ModelRetry as exc:
                        got = str(exc)
                    parts = got if isinstance(got, list) else [got]
                    text = " ".join(p for p in parts if isinstance(p, str))
                    assert "root:" not in text
                    assert tree_hash(state) == before, (tool, args)
            if "render_pages" in names:
                # the page reaches the judge as an image, through the worker
                pages = await worker.call("render_pages", {"first": 1, "last": 1})
                assert isinstance(pages, list)
                [image] = [p for p in pages if isinstance(p, BinaryContent)]
                assert image.media_type == "image/png" and image.data.startswith(b"\x89PNG")

    try:
        asyncio.run(go())
    finally:
        prepared.close()
    assert judge.identity.settings["modality"] == modality


class _Hits(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        type(self).hits += 1
        buf = io.BytesIO()
        Image.new("RGB", (50, 50), (255, 0, 0)).save(buf, format="PNG")
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()
        self.wfile.write(buf.getvalue())

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def image_site() -> Iterator[str]:
    _Hits.hits = 0
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hits)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/red.png"
    srv.shutdown()


def linked_docx(path: Path, target: str) -> Path:
    """A DOCX whose only picture is a link (``r:link``, TargetMode External) to ``target``."""
    blue = path.with_suffix(".blue.png")
    Image.new("RGB", (100, 100), (0, 0, 255)).save(blue)
    d = docx.Document()
    d.add_paragraph("a linked picture follows")
    d.add_picture(str(blue), width=Inches(3))
    blue.unlink()
    buf = io.BytesIO()
    d.save(buf)
    src = zipfile.ZipFile(buf)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "word/_rels/document.xml.rels":
                link = f'Target="{target}" TargetMode="External"'.encode()
                body = re.sub(rb'Target="media/image1\.png"', link, body)
            elif info.filename == "word/document.xml":
                body = body.replace(b"r:embed=", b"r:link=")
            elif info.filename.startswith("word/media/"):
                continue
            out.writestr(info, body)
    return path


def red_pixels(png: Path) -> int:
    img = Image.open(png).convert("RGB")
    return sum(1 for r, g, b in img.get_flattened_data() if r > 200 and g < 60 and b < 60)


def test_libreoffice_cannot_read_beside_its_input(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    Image.new("RGB", (200, 200), (255, 0, 0)).save(docs / "secret.png")  # beside the input
    doc = linked_docx(docs / "report.docx", f"file://{docs / 'secret.png'}")
    before = hashlib.sha256(doc.read_bytes()).hexdigest()
    with bounded(180):
        blind = render_document(doc, tmp_path / "blind")
    assert blind.pages == 1 and red_pixels(blind.page(1)) == 0
    # the control: were the directory readable, LibreOffice would have drawn the file
    seeing = render_document(doc, tmp_path / "seeing", also_readable=[docs])
    assert red_pixels(seeing.page(1)) > 1000
    assert hashlib.sha256(doc.read_bytes()).hexdigest() == before  # it renders a copy


def test_libreoffice_has_no_network(tmp_path: Path, image_site: str) -> None:
    doc = linked_docx(tmp_path / "remote.docx", image_site)
    with bounded(180):
        r = render_document(doc, tmp_path / "out")
    assert r.pages == 1 and red_pixels(r.page(1)) == 0
    assert _Hits.hits == 0, "LibreOffice fetched a URL from inside the sandbox"


def test_the_agent_cannot_read_golden_files_or_trajectories(tmp_path: Path) -> None:
    golden = sorted(PACK.glob("tasks/*/golden"))
    assert len(golden) == 9 and set(golden) <= set(private_paths())
    trajectories = PACK / "tasks" / "excel-total-formula" / "trajectories"
    gold = next(golden[0].iterdir())
    with bounded(120):
        seen, _ = shell(
            tmp_path,
            f"cat {gold} 2>/dev/null | wc -c",
            f"ls -A {golden[0]} | wc -l",
            f"ls -A {trajectories} | wc -l",
            f"ls -A {PACK / 'tasks' / 'excel-total-formula'}",
        )
    counts = [int(s.strip().splitlines()[-1]) for s in seen[:3]]
    assert counts == [0, 0, 0], seen
    assert "task.yaml" in seen[3]  # the task itself stays readable
