"""The figma-mini pack, its reference apps built once per session, one browser per module."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from lhbench.envs.figma import BuildResult, build_app
from lhbench.envs.figma.capture import chromium_path, launch_browser
from lhbench.sandbox import Sandbox, get_sandbox
from tests.envs.figma.helpers import KEY, NPM_CACHE, PACK, registry_reachable


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    return get_sandbox()


@pytest.fixture(scope="session")
def all_frames_gt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ground-truth directory with all six frames (the three tasks' manifests merged)."""
    out = tmp_path_factory.mktemp("gt-all")
    frames = []
    for task in ("landing-page", "shop-pages", "company-pages"):
        src = PACK / "ground_truth" / task
        doc = json.loads((src / "manifest.json").read_text())
        for f in doc["frames"]:
            shutil.copy(src / f["gt_image"], out / f["gt_image"])
            frames.append(f)
    (out / "manifest.json").write_text(
        json.dumps({"figma_file_key": KEY, "total_frames": len(frames), "frames": frames})
    )
    return out


@pytest.fixture(scope="session")
def static_build(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    built = build_app(
        PACK / "reference" / "static", tmp_path_factory.mktemp("static-build"), sandbox=sandbox
    )
    assert built.ok, built.reason
    return built


@pytest.fixture(scope="session")
def vite_build(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    if not registry_reachable():
        pytest.skip("the npm registry is not reachable: the Vite reference app cannot install")
    built = build_app(
        PACK / "reference" / "vite",
        tmp_path_factory.mktemp("vite-build"),
        sandbox=sandbox,
        cache_dir=NPM_CACHE,
    )
    assert built.ok, f"{built.reason}: {built.steps[-1].tail if built.steps else ''}"
    return built


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if chromium_path() is None:
        pytest.skip("no Chromium found (CI installs Debian's chromium-headless-shell)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch_browser(p)
        try:
            yield b
        finally:
            b.close()
