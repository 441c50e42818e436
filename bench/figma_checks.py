"""Figma output checks on a 6-frame app: per-frame cost as a ratio to a bare screenshot.

The app is figma-mini's static reference site, built once in the sandbox; the ground
truth is the pack's six frames (desktop home, mobile home, a tall menu page, a product
page, about, contact). Each repetition, alternating (``bench/common.py``):

- bare: for each frame, a fresh page at the frame's width, ``goto`` its route on the
  lenient app server, one full-page screenshot — the floor any visual check pays;
- checks: :func:`lhbench.envs.figma.check_app` with the same browser and the same build
  (routes resolved, settle waits, screenshot, DOM extraction, strict serving, hover and
  responsive probes at 375/768/1440, every fidelity measure, token coverage).

Both sides use one Chromium launched in this process (the app is our own; the
sandboxed capture adds a browser start per check, reported separately once). Prints the
medians per frame, the split of the checks' time, and the ratio of medians. BLAS/OpenMP
threads are pinned to 1. Last line: the headline.

    uv run python bench/figma_checks.py [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import common

from lhbench.envs.figma import build_app, check_app, read_ground_truth
from lhbench.envs.figma.capture import launch_browser
from lhbench.envs.figma.serve import AppServer
from lhbench.packs import bundled_pack_dirs
from lhbench.sandbox import get_sandbox

TARGET = 3.0


def six_frames(dest: Path, pack: Path) -> Path:
    """One ground-truth directory with all the pack's frames."""
    frames = []
    key = None
    for manifest in sorted((pack / "ground_truth").glob("*/manifest.json")):
        doc = json.loads(manifest.read_text())
        key = doc["figma_file_key"]
        for f in doc["frames"]:
            shutil.copy(manifest.parent / f["gt_image"], dest / f["gt_image"])
            frames.append(f)
    (dest / "manifest.json").write_text(
        json.dumps({"figma_file_key": key, "total_frames": len(frames), "frames": frames})
    )
    return dest


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    print(common.load_line("figma_checks"))
    from playwright.sync_api import sync_playwright

    pack = next(d for d in bundled_pack_dirs() if d.name == "figma-mini")
    tmp = Path(tempfile.mkdtemp(prefix="lhbench-bench-figma-"))
    (tmp / "gt").mkdir()
    gt = six_frames(tmp / "gt", pack)
    frames = read_ground_truth(gt).frames
    sandbox = get_sandbox()
    built = build_app(pack / "reference" / "static", tmp / "build", sandbox=sandbox)
    if not built.ok or built.output_dir is None:
        print(f"figma_checks: the reference app did not build: {built.reason}")
        return 1
    dist = built.output_dir
    widths = {"60:1": 390}  # the mobile frame; the others are 1440 wide
    n = len(frames)
    report_last = None
    with sync_playwright() as p:
        browser = launch_browser(p)
        try:

            def bare() -> float:
                t0 = time.perf_counter()
                with AppServer(dist, lenient=True) as srv:
                    ctx = browser.new_context(device_scale_factor=1)
                    for f in frames:
                        route = "/product/1" if ":" in f.route else f.route
                        page = ctx.new_page()
                        page.set_viewport_size(
                            {"width": widths.get(f.node_id, 1440), "height": 900}
                        )
                        page.goto(srv.url + route, wait_until="load")
                        page.screenshot(path=str(tmp / "bare.png"), full_page=True)
                        page.close()
                    ctx.close()
                return (time.perf_counter() - t0) / n

            def checks() -> float:
                nonlocal report_last
                t0 = time.perf_counter()
                report_last = check_app(
                    pack / "reference" / "static",
                    gt,
                    design=pack / "figma",
                    work_dir=tmp / "work",
                    sandbox=sandbox,
                    browser=browser,
                    built=built,
                )
                return (time.perf_counter() - t0) / n

            bare()  # warm the browser and the page cache once, on both sides
            runs = common.alternate({"bare": bare, "checks": checks}, args.reps)
        finally:
            browser.close()
    assert report_last is not None
    s = report_last.summary()
    print(
        f"figma_checks: {n} frames; checks passed={report_last.passed()}, text_recall "
        f"{s['text_recall']:.3f}, band_edge_f1 {s['band_edge_f1']:.3f}, aggregate "
        f"{s['aggregate']:.3f}"
    )
    print(
        f"  bare screenshot per frame:  median {common.median(runs['bare']):.3f}s "
        f"{common.spread(runs['bare'])}"
    )
    print(
        f"  full checks per frame:      median {common.median(runs['checks']):.3f}s "
        f"{common.spread(runs['checks'])}"
    )
    split = {k: round(v / n, 3) for k, v in report_last.seconds.items()}
    print(f"  last checks' split per frame (s): {split}")
    t0 = time.perf_counter()
    sandboxed = check_app(
        pack / "reference" / "static",
        gt,
        design=pack / "figma",
        work_dir=tmp / "work-sandboxed",
        sandbox=sandbox,
        built=built,
    )
    print(
        f"  once, capture in the sandbox ({sandbox.name}): "
        f"{(time.perf_counter() - t0) / n:.3f}s per frame, passed={sandboxed.passed()}"
    )
    print(common.load_line("figma_checks", "end"))
    ratio = common.ratio_of_medians(runs["checks"], runs["bare"])
    print(
        f"figma checks per frame / bare full-page screenshot: {ratio:.2f}x (target <= {TARGET:g}x)"
    )
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
