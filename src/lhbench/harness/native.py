"""Our model-agnostic harness: a pydantic-ai agent over any model string.

It works in the run's workspace through file and shell tools, can call the pack's MCP
servers, keeps ``manifest.json`` for recovery, gets post-tool verification feedback
natively, and compacts its context past a token budget. Every step is recorded as it
happens (model text and thinking, tool calls and results, hook feedback, compactions).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.capabilities.process_history import ProcessHistory
from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model
from pydantic_ai.usage import UsageLimits

from lhbench.envs.paths import (
    EscapeError,
    NotARegularFile,
    open_beneath,
    read_beneath,
    write_beneath,
)
from lhbench.harness.compaction import Compactor, WorkingSet
from lhbench.harness.hooks import run_hooks
from lhbench.harness.manifest import complete_step, read_manifest
from lhbench.sandbox import DiskLimitExceeded, Sandbox, SandboxPolicy, run_sandboxed
from lhbench.schema import (
    FailureKind,
    HookSpec,
    Role,
    RunStatus,
    Step,
    StepKind,
    Task,
    Usage,
    utcnow,
)

__all__ = ["NativeHarness", "NativeResult"]

HARNESS_VERSION = "lhbench-native/1"

_SYSTEM = """You are an autonomous engineer working in a project directory.

