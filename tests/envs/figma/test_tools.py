"""The agent's Figma tools (LH-Bench's nine, Framelink's two, previews), inside the workspace."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from PIL import Image

from lhbench.envs.figma import (
    FigmaClient,
    FigmaFixtureServer,
    FixtureStore,
    parse_rate_limit,
)
from lhbench.envs.figma.preview import PreviewManager
from lhbench.tools.figma_server import DESIGN_TOOLS, FigmaTools, ImageRequest, build_figma_server
from tests.envs.figma.helpers import KEY, PACK, STORE, static_copy

TOKEN = "tools-token"


@pytest.fixture(scope="module")
def fixture_server() -> Iterator[FigmaFixtureServer]:
    with FigmaFixtureServer(FixtureStore(STORE), token=TOKEN) as srv:
        yield srv


@pytest.fixture
def tools(fixture_server: FigmaFixtureServer, tmp_path: Path) -> Iterator[FigmaTools]:
    ws = tmp_path / "ws"
    ws.mkdir()
    with FigmaClient(fixture_server.url, TOKEN) as client:
        yield FigmaTools(client, ws)


def test_file_pages_and_ids_by_name(tools: FigmaTools) -> None:
    f = tools.get_figma_file(KEY)
    assert f["status"] == "success" and f["name"].startswith("Fernhill")
    assert {"last_modified", "version", "thumbnail_url", "document", "styles"} <= set(f)
    assert all(p["children"] == [] for p in f["document"]["children"])  # depth 1
    page = tools.get_page_node_id(KEY, "desktop")  # case-insensitive
    assert page == {"status": "success", "page_id": "0:1", "page_name": "Desktop"}
    layer = tools.get_layer_node_id(KEY, page["page_id"], "home")
    assert layer["layer_id"] == "10:1" and layer["layer_type"] == "FRAME"
    missing = tools.get_page_node_id(KEY, "Nowhere")
    assert missing["status"] == "error" and "Desktop" in missing["available_pages"]


def test_tree_styles_components_and_nodes(tools: FigmaTools) -> None:
    tree = tools.get_node_tree(KEY, "10-1", depth=1)  # dashed ids are accepted
    assert tree["node_id"] == "10:1"
    assert all(c.get("children", []) == [] for c in tree["node"]["children"])
    styles = tools.get_node_styles(KEY, "10:1")
    assert styles["count"] == len(styles["styles"]) > 0
    assert set(styles["styles_by_type"]) <= {"FILL", "TEXT", "EFFECT", "GRID"}
    assert all(set(s) == {"key", "name", "description", "style_type"} for s in styles["styles"])
    comps = tools.get_node_components(KEY, "10:1")
    names = {c["name"] for c in comps["components"]}
    assert "Icon/Leaf" in names and comps["count"] == len(comps["components"])
    nodes = tools.get_figma_file_nodes(KEY, "10:1,999:1", depth=1)
    assert nodes["nodes"]["999:1"] is None
    assert set(nodes["nodes"]["10:1"]) == {
        "document",
        "components",
        "componentSets",
        "schemaVersion",
        "styles",
    }
    gone = tools.get_node_tree(KEY, "999:1")
    assert gone["status"] == "error" and gone["error"].startswith("Figma API error: 404")


def test_exports_write_inside_the_workspace(tools: FigmaTools) -> None:
    out = tools.export_node_images(KEY, "10:1,10:17", "design/frames", scale=1)
    assert out["status"] == "success" and out["success_count"] == 2
    first = tools.workspace / out["exported"][0]["path"]
    assert first.name == "10-1.png"
    with Image.open(first) as im:
        assert im.width == 1440
    overview = tools.get_page_visual_overview(KEY, "0:2", "design/overview")
    assert overview["page_name"] == "Mobile" and overview["success_count"] >= 1
    assert all(e["path"].startswith("design/overview/FRAME/") for e in overview["exported"])
    svg = tools.export_node_images(KEY, "70:3", "icons", format="svg")
    assert (tools.workspace / svg["exported"][0]["path"]).read_text().startswith("<svg")
    bad = tools.export_node_images(KEY, "10:1", "x", format="gif")
    assert bad["status"] == "error"


@pytest.mark.parametrize("where", ["../outside", "/etc", "design/../../outside"])
def test_exports_refuse_paths_outside_the_workspace(tools: FigmaTools, where: str) -> None:
    out = tools.export_node_images(KEY, "10:17", where)
    assert out["status"] == "error" and "refused" in out["error"]
    assert not (tools.workspace.parent / "outside").exists()


def test_exports_do_not_follow_a_symlink_out(tools: FigmaTools, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tools.workspace / "link").symlink_to(target)
    out = tools.export_node_images(KEY, "10:17", "link")
    assert out["status"] == "error" or all(e["path"] is None for e in out["exported"])
    assert list(target.iterdir()) == []


def test_framelink_data_and_images(tools: FigmaTools) -> None:
    data = tools.get_figma_data(KEY, "10:1", depth=3)
    assert data["metadata"]["name"].startswith("Fernhill")
    [root] = data["nodes"]
    assert root["id"] == "10:1" and root["children"]
    styles = data["globalVars"]["styles"]
    refs = json.dumps(data["nodes"])
    assert styles and all(k in refs for k in styles)  # every style is referenced
    ref = tools.client.image_fills(KEY)
    image_ref = next(iter(ref))
    got = tools.download_figma_images(
        KEY,
        [
            ImageRequest(nodeId="10:1", imageRef=image_ref, fileName="../../photo.png"),
            ImageRequest(nodeId="70:3", fileName="leaf.svg"),
            ImageRequest(nodeId="10:17", fileName="button.gif"),
        ],
        "src/assets",
    )
    assert got["status"] == "partial"
    # a file name cannot climb out: it is flattened into the target folder
    assert len(got["saved"]) == 2
    for p in got["saved"]:
        assert p.startswith("src/assets/") and "/" not in p.removeprefix("src/assets/")
        assert (tools.workspace / p).is_file()
    assert (tools.workspace / "src" / "assets" / "leaf.svg").is_file()
    assert any("button.gif" in f for f in got["failed"])


def test_a_429_comes_back_as_lh_benchs_tools_returned_it(tmp_path: Path) -> None:
    limit = parse_rate_limit("schedule=2")
    with (
        FigmaFixtureServer(FixtureStore(STORE), token=TOKEN, rate_limit=limit) as srv,
        FigmaClient(srv.url, TOKEN) as client,
    ):
        t = FigmaTools(client, tmp_path)
        assert t.get_figma_file(KEY)["status"] == "success"
        refused = t.get_node_tree(KEY, "10:1")
        assert refused == {
            "status": "error",
            "error": 'Figma API error: 429 - {"status":429,"err":"Rate limit exceeded"}',
            "retry_after": 1.0,
        }
        assert t.get_node_tree(KEY, "10:1")["status"] == "success"  # and it recovers


def _call(server: Any, tool: str, args: dict[str, Any]) -> Any:
    async def go() -> Any:
        async with Client(server) as c:
            listed = [t.name for t in await c.list_tools()]
            result = await c.call_tool(tool, args, raise_on_error=False)
            return listed, result

    return asyncio.run(go())


def test_the_mcp_server_offers_every_tool(tools: FigmaTools, tmp_path: Path) -> None:
    previews = PreviewManager(tools.workspace)
    server = build_figma_server(tools, previews)
    listed, result = _call(server, "get_page_node_id", {"file_key": KEY, "page_name": "Mobile"})
    assert set(DESIGN_TOOLS) <= set(listed)
    assert {"get_figma_data", "download_figma_images"} <= set(listed)
    assert {"create_app_preview", "get_preview_status", "stop_app_preview"} <= set(listed)
    assert json.loads(result.content[0].text)["page_id"] == "0:2"
    previews.close()


def test_preview_builds_serves_and_diagnoses(tmp_path: Path) -> None:
    """A preview of a good app runs; a blank one and a broken build get a diagnosis."""
    import httpx

    ws = static_copy(tmp_path / "ws")
    previews = PreviewManager(ws)
    try:
        ok = previews.create("t1")
        assert ok["status"] == "running", ok
        assert httpx.get(ok["preview_url"] + "/", timeout=10).status_code == 200
        assert (ws / ok["checks"]["routes"][0]["screenshot"]).is_file()
        again = previews.create("t1")
        assert again["error"] == "Sandbox with this name already exists"
        assert previews.status("t1")["status"] == "running"
        assert previews.stop("t1") == {"status": "stopped", "task_id": "t1"}
        assert previews.stop("t1")["status"] == "not_found"
        (ws / "site" / "index.html").write_text(
            "<!doctype html><body><div id='root'></div>"
            "<script>throw new Error('boom in render')</script></body>"
        )
        blank = previews.create("t2")
        assert blank["status"] == "error" and "blank page" in blank["error"]
        assert "boom in render" in blank["error"]
        (ws / "build.mjs").write_text('import "not-installed-anywhere";\n')
        broken = previews.create("t3")
        assert broken["status"] == "error" and broken["error"].startswith("build failed")
        assert "not-installed-anywhere" in broken["diagnosis"]
        assert previews.create("../x")["status"] == "error"
        assert previews.create("t4", "../..")["status"] == "error"
    finally:
        previews.close()


def test_pack_declares_the_tool_server() -> None:
    text = (PACK / "pack.yaml").read_text()
    assert "lhbench.tools.figma_server" in text and "bundled:figma-mini" in text
