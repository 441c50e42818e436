"""Failure taxonomy and recovery (LH-Bench §8.7, Tables 11 and 12).

Every error event of a trajectory (an error step, or a tool result that failed) is
classified into LH-Bench's types from the evidence a transcript carries: the tool, the
command, the exit code and recognisable output (compiler and interpreter errors, package
resolution errors, ``.git/index.lock``, permission denials, MCP timeouts, …).

An error counts as recovered when a later step of the same run succeeds at the same
operation: the same tool on the same target, the same command, or the build or preview
that failed (LH-Bench: the agent self-corrected). Errors with no operation (an API error, a
harness error) count as recovered when the run goes on to complete a tool call successfully
afterwards. A tool result fails by any of its signals: the error flag, a non-zero exit code,
or a design/preview tool's error payload; a retry that fails by any of them is not a recovery.

A tool result is paired with its call by id; a result without an id with the oldest earlier
call without an id that has no result yet (results come back in call order), so calls
without ids neither collapse into one nor borrow another call's input.
"""

from __future__ import annotations

import bisect
import re
import shlex
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from lhbench.schema import ErrorType, StepKind, Trajectory
from lhbench.stats.agreement import cohen_kappa

__all__ = [
    "FIGMA_API_ERROR",
    "AgentFailureRow",
    "ErrorEvent",
    "ErrorType",
    "ExtractionAgreement",
    "RunFailures",
    "TypeRow",
    "add_run",
    "agent_table",
    "classify_text",
    "error_events",
    "extraction_agreement",
    "failed_result",
    "figma_api_errors",
    "result_calls",
    "run_failures",
    "soft_failure",
    "type_table",
]


class StepLike(Protocol):
    """What the taxonomy reads of a step: a ``Step``, or a store's lean stand-in for one."""

    @property
    def kind(self) -> StepKind: ...
    @property
    def content(self) -> str: ...
    @property
    def tool_name(self) -> str | None: ...
    @property
    def tool_call_id(self) -> str | None: ...
    @property
    def tool_input(self) -> dict[str, Any] | None: ...
    @property
    def tool_output(self) -> str | None: ...
    @property
    def is_error(self) -> bool: ...
    @property
    def exit_code(self) -> int | None: ...


# A Figma REST error as the design tools report it ("Figma API error: 429 - {...}"): a tool
# call failure whatever its body says (LH-Bench: Figma MCP calls were 51% of tool failures).
FIGMA_API_ERROR = re.compile(r"Figma API error: \d{3}")

