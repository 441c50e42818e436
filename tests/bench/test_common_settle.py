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
    # at its limit, not at a quiet spell; the bound only says it stopped (its sync can take
    # seconds under a test suite writing files)
    assert waited >= 1.0, waited
    assert waited < 11.0, waited


def test_settle_returns_once_the_machine_is_quiet(common: ModuleType) -> None:
    # the cores' ticks as /proc/stat would give them: fully busy for four windows, then
    # 5 % busy; the wait ends at the first quiet window (a real machine under a test
    # suite's other workers is never quiet enough to test this on)
    readings = iter([(0, 0)] + [(100 * k, 100 * k) for k in range(1, 5)] + [(405, 500)])
    waited = common.settle(window=0.05, limit=10.0, ticks=lambda: next(readings))
    assert waited >= 0.2, waited  # four busy windows of 0.05 s waited out
    assert waited < 2.0, waited
    assert next(readings, None) is None  # every reading taken, none more


def test_settle_counts_a_window_at_the_threshold_as_quiet(common: ModuleType) -> None:
    readings = iter([(0, 0), (10, 100)])  # exactly 10 % busy
    assert common.settle(window=0.01, limit=5.0, ticks=lambda: next(readings)) < 1.0


def test_alternate_runs_between_before_every_side(common: ModuleType) -> None:
    log: list[str] = []
    sides = {n: (lambda n=n: log.append(n) or n) for n in ("a", "b")}
    out = common.alternate(sides, 3, between=lambda: log.append("|"))
    assert out == {"a": ["a"] * 3, "b": ["b"] * 3}
    assert log == ["|", "a", "|", "b", "|", "b", "|", "a", "|", "a", "|", "b"]
