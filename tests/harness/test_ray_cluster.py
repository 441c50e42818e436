"""Runs on a real Ray cluster: a head and two worker nodes on this machine, a PostgreSQL store.

One worker node is killed (SIGKILL to its whole process group: its raylet and the worker
running a run) while runs are in flight. The job must still complete, every run on the
surviving node, each run and its label stored exactly once, the labels made on the nodes
(the job's own verify pass finds them stored).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from lhbench.schema import RunStatus, StepKind
from lhbench.store import Store
from lhbench.testing import ModelStub, manifest_planner_script
from tests.harness.helpers import write_harness_pack

pytestmark = [pytest.mark.ray_cluster, pytest.mark.postgres]

RAY = Path(sys.executable).with_name("ray")
# The cluster and its driver agree on no token auth, whatever ~/.ray holds on this machine.
# On a loaded machine Ray's Python agents and workers start slowly: a raylet waits for its
# agents up to 5 minutes (it crashes after 30 s by default), a worker may take 5 minutes
# to register.
RAY_ENV = {
    **os.environ,
    "RAY_AUTH_MODE": "disabled",
    "RAY_raylet_start_wait_time_s": "300",
    "RAY_agent_register_timeout_ms": "300000",
    "RAY_worker_register_timeout_seconds": "300",
}
VERIFY = (
    "import argparse, json, sys\n"
    "from pathlib import Path\n"
    "ap = argparse.ArgumentParser(); ap.add_argument('--root'); a = ap.parse_args()\n"
    "done = [s for s in ('a', 'b') if (Path(a.root) / f'{s}.txt').is_file()]\n"
    "print(json.dumps({'detail': f'steps written: {done}'}))\n"
    "sys.exit(0 if len(done) == 2 else 1)\n"
)


NodeProc = subprocess.Popen[bytes]


@dataclass
class Cluster:
    """A Ray cluster of ``ray start --block`` processes, each leading its own process group."""

    address: str
    temp_dir: Path
    nodes: list[subprocess.Popen[bytes]]  # the head, then the worker nodes

    @property
    def workers(self) -> list[subprocess.Popen[bytes]]:
        """The worker nodes' ``ray start`` processes."""
        return self.nodes[1:]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        # a session of its own: killing its group takes the raylet and its workers with it
        return subprocess.Popen(
            [str(RAY), "start", "--block", "--disable-usage-stats", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=RAY_ENV,
        )


def _processes() -> dict[int, tuple[int, int, str]]:
    """Every process: pid -> (parent pid, process group, title)."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text().rsplit(")", 1)[1].split()
            title = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        out[int(d.name)] = (int(stat[1]), int(stat[2]), title)
    return out


def _node_tree(proc: subprocess.Popen[bytes]) -> dict[int, str]:
    """A node's processes: its ``ray start`` group and everything they started."""
    table = _processes()
    tree = {pid for pid, (_pp, pgid, _t) in table.items() if pgid == proc.pid}
    grew = True
    while grew:
        more = {pid for pid, (ppid, _g, _t) in table.items() if ppid in tree} - tree
        tree |= more
        grew = bool(more)
    return {pid: table[pid][2] for pid in tree}


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL a node: its process group and any process of it that left the group."""
    tree = _node_tree(proc)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    for pid in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait(timeout=30)


def _nodes(starts: list[tuple[list[str], Path]], deadline: float, nodes: list[NodeProc]) -> None:
    """Nodes started at once and registered with the head (``ray start`` says so), in ``nodes``.

    ``ray start`` gives up when its node has not registered within 30 s (a wait hard-coded
    in Ray): on a loaded machine that happens, and that node is started again. Each
    process is in ``nodes`` from its start, so an interrupted fixture still kills it.
    """
    pending = {len(nodes) + i: (args, log) for i, (args, log) in enumerate(starts)}
    nodes.extend(_start(args, log) for args, log in starts)
    while pending:
        assert time.monotonic() < deadline, "Ray nodes did not start: " + " | ".join(
            log.read_text()[-1000:] for _a, log in pending.values()
        )
        for i, (args, log) in list(pending.items()):
            if b"Ray runtime started" in log.read_bytes():
                del pending[i]
            elif nodes[i].poll() is not None:  # gave up: start it again
                _kill(nodes[i])
                nodes[i] = _start(args, log)
        time.sleep(0.2)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Cluster]:
    """A head (no CPUs: it only coordinates) and two one-CPU worker nodes; always torn down."""
    if not RAY.is_file():
        pytest.skip("the ray CLI is not installed (uv sync --extra ray)")
    # short: Ray's socket paths under it must fit a Unix socket's 107 bytes
    temp = Path(tempfile.mkdtemp(prefix="lhray-", dir="/tmp"))
    port = _free_port()
    address = f"127.0.0.1:{port}"
    common = ["--node-ip-address=127.0.0.1", f"--temp-dir={temp}"]
    deadline = time.monotonic() + 480  # ~40 s on a quiet machine; minutes on a loaded one
    cluster = Cluster(address, temp, [])
    try:
        head = [
            "--head",
            f"--port={port}",
            "--num-cpus=0",
            "--include-dashboard=false",
            # a dead node is declared dead after ~10 s, not the default ~30 s
            '--system-config={"health_check_period_ms":2000,"health_check_failure_threshold":5}',
            *common,
        ]
        _nodes([(head, temp / "head.log")], deadline, cluster.nodes)
        workers = [
            (
                [
                    f"--address={address}",
                    "--num-cpus=1",
                    "--node-ip-address=127.0.0.1",
                    # nodes of one host sharing a temp dir pick the same socket names
                    f"--temp-dir={temp / f'w{i}'}",
                ],
                temp / f"worker{i}.log",
            )
            for i in range(2)
        ]
        _nodes(workers, deadline, cluster.nodes)
        yield cluster
    finally:
        for proc in reversed(cluster.nodes):
            _kill(proc)
        shutil.rmtree(temp, ignore_errors=True)


def _rows(url: str, sql: str) -> list[tuple[object, ...]]:
    engine = create_engine(make_url(url.replace("postgresql://", "postgresql+psycopg://", 1)))
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(sql))]
    finally:
        engine.dispose()


def test_killed_worker_node_loses_no_run(ray_cluster: Cluster, pg_url: str, tmp_path: Path) -> None:
    pack = write_harness_pack(tmp_path / "pack", hooks=False)
    (pack / "tasks" / "greet" / "verify.py").write_text(VERIFY)
    home = tmp_path / "home"
    env = {k: v for k, v in RAY_ENV.items() if not k.startswith("LHBENCH_")}
    env["LHBENCH_HOME"] = str(home)
    started = time.monotonic()
    with ModelStub(manifest_planner_script(("a", "b")), latency=0.3) as stub:
        cmd = [
            sys.executable,
            "-m",
            "lhbench",
            "run",
            str(pack),
            "--harness",
            "native",
            "--model",
            f"openai:planner@{stub.base_url}",
            "--repeats",
            "3",
            "--parallel",
            "3",
            "--executor",
            "ray",
            "--ray-address",
            ray_cluster.address,
            "--db",
            pg_url,
            "--json",
        ]
        proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            # a run in flight on a worker node (its task started, the model asked): kill it
            victim = None
            deadline = time.monotonic() + 120
            while victim is None and time.monotonic() < deadline and proc.poll() is None:
                for node in ray_cluster.workers:
                    titles = _node_tree(node).values()
                    running = any(t.startswith("ray::_execute_on_node") for t in titles)
                    if running and stub.count > 0:
                        victim = node
                        break
                time.sleep(0.05)
            assert victim is not None, "no run was seen in flight on a worker node"
            in_flight_at_kill = stub.count
            _kill(victim)
            stdout, stderr = proc.communicate(timeout=240)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    seconds = time.monotonic() - started
    assert proc.returncode == 0, stderr[-3000:]
    doc = json.loads(stdout)
    assert (doc["planned"], doc["done"], doc["failed"]) == (3, 3, 0), doc
    # the checks ran on the nodes: the job's own verify pass found every label stored
    assert doc["verify"]["planned"] == 3 and doc["verify"]["skipped"] == 3, doc["verify"]
    assert doc["verify"]["done"] == 0
    assert all(r["passed"] is True for r in doc["runs"])

    with Store.open(pg_url) as store:
        runs = store.list_runs()
        assert len(runs) == 3 and {r.repeat for r in runs} == {0, 1, 2}
        assert all(r.status == RunStatus.COMPLETED for r in runs)
        # the killed node finished nothing: every run was made (or made again) by the other
        assert len({r.metadata["node"] for r in runs}) == 1
        for r in runs:
            steps = store.get_trajectory(r.id).steps
            assert [s.index for s in steps] == list(range(len(steps)))
            written = [
                s.tool_input["path"]
                for s in steps
                if s.kind == StepKind.TOOL_CALL and s.tool_name == "write_file"
            ]
            assert sorted(set(written)) == ["a.txt", "b.txt"]
    # stored exactly once: one row per run, one label per run and check
    assert _rows(pg_url, "SELECT count(*), count(DISTINCT id) FROM runs") == [(3, 3)]
    labels = _rows(pg_url, "SELECT run_id, source, passed FROM labels ORDER BY run_id")
    assert len(labels) == 3 and len({lab[0] for lab in labels}) == 3
    assert {(lab[1], lab[2]) for lab in labels} == {("verify:greet/verify.py", True)}
    print(
        f"\nray cluster: 3 runs, node killed after {in_flight_at_kill} model call(s); "
        f"job {seconds:.1f} s"
    )
