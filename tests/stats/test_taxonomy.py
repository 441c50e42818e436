from pathlib import Path

import yaml

from lhbench.ingest import FORMATS, ImportContext, read_transcripts
from lhbench.schema import ErrorType, Role, Step, StepKind, Trajectory
from lhbench.stats import agent_table, classify_text, error_events, type_table
from tests.factories import make_run

FIX = Path(__file__).parent.parent / "ingest" / "fixtures"  # transcripts
LABELLED = Path(__file__).parent / "fixtures" / "error_events.yaml"


def load(name: str, fmt: str) -> Trajectory:
    ctx = ImportContext(path=FIX / name)
    [(_info, steps)] = [(i, list(s)) for i, s in read_transcripts(FORMATS[fmt], ctx)]
    return Trajectory(run_id=name, steps=steps)


# every (label, predicted) pair on the labelled set, exactly: a rule that starts catching
# or losing any event changes it
CONFUSION = {
    ("build_error", "build_error"): 5,
    ("config_error", "config_error"): 5,
    ("config_error", "tool_call_failure"): 1,
    ("dependency_error", "dependency_error"): 5,
    ("dependency_error", "tool_call_failure"): 1,
    ("git_error", "git_error"): 5,
    ("other", "other"): 5,
    ("preview_deny", "preview_deny"): 5,
    ("runtime_error", "runtime_error"): 5,
    ("runtime_error", "tool_call_failure"): 3,
    ("syntax_error", "syntax_error"): 5,
    ("tool_call_failure", "tool_call_failure"): 6,
    ("type_error", "type_error"): 5,
}
# known misses (the hard cases at the end of the set): no rule matches, so the failed
# tool decides; fixing one moves its count onto the diagonal and must update both tables
KNOWN_MISSES = [
    ("runtime_error", "E       AssertionError: assert 3 == 4"),  # a failing pytest assertion
    ("runtime_error", "node:events:497"),  # EADDRINUSE from an unhandled 'error' event
    ("runtime_error", "Killed"),  # the OOM killer
    ("dependency_error", "bash: line 1: pnpm: command not found"),
    ("config_error", "Error [ERR_REQUIRE_ESM]"),  # an ESM-only package in a CJS config
]


def test_taxonomy_confusion_matrix_on_the_labelled_set() -> None:
    items = yaml.safe_load(LABELLED.read_text())
    assert {it["label"] for it in items} == {t.value for t in ErrorType}
    confusion: dict[tuple[str, str], int] = {}
    misses = []
    for it in items:
        got = classify_text(
            it["text"],
            tool_name=it.get("tool"),
            tool_input={"command": it["command"]} if it.get("command") else None,
        ).value
        confusion[(it["label"], got)] = confusion.get((it["label"], got), 0) + 1
        if got != it["label"]:
            misses.append((it["label"], it["text"]))
    assert confusion == CONFUSION
    assert len(misses) == len(KNOWN_MISSES)
    for (label, text), (known_label, start) in zip(misses, KNOWN_MISSES, strict=True):
        assert (label, text.startswith(start)) == (known_label, True), text


def test_recovery_detection_on_fixture_runs() -> None:
    cc = error_events(load("claude_code_stream.jsonl", "claude-code"))
    # the failed build (step 2) is recovered by the passing build (step 8); the hook's
    # error report (step 3) has no operation and is recovered by the next success
    assert [(e.step, e.type, e.recovered_at) for e in cc] == [
        (2, ErrorType.TYPE_ERROR, 8),
        (3, ErrorType.TYPE_ERROR, 6),
    ]
    codex = error_events(load("codex_exec.jsonl", "codex"))
    assert [(e.step, e.type, e.operation, e.recovered) for e in codex] == [
        (2, ErrorType.GIT_ERROR, "git commit", True),
        (8, ErrorType.TOOL_CALL_FAILURE, "preview", False),
    ]
    gem = error_events(load("gemini_stream.jsonl", "gemini-cli"))
    assert [(e.type, e.operation, e.recovered_at) for e in gem] == [
        (ErrorType.DEPENDENCY_ERROR, "build", 5)
    ]
    inspect = Trajectory(
        run_id="i",
        steps=list(
            next(
                read_transcripts(FORMATS["inspect"], ImportContext(path=FIX / "inspect_log.json"))
            )[1]
        ),
    )
    [ev] = error_events(inspect)
    # 'mv a.log b.log logs/' failed; a different command later succeeded: not the same operation
    assert ev.type == ErrorType.TOOL_CALL_FAILURE and not ev.recovered


def test_tables_11_and_12_arithmetic() -> None:
    def run_with(errors: int, recovered: int, calls: int, preview: bool) -> Trajectory:
        steps: list[Step] = []
        k = 0
        for i in range(calls):
            failed = i < errors
            steps.append(
                Step(
                    index=k,
                    role=Role.ASSISTANT,
                    kind=StepKind.TOOL_CALL,
                    tool_name="Bash",
                    tool_call_id=f"c{i}",
                    tool_input={"command": f"cmd{i}"},
                )
            )
            steps.append(
                Step(
                    index=k + 1,
                    role=Role.TOOL,
                    kind=StepKind.TOOL_RESULT,
                    tool_call_id=f"c{i}",
                    tool_name="Bash",
                    tool_output="cat: x: Permission denied" if failed else "ok",
                    is_error=failed,
                )
            )
            k += 2
            if failed and i < recovered:
                steps.append(
                    Step(
                        index=k,
                        role=Role.ASSISTANT,
                        kind=StepKind.TOOL_CALL,
                        tool_name="Bash",
                        tool_call_id=f"r{i}",
                        tool_input={"command": f"cmd{i}"},
                    )
                )
                steps.append(
                    Step(
                        index=k + 1,
                        role=Role.TOOL,
                        kind=StepKind.TOOL_RESULT,
                        tool_call_id=f"r{i}",
                        tool_name="Bash",
                        tool_output="ok",
                    )
                )
                k += 2
        if preview:
            steps.append(
                Step(
                    index=k,
                    role=Role.ASSISTANT,
                    kind=StepKind.TOOL_CALL,
                    tool_name="mcp__preview__create_app_preview",
                    tool_call_id="p",
                    tool_input={},
                )
            )
            steps.append(
                Step(
                    index=k + 1,
                    role=Role.TOOL,
                    kind=StepKind.TOOL_RESULT,
                    tool_call_id="p",
                    tool_name="mcp__preview__create_app_preview",
                    tool_output="url",
                )
            )
        return Trajectory(run_id="x", steps=steps)

    runs = [
        ("A", make_run("a1"), run_with(3, 2, 10, True)),
        ("A", make_run("a2"), run_with(1, 1, 5, False)),
        ("B", make_run("b1"), run_with(4, 1, 8, True)),
    ]
    rows = {r.group: r for r in agent_table(runs)}
    a = rows["A"]
    assert (a.runs, a.errors, a.recovered, a.failed_tool_calls, a.preview_runs) == (2, 4, 3, 4, 1)
    assert a.tool_calls == 10 + 2 + 5 + 1 + 1
    assert a.failure_rate == 4 / 19 and a.recovery_rate == 3 / 4
    assert rows["B"].recovery_rate == 1 / 4
    t = type_table(e for _, _, tr in runs for e in error_events(tr))
    assert [(r.type, r.count, r.recovered) for r in t] == [(ErrorType.TOOL_CALL_FAILURE, 8, 4)]
    assert t[0].rate == 0.5
