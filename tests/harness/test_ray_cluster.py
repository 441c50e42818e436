"""Runs and grades on a real Ray cluster: a head and two worker nodes here, a PostgreSQL store.

One worker node is killed (SIGKILL to its whole process group: its raylet and the worker
running a run) while runs are in flight. The job must still complete, every run on the
surviving node, each run and its label stored exactly once, the labels made on the nodes
(the job's own verify pass finds them stored). Likewise a worker node is killed while it
makes grades: every grade is stored once and equals the grade the local executor makes.
The cluster is shared by the module's tests; a test that needs both worker nodes starts
again the one an earlier test killed.
"""

from __future__ import annotations

import asyncio
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from lhbench.api import grade_async
from lhbench.config import Settings
from lhbench.schema import Grade, RunStatus, StepKind
from lhbench.store import Store
from lhbench.testing import (
    ModelStub,
    StubReply,
    StubRequest,
    manifest_planner_script,
    rubric_judge_script,
)
from tests.harness.helpers import write_harness_pack
from tests.judges.helpers import JUDGE_NAMES, seed_runs

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
    nodes: list[subprocess.Popen[bytes]]  # the head, then the worker nodes (dead ones too)
    started_workers: int = 0

    @property
    def workers(self) -> list[subprocess.Popen[bytes]]:
        """The live worker nodes' ``ray start`` processes."""
        return [p for p in self.nodes[1:] if p.poll() is None]

    def worker_starts(self, n: int) -> list[tuple[list[str], Path]]:
        """``ray start`` arguments and log of ``n`` new one-CPU worker nodes."""
        out = []
        for _ in range(n):
            i = self.started_workers
            self.started_workers += 1
            args = [
                f"--address={self.address}",
                "--num-cpus=1",
                "--node-ip-address=127.0.0.1",
                # nodes of one host sharing a temp dir pick the same socket names
                f"--temp-dir={self.temp_dir / f'w{i}'}",
            ]
            out.append((args, self.temp_dir / f"worker{i}.log"))
        return out


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
        _nodes(cluster.worker_starts(2), deadline, cluster.nodes)
        yield cluster
    finally:
        for proc in reversed(cluster.nodes):
            _kill(proc)
        shutil.rmtree(temp, ignore_errors=True)


def _two_workers(cluster: Cluster) -> None:
    """Both worker nodes up: one an earlier test killed is started again (a new node)."""
    missing = 2 - len(cluster.workers)
    if missing > 0:
        _nodes(cluster.worker_starts(missing), time.monotonic() + 480, cluster.nodes)


def _shipped_working_dirs(temp: Path) -> list[Path]:
    """Working directories Ray copied to the nodes (its ``uv run`` runtime environment)."""
    return sorted(temp.glob("**/runtime_resources/working_dir_files/*"))


def _rows(url: str, sql: str) -> list[tuple[object, ...]]:
    engine = create_engine(make_url(url.replace("postgresql://", "postgresql+psycopg://", 1)))
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(sql))]
    finally:
        engine.dispose()


def test_killed_worker_node_loses_no_run(ray_cluster: Cluster, pg_url: str, tmp_path: Path) -> None:
    _two_workers(ray_cluster)
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
            # a node's first worker process takes minutes to start at load ~14
            deadline = time.monotonic() + 180
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


GRADED_RUNS = 6
# this judge's answers on this run never fit the rubric: a parse error, never a score
UNPARSED = ("judge-gpt", "r001")


def _judge_script() -> Callable[[StubRequest], StubReply]:
    scores = rubric_judge_script()

    def script(req: StubRequest) -> StubReply:
        # the mark is in the first question; a re-ask (its feedback last) carries it too
        if req.model == UNPARSED[0] and f"RUN-MARK:{UNPARSED[1]}" in req.text():
            return StubReply(content="Looks fine to me, roughly a 4.")
        return scores(req)

    return script


def _judge_cmd(cluster: Cluster, pg_url: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "lhbench",
        "judge",
        "--pack",
        "figma-mini",
        "--rubric",
        "figma-to-code",
        "--tier",
        "process",
        # no base URL in the model strings: OPENAI_BASE_URL names the stub on this machine
        # only (the nodes' environment has none), so a node asks the endpoint resolved here
        "--panel",
        ",".join(f"openai:{n}" for n in JUDGE_NAMES),
        "--executor",
        "ray",
        "--ray-address",
        cluster.address,
        "--db",
        pg_url,
        "--json",
    ]


def _comparable(g: Grade) -> tuple[object, ...]:
    """What makes two grades the same grade: identity, judge, outcome (not ids or timings)."""
    return (
        g.run_id,
        g.judge.key,
        g.rubric_hash,
        g.tier,
        g.repeat,
        g.status,
        g.tier_score,
        [(s.dimension_id, s.score, s.evidence) for s in g.scores],
        g.raw_output,
        g.error,
    )


