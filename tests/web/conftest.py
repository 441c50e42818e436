"""A seeded store, the app served on 127.0.0.1, and headless Chromium (Debian's)."""

from __future__ import annotations

import hashlib
import io
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from lhbench.schema import (
    Artifact,
    DimensionScore,
    Grade,
    JudgeIdentity,
    JudgeKind,
    Scale,
    TierKind,
)
from lhbench.store import Store
from lhbench.testing import ThreadedServer
from lhbench.web import add_user, create_app
from tests.factories import make_run, make_trajectory

GROUPS = [("claude-code", "anthropic:claude-opus-4-6"), ("gemini-cli", "google-gla:gemini-3.1-pro")]
DIMS = ("design_inspection", "token_extraction", "component_architecture", "build_verification")
PASSWORD = "correct horse battery"


def png(color: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 1.5), dpi=50)
    ax.add_patch(plt.Rectangle((0, 0), 1, 1, color=color))
    ax.text(0.5, 0.5, color, ha="center")
    ax.axis("off")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def seed(store: Store) -> dict[str, str]:
    from lhbench.packs import bundled_pack_dirs, load_pack

    rubrics = load_pack(next(d for d in bundled_pack_dirs() if d.name == "lhbench-rubrics"))
    store.save_pack(rubrics)
    figma = rubrics.rubric("figma-to-code")
    ids = {}
    for t in ("t1", "t2"):
        for g, (harness, model) in enumerate(GROUPS):
            run = make_run(
                f"run-{harness}-{t}",
                pack_id="figma-mini",
                task_id=t,
                harness=harness,
                model=model,
                pack_hash="",
            )
            store.save_run(run)
            store.save_trajectory(make_trajectory(run.id))
            data = png(("tab:blue", "tab:orange")[g])
            store.save_artifact(
                Artifact(
                    run_id=run.id,
                    name="frames/home.png",
                    media_type="image/png",
                    sha256=hashlib.sha256(data).hexdigest(),
                    size=len(data),
                    content=data,
                )
            )
            for j, judge in enumerate(("anthropic:judge", "openai:judge", "google-gla:judge")):
                scores = [min(5, 2 + g + (k + j) % 3) for k in range(4)]
                store.save_grade(
                    Grade(
                        id=f"g-{run.id}-{j}",
                        run_id=run.id,
                        rubric_id="figma-to-code",
                        rubric_version="1.2",
                        rubric_hash=figma.content_hash,
                        tier=TierKind.PROCESS,
                        judge=JudgeIdentity(
                            kind=JudgeKind.LLM, model=judge, family=judge.split(":")[0]
                        ),
                        scores=[
                            DimensionScore(
                                dimension_id=d,
                                scale=Scale.ONE_TO_FIVE,
                                score=s,
                                evidence=f"saw {d}",
                            )
                            for d, s in zip(DIMS, scores, strict=True)
                        ],
                        tier_score=sum(
                            w * s for w, s in zip((0.3, 0.25, 0.25, 0.2), scores, strict=True)
                        ),
                        key=hashlib.sha256(f"{run.id}{j}".encode()).hexdigest(),
                    )
                )
            ids[f"{harness}-{t}"] = run.id
    add_user(store, "ann", PASSWORD)
    add_user(store, "boss", PASSWORD, admin=True)
    return ids


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Store, dict[str, str]]]:
    store = Store.open(f"sqlite:///{tmp_path / 'web.db'}")
    ids = seed(store)
    with ThreadedServer(create_app(store, secret="test-secret")) as srv:
        yield srv.url, store, ids
    store.close()


def chromium_path() -> str | None:
    for name in ("chromium-headless-shell", "chromium", "chromium-browser"):
        path = shutil.which(name) or (
            f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None
        )
        if path:
            return path
    return None


@pytest.fixture
def browser() -> Iterator[object]:
    exe = chromium_path()
    if exe is None:
        pytest.skip("no Chromium found (CI installs Debian's chromium-headless-shell)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=exe,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            yield b
        finally:
            b.close()