# Most specific first: a type error found during a build is a type error.
_RULES: list[tuple[ErrorType, re.Pattern[str]]] = [
    (ErrorType.TOOL_CALL_FAILURE, FIGMA_API_ERROR),
    (
        ErrorType.GIT_ERROR,
        re.compile(
            r"\.git/index\.lock|not a git repository|^fatal: |\bgit\b.*\b(fatal|rejected|conflict)|"
            r"CONFLICT \(|failed to push|would be overwritten by (merge|checkout)|"
            r"non-fast-forward|detached HEAD|pathspec .* did not match",
            re.I | re.M,
        ),
    ),
    (
        ErrorType.PREVIEW_DENY,
        re.compile(
            r"preview (was )?denied|PREVIEW_DENIED|blank page|preview (failed|rejected)|"
            r"white screen",
            re.I,
        ),
    ),
    (
        ErrorType.DEPENDENCY_ERROR,
        re.compile(
            r"ERESOLVE|unable to resolve dependency|peer dep|Could not resolve dependency|"
            r"Cannot find module|Module not found|Can't resolve '|ModuleNotFoundError|"
            r"No module named|"
            r"No matching distribution|ResolutionImpossible|npm ERR! 404|ERR_PNPM|"
            r"version solving failed|conflicting dependencies|ImportError: cannot import name|"
            r"package .* not found|Failed to resolve import",
            re.I,
        ),
    ),
    (
        ErrorType.SYNTAX_ERROR,
        re.compile(
            r"SyntaxError|Unexpected token|Parsing error|IndentationError|TabError|"
            r"error TS1\d{3}\b|Unterminated (string|template|regular)|expected ['\"`;,)\]}]|"
            r"Unexpected end of (input|file|JSON)|unexpected EOF|Missing semicolon|"
            r"Invalid or unexpected token|ParseError",
            re.I,
        ),
    ),
    (
        ErrorType.TYPE_ERROR,
        re.compile(
            r"error TS[2-46-9]\d{3}\b|is not assignable to (type|parameter)|\btype error\b|"
            r"Property '[^']+' does not exist on type|has no exported member|"
            r"Argument of type .* is not assignable|Type '[^']+' is missing|"
            r"error: Incompatible types|\[(arg-type|assignment|return-value|attr-defined)\]|"
            r"Object is possibly '(undefined|null)'",
            re.I,
        ),
    ),
    (
        ErrorType.CONFIG_ERROR,
        re.compile(
            r"Invalid configuration|invalid config|Configuration error|error TS5\d{3}\b|"
            r"config(uration)? file .* (not found|invalid)|"
            r"(tsconfig|vite\.config|webpack\.config|postcss\.config|tailwind\.config|"
            r"eslint(rc)?|next\.config|babel\.config|jest\.config)\S*[^\n]*"
            r"(error|invalid|not found|failed|unknown)|"
            r"Unknown (compiler )?option|is not a valid option|Unrecognized key|"
            r"missing required (environment|env) variable|"
            r"environment variable .* (not set|missing)",
            re.I,
        ),
    ),
    (
        ErrorType.BUILD_ERROR,
        re.compile(
            r"Build failed|build failed|Failed to compile|compiled with \d+ errors?|"
            r"error during build|(?-i:ERROR in )|make: \*\*\*|Command \"build\" failed|"
            r"npm ERR! (code ELIFECYCLE|Failed at the .* build script)|"
            r"exited with code [1-9] .*build|"
            r"\bbuild\b.*exited with|Rollup failed|esbuild.*error",
            re.I,
        ),
    ),
    (
        ErrorType.RUNTIME_ERROR,
        re.compile(
            r"Traceback \(most recent call last\)|Uncaught|ReferenceError|RangeError|"
            r"(?<!error )TypeError: |ZeroDivisionError|KeyError|AttributeError|IndexError|"
            r"Segmentation fault|panic:|Exception in thread|UnhandledPromiseRejection|"
            r"Cannot read propert(y|ies) of (undefined|null)|is not a function|"
            r"NullPointerException|stack overflow|RuntimeError",
            re.M,
        ),
    ),
    (
        ErrorType.TOOL_CALL_FAILURE,
        re.compile(
            r"MCP error|timed out|timeout|ETIMEDOUT|ECONNREFUSED|ENOENT|No such file or directory|"
            r"File (does not exist|not found)|Permission denied|permission denial|EACCES|"
            r"tool_use_error|InputValidationError|Invalid (tool )?(input|arguments|parameters)|"
            r"String to replace not found|old_string|has not been read yet|rate limit|"
            r"404 Not Found|Tool .* not found|unknown tool|exit code \d+",
            re.I,
        ),
    ),
]


def classify_text(
    text: str, *, tool_name: str | None = None, tool_input: dict[str, Any] | None = None
) -> ErrorType:
    """The error type of one error event's evidence."""
    tool = (tool_name or "").lower()
    if "preview" in tool:
        # the preview tool not answering is a tool failure; its verdict on the build is a deny
        if re.search(r"MCP error|timed out|timeout|ECONNREFUSED|ECONNRESET", text, re.I):
            return ErrorType.TOOL_CALL_FAILURE
        if re.search(r"den|blank|fail|error|reject|white screen", text, re.I):
            return ErrorType.PREVIEW_DENY
    for kind, pattern in _RULES:
        if pattern.search(text):
            return kind
    command = _command(tool_input)
    if command and re.search(r"\b(build|tsc|vite build|webpack|make)\b", command):
        return ErrorType.BUILD_ERROR
    if command and re.search(r"^\s*git\b", command):
        return ErrorType.GIT_ERROR
    if tool_name:
        return ErrorType.TOOL_CALL_FAILURE
    return ErrorType.OTHER


