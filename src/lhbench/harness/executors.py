"""Where runs execute: on this machine, or as Ray tasks. One interface, used by the run job."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any, Protocol

from lhbench.harness.runner import RunOutcome, RunSpec, execute
from lhbench.models import ModelPool

__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "RayExecutor", "make_executor"]


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


def _execute_sync(spec: RunSpec) -> dict[str, Any]:
    return asyncio.run(execute(spec)).to_json()


class RayExecutor:
    """Runs as Ray tasks (a local Ray instance unless ``address`` is given)."""

    def __init__(self, *, parallel: int = 2, address: str | None = None) -> None:
        self.parallel = parallel
        self.address = address
        self._started = False
        self._remote: Any = None

    async def __aenter__(self) -> RayExecutor:
        try:
            import ray
        except ImportError:
            from lhbench.errors import ConfigError

            raise ConfigError(
                "the Ray executor needs ray: `uv sync --extra ray` (or pip install ray)"
            ) from None
        if not ray.is_initialized():
            ray.init(
                address=self.address,
                num_cpus=self.parallel,
                include_dashboard=False,
                log_to_driver=False,
            )
            self._started = True
        self._remote = ray.remote(num_cpus=1)(_execute_sync)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._started:
            import ray

            ray.shutdown()

    async def run(self, spec: RunSpec) -> RunOutcome:
        """Execute ``spec`` as a Ray task and await it."""
        doc = await self._remote.remote(spec)
        return RunOutcome.from_json(doc)


EXECUTORS = ("local", "ray")


def make_executor(name: str, *, parallel: int = 2) -> LocalExecutor | RayExecutor:
    """The executor called ``name`` (local or ray)."""
    if name == "local":
        return LocalExecutor()
    if name == "ray":
        return RayExecutor(parallel=parallel)
    from lhbench.errors import ConfigError

    raise ConfigError(f"--executor {name!r}: expected one of {', '.join(EXECUTORS)}")
