"""The job runner itself: a unit that crashes is counted with what happened, and retried."""

import asyncio
from collections.abc import Mapping, Sequence

from lhbench.jobs import Assessment, Unit, run_job
from lhbench.jobs.runner import crash_reason
from lhbench.store import ResultState


class Flaky:
    """Three units; one raises (wrapping its cause) the first time, as a tool server does."""

    name = "flaky"

    def __init__(self) -> None:
        self.kept: dict[str, str] = {}
        self.calls = 0

    def plan(self) -> Sequence[Unit[int]]:
        return [Unit(key=f"u{i}", label=f"unit {i}", payload=i) for i in range(3)]

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        return {k: "ok" for k in keys if k in self.kept}

    async def run(self, unit: Unit[int]) -> str:
        self.calls += 1
        if unit.payload == 1 and self.calls <= 3:
            try:
                raise TimeoutError("no answer in 5 s")
            except TimeoutError as exc:
                raise RuntimeError("Client failed to connect: server did not start") from exc
        return unit.key

    def assess(self, result: str) -> Assessment:
        return Assessment(ok=True)

    def write(self, results: Sequence[str]) -> None:
        self.kept.update({r: "ok" for r in results})


def test_a_crashed_unit_says_what_happened_and_runs_again_next_time() -> None:
    job = Flaky()
    first = asyncio.run(run_job(job, concurrency=1))
    assert (first.done, first.failed) == (2, 1)
    [(reason, n)] = first.failures.items()
    assert n == 1
    assert reason == (
        "crashed: RuntimeError: Client failed to connect: server did not start"
        " ← TimeoutError: no answer in 5 s"
    )
    assert "Client failed to connect" in first.line()
    second = asyncio.run(run_job(job, concurrency=1))  # nothing stored for it: planned again
    assert (second.skipped, second.done, second.failed) == (2, 1, 0)


def test_crash_reason_without_a_message_is_the_type() -> None:
    assert crash_reason(KeyError()) == "KeyError"
    assert crash_reason(ValueError("bad\nsecond line")) == "ValueError: bad"


class NoSandbox(Flaky):
    """Unit 1 cannot start: the sandbox is not there (infrastructure, not a crash)."""

    async def run(self, unit: Unit[int]) -> str:
        from lhbench.sandbox import SandboxUnavailable

        if unit.payload == 1:
            raise SandboxUnavailable("no sandbox backend works here: bwrap is not installed")
        return unit.key


def test_a_unit_that_cannot_start_for_infrastructure_is_counted_so_and_retried() -> None:
    job = NoSandbox()
    first = asyncio.run(run_job(job, concurrency=1))
    assert first.failures == {
        "infrastructure: SandboxUnavailable: no sandbox backend works here: bwrap is not "
        "installed": 1
    }
    again = asyncio.run(run_job(job, concurrency=1))
    assert (again.skipped, again.failed) == (2, 1)  # nothing stored: planned again