# LH-Bench's design, preview and deploy tools answer a failed call with a normal result
# holding {"status": "error", "error": "..."}: for those tools that is a failed call.
_SOFT_TOOLS = re.compile(r"figma|preview|node_|_node|upload_dist|deploy", re.I)
_SOFT_ERROR = re.compile(r'^\s*\{\s*"status"\s*:\s*"error"')


def soft_failure(tool_name: str | None, output: str | None) -> bool:
    """Whether a tool result that did not fail is an error payload of a design/preview tool."""
    return bool(
        tool_name and output and _SOFT_TOOLS.search(tool_name) and _SOFT_ERROR.match(output)
    )


def failed_result(step: StepLike, tool_name: str | None = None) -> bool:
    """Whether a tool result failed: its error flag, a non-zero exit code, or an error payload."""
    return (
        step.is_error
        or step.exit_code not in (None, 0)
        or soft_failure(tool_name or step.tool_name, step.tool_output)
    )


def result_calls(steps: Sequence[StepLike]) -> dict[int, StepLike]:
    """Position of each tool result in ``steps`` -> the call it answers (when one is found).

    By id when the result has one (the latest earlier call with that id); otherwise the
    oldest earlier id-less call still waiting for its result.
    """
    by_id: dict[str, StepLike] = {}
    waiting: deque[StepLike] = deque()
    out: dict[int, StepLike] = {}
    for i, s in enumerate(steps):
        if s.kind == StepKind.TOOL_CALL:
            if s.tool_call_id:
                by_id[s.tool_call_id] = s
            else:
                waiting.append(s)
        elif s.kind == StepKind.TOOL_RESULT:
            call = by_id.get(s.tool_call_id) if s.tool_call_id else None
            if call is None and not s.tool_call_id and waiting:
                call = waiting.popleft()
            if call is not None:
                out[i] = call
    return out


def figma_api_errors(events: Iterable[ErrorEvent]) -> list[ErrorEvent]:
    """The events that are Figma REST errors (429s, 404s, 403s, ...) seen by design tools."""
    return [e for e in events if FIGMA_API_ERROR.search(e.evidence)]


# compiled once: an operation key is read for every tool result of a run page's transcript
_SHELL_WRAP = re.compile(r"^(?:/bin/)?(?:ba)?sh\s+-l?c\s+(.+)$")
_BUILD_COMMAND = re.compile(
    r"\b(npm|pnpm|yarn|bun)\s+(run\s+)?build\b|\bvite build\b|\btsc\b|\bwebpack\b|\bmake\b"
)
_GIT_WRITE = re.compile(r"\bgit\s+(commit|push)\b")


def _command(tool_input: dict[str, Any] | None) -> str | None:
    if not tool_input:
        return None
    cmd = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(cmd, list):
        cmd = " ".join(str(c) for c in cmd)
    if not isinstance(cmd, str):
        return None
    # Codex wraps commands as bash -lc '<command>'
    m = _SHELL_WRAP.match(cmd.strip())
    if m:
        try:
            inner = shlex.split(m.group(1))
            cmd = inner[0] if inner else cmd
        except ValueError:
            pass
    return " ".join(cmd.split())


def operation_key(tool_name: str | None, tool_input: dict[str, Any] | None) -> str | None:
    """What 'the same operation' means for recovery: build, preview, command, or tool+target."""
    tool = (tool_name or "").lower()
    if "preview" in tool:
        return "preview"
    if "deploy" in tool or "upload_dist" in tool:
        return "deploy"
    command = _command(tool_input)
    if command:
        if _BUILD_COMMAND.search(command):
            return "build"
        git = _GIT_WRITE.search(command)
        if git:
            return "git " + git.group(1)
        return f"cmd:{command}"
    target = None
    if tool_input:
        for key in ("file_path", "path", "filename", "url", "target", "dir"):
            if isinstance(tool_input.get(key), str):
                target = tool_input[key]
                break
    return f"{tool_name}:{target}" if tool_name else None


