import asyncio
import json
import os
from pathlib import Path

from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from lhbench.harness import RunSpec, execute, install_skills, prepare_workspace
from lhbench.models import resolve_model
from lhbench.packs import load_pack
from lhbench.schema import RunStatus, StepKind
from lhbench.stats import error_events
from tests.harness.helpers import write_harness_pack

SPEC = resolve_model("openai:native-test@http://127.0.0.1:9/v1").model_dump(mode="json")


def returns(messages) -> list[ToolReturnPart]:
    return [
        p
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]


def call(name: str, args: dict) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(name, args)])


def run(tmp_path: Path, fn, **pack_kw) -> tuple:
    pack = write_harness_pack(tmp_path / "pack", **pack_kw)
    spec = RunSpec(
        pack_dir=str(pack),
        task_id="greet",
        harness="native",
        model=SPEC,
        home=str(tmp_path / "home"),
    )
    out = asyncio.run(execute(spec, model=FunctionModel(fn)))
    return out, pack


def scripted_fixer(messages, info: AgentInfo) -> ModelResponse:
    done = returns(messages)
    n = len(done)
    if n == 0:
        return call("read_manifest", {})
    if n == 1:
        return call(
            "write_file", {"path": "greeting.txt", "content": "hello world\n"}
        )  # wrong: no comma
    if n == 2:
        last = str(done[-1].content)
        assert "[verification check.py: FAILED]" in last and "Next action" in last
        return call(
            "edit_file",
            {"path": "greeting.txt", "old_text": "hello world", "new_text": "hello, world"},
        )
    if n == 3:
        assert "[verification check.py: passed]" in str(done[-1].content)
        return call("complete_step", {"step": "write greeting"})
    return ModelResponse(parts=[TextPart("Wrote greeting.txt; the check passes.")])


def test_native_harness_end_to_end_with_hook_feedback_and_recovery(tmp_path: Path) -> None:
    out, _ = run(tmp_path, scripted_fixer)
    assert out.run.status == RunStatus.COMPLETED and out.run.harness == "native"
    kinds = [(s.kind.value, s.tool_name) for s in out.trajectory.steps]
    assert kinds == [
        ("message", None),
        ("tool_call", "read_manifest"),
        ("tool_result", "read_manifest"),
        ("tool_call", "write_file"),
        ("tool_result", "write_file"),
        ("hook", "check.py"),
        ("tool_call", "edit_file"),
        ("tool_result", "edit_file"),
        ("hook", "check.py"),
        ("tool_call", "complete_step"),
        ("tool_result", "complete_step"),
        ("message", None),
    ]
    hooks = [s for s in out.trajectory.steps if s.kind == StepKind.HOOK]
    assert hooks[0].is_error and hooks[0].metadata["next_action"].startswith("rewrite greeting.txt")
    assert not hooks[1].is_error
    # the failed verification is an error event, recovered by the passing one
    [ev] = error_events(out.trajectory)
    assert ev.step == hooks[0].index and ev.recovered
    workspace = Path(out.run.metadata["workspace"])
    assert (workspace / "greeting.txt").read_text() == "hello, world\n"
    assert json.loads((workspace / "manifest.json").read_text())["completed_steps"] == [
        "write greeting"
    ]
    assert {a.name for a in out.artifacts} >= {"greeting.txt", "README.md", "manifest.json"}
    assert out.run.versions == {"skill": "default"}


def test_skill_variants_env_scrubbing_and_escapes(tmp_path: Path) -> None:
    os.environ["LHBENCH_TEST_SECRET"] = "do-not-leak"
    seen: dict[str, str] = {}

    def probe(messages, info: AgentInfo) -> ModelResponse:
        done = returns(messages)
        if not done:
            seen["instructions"] = info.instructions or ""
            return call("run_shell", {"command": "env"})
        if len(done) == 1:
            seen["env"] = str(done[0].content)
            return call("write_file", {"path": "../outside.txt", "content": "x"})
        seen["escape"] = str(done[-1].content) if done else ""
        return ModelResponse(parts=[TextPart("done")])

    pack = write_harness_pack(tmp_path / "pack")
    spec = RunSpec(
        pack_dir=str(pack),
        task_id="greet",
        harness="native",
        model=SPEC,
        home=str(tmp_path / "home"),
        versions={"skill": "v1"},
    )
    try:
        out = asyncio.run(execute(spec, model=FunctionModel(probe)))
    finally:
        del os.environ["LHBENCH_TEST_SECRET"]
    assert (
        "SKILL-VARIANT-V1" in seen["instructions"] and "SKILL-DEFAULT" not in seen["instructions"]
    )
    assert "do-not-leak" not in seen["env"] and "HOME=" in seen["env"]
    assert not (tmp_path / "home" / "runs" / out.run.id / "outside.txt").exists()
    assert out.run.versions == {"skill": "v1"}
    failed = [s for s in out.trajectory.steps if s.kind == StepKind.TOOL_RESULT and s.is_error]
    assert failed and "climbs out" in (failed[0].tool_output or "")
    # Claude Code and Gemini CLI find skills in their own directories
    task = load_pack(pack).task("greet")
    ws = prepare_workspace(tmp_path / "h2", "r1", pack, task, "claude-code", "m")
    install_skills(ws, "claude-code", {"greeter": "X"})
    install_skills(ws, "gemini-cli", {"greeter": "Y"})
    assert (ws.root / ".claude/skills/greeter/SKILL.md").read_text() == "X"
    assert (ws.root / ".gemini/skills/greeter/SKILL.md").read_text() == "Y"


