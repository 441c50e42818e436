"""bench/scale.py ``--reuse``: never with the model stub on another port than the build's.

The stub's endpoint is part of every stored grade's judge identity. Reusing a store with
the stub elsewhere made each stored grade another judge's, and the grade job graded the
whole store again into it. The build records its port in the ``built-*.json`` marker; a
store whose marker predates that is read for its judges' endpoint.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from sqlalchemy import func, select

from lhbench.store import Store
from lhbench.store.tables import GradeRow
from lhbench.testing import ModelStub, auto_script
from tests.bench.helpers import bench_module

N = 10


@pytest.fixture(scope="module")
def scale() -> Iterator[ModuleType]:
    """bench/scale.py as a module (its ``common`` pins thread counts: undone afterwards)."""
    with bench_module("scale") as module:
        yield module


def _grades(url: str) -> int:
    with Store.open(url, migrate=False) as s, s.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(GradeRow)).scalar_one())


def test_reuse_with_another_stub_port_is_refused_before_the_grade_job(
    scale: ModuleType, tmp_path: Path
) -> None:
    with contextlib.ExitStack() as stack:
        _refused_on_another_port(scale, tmp_path, stack)


def _refused_on_another_port(
    scale: ModuleType, tmp_path: Path, stack: contextlib.ExitStack
) -> None:
    work = tmp_path / "work"
    (work / "home").mkdir(parents=True)
    packs = scale.write_packs(work / "packs")
    url = f"sqlite:///{work / f'scale-{N}.db'}"
    # the building stub stays up to the end: its port cannot be handed to "another" stub
    # (closed, the OS gave the next stub the same ephemeral port now and then)
    built_with = stack.enter_context(ModelStub(auto_script()))
    res = scale.one("sqlite", url, N, work, packs, built_with, (), False)
    port = built_with.port
    marker = work / f"built-sqlite-{N}.json"
    held = json.loads(marker.read_text())
    assert held["stub_port"] == port
    stored = _grades(url)
    assert stored == res.built.grades > 0

    with ModelStub(auto_script()) as other:
        assert other.port != port
        with pytest.raises(SystemExit) as refused:
            scale.one("sqlite", url, N, work, packs, other, ("grade",), True)
        assert other.requests == []
    message = str(refused.value)
    assert f"built with the model stub on port {port}, not {other.port}" in message
    assert f"pass --stub-port {port}" in message
    assert _grades(url) == stored  # nothing graded again

    # a marker written before it held the port: the grades' judges' endpoint tells it
    del held["stub_port"]
    marker.write_text(json.dumps(held))
    assert scale.stored_stub_ports(url) == {port}
    with ModelStub(auto_script()) as other, pytest.raises(SystemExit) as refused:
        scale.one("sqlite", url, N, work, packs, other, ("grade",), True)
    assert f"port {port}, not {other.port}" in str(refused.value)
    assert _grades(url) == stored

    # the build's port is accepted, with or without the marker's record of it
    stack.close()  # the building stub stopped: its port free for this one
    with ModelStub(auto_script(), port=port) as same:
        again = scale.one("sqlite", url, N, work, packs, same, (), True)
    assert again.built == res.built


def test_a_store_graded_on_two_ports_is_refused_whatever_the_port(
    scale: ModuleType, tmp_path: Path
) -> None:
    from tests.factories import make_grade, make_run

    url = f"sqlite:///{tmp_path / 'two.db'}"
    with Store.open(url) as s:
        s.save_run(make_run("r1"))
        grade = make_grade("r1", scale.JUDGES[0])
        for port in (18001, 18002):
            judge = grade.judge.model_copy(update={"endpoint": f"http://127.0.0.1:{port}/v1"})
            s.save_grade(
                grade.model_copy(update={"id": f"g{port}", "key": f"k{port}", "judge": judge})
            )
    assert scale.stored_stub_ports(url) == {18001, 18002}
    for port in (18001, 18002, 18003):
        with pytest.raises(SystemExit, match="made on several ports: build it again"):
            scale.check_stub_port(url, None, port)


def test_a_commands_peak_rss_is_its_own_not_the_benchs(scale: ModuleType, tmp_path: Path) -> None:
    """The peak printed for a command is its process's since its exec.

    wait4's figure also counts the pages the child shared with the bench between fork and
    exec: at 10,000 runs every command "peaked" at the bench's own 190 MB. Here the bench
    holds 300 MB it has written to when it starts ``lhbench --help`` (~60 MB).
    """
    ballast = bytearray(b"\x01") * (300 * 2**20)
    env = {**os.environ, "LHBENCH_HOME": str(tmp_path / "home")}
    took, peak, out, first = scale.cli(["--help"], env, tmp_path)
    assert ballast[-1] == 1  # held, written, until the command ended
    assert b"Usage" in out and 0 < first <= took
    assert 10 * 2**20 < peak < 200 * 2**20, peak / 2**20
    assert not list(tmp_path.glob("peak-*"))  # its file read and removed
    # a command that fails is an Over naming its exit, as before
    with pytest.raises(scale.Over, match="exit 2"):
        scale.cli(["no-such-command"], env, tmp_path)