Work only through your tools; paths are relative to the project root. Shell commands run
in a sandbox: the project directory, no network. Before anything
else call read_manifest: steps listed there are already done, so do not redo them. After
finishing each step of your plan, call complete_step with its name. Some tool results end
with a verification report: when one fails, read its diagnosis, fix the problem, and
check again before moving on. Finish with a short summary of what you did."""


@dataclass
class NativeResult:
    """What a native run produced."""

    status: RunStatus
    steps: list[Step]
    usage: Usage
    error: str | None = None
    started_at: Any = None
    ended_at: Any = None
    failure_kind: FailureKind | None = None


_MAX_READ = 100_000
_MAX_OUTPUT = 20_000


@dataclass
class _Recorder:
    steps: list[Step] = field(default_factory=list)
    hook_feedback: dict[str, list[Any]] = field(default_factory=dict)
    seen_calls: set[str] = field(default_factory=set)
    on_step: Callable[[Step], None] | None = None

    def add(self, role: Role, kind: StepKind, **kw: Any) -> None:
        step = Step(index=len(self.steps), role=role, kind=kind, timestamp=utcnow(), **kw)
        self.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)  # journaled as it happens: a killed run keeps it

    def response(self, resp: ModelResponse) -> None:
        for p in resp.parts:
            if isinstance(p, TextPart) and p.content.strip():
                self.add(Role.ASSISTANT, StepKind.MESSAGE, content=p.content)
            elif isinstance(p, ThinkingPart):
                self.add(Role.ASSISTANT, StepKind.THINKING, content=p.content)
            elif isinstance(p, ToolCallPart) and p.tool_call_id not in self.seen_calls:
                self.seen_calls.add(p.tool_call_id)
                args = p.args_as_dict()
                self.add(
                    Role.ASSISTANT,
                    StepKind.TOOL_CALL,
                    tool_name=p.tool_name,
                    tool_call_id=p.tool_call_id,
                    tool_input=args,
                )

    def request(self, req: ModelRequest) -> None:
        for p in req.parts:
            if isinstance(p, ToolReturnPart) and p.tool_name != "final_result":
                content = (
                    p.content if isinstance(p.content, str) else json.dumps(p.content, default=str)
                )
                # a tool that raised ModelRetry comes back as a return with outcome "retried"
                failed = content.startswith("ERROR:") or getattr(p, "outcome", "success") not in (
                    None,
                    "success",
                )
                self.add(
                    Role.TOOL,
                    StepKind.TOOL_RESULT,
                    tool_name=p.tool_name,
                    tool_call_id=p.tool_call_id,
                    tool_output=content,
                    is_error=failed,
                )
                for h in self.hook_feedback.pop(p.tool_call_id, []):
                    self.add(
                        Role.HARNESS,
                        StepKind.HOOK,
                        tool_name=h.hook,
                        content=h.feedback(),
                        is_error=not h.ok,
                        metadata={
                            "ok": h.ok,
                            "diagnosis": h.diagnosis,
                            "next_action": h.next_action,
                        },
                    )
            elif isinstance(p, RetryPromptPart) and p.tool_name:
                self.add(
                    Role.TOOL,
                    StepKind.TOOL_RESULT,
                    tool_name=p.tool_name,
                    tool_call_id=p.tool_call_id,
                    tool_output=p.model_response(),
                    is_error=True,
                )


class NativeHarness:
    """Runs one task in a workspace with a pydantic-ai model."""

    def __init__(
        self,
        model: Model,
        *,
        root: Path,
        task_dir: Path,
        env: dict[str, str],
        hooks: Sequence[HookSpec] = (),
        skills: dict[str, str] | None = None,
        toolsets: Sequence[Any] = (),
        compact_at_tokens: int = 60_000,
        shell_timeout_s: float = 120.0,
        sandbox: Sandbox,
        policy: SandboxPolicy,
        prior_steps: Sequence[Step] = (),
        on_step: Callable[[Step], None] | None = None,
    ) -> None:
        self.root = root
        self.task_dir = task_dir
        self.env = env
        self.hooks = list(hooks)
        self.sandbox = sandbox
        self.policy = policy
        self.rec = _Recorder(steps=list(prior_steps), on_step=on_step)
        skill_block = "".join(
            f"\n\n# Skill: {name}\n{text}" for name, text in (skills or {}).items()
        )
        compactor = Compactor(model, budget_tokens=compact_at_tokens, on_compact=self._compacted)
        self.agent: Agent[None, str] = Agent(
            model,
            instructions=_SYSTEM + skill_block,
            toolsets=list(toolsets),
            capabilities=[ProcessHistory(compactor)],
            retries={"tools": 2, "output": 1},
        )
        self.shell_timeout_s = shell_timeout_s
        self._register_tools()

    def _compacted(self, working: WorkingSet, tokens: int) -> None:
        self.rec.add(
            Role.HARNESS,
            StepKind.COMPACTION,
            content=working.render(),
            metadata={"tokens_before": tokens},
        )

    def _after(self, ctx: RunContext[None], tool: str, result: str) -> str:
        hooks = run_hooks(self.hooks, tool, self.task_dir, self.root, sandbox=self.sandbox)
        if hooks and ctx.tool_call_id:
            self.rec.hook_feedback[ctx.tool_call_id] = hooks
        return result + "".join("\n\n" + h.feedback() for h in hooks)

    def _read(self, rel: str) -> str | None:
        """A text file's content (capped), None when it does not exist."""
        try:
            data, size = read_beneath(self.root, rel, limit=_MAX_READ)
        except FileNotFoundError:
            return None
        except (EscapeError, NotARegularFile, IsADirectoryError, NotADirectoryError) as exc:
            # back to the model as a failed call it can correct
            raise ModelRetry(f"refused: {exc}") from None
        text = data.decode("utf-8", errors="replace")
        return text + (
            f"\n[truncated: {size} bytes, showing {len(data)}]" if size > len(data) else ""
        )

    def _write(self, rel: str, content: str) -> None:
        try:
            write_beneath(self.root, rel, content.encode("utf-8"))
        except (EscapeError, NotARegularFile, IsADirectoryError, NotADirectoryError) as exc:
            raise ModelRetry(f"refused: {exc}") from None

    def _register_tools(self) -> None:
        agent = self.agent

        @agent.tool
        def read_file(ctx: RunContext[None], path: str) -> str:
            """Read a text file."""
            text = self._read(path)
            if text is None:
                return f"ERROR: no such file: {path}"
            return self._after(ctx, "read_file", text)

        @agent.tool
        def write_file(ctx: RunContext[None], path: str, content: str) -> str:
            """Create or overwrite a file."""
            self._write(path, content)
            return self._after(ctx, "write_file", f"wrote {len(content)} characters to {path}")

        @agent.tool
        def edit_file(ctx: RunContext[None], path: str, old_text: str, new_text: str) -> str:
            """Replace the first occurrence of old_text with new_text in a file."""
            text = self._read(path)
            if text is None:
                return f"ERROR: no such file: {path}"
            if old_text not in text:
                return self._after(ctx, "edit_file", f"ERROR: text to replace not found in {path}")
            self._write(path, text.replace(old_text, new_text, 1))
            return self._after(ctx, "edit_file", f"edited {path}")

        @agent.tool
        def list_dir(ctx: RunContext[None], path: str = ".") -> str:
            """List a directory."""
            try:
                fd = open_beneath(self.root, path)
            except FileNotFoundError:
                return f"ERROR: no such directory: {path}"
            except (EscapeError, NotARegularFile, NotADirectoryError) as exc:
                raise ModelRetry(f"refused: {exc}") from None
            try:
                entries = sorted(
                    e.name + ("/" if e.is_dir(follow_symlinks=False) else "")
                    for e in os.scandir(fd)
                )
            except NotADirectoryError:
                return f"ERROR: not a directory: {path}"
            finally:
                os.close(fd)
            return "\n".join(entries[:1000]) or "(empty)"

        @agent.tool
        async def run_shell(ctx: RunContext[None], command: str) -> str:
            """Run a shell command in the project root (exit code and output returned)."""
            res = await run_sandboxed(
                self.sandbox,
                ["/bin/sh", "-c", command],
                self.policy.with_limits(wall_s=self.shell_timeout_s),
            )
            out = (res.text() + res.text("stderr"))[-_MAX_OUTPUT:]
            if res.disk_limit is not None:  # the run ends here, recorded as a disk limit
                raise res.disk_limit
            if res.timed_out:
                return self._after(
                    ctx, "run_shell", f"ERROR: timed out after {self.shell_timeout_s}s\n{out}"
                )
            prefix = "" if res.returncode == 0 else "ERROR: "
            return self._after(ctx, "run_shell", f"{prefix}exit code {res.returncode}\n{out}")

        @agent.tool(name="read_manifest")
        def read_manifest_tool(ctx: RunContext[None]) -> str:
            """The progress manifest: steps already completed (do not redo them)."""
            return json.dumps(read_manifest(self.root))

        @agent.tool(name="complete_step")
        def complete_step_tool(ctx: RunContext[None], step: str, url: str | None = None) -> str:
            """Record a completed step in manifest.json (urls: preview or deploy links)."""
            try:
                doc = complete_step(self.root, step, {"preview_url": url} if url else None)
            except (EscapeError, OSError) as exc:  # e.g. a directory named manifest.json
                raise ModelRetry(f"refused: cannot write manifest.json: {exc}") from None
            return f"recorded; completed steps: {doc['completed_steps']}"

    async def run(
        self,
        task: Task,
        *,
        tool_calls: int | None,
        wall_seconds: float | None,
        start_turn: int = 0,
        on_turn_done: Callable[[int], None] | None = None,
    ) -> NativeResult:
        """Run the task's user turns from ``start_turn``; a limit or an error ends it.

        ``on_turn_done(n)`` is called when turn ``n`` finishes, so a resumed run knows where
        to start.
        """
        started = utcnow()
        history: list[ModelMessage] = []
        usage = Usage()
        status, error = RunStatus.COMPLETED, None
        kind: FailureKind | None = None
        t0 = time.monotonic()
        try:
            for n, turn in enumerate(task.user_turns):
                if n < start_turn:
                    continue
                self.rec.add(Role.USER, StepKind.MESSAGE, content=turn)
                remaining = (
                    None
                    if wall_seconds is None
                    else max(0.1, wall_seconds - (time.monotonic() - t0))
                )
                limits = UsageLimits(tool_calls_limit=tool_calls, request_limit=None)
                async with asyncio.timeout(remaining):
                    async with self.agent.iter(
                        turn, message_history=history, usage_limits=limits
                    ) as run:
                        async for node in run:
                            if Agent.is_call_tools_node(node):
                                self.rec.response(node.model_response)
                            elif Agent.is_model_request_node(node):
                                self.rec.request(node.request)
                        assert run.result is not None
                        history = run.result.all_messages()
                        u = run.usage
                        usage = usage + Usage(
                            input_tokens=u.input_tokens,
                            output_tokens=u.output_tokens,
                            requests=u.requests,
                        )
                if on_turn_done is not None:
                    on_turn_done(n)
        except TimeoutError:
            status, error = RunStatus.TIMED_OUT, f"wall-clock limit of {wall_seconds}s reached"
        except (UsageLimitExceeded, DiskLimitExceeded) as exc:
            status, error = RunStatus.LIMIT_EXCEEDED, str(exc)
        except ModelAPIError as exc:  # the model endpoint failed: not the agent's doing
            status, error = RunStatus.FAILED, f"{type(exc).__name__}: {exc}"
            kind = FailureKind.INFRASTRUCTURE
        except UnexpectedModelBehavior as exc:
            status, error = RunStatus.FAILED, f"{type(exc).__name__}: {exc}"
        if error:
            self.rec.add(Role.HARNESS, StepKind.ERROR, content=error, is_error=True)
        return NativeResult(status, self.rec.steps, usage, error, started, utcnow(), kind)
