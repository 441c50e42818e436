"""The Figma fixture server answers the REST subset with Figma's shapes, errors and limits."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from PIL import Image

from lhbench.envs.figma import (
    FigmaApiError,
    FigmaClient,
    FigmaFixtureServer,
    FixtureStore,
    RateLimit,
    RateLimiter,
    export_scale,
    parse_rate_limit,
)
from tests.envs.figma.helpers import KEY, STORE

TOKEN = "fixture-token"


@pytest.fixture(scope="module")
def server() -> Iterator[FigmaFixtureServer]:
    with FigmaFixtureServer(FixtureStore(STORE), token=TOKEN) as srv:
        yield srv


def get(
    srv: FigmaFixtureServer, path: str, token: str | None = TOKEN, **params: str | int | float
) -> httpx.Response:
    headers = {"X-Figma-Token": token} if token else {}
    return httpx.get(srv.url + path, params=params, headers=headers, timeout=30)


def test_file_depth_one_lists_pages_with_empty_children(server: FigmaFixtureServer) -> None:
    r = get(server, f"/v1/files/{KEY}", depth=1)
    assert r.status_code == 200
    doc = r.json()
    assert {"name", "lastModified", "version", "document", "components", "styles"} <= set(doc)
    pages = doc["document"]["children"]
    assert [p["name"] for p in pages] == ["Desktop", "Mobile", "Components"]
    assert all(p["children"] == [] for p in pages)
    # styles are names without values, as the API gives them
    style = next(iter(doc["styles"].values()))
    assert set(style) == {"key", "name", "description", "remote", "styleType"}


def test_file_ids_keep_the_path_from_the_root(server: FigmaFixtureServer) -> None:
    doc = get(server, f"/v1/files/{KEY}", ids="20:1", depth=1).json()
    [page] = doc["document"]["children"]
    assert page["id"] == "0:1"
    [frame] = page["children"]
    assert frame["id"] == "20:1" and all(c.get("children", []) == [] for c in frame["children"])


def test_nodes_give_subtrees_their_components_and_null_for_unknown(
    server: FigmaFixtureServer,
) -> None:
    doc = get(server, f"/v1/files/{KEY}/nodes", ids="10:1,999:9").json()
    assert doc["nodes"]["999:9"] is None
    entry = doc["nodes"]["10:1"]
    assert set(entry) == {"document", "components", "componentSets", "schemaVersion", "styles"}
    assert any(c["name"] == "Icon/Leaf" for c in entry["components"].values())
    assert "Button" in [s["name"] for s in entry["componentSets"].values()]
    shallow = get(server, f"/v1/files/{KEY}/nodes", ids="10:1", depth=1).json()
    kids = shallow["nodes"]["10:1"]["document"]["children"]
    assert kids and all(k.get("children", []) == [] for k in kids)


def test_bad_requests_carry_figmas_error_bodies(server: FigmaFixtureServer) -> None:
    missing = get(server, f"/v1/files/{KEY}/nodes")
    assert missing.status_code == 400 and missing.json() == {
        "status": 400,
        "err": "ids is required",
    }
    nofile = get(server, "/v1/files/NoSuchKey")
    assert nofile.status_code == 404 and nofile.json() == {"status": 404, "err": "Not found"}
    assert get(server, f"/v1/images/{KEY}", ids="10:1", scale=9).status_code == 400
    assert get(server, f"/v1/images/{KEY}", ids="10:1", format="gif").status_code == 400


def test_token_is_required_and_checked(server: FigmaFixtureServer) -> None:
    for token in (None, "wrong"):
        r = get(server, f"/v1/files/{KEY}", token=token)
        assert r.status_code == 403 and r.json() == {"status": 403, "err": "Invalid token"}
    bearer = httpx.get(
        server.url + f"/v1/files/{KEY}/meta", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert bearer.status_code == 200 and bearer.json()["file"]["name"].startswith("Fernhill")


def test_images_render_nodes_at_scale_and_obey_the_32_megapixel_cap(
    server: FigmaFixtureServer,
) -> None:
    doc = get(server, f"/v1/images/{KEY}", ids="10:17,0:1,77:77", scale=2).json()
    assert doc["err"] is None
    assert doc["images"]["0:1"] is None and doc["images"]["77:77"] is None  # page, unknown
    button = httpx.get(doc["images"]["10:17"], timeout=60).content
    with Image.open(io.BytesIO(button)) as im:
        assert im.size == (343, 104)  # the 171.56 x 52 button at 2x
    # the 390 x 3358 mobile frame at scale 4 would be 21 Mpx: allowed; the tall desktop
    # menu at scale 4 (55 Mpx) is scaled down to fit 2^25 pixels
    capped = get(server, f"/v1/images/{KEY}", ids="20:1", scale=4).json()["images"]["20:1"]
    with Image.open(io.BytesIO(httpx.get(capped, timeout=120).content)) as im:
        w, h = im.size
    assert w * h <= 1 << 25 and w * h > 0.99 * (1 << 25)
    assert abs(w / 1440 - export_scale(1440, 2400, 4)) < 0.01
    # a crafted render URL cannot ask for more than the API allows (a CPU bomb otherwise)
    for crafted in ("10-17@9999.png", "10-17@0.png", "10-17@1.2.3.png", "..@2.png"):
        assert httpx.get(f"{server.url}/__render/{KEY}/{crafted}", timeout=30).status_code == 404
    svg = get(server, f"/v1/images/{KEY}", ids="70:3", format="svg").json()["images"]["70:3"]
    assert httpx.get(svg, timeout=30).text.startswith("<svg")


def test_image_fills_and_variables(server: FigmaFixtureServer, tmp_path: Path) -> None:
    fills = get(server, f"/v1/files/{KEY}/images").json()
    assert fills["error"] is False and fills["status"] == 200
    url = next(iter(fills["meta"]["images"].values()))
    assert httpx.get(url).content[:4] == b"\x89PNG"
    # community files answer 403 on variables; a fixture may provide them
    v = get(server, f"/v1/files/{KEY}/variables/local")
    assert (
        v.status_code == 403 and v.json()["error"] is True and "Enterprise" in v.json()["message"]
    )
    store = tmp_path / "store"
    (store / KEY).mkdir(parents=True)
    (store / KEY / "file.json").write_text((STORE / KEY / "file.json").read_text())
    (store / KEY / "variables_local.json").write_text(
        json.dumps({"meta": {"variables": {"v:1": {"name": "brand"}}, "variableCollections": {}}})
    )
    with FigmaFixtureServer(FixtureStore(store), token=TOKEN) as srv:
        ok = get(srv, f"/v1/files/{KEY}/variables/local").json()
    assert ok["error"] is False and ok["meta"]["variables"]["v:1"]["name"] == "brand"


def test_token_bucket_refuses_with_figmas_429_and_refills_on_the_clock() -> None:
    now = [0.0]
    limiter = RateLimiter(RateLimit(capacity=3, per_minute=6), clock=lambda: now[0])
    decisions = [limiter.check("t", "/v1/files/K") for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert decisions[-1].retry_after == 10  # one token every 10 s
    # another tier has its own bucket
    assert limiter.check("t", "/v1/files/K/meta").allowed
    now[0] = 10.0
    assert limiter.check("t", "/v1/files/K").allowed
    assert not limiter.check("t", "/v1/files/K").allowed
    assert dict(limiter.headers(decisions[-1])) == {
        "Retry-After": "10",
        "X-Figma-Plan-Tier": "starter",
        "X-Figma-Rate-Limit-Type": "high",
        "X-Figma-Upgrade-Link": "https://www.figma.com/pricing",
    }


def test_seeded_schedule_429s_reach_the_client_with_headers() -> None:
    limit = parse_rate_limit("schedule=2;3")
    with FigmaFixtureServer(FixtureStore(STORE), token=TOKEN, rate_limit=limit) as srv:
        with FigmaClient(srv.url, TOKEN) as client:
            assert client.file(KEY, depth=1)["name"]
            with pytest.raises(FigmaApiError) as err:
                client.file(KEY, depth=1)
            assert err.value.status == 429 and err.value.retry_after == 1.0
            assert (
                str(err.value)
                == 'Figma API error: 429 - {"status":429,"err":"Rate limit exceeded"}'
            )
            assert err.value.headers["x-figma-plan-tier"] == "starter"
        # a client allowed to wait rides out the next scheduled 429
        with FigmaClient(srv.url, TOKEN, retries=1) as patient:
            assert patient.nodes(KEY, "10:1", depth=1)["nodes"]["10:1"]
        assert [s for _p, s in srv.log] == [200, 429, 429, 200]


@pytest.mark.parametrize("bad", ["10/hour", "capacity=x", "speed=3", "nonsense"])
def test_rate_limit_specs_are_checked(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_rate_limit(bad)


def test_served_as_its_own_process() -> None:
    """``python -m lhbench.envs.figma serve`` prints its URL and answers (one subprocess)."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lhbench.envs.figma",
            "serve",
            "--token",
            TOKEN,
            "--rate-limit",
            "1/min",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        first = httpx.get(f"{url}/v1/files/{KEY}?depth=1", headers={"X-Figma-Token": TOKEN})
        second = httpx.get(f"{url}/v1/files/{KEY}?depth=1", headers={"X-Figma-Token": TOKEN})
        assert first.status_code == 200 and second.status_code == 429
        assert int(second.headers["Retry-After"]) >= 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)