@dataclass(frozen=True)
class ErrorEvent:
    """One error in a run: where, what type, and whether (and where) it was recovered."""

    step: int
    type: ErrorType
    operation: str | None
    recovered: bool
    recovered_at: int | None
    evidence: str


def error_events(trajectory: Trajectory) -> list[ErrorEvent]:
    """Every error event of a trajectory, classified, with its recovery (if any)."""
    return run_failures(trajectory.steps).events


@dataclass(frozen=True)
class RunFailures:
    """One run's error events and what Table 12 counts of its tool results.

    ``failed_tool_calls``: tool results that failed (each is an error event);
    ``previewed``/``deployed``: a preview or deploy call succeeded.
    """

    events: list[ErrorEvent]
    failed_tool_calls: int
    previewed: bool
    deployed: bool


def run_failures(steps: Sequence[StepLike]) -> RunFailures:
    """A run's error events (:func:`error_events`) and its Table 12 counts, in one pass.

    ``steps`` in order: a trajectory's steps, or only those that can hold or answer an
    error (tool calls and results, errors, hooks); messages never change the answer, but
    an event's ``step`` is its position in ``steps``.
    """
    calls = result_calls(steps)
    ops: list[tuple[str | None, bool]] = []  # per step: operation key, success
    names: list[str | None] = []  # per step: its tool, or its call's
    for i, s in enumerate(steps):
        if s.kind == StepKind.TOOL_RESULT:
            call = calls.get(i)
            name = s.tool_name or (call.tool_name if call else None)
            ops.append(
                (
                    operation_key(name, call.tool_input if call else None),
                    not failed_result(s, name),
                )
            )
            names.append(name)
        else:
            ops.append((None, False))
            names.append(s.tool_name)
    # where each operation succeeded, in order (and every success): an error's recovery
    # is the first success after it, found by bisection rather than a scan of the steps
    # after each error (quadratic when errors go unrecovered: every scan to the end)
    success_at: dict[str | None, list[int]] = {}
    any_success: list[int] = []
    for j, (op_j, ok) in enumerate(ops):
        if ok:
            success_at.setdefault(op_j, []).append(j)
            any_success.append(j)
    events = []
    failed = 0
    for i, s in enumerate(steps):
        if s.kind == StepKind.TOOL_RESULT:
            if ops[i][1]:
                continue
            failed += 1
        elif not (s.kind in (StepKind.ERROR, StepKind.HOOK) and s.is_error):
            continue
        call = calls.get(i) if s.kind == StepKind.TOOL_RESULT else None
        tool_name = names[i]
        tool_input = call.tool_input if call else None
        evidence = "\n".join(x for x in (s.content, s.tool_output) if x)
        etype = classify_text(evidence, tool_name=tool_name, tool_input=tool_input)
        op = ops[i][0]
        after = any_success if op is None else success_at.get(op, [])
        at = bisect.bisect_right(after, i)
        recovered_at = after[at] if at < len(after) else None
        events.append(
            ErrorEvent(i, etype, op, recovered_at is not None, recovered_at, evidence[:500])
        )
    # only a tool result is ever a success
    return RunFailures(events, failed, "preview" in success_at, "deploy" in success_at)


@dataclass(frozen=True)
class TypeRow:
    """One row of Table 11."""

    type: ErrorType
    count: int
    recovered: int

    @property
    def rate(self) -> float:
        """Recovered / count (NaN with no errors)."""
        return self.recovered / self.count if self.count else float("nan")


