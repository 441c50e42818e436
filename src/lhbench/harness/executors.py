"""Where runs execute: on this machine, or as Ray tasks. One interface, used by the run job.

On Ray (a local instance, or an existing cluster at ``address``) each run is one Ray task:
the pack travels as an archive through Ray's object store and is unpacked once per node,
the run works in its own sandbox on the node, and the task's checks run there too, on the
workspace it left (:func:`lhbench.jobs.verification.check_on_node`). The run, its
trajectory and labels come back to the job, which stores them keyed by the run id.

A worker or node that dies mid-run loses nothing: Ray runs the task again elsewhere
(``max_retries``), and when Ray gives up on a lost worker the executor submits it again
(``resubmits``); a run retried where its workspace survives (a shared ``LHBENCH_HOME``)
resumes from its journal. Whatever still fails is a crashed unit the next run of the
same command runs again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import os
import shutil
import socket
import sys
import tarfile
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from lhbench.harness.runner import RunOutcome, RunSpec, execute
from lhbench.models import ModelPool

__all__ = [
    "EXECUTORS",
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "make_executor",
    "pack_archive",
    "unpack_archive",
]


class Executor(Protocol):
    """Runs one spec to its outcome; entered once per job."""

    async def __aenter__(self) -> Executor: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def run(self, spec: RunSpec) -> RunOutcome:
        """Execute one run."""
        ...


class LocalExecutor:
    """Runs in this process, sharing one model pool (and its per-endpoint limits)."""

    def __init__(self, *, model: Any = None) -> None:
        self.model = model
        self.pool: ModelPool | None = None

    async def __aenter__(self) -> LocalExecutor:
        self.pool = ModelPool()
        self._session = self.pool.session()
        await self._session.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        # the runs share the pool's HTTP clients: closed once, when the last run is done
        if self.pool is not None:
            await self._session.__aexit__(None, None, None)
        self.pool = None

    async def run(self, spec: RunSpec) -> RunOutcome:
        """Execute ``spec`` here."""
        return await execute(spec, pool=self.pool, model=self.model)


def pack_archive(pack_dir: Path) -> tuple[str, bytes]:
    """A pack directory as a gzipped tar, and a digest of it (the nodes' cache key)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        tar.add(str(pack_dir), arcname="pack")
    data = buf.getvalue()
    return hashlib.sha256(data).hexdigest()[:24], data


def unpack_archive(home: Path, digest: str, data: bytes) -> Path:
    """The pack of :func:`pack_archive`, unpacked once per node under ``home/ray-packs``.

    Unpacked beside its place and renamed into it, so workers of one node racing to unpack
    the same pack never see half of it; ``tarfile``'s ``data`` filter refuses members that
    would land outside it (absolute paths, ``..``, links out, devices).
    """
    dest = home / "ray-packs" / digest
    if (dest / "pack" / "pack.yaml").is_file():
        return dest / "pack"
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=dest.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            tar.extractall(tmp, filter="data")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        os.rename(tmp, dest)
    except OSError:  # another worker of this node was first
        shutil.rmtree(tmp, ignore_errors=True)
    return dest / "pack"


#: checks a finished run on its node: (the unpacked pack, the run's spec, its outcome) ->
#: labels; given by the job layer (``lhbench.jobs.verification.check_on_node``), so the
#: harness never imports the jobs above it
NodeCheck = Callable[[Path, RunSpec, RunOutcome], Awaitable[list[Any]]]


async def _run_on_node(
    spec: RunSpec, digest: str, archive: bytes, check: NodeCheck | None
) -> RunOutcome:
    home = Path(spec.home)
    pack_dir = unpack_archive(home, digest, archive)
    spec = replace(spec, pack_dir=str(pack_dir))
    out = await execute(spec)
    out.run.metadata["node"] = _node_id()
    out.run.metadata["host"] = socket.gethostname()
    if check is not None:
        out.labels = await check(pack_dir, spec, out)
    return out


def _node_id() -> str:
    import ray

    return str(ray.get_runtime_context().get_node_id())


def _execute_on_node(
    spec: RunSpec, digest: str, archive: bytes, check: NodeCheck | None
) -> dict[str, Any]:
    """The Ray task: one run (and its checks) on the node Ray chose, as plain JSON."""
    return asyncio.run(_run_on_node(spec, digest, archive, check)).to_json()


class RayExecutor:
    """Runs as Ray tasks: on a Ray instance started here, or on the cluster at ``address``.

    Args:
        parallel: CPUs of the Ray instance started here (ignored with ``address``).
        address: An existing cluster (``head:6379``, ``ray://head:10001`` or ``auto``).
        checks: Checks each run's workspace on its node, with the run (None: none there).
        max_retries: Ray's retries of a task whose worker or node died.
        resubmits: Further submissions when Ray's retries end in a lost worker or node.
    """

    def __init__(
        self,
        *,
        parallel: int = 2,
        address: str | None = None,
        checks: NodeCheck | None = None,
        max_retries: int = 3,
        resubmits: int = 2,
    ) -> None:
        self.parallel = parallel
        self.address = address
        self.checks = checks
        self.max_retries = max_retries
        self.resubmits = resubmits
        self._started = False
        self._remotes: dict[Callable[..., Any], Any] = {}
        self._packs: dict[str, tuple[str, Any]] = {}
        self._lost: tuple[type[BaseException], ...] = ()
        # Ray prints its notices (a task retried after its node died) to stdout: while
        # the job runs they go to stderr, so ``lhbench run --json`` prints only JSON
        self._notices = contextlib.redirect_stdout(sys.stderr)

    async def __aenter__(self) -> RayExecutor:
        # Under `uv run lhbench …` Ray would copy the working directory (a checkout, its
        # .venv included: GBs) to every node and start its workers with `uv run` there; the
        # nodes run the lhbench installed on them instead (asked for here, unless set)
        os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        try:
            import ray
            from ray import exceptions as rex
        except ImportError:
            from lhbench.errors import ConfigError

            raise ConfigError(
                "the Ray executor needs ray: `uv sync --extra ray` (or pip install ray)"
            ) from None
        self._notices.__enter__()
        if not ray.is_initialized():
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if self.address is None:
                options["num_cpus"] = self.parallel
            try:
                ray.init(address=self.address, **options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                from lhbench.errors import ConfigError

                self._notices.__exit__(None, None, None)
                raise ConfigError(
                    f"--ray-address {self.address!r}: cannot join the Ray cluster: {exc}"
                ) from None
            self._started = True
        self._lost = (rex.WorkerCrashedError, rex.NodeDiedError, rex.ObjectLostError)
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            if self._started:
                import ray

                ray.shutdown()
        finally:
            self._notices.__exit__(None, None, None)

    def _pack(self, pack_dir: str) -> tuple[str, Any]:
        """The pack's archive in Ray's object store (put once per job)."""
        found = self._packs.get(pack_dir)
        if found is None:
            import ray

            digest, data = pack_archive(Path(pack_dir))
            found = self._packs[pack_dir] = (digest, ray.put(data))
        return found

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` as a Ray task of one CPU, awaited; submitted again when its worker is lost.

        ``fn`` is a module-level function the nodes import by name (same lhbench there).
        Ray runs a task again by itself after its worker or node died (``max_retries``);
        when it gives up, the task is submitted anew (``resubmits``). An exception ``fn``
        raises is not retried: it reaches the caller.
        """
        remote = self._remotes.get(fn)
        if remote is None:
            import ray

            remote = ray.remote(num_cpus=1, max_retries=self.max_retries)(fn)
            self._remotes[fn] = remote
        for attempt in range(self.resubmits + 1):
            try:
                return await remote.remote(*args)
            except self._lost:
                if attempt == self.resubmits:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def run(self, spec: RunSpec) -> RunOutcome:
        """Execute ``spec`` as a Ray task (again, when its worker is lost) and await it."""
        digest, archive = self._pack(spec.pack_dir)
        doc = await self.call(_execute_on_node, spec, digest, archive, self.checks)
        return RunOutcome.from_json(doc)


EXECUTORS = ("local", "ray")


def make_executor(
    name: str, *, parallel: int = 2, address: str | None = None, checks: NodeCheck | None = None
) -> LocalExecutor | RayExecutor:
    """The executor called ``name`` (local or ray; ``address``: an existing Ray cluster)."""
    from lhbench.errors import ConfigError

    if name == "local":
        if address is not None:
            raise ConfigError("--ray-address needs --executor ray")
        return LocalExecutor()
    if name == "ray":
        return RayExecutor(parallel=parallel, address=address, checks=checks)
    raise ConfigError(f"--executor {name!r}: expected one of {', '.join(EXECUTORS)}")
