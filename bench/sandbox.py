"""What a sandboxed command costs next to the same command started bare.

Three commands, each timed bare (``subprocess.run`` from this process) and sandboxed, in
alternation, ``--reps`` times:

- ``python -I -c pass``: in a warm :class:`~lhbench.sandbox.SandboxSession` (the sandbox a
  unit of work builds once: a run's replay and checks), as a check runs there;
- a verify script (``aj-ds-mini``'s ``fs-create-readme/verify.py`` on its initial state,
  through :func:`~lhbench.sandbox.script_argv` as ``lhbench verify`` runs it), in a warm
  session;
- a judge tool call: the judge's tool worker (``python -I -m lhbench.tools.worker state``)
  started, its tool list read, asked one tool (``list_directory``), closed, through
  :class:`~lhbench.judges.tool_worker.ToolWorker` as the agent judge runs it: one sandbox
  per verdict (a worker is the unit: its calls all go to the one process).

For the record, the same call to the stdio MCP server the judges started before the
worker (``python -I -m lhbench.tools state``, still what the GUI judge starts, its tools
answering with images), sandboxed: the worker's cost against it.

Also printed, for the record: building a session (once per unit) and the old way, one
sandbox per command (``run_sandboxed_sync``), which remains the fallback where a session
cannot be used. Figures are wall-clock medians; ratios are sandboxed over bare.

    uv run python bench/sandbox.py            # 20 repetitions
    uv run python bench/sandbox.py --quick    # 5
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import common

from lhbench.sandbox import (
    Limits,
    Prepared,
    SandboxSession,
    get_sandbox,
    policy_for,
    run_sandboxed_sync,
    sandbox_env,
    script_argv,
    session_support,
)

TARGET = 1.5
TASK = (
    Path(__file__).resolve().parents[1] / "src/lhbench/packs/data/aj-ds-mini/tasks/fs-create-readme"
)


def timed(fn: Callable[[], object]) -> Callable[[], float]:
    def run() -> float:
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t

    return run


def bare_run(argv: list[str], cwd: Path, env: dict[str, str]) -> None:
    # in a session of its own, as a sandboxed command is (bwrap --new-session, the worker's
    # setsid): with the kernel's autogroups a new session is scheduled as its own group,
    # and a bare child left in ours would compete with everything else in it
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, start_new_session=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"bare run failed: {done.stderr.decode()[-500:]}")


async def worker_call(prepared: Prepared) -> None:
    from lhbench.judges.tool_worker import ToolWorker

    worker = ToolWorker(prepared, Path("/dev/null"), start_timeout=120)
    async with worker as toolset:
        if "list_directory" not in toolset.tools:
            raise SystemExit(f"the worker offers no list_directory: {list(toolset.tools)}")
        await worker.call("list_directory", {"path": "."})


async def tool_call(command: str, args: list[str], env: dict[str, str], cwd: str) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
    with open("/dev/null", "w") as log:
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            res = await session.call_tool("list_directory", {"path": "."})
            if res.is_error:
                raise SystemExit(f"tool call failed: {res.content}")


def main() -> None:
    """Time every command both ways and print the ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 repetitions instead of 20")
    ap.add_argument("--reps", type=int, default=None)
    args = ap.parse_args()
    reps = args.reps or (5 if args.quick else 20)
    print(common.load_line("sandbox"))
    sandbox = get_sandbox()
    why = session_support(sandbox)
    print(f"sandbox: {sandbox.name}; session worker: {'yes' if why is None else 'no: ' + why}")
    ratios: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="lhbench-bench-") as tmp:
        work = Path(tmp)
        state = work / "state"
        shutil.copytree(TASK / "initial", state)
        policy = policy_for(
            work,
            writable=[work],
            readable=[TASK],
            env={"LHBENCH_IN_SANDBOX": "1"},
            limits=Limits(memory_mb=1024, processes=32),
        )
        check = Limits(wall_s=60, cpu_s=60, memory_mb=1024, file_mb=64, processes=32)
        env = sandbox_env(state, env={"LHBENCH_IN_SANDBOX": "1"})
        commands = {
            "python -c pass": [sys.executable, "-I", "-c", "pass"],
            "verify script": script_argv(TASK / "verify.py", "--root", str(state)),
        }

        # building a session, and the old way (one sandbox per command), for the record
        def session_start() -> None:
            with SandboxSession(sandbox, policy) as s:
                s.run(["/bin/true"], limits=check)

        per_process_policy = policy_for(
            state, readable=[TASK, state], env={"LHBENCH_IN_SANDBOX": "1"}, limits=check
        )
        record = common.alternate(
            {
                "session start + /bin/true": timed(session_start),
                "one sandbox per command (python -c pass)": timed(
                    lambda: run_sandboxed_sync(
                        sandbox, commands["python -c pass"], per_process_policy
                    )
                ),
            },
            max(3, reps // 2),
        )
        for name, values in record.items():
            print(f"  {name}: median {common.median(values) * 1000:.1f} ms")

        if why is None:
            with SandboxSession(sandbox, policy) as session:
                session.run(["/bin/true"], limits=check)  # built before timing
                for name, argv in commands.items():

                    def in_session(argv: list[str] = argv) -> None:
                        done = session.run(argv, cwd=state, env=env, limits=check)
                        if done.returncode not in (0, 1):
                            raise SystemExit(f"sandboxed run failed: {done.text('stderr')[-500:]}")

                    times = common.alternate(
                        {
                            "bare": timed(lambda argv=argv: bare_run(argv, state, env)),
                            "sandboxed": timed(in_session),
                        },
                        reps,
                    )
                    ratios[name] = report(name, times)
        else:
            print(f"  (no session here: {why}; each command gets a sandbox of its own)")

        worker_args = ["-I", "-m", "lhbench.tools.worker", "state", "--root", str(state)]
        mcp_args = ["-I", "-m", "lhbench.tools", "state", "--root", str(state)]
        tool_policy = policy_for(
            state,
            readable=[state],
            env={"LHBENCH_IN_SANDBOX": "1"},
            limits=Limits(wall_s=None, cpu_s=600, memory_mb=1024, file_mb=16, processes=16),
        )
        tool_env = sandbox_env(state, env={"LHBENCH_IN_SANDBOX": "1"})

        def worker_sandboxed() -> None:
            asyncio.run(worker_call(sandbox.prepare([sys.executable, *worker_args], tool_policy)))

        def worker_bare() -> None:
            # ToolWorker starts it in a session of its own, as the sandbox's is
            bare = Prepared([sys.executable, *worker_args], tool_env, str(state), "none")
            asyncio.run(worker_call(bare))

        def mcp_sandboxed() -> None:
            prepared = sandbox.prepare([sys.executable, *mcp_args], tool_policy)
            try:
                asyncio.run(
                    tool_call(prepared.argv[0], prepared.argv[1:], prepared.env, prepared.cwd)
                )
            finally:
                prepared.close()

        times = common.alternate(
            {
                "bare": timed(worker_bare),
                "sandboxed": timed(worker_sandboxed),
                "MCP server, sandboxed": timed(mcp_sandboxed),
            },
            max(3, reps // 2),
        )
        mcp = times.pop("MCP server, sandboxed")
        print(
            f"  judge tool call over the stdio MCP server, sandboxed (before the worker): median "
            f"{common.median(mcp) * 1000:.1f} ms; the worker's sandboxed call is "
            f"{common.ratio_of_medians(times['sandboxed'], mcp):.2f}x it"
        )
        ratios["judge tool call"] = report("judge tool call", times)
    print(common.load_line("sandbox", "end"))
    worst = max(ratios, key=lambda k: ratios[k])
    print(
        "sandbox: sandboxed/bare "
        + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items())
        + f"; worst {worst} {ratios[worst]:.2f}x (target <= {TARGET}x)"
    )


def report(name: str, times: dict[str, list[float]]) -> float:
    for side, values in times.items():
        print(
            f"  {name} {side}: median {common.median(values) * 1000:.1f} ms {common.spread(values)}"
        )
    ratio = common.ratio_of_medians(times["sandboxed"], times["bare"])
    print(f"  {name}: sandboxed/bare {ratio:.2f}x")
    return ratio


if __name__ == "__main__":
    main()
