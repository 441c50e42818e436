"""The content-mini pack, its frozen sources, and a fresh copy of its reference course."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lhbench.envs.content import GroundTruth, SourceSet, load_ground_truth, load_sources
from lhbench.sandbox import Sandbox, get_sandbox

PACK = Path(__file__).resolve().parents[3] / "src/lhbench/packs/data/content-mini"
CONTEXT = PACK / "tasks/course/initial/context"
GT_FILE = PACK / "ground_truth/course/chapters.json"
REFERENCE = PACK / "reference/course"


@pytest.fixture(scope="session")
def sources() -> SourceSet:
    return load_sources(CONTEXT)


@pytest.fixture(scope="session")
def ground_truth() -> GroundTruth:
    return load_ground_truth(GT_FILE)


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A writable copy of the reference course (a workspace the tests perturb)."""
    dest = tmp_path / "ws"
    shutil.copytree(REFERENCE, dest)
    return dest


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    return get_sandbox()