def type_table(events: Iterable[ErrorEvent]) -> list[TypeRow]:
    """Errors and recoveries per type, most frequent first, with a total row last."""
    count: Counter[ErrorType] = Counter()
    rec: Counter[ErrorType] = Counter()
    for e in events:
        count[e.type] += 1
        rec[e.type] += e.recovered
    rows = [TypeRow(t, count[t], rec[t]) for t, _ in count.most_common()]
    return rows


@dataclass(frozen=True)
class AgentFailureRow:
    """One row of Table 12."""

    group: str
    runs: int
    errors: int
    recovered: int
    failed_tool_calls: int
    tool_calls: int
    preview_runs: int
    deploy_runs: int

    @property
    def failure_rate(self) -> float:
        """Failed tool calls / all tool calls."""
        return self.failed_tool_calls / self.tool_calls if self.tool_calls else float("nan")

    @property
    def recovery_rate(self) -> float:
        """Recovered errors / all errors."""
        return self.recovered / self.errors if self.errors else float("nan")


def agent_table(
    runs: Sequence[tuple[str, object, Trajectory]],
    events: Sequence[Sequence[ErrorEvent]] | None = None,
    tool_calls: Sequence[int] | None = None,
) -> list[AgentFailureRow]:
    """Table 12 rows per group (e.g. harness and model).

    Runs, errors, failure and recovery rates, how many runs previewed and deployed
    successfully, and tool calls. ``events``: each run's :func:`error_events`, when the
    caller has them already; ``tool_calls``: each run's tool calls, when counted already.
    """
    acc: dict[str, list[int]] = defaultdict(lambda: [0] * 7)
    for k, (group, _run, traj) in enumerate(runs):
        found = run_failures(traj.steps)
        # every call counts, with or without an id
        calls = (
            sum(1 for s in traj.steps if s.kind == StepKind.TOOL_CALL)
            if tool_calls is None
            else tool_calls[k]
        )
        add_run(acc[group], found, calls, None if events is None else events[k])
    return [AgentFailureRow(g, *v) for g, v in sorted(acc.items())]


def add_run(
    counts: list[int],
    found: RunFailures,
    tool_calls: int,
    events: Sequence[ErrorEvent] | None = None,
) -> None:
    """Add one run to a group's Table 12 counts (:class:`AgentFailureRow`'s fields in order).

    ``events``: the run's events when the caller has them (``found.events`` otherwise).
    """
    listed = found.events if events is None else events
    counts[0] += 1
    counts[1] += len(listed)
    counts[2] += sum(e.recovered for e in listed)
    counts[3] += found.failed_tool_calls
    counts[4] += tool_calls
    counts[5] += found.previewed
    counts[6] += found.deployed


@dataclass(frozen=True)
class ExtractionAgreement:
    """How the rules and the model agree on the same transcripts."""

    matched: int
    rules_only: int
    model_only: int
    type_agreement: float
    type_kappa: float
    recovery_agreement: float


def extraction_agreement(
    rules: Sequence[tuple[str, ErrorEvent]], model: Sequence[tuple[str, Any]]
) -> ExtractionAgreement:
    """Rule events against model events (``step``, ``type``, ``recovered``), per run.

    Each list holds (run id, event); events are matched on (run id, step). Type and
    recovery agreement, and nominal κ on types, are over the matched events.
    """
    by_key = {(run, e.step): e for run, e in model}
    pairs = [(r, by_key[(run, r.step)]) for run, r in rules if (run, r.step) in by_key]
    n = len(pairs)
    types = [t.value for t in ErrorType]
    nan = float("nan")
    return ExtractionAgreement(
        matched=n,
        rules_only=len(rules) - n,
        model_only=len(by_key) - n,
        type_agreement=sum(r.type == m.type for r, m in pairs) / n if n else nan,
        type_kappa=cohen_kappa(
            [r.type.value for r, _ in pairs],
            [ErrorType(m.type).value for _, m in pairs],
            labels=types,
        )
        if n
        else nan,
        recovery_agreement=sum(r.recovered == m.recovered for r, m in pairs) / n if n else nan,
    )
