"""What every attack case shares: a canary secret, bounds, and a scripted native agent."""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import ModelRequest, RetryPromptPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from lhbench.harness import RunSpec, execute
from lhbench.harness.runner import RunOutcome
from lhbench.models import resolve_model
from tests.harness.helpers import write_harness_pack

# set in lhbench's own environment for every case (tests/security/conftest.py); an attack
# that prints it, or sends it anywhere, has escaped
CANARY = "canary-5e1f0c93"
SPEC = resolve_model("openai:attacker@http://127.0.0.1:9/v1").model_dump(mode="json")


class Unbounded(AssertionError):
    """An attack case ran past its time bound."""


@contextmanager
def bounded(seconds: float, *, mb: int = 512) -> Iterator[None]:
    """Fail the case if it runs longer than ``seconds`` or grows this process by ``mb`` MiB.

    Time: an alarm interrupts the case (so a hang fails instead of stalling the suite).
    Memory: the growth of this process's peak resident size over the case.
    """

    def expired(signum: int, frame: object) -> None:
        raise Unbounded(f"still running after {seconds} s")

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    start = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown < mb, f"grew by {grown:.0f} MiB (bound {mb} MiB)"
    assert time.monotonic() - start < seconds


def tool_returns(messages: list[Any]) -> list[str]:
    """What the agent's tools answered, in order (a refusal sent back for retry included)."""
    out = []
    for m in messages:
        if not isinstance(m, ModelRequest):
            continue
        for p in m.parts:
            if isinstance(p, ToolReturnPart):
                out.append(str(p.content))
            elif isinstance(p, RetryPromptPart) and p.tool_name:
                out.append(p.model_response())
    return out


def agent_run(
    tmp_path: Path, calls: list[tuple[str, dict[str, Any]]], **pack_kw: Any
) -> tuple[list[str], RunOutcome, Path]:
    """A native-harness run whose model makes ``calls`` one by one, then stops.

    Returns what each tool answered, the run, and the pack directory.
    """
    seen: list[str] = []

    def script(messages: list[Any], info: AgentInfo) -> ModelResponse:
        done = tool_returns(messages)
        seen[:] = done
        if len(done) < len(calls):
            name, args = calls[len(done)]
            return ModelResponse(parts=[ToolCallPart(name, args)])
        return ModelResponse(parts=[TextPart("done")])

    pack = write_harness_pack(tmp_path / "pack", hooks=False, **pack_kw)
    spec = RunSpec(
        pack_dir=str(pack),
        task_id="greet",
        harness="native",
        model=SPEC,
        home=str(tmp_path / "home"),
    )
    out = asyncio.run(execute(spec, model=FunctionModel(script)))
    return seen, out, pack


def shell(tmp_path: Path, *commands: str) -> tuple[list[str], RunOutcome]:
    """Run ``commands`` through the agent's shell tool; what each printed, and the run."""
    seen, out, _ = agent_run(tmp_path, [("run_shell", {"command": c}) for c in commands])
    return seen, out


def survivors(marker: str, within: float = 5.0) -> list[int]:
    """Host processes with ``marker`` still there ``within`` seconds after a kill.

    The kernel tears a killed sandbox's PID namespace down after its launcher has been
    reaped: on a loaded machine its last processes can take a moment to go. A process
    that escaped the kill is still there when the time is up (the tests' sleepers sleep
    for minutes).
    """
    deadline = time.monotonic() + within
    while (left := processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def processes_with(marker: str) -> list[int]:
    """Host processes whose command line contains ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            continue
    return [p for p in found if p != os.getpid()]