def test_killed_worker_node_loses_no_grade(
    ray_cluster: Cluster, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two_workers(ray_cluster)
    # the nodes cannot know the stub's address
    assert "OPENAI_BASE_URL" not in RAY_ENV and "OPENAI_API_KEY" not in RAY_ENV
    local_url = f"sqlite:///{tmp_path / 'local.db'}"
    for url in (local_url, pg_url):
        with Store.open(url) as store:
            seed_runs(store, GRADED_RUNS)  # the same runs in both stores
    planned = GRADED_RUNS * len(JUDGE_NAMES)
    started = time.monotonic()
    with ModelStub(_judge_script(), latency=1.0) as stub:
        base_url = stub.base_url
        monkeypatch.setenv("OPENAI_BASE_URL", base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "stub-key")  # the nodes have none either
        panel = [f"openai:{n}" for n in JUDGE_NAMES]
        # the local executor's grades, for comparison
        with Store.open(local_url) as store:
            local = asyncio.run(
                grade_async(
                    "figma-mini",
                    store=store,
                    settings=Settings(home=tmp_path / "home"),
                    rubric="figma-to-code",
                    tier="process",
                    panel=panel,
                )
            )
            local_grades = {g.key: g for g in store.list_grades()}
        assert (local.summary.done, local.summary.failed) == (planned - 1, 1)
        local_calls = stub.count
        local_seconds = time.monotonic() - started
        started = time.monotonic()

        env = {k: v for k, v in RAY_ENV.items() if not k.startswith("LHBENCH_")}
        env["LHBENCH_HOME"] = str(tmp_path / "home")
        env["OPENAI_BASE_URL"] = base_url
        env["OPENAI_API_KEY"] = "stub-key"
        proc = subprocess.Popen(
            _judge_cmd(ray_cluster, pg_url),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            # a batch of grades in flight on a worker node (its task running, the model
            # asked): kill that node
            victim = None
            deadline = time.monotonic() + 180
            while victim is None and time.monotonic() < deadline and proc.poll() is None:
                for node in ray_cluster.workers:
                    titles = _node_tree(node).values()
                    if any(t.startswith("ray::grade_on_node") for t in titles) and (
                        stub.count > local_calls
                    ):
                        victim = node
                        break
                time.sleep(0.05)
            assert victim is not None, "no grading batch was seen in flight on a worker node"
            calls_at_kill = stub.count - local_calls
            _kill(victim)
            stored_at_kill = _rows(pg_url, "SELECT count(*) FROM grades")[0][0]
            stdout, stderr = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        job_seconds = time.monotonic() - started
        assert proc.returncode == 0, stderr[-3000:]
        doc = json.loads(stdout)
        assert (doc["planned"], doc["done"], doc["failed"]) == (planned, planned - 1, 1), doc
        assert doc["failures"] == {"answer did not fit the rubric (parse error)": 1}, doc
        assert isinstance(stored_at_kill, int) and stored_at_kill < planned

        # stored exactly once, and the same grades the local executor made
        assert _rows(pg_url, "SELECT count(*), count(DISTINCT key) FROM grades") == [
            (planned, planned)
        ]
        with Store.open(pg_url) as store:
            ray_grades = {g.key: g for g in store.list_grades()}
        assert set(ray_grades) == set(local_grades)
        for key, g in ray_grades.items():
            assert _comparable(g) == _comparable(local_grades[key]), key
            assert g.judge.endpoint == base_url
        [failed] = [g for g in ray_grades.values() if g.status != "ok"]
        assert failed.status == "parse_error" and failed.tier_score is None and not failed.scores
        assert (failed.judge.model, failed.run_id) == ("openai:" + UNPARSED[0], UNPARSED[1])
        assert failed.raw_output and "roughly a 4" in failed.raw_output
        # the replies came back with the grades and are in the store's response cache
        assert _rows(pg_url, "SELECT count(*) FROM response_cache")[0][0] >= planned

        # run again: everything is stored, no model is asked
        before = stub.count
        again = subprocess.run(
            _judge_cmd(ray_cluster, pg_url), env=env, capture_output=True, text=True, timeout=300
        )
        assert again.returncode == 0, again.stderr[-3000:]
        redo = json.loads(again.stdout)
        assert (redo["planned"], redo["skipped"], redo["done"]) == (planned, planned, 0), redo
        assert stub.count == before
    assert _rows(pg_url, "SELECT count(*) FROM grades") == [(planned,)]
    # the nodes ran their installed lhbench: the driver (under `uv run`) shipped no checkout
    assert _shipped_working_dirs(ray_cluster.temp_dir) == []
    print(
        f"\nray cluster: {planned} grades, node killed after {calls_at_kill} model call(s) "
        f"with {stored_at_kill} stored; local executor {local_seconds:.1f} s, "
        f"ray job (kill included) {job_seconds:.1f} s, with the re-run "
        f"{time.monotonic() - started:.1f} s"
    )