def test_limits_stop_the_run_and_are_recorded(tmp_path: Path) -> None:
    def busy(messages, info: AgentInfo) -> ModelResponse:
        return call("list_dir", {"path": "."})

    out, _ = run(tmp_path, busy, tool_calls=3)
    assert out.run.status == RunStatus.LIMIT_EXCEEDED
    assert out.trajectory.steps[-1].kind == StepKind.ERROR

    async def slow(messages, info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(0.3)
        return call("list_dir", {"path": "."})

    out2, _ = run(tmp_path / "b", slow, wall_seconds=1)
    assert out2.run.status == RunStatus.TIMED_OUT and "wall-clock" in (out2.run.error or "")


def test_compaction_triggers_at_the_budget_and_is_recorded(tmp_path: Path) -> None:
    summaries = {"n": 0, "writes": 0}
    seen_summary: dict[str, bool] = {}

    def chatty(messages, info: AgentInfo) -> ModelResponse:
        schema = info.output_tools[0].parameters_json_schema if info.output_tools else {}
        if "commitments" in json.dumps(schema):
            summaries["n"] += 1
            return call(
                info.output_tools[0].name,
                {
                    "commitments": ["write greeting.txt"],
                    "open_todos": ["verify"],
                    "verified_facts": ["README.md exists"],
                    "files_touched": ["notes.txt"],
                },
            )
        # count writes here: after a compaction the history no longer holds them all
        if summaries["writes"] < 6:
            summaries["writes"] += 1
            return call(
                "write_file", {"path": f"notes{summaries['writes']}.txt", "content": "x" * 3000}
            )
        text = json.dumps([str(m) for m in messages])
        seen_summary["after"] = "[context compacted" in text and "Open TODOs" in text
        return ModelResponse(parts=[TextPart("done")])

    pack = write_harness_pack(tmp_path / "pack")
    spec = RunSpec(
        pack_dir=str(pack),
        task_id="greet",
        harness="native",
        model=SPEC,
        home=str(tmp_path / "home"),
        compact_at_tokens=1500,
    )
    out = asyncio.run(execute(spec, model=FunctionModel(chatty)))
    comp = [s for s in out.trajectory.steps if s.kind == StepKind.COMPACTION]
    assert comp and summaries["n"] == len(comp)
    assert "Open TODOs" in comp[0].content and comp[0].metadata["tokens_before"] > 1500
    assert out.run.status == RunStatus.COMPLETED
    assert seen_summary["after"]  # the model worked on from the working set


def test_pack_mcp_server_tools_reach_the_native_harness(tmp_path: Path) -> None:
    seen: dict[str, object] = {}

    def fn(messages, info: AgentInfo) -> ModelResponse:
        seen.setdefault("tools", sorted(t.name for t in info.function_tools))
        done = returns(messages)
        if not done:
            return call("notes_get_file_info", {"path": "README.md"})
        seen["result"] = str(done[-1].content)
        return ModelResponse(parts=[TextPart("README.md has one line.")])

    out, _ = run(tmp_path, fn, hooks=False, mcp=True)
    assert out.run.status == RunStatus.COMPLETED
    # the pack's server was started over stdio and its tools are named SERVER_TOOL
    assert {"notes_get_file_info", "notes_read_file", "write_file"} <= set(seen["tools"])
    assert "path: README.md" in str(seen["result"]) and "lines: 1" in str(seen["result"])
    calls = [s.tool_name for s in out.trajectory.steps if s.kind == StepKind.TOOL_CALL]
    assert calls == ["notes_get_file_info"]
