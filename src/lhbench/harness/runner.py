"""Running harnesses on tasks: run specs, one run's execution, local and Ray executors.

A run's id is stable (pack version, task, harness, model, versions, repeat), so running the
same command again resumes: finished runs are skipped by the caller, an interrupted one
continues in its kept workspace, where ``manifest.json`` says what was already done.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from fastmcp.client.transports import StdioTransport
from pydantic_ai.mcp import MCPToolset

from lhbench.harness.cli_agents import CLI_AGENTS, cli_binary, cli_version, run_cli_agent
from lhbench.harness.journal import Journal
from lhbench.harness.native import HARNESS_VERSION, NativeHarness
from lhbench.harness.workspace import (
    Workspace,
    install_skills,
    prepare_workspace,
    run_id_for,
    scrubbed_env,
    skill_text,
)
from lhbench.models import ModelPool, ModelSpec
from lhbench.packs import load_pack
from lhbench.sandbox import Limits, Mount, Sandbox, SandboxPolicy, get_sandbox, policy_for
from lhbench.schema import (
    Artifact,
    FailureKind,
    McpServerSpec,
    Run,
    RunStatus,
    Step,
    Task,
    Trajectory,
    Usage,
)

__all__ = ["HARNESSES", "RunOutcome", "RunSpec", "execute"]


class _Harnesses(Sequence[str]):
    """``native`` and every CLI harness (built in or from a plugin), read when used."""

    def _names(self) -> tuple[str, ...]:
        return ("native", *CLI_AGENTS)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        return self._names()[i]

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, name: object) -> bool:
        return name == "native" or name in CLI_AGENTS


HARNESSES: Sequence[str] = _Harnesses()


@dataclass(frozen=True)
class RunSpec:
    """Everything one run needs; plain data, so it can travel to a Ray worker."""

    pack_dir: str
    task_id: str
    harness: str
    model: dict[str, Any]
    versions: dict[str, str] = field(default_factory=dict)
    repeat: int = 0
    home: str = ".lhbench"
    compact_at_tokens: int = 60_000
    sandbox: str = "auto"
    unsafe_no_sandbox: bool = False

    @property
    def spec(self) -> ModelSpec:
        """The model spec."""
        return ModelSpec.model_validate(self.model)

    def run_id(self) -> str:
        """The stable run id."""
        pack = load_pack(Path(self.pack_dir))
        return run_id_for(
            pack,
            pack.task(self.task_id),
            self.harness,
            self.spec.model_string,
            self.versions,
            self.repeat,
        )


@dataclass
class RunOutcome:
    """A finished (or stopped) run with its trajectory and artifacts."""

    run: Run
    trajectory: Trajectory
    artifacts: list[Artifact]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (for Ray)."""
        return {
            "run": self.run.model_dump(mode="json"),
            "trajectory": self.trajectory.model_dump(mode="json"),
            "artifacts": [a.model_dump(mode="json") for a in self.artifacts],
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RunOutcome:
        """Back from :meth:`to_json`."""
        return cls(
            Run.model_validate(doc["run"]),
            Trajectory.model_validate(doc["trajectory"]),
            [Artifact.model_validate(a) for a in doc["artifacts"]],
        )


def _artifacts(run_id: str, root: Path) -> list[Artifact]:
    """What a run left in its workspace, as artifacts (see :mod:`lhbench.harness.artifacts`)."""
    from lhbench.harness.artifacts import collect_artifacts

    return collect_artifacts(run_id, root)


async def execute(spec: RunSpec, *, pool: ModelPool | None = None, model: Any = None) -> RunOutcome:
    """Run one task with one harness in its workspace (``model``: e.g. a FunctionModel)."""
    if spec.harness not in HARNESSES:
        raise ValueError(
            f"harness {spec.harness!r} is not available; available: {', '.join(HARNESSES)}"
        )
    pack_dir = Path(spec.pack_dir)
    pack = load_pack(pack_dir)
    task = pack.task(spec.task_id)
    mspec = spec.spec
    sandbox = get_sandbox(spec.sandbox, unsafe=spec.unsafe_no_sandbox)
    run_id = run_id_for(pack, task, spec.harness, mspec.model_string, spec.versions, spec.repeat)
    ws = prepare_workspace(
        Path(spec.home), run_id, pack_dir, task, spec.harness, mspec.model_string
    )
    journal = Journal(ws.run_dir)
    prior = journal.prior_steps()
    start_turn = journal.turns_done()
    if prior:
        prior.append(journal.resume_note(prior, start_turn))
    skills = skill_text(pack, pack_dir, task, spec.versions)
    install_skills(ws, spec.harness, skills)
    env = scrubbed_env(ws.home, {"LHBENCH_VOLUME": str(ws.volume)})
    servers = {n: pack.mcp_servers[n] for n in task.environment.mcp_servers}
    task_dir = pack_dir / "tasks" / task.id
    ctx = _RunContext(
        spec, task, task_dir, ws, env, skills, servers, sandbox, journal, prior, start_turn
    )
    if spec.harness in CLI_AGENTS:
        ran = await _run_cli(ctx)
    else:
        ran = await _run_native(ctx, pool, model)
    versions = dict(spec.versions)
    if task.skills and "skill" not in versions:
        versions["skill"] = "default"  # what ran, recorded (the job passes it already)
    run = Run(
        id=run_id,
        pack_id=pack.id,
        pack_hash=pack.content_hash,
        task_id=task.id,
        harness=spec.harness,
        harness_version=ran.harness_version,
        model=mspec.model_string,
        versions=versions,
        repeat=spec.repeat,
        status=ran.status,
        started_at=ran.started_at,
        ended_at=ran.ended_at,
        usage=ran.usage.model_copy(update={"cost_usd": ran.cost_usd}),
        cost_usd=ran.cost_usd,
        error=ran.error,
        failure_kind=ran.failure_kind,
        metadata={
            "resumed": ws.resumed or bool(prior),
            "workspace": str(ws.root),
            "sandbox": sandbox.name,
            "unsandboxed": sandbox.name == "none",
            **ran.metadata,
        },
    )
    return RunOutcome(run, Trajectory(run_id=run_id, steps=ran.steps), _artifacts(run_id, ws.root))


@dataclass
class _Ran:
    """What a harness reports of one run; ``execute`` makes the Run record from it."""

    harness_version: str
    status: RunStatus
    started_at: datetime | None
    ended_at: datetime | None
    usage: Usage
    cost_usd: float | None
    error: str | None
    steps: list[Step]
    metadata: dict[str, Any] = field(default_factory=dict)
    failure_kind: FailureKind | None = None  # None: read from the error (failure_kind_of)


@dataclass
class _RunContext:
    """What both kinds of harness need for one run."""

    spec: RunSpec
    task: Task
    task_dir: Path
    ws: Workspace
    env: dict[str, str]
    skills: dict[str, str]
    servers: dict[str, McpServerSpec]
    sandbox: Sandbox
    journal: Journal
    prior: list[Step]
    start_turn: int


# what an agent's commands may write in one run unless its task says otherwise
AGENT_DISK_MB = 2048


def agent_policy(ctx: _RunContext, *, wall_s: float | None) -> SandboxPolicy:
    """What the agent's own commands see: the workspace, its home and volume, read-write."""
    ws = ctx.ws
    return policy_for(
        ws.root,
        writable=[ws.root, ws.home, ws.volume],
        env=ctx.env,
        home=ws.home,
        limits=Limits(
            wall_s=wall_s,
            cpu_s=3600,
            memory_mb=4096,
            address_space=False,  # Node reserves far more address space than it uses
            file_mb=1024,
            disk_mb=ctx.task.limits.disk_mb or AGENT_DISK_MB,
            processes=512,
        ),
    )


async def _run_native(ctx: _RunContext, pool: ModelPool | None, model: Any) -> _Ran:
    spec, task, ws = ctx.spec, ctx.task, ctx.ws
    mspec = spec.spec
    own_pool = pool is None  # a pool given is shared with other runs: its owner closes it
    pool = pool or ModelPool()
    policy = agent_policy(ctx, wall_s=120.0)
    # the pack's MCP servers are pack code: each runs in the sandbox, for the whole run
    prepared = [
        ctx.sandbox.prepare(
            server.argv(sys.executable, str(ws.root)),
            # the pack's env applies inside the sandbox only, never to the host launcher; a
            # server (pack code) may read its pack, which the agent's own commands may not
            replace(
                policy.with_limits(wall_s=None).with_mounts(Mount(ctx.task_dir.parents[1])),
                env={**policy.env, **server.env},
            ),
        )
        for server in ctx.servers.values()
    ]
    try:
        toolsets = [
            MCPToolset(
                StdioTransport(
                    p.argv[0],
                    p.argv[1:],
                    env=p.env,
                    cwd=p.cwd,
                    log_file=ws.run_dir / f"mcp-{name}.log",
                ),
                init_timeout=server.startup_timeout_s,  # the pack says how long it may take
            ).prefixed(name)
            for (name, server), p in zip(ctx.servers.items(), prepared, strict=True)
        ]
        async with pool.session() if own_pool else contextlib.nullcontext(pool):
            harness = NativeHarness(
                pool.get(mspec, wrapped=model),
                root=ws.root,
                task_dir=ctx.task_dir,
                env=ctx.env,
                hooks=task.environment.hooks,
                skills=ctx.skills,
                toolsets=toolsets,
                compact_at_tokens=spec.compact_at_tokens,
                sandbox=ctx.sandbox,
                policy=policy,
                prior_steps=ctx.prior,
                on_step=ctx.journal.append,
            )
            result = await harness.run(
                task,
                tool_calls=task.limits.tool_calls,
                wall_seconds=task.limits.wall_seconds,
                start_turn=ctx.start_turn,
                on_turn_done=ctx.journal.finish_turn,
            )
    finally:
        for p in prepared:
            p.close()
    return _Ran(
        harness_version=HARNESS_VERSION,
        status=result.status,
        started_at=result.started_at,
        ended_at=result.ended_at,
        usage=result.usage,
        cost_usd=(cost := mspec.cost(result.usage.input_tokens, result.usage.output_tokens)),
        error=result.error,
        steps=result.steps,
        metadata={"cost_source": mspec.price_source if cost is not None else None},
        failure_kind=result.failure_kind,
    )


async def _run_cli(ctx: _RunContext) -> _Ran:
    spec, task = ctx.spec, ctx.task
    agent = CLI_AGENTS[spec.harness]
    binary = cli_binary(agent)
    cli = await run_cli_agent(
        agent,
        binary=binary,
        ws=ctx.ws,
        task_dir=ctx.task_dir,
        turns=task.user_turns,
        model=spec.spec,
        env=ctx.env,
        hooks=task.environment.hooks,
        skills=ctx.skills,
        sandbox=ctx.sandbox,
        mcp=ctx.servers,
        wall_seconds=task.limits.wall_seconds,
        start_turn=ctx.start_turn,
        on_turn_done=ctx.journal.finish_turn,
        on_step=ctx.journal.append,
        first_index=len(ctx.prior),
        disk_mb=task.limits.disk_mb or AGENT_DISK_MB,
    )
    info = cli.info
    status = RunStatus.TIMED_OUT if cli.timed_out else info.status
    if cli.disk_limit is not None:
        status = RunStatus.LIMIT_EXCEEDED
    return _Ran(
        harness_version=info.harness_version or cli_version(binary, ctx.sandbox) or "unknown",
        status=status,
        started_at=info.started_at,
        ended_at=info.ended_at,
        usage=info.usage,
        # the CLI's own figure when its transcript has one, else the model's prices
        cost_usd=(
            cost := info.cost_usd
            if info.cost_usd is not None
            else spec.spec.cost(info.usage.input_tokens, info.usage.output_tokens)
        ),
        error=cli.disk_limit or info.error or (cli.stderr[-2000:] if cli.exit_code else None),
        steps=[*ctx.prior, *cli.steps],
        metadata={
            "exit_code": cli.exit_code,
            "transcript": str(cli.transcript),
            "hook_runs": len(cli.hook_log),
            "turns": len(task.user_turns),
            "cost_source": (
                None
                if cost is None
                else "transcript"
                if info.cost_usd is not None
                else spec.spec.price_source
            ),
        },
    )
