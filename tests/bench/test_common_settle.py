"""bench/common.py: rounds start on a quiet machine, and a busy one does not stall a bench."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.bench.helpers import bench_module

pytestmark = pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="needs /proc/stat")


@pytest.fixture(scope="module")
def common() -> Iterator[ModuleType]:
    """bench/common.py as a module (it pins thread counts in the environment: undone)."""
    with bench_module("common") as module:
        yield module


def test_settle_waits_for_a_busy_machine_and_gives_up_at_its_limit(common: ModuleType) -> None:
    # two processes spinning on two cores: never quiet, so the wait is the limit
    spin = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 1)
    ]
    try:
        time.sleep(0.3)
        waited = common.settle(limit=1.0)
    finally:
        for p in spin:
            p.kill()
            p.wait()
    assert 1.0 <= waited < 3.0


def test_settle_returns_once_the_machine_is_quiet(common: ModuleType) -> None:
    # spinners on every core stop after 0.8 s: the wait ends soon after, well before its limit
    spin = [
        subprocess.Popen(
            [sys.executable, "-c", "import time\nt=time.time()+0.8\nwhile time.time()<t: pass"]
        )
        for _ in range(os.cpu_count() or 1)
    ]
    try:
        waited = common.settle(quiet=0.75, limit=20.0)  # another test may keep a core busy
    finally:
        for p in spin:
            p.wait()
    assert 0.5 <= waited < 10.0


def test_alternate_runs_between_before_every_side(common: ModuleType) -> None:
    log: list[str] = []
    sides = {n: (lambda n=n: log.append(n) or n) for n in ("a", "b")}
    out = common.alternate(sides, 3, between=lambda: log.append("|"))
    assert out == {"a": ["a"] * 3, "b": ["b"] * 3}
    assert log == ["|", "a", "|", "b", "|", "b", "|", "a", "|", "a", "|", "b"]
