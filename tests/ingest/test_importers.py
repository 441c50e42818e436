import json
import zipfile
from pathlib import Path

import pytest

from lhbench.errors import TranscriptError
from lhbench.ingest import FORMATS, ImportContext, detect_format, read_transcripts
from lhbench.schema import RunStatus

FIX = Path(__file__).parent / "fixtures"


def read(name: str, fmt: str | None = None, strict: bool = False, path: Path | None = None):
    p = path or FIX / name
    form = FORMATS[fmt] if fmt else detect_format(p)
    ctx = ImportContext(path=p, strict=strict)
    out = []
    for info, steps in read_transcripts(form, ctx):
        out.append((info, list(steps)))
    return form.name, ctx, out


def kinds(steps):
    return [s.kind.value for s in steps]


def test_claude_code_stream_json() -> None:
    fmt, ctx, [(info, steps)] = read("claude_code_stream.jsonl")
    assert fmt == "claude-code" and ctx.skipped == []
    assert kinds(steps) == [
        "thinking",
        "tool_call",
        "tool_result",
        "hook",
        "message",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "compaction",
        "message",
    ]
    call, result = steps[1], steps[2]
    assert (call.tool_name, call.tool_call_id, call.tool_input["command"]) == (
        "Bash",
        "toolu_01",
        "npm run build",
    )
    assert result.tool_call_id == "toolu_01" and result.tool_name == "Bash" and result.is_error
    assert "TS2322" in result.tool_output
    assert (
        steps[6].tool_output == "The file /work/run/src/App.tsx has been updated."
        and not steps[6].is_error
    )
    assert steps[3].is_error and steps[3].exit_code == 2
    assert info.status == RunStatus.COMPLETED and info.cost_usd == pytest.approx(0.1234)
    assert info.session_id.startswith("7f1c2a9e") and info.model == "claude-opus-4-6"
    assert info.harness_version == "2.1.276" and info.metadata["num_turns"] == 4
    # usage is counted once per message id (msg_01A..D), though it repeats on every line
    assert (info.usage.input_tokens, info.usage.output_tokens) == (
        1200 + 1500 + 1700 + 1800,
        40 + 60 + 30 + 20,
    )
    assert info.usage.cache_read_tokens == 1200 + 1500 + 1700 and info.usage.requests == 4
    assert steps[0].timestamp is not None and info.started_at < info.ended_at


def test_claude_code_api_error_and_killed_run() -> None:
    _, _, [(info, steps)] = read("claude_code_api_error.jsonl")
    assert info.status == RunStatus.FAILED and "API Error: 529" in (info.error or "")
    assert kinds(steps) == ["error"] and steps[0].is_error
    _, ctx, [(info, steps)] = read("claude_code_killed.jsonl")
    assert info.status == RunStatus.INCOMPLETE and ctx.truncated
    assert kinds(steps) == ["tool_call", "tool_result"]
    assert len(ctx.skipped) == 1 and ctx.skipped[0].problem.line == 4
    # a cut-off last line is not an error even in strict mode
    _, ctx, _ = read("claude_code_killed.jsonl", strict=True)
    assert ctx.truncated


def test_claude_code_session_file() -> None:
    fmt, _, [(info, steps)] = read("claude_code_session.jsonl")
    assert fmt == "claude-code"
    assert kinds(steps) == ["message", "tool_call", "tool_result", "message"]
    assert info.task_text == "Add a footer to the landing page."
    assert info.status == RunStatus.COMPLETED and info.session_id == "cc33"
    assert all(s.timestamp is not None for s in steps)


def test_codex_exec_json() -> None:
    fmt, _, [(info, steps)] = read("codex_exec.jsonl")
    assert fmt == "codex"
    assert kinds(steps) == [
        "thinking",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "thinking",
        "message",
    ]
    assert steps[2].exit_code == 128 and steps[2].is_error and "index.lock" in steps[2].tool_output
    assert steps[4].exit_code == 0 and not steps[4].is_error
    assert steps[5].tool_name == "apply_patch" and "update src/App.tsx" in steps[6].tool_output
    assert steps[7].tool_name == "mcp__preview__create_app_preview" and steps[8].is_error
    assert "Request timed out" in steps[8].tool_output
    assert (
        info.session_id == "019a2d7a-6455-7b21-8e1f-3c2d1e0f9a8b"
        and info.status == RunStatus.COMPLETED
    )
    # Codex counts cached tokens inside input_tokens; lhbench's input excludes them
    assert (info.usage.input_tokens, info.usage.cache_read_tokens, info.usage.output_tokens) == (
        6040 - 4992,
        4992,
        129,
    )


def test_codex_rollout() -> None:
    fmt, _, [(info, steps)] = read("codex_rollout.jsonl")
    assert fmt == "codex"
    assert kinds(steps) == [
        "message",
        "thinking",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "message",
    ]
    assert steps[2].tool_input == {"command": ["bash", "-lc", "pytest -q"], "workdir": "/w"}
    assert (
        steps[3].exit_code == 1
        and steps[3].is_error
        and "ModuleNotFoundError" in steps[3].tool_output
    )
    assert steps[4].tool_name == "apply_patch" and steps[5].tool_name == "apply_patch"
    assert info.model == "gpt-5.2" and info.harness_version == "0.146.0"
    assert info.usage.input_tokens == 9000 - 4000 and info.usage.reasoning_tokens == 120
    assert info.usage.cache_read_tokens == 4000 and info.model_usage["gpt-5.2"] == info.usage
    assert info.status == RunStatus.COMPLETED and steps[0].timestamp is not None


def test_gemini_stream_and_json() -> None:
    fmt, _, [(info, steps)] = read("gemini_stream.jsonl")
    assert fmt == "gemini-cli"
    assert kinds(steps) == [
        "message",
        "message",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "message",
        "message",
    ]
    assert steps[1].content == "I will build the site first."  # delta chunks joined
    assert (
        steps[3].tool_name == "run_shell_command"
        and steps[3].is_error
        and "ERESOLVE" in steps[3].tool_output
    )
    # a warning is harness text with its severity, not an error
    assert steps[6].role.value == "harness" and steps[6].metadata["severity"] == "warning"
    assert not steps[6].is_error
    assert info.status == RunStatus.COMPLETED and info.model == "gemini-3.1-pro"
    # Gemini's input_tokens include the cached ones; its `input` is lhbench's input
    assert (info.usage.input_tokens, info.usage.output_tokens, info.usage.cache_read_tokens) == (
        14800,
        74,
        8115,
    )
    assert set(info.model_usage) == {"gemini-3.1-pro"}
    fmt, _, [(info, steps)] = read("gemini_output.json")
    assert fmt == "gemini-cli" and kinds(steps) == ["message"]
    # prompt 12000 of which 3000 cached; thoughts are output (and counted as reasoning)
    assert (
        info.usage.input_tokens == 9000
        and info.usage.cache_read_tokens == 3000
        and info.usage.output_tokens == 350 + 120
        and info.usage.reasoning_tokens == 120
        and info.usage.requests == 3
        and info.status == RunStatus.COMPLETED
    )


def test_osworld() -> None:
    fmt, _, [(info, steps)] = read("osworld_traj.jsonl")
    assert fmt == "osworld"
    assert kinds(steps) == [
        "message",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
    ]
    assert steps[3].tool_input == {"action_type": "TYPING", "parameters": {"text": "report.pdf"}}
    assert steps[6].metadata["screenshot_file"] == "step_3_20260115@101509.png"
    assert info.status == RunStatus.COMPLETED and info.metadata["reward"] == 1.0
    assert info.started_at.isoformat() == "2026-01-15T10:15:00+00:00"


def test_inspect_json_and_eval(tmp_path: Path) -> None:
    fmt, _, transcripts = read("inspect_log.json")
    assert fmt == "inspect" and len(transcripts) == 2
    info, steps = transcripts[0]
    assert info.key == "move-files-e1" and info.model == "openai/gpt-5-mini"
    assert kinds(steps) == [
        "message",
        "message",
        "thinking",
        "message",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "message",
    ]
    assert (
        steps[7].is_error
        and "not a directory" in steps[7].tool_output
        and steps[7].tool_name == "bash"
    )
    assert info.usage.input_tokens == 2100
    doc = json.loads((FIX / "inspect_log.json").read_text())
    eval_path = tmp_path / "log.eval"
    with zipfile.ZipFile(eval_path, "w") as zf:
        zf.writestr("header.json", json.dumps({k: v for k, v in doc.items() if k != "samples"}))
        for s in doc["samples"]:
            zf.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
    fmt, _, transcripts2 = read("", path=eval_path)
    assert fmt == "inspect" and [i.key for i, _ in transcripts2] == [
        "count-lines-e1",
        "move-files-e1",
    ]
    assert [kinds(s) for i, s in transcripts2 if i.key == "move-files-e1"] == [kinds(steps)]


def test_generic_jsonl() -> None:
    fmt, _, [(info, steps)] = read("generic.jsonl")
    assert fmt == "jsonl"
    assert kinds(steps) == ["message", "tool_call", "tool_result", "message"]
    assert steps[2].tool_name == "write_file" and steps[3].usage.input_tokens == 300
    assert (
        info.status == RunStatus.COMPLETED
        and info.cost_usd == 0.0004
        and info.model == "openai:qwen2.5-72b"
    )


def test_the_documented_generic_example_imports_as_documented(tmp_path: Path) -> None:
    doc = (Path(__file__).parents[2] / "docs" / "transcripts.md").read_text()
    example = doc.split("```jsonl\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.jsonl"
    path.write_text(example)
    ctx = ImportContext(path=path)
    [(info, steps)] = [(i, list(s)) for i, s in read_transcripts(detect_format(path), ctx)]
    assert ctx.skipped == []
    assert kinds(steps) == ["message", "tool_call", "tool_result", "message"]
    assert (steps[2].tool_name, steps[2].exit_code, steps[2].is_error) == ("bash", 1, True)
    assert (steps[1].usage.input_tokens, steps[1].usage.cache_read_tokens) == (900, 3000)
    assert info.task_text == "Fix the failing date test."
    assert (info.status, info.cost_usd, info.harness_version) == (
        RunStatus.COMPLETED,
        0.0123,
        "1.4.0",
    )
    assert (info.usage.input_tokens, info.usage.cache_read_tokens) == (900, 3000)
    assert (info.ended_at - info.started_at).total_seconds() == 190


@pytest.mark.parametrize(
    "name",
    [
        "claude_code_stream.jsonl",
        "claude_code_session.jsonl",
        "codex_exec.jsonl",
        "codex_rollout.jsonl",
        "gemini_stream.jsonl",
        "gemini_output.json",
        "osworld_traj.jsonl",
        "inspect_log.json",
        "generic.jsonl",
    ],
)
def test_auto_detection(name: str) -> None:
    expected = {
        "claude": "claude-code",
        "codex": "codex",
        "gemini": "gemini-cli",
        "osworld": "osworld",
        "inspect": "inspect",
        "generic": "jsonl",
    }
    assert detect_format(FIX / name).name == expected[name.split("_")[0].split(".")[0]]


def test_malformed_lines_name_file_and_line(tmp_path: Path) -> None:
    lines = (FIX / "codex_exec.jsonl").read_text().splitlines()
    lines[3] = "{not json"
    lines[6] = '{"type": "item.completed", "item": {"id": "x"}}'  # no item type
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    _, ctx, [(_, steps)] = read("", fmt="codex", path=bad)
    assert [e.problem.line for e in ctx.skipped] == [4, 7]
    assert "not valid JSON" in str(ctx.skipped[0]) and "missing field 'type'" in str(ctx.skipped[1])
    assert str(ctx.skipped[0]).startswith(f"{bad}:4:")
    assert len(steps) > 5
    with pytest.raises(TranscriptError) as info:
        read("", fmt="codex", path=bad, strict=True)
    assert info.value.problem.line == 4


def test_unknown_format(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_text('{"hello": 1}\n')
    with pytest.raises(TranscriptError, match="format not recognised"):
        detect_format(p)


def test_claude_code_usage_sums_every_message_once_and_at_most_64_models(tmp_path: Path) -> None:
    # 700 messages (more than the window of messages whose usage may still repeat), each
    # on two lines repeating its usage, a new model every 7 messages (100 models), every
    # third message a sub-agent's; the oracle sums the file's own numbers
    lines = [{"type": "system", "subtype": "init", "session_id": "s", "model": "m-0"}]
    want = {"main": [0, 0, 0, 0, 0], "sub": [0, 0, 0, 0, 0]}
    per_model: dict[str, list[int]] = {}
    for i in range(700):
        model = f"m-{i // 7}"
        usage = {
            "input_tokens": i,
            "output_tokens": 2 * i + 1,
            "cache_read_input_tokens": 3 * i,
            "cache_creation_input_tokens": i % 5,
        }
        counts = [i, 2 * i + 1, 3 * i, i % 5, 1]
        sub = i % 3 == 0
        for text in ("a", "b"):
            line: dict = {
                "type": "assistant",
                "message": {
                    "id": f"msg_{i}",
                    "model": model,
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                    "usage": usage,
                },
            }
            if sub:
                line["parent_tool_use_id"] = "toolu_parent"
            lines.append(line)
        side = want["sub" if sub else "main"]
        for k in range(5):
            side[k] += counts[k]
        if model in per_model or len(per_model) < 64:
            got = per_model.setdefault(model, [0, 0, 0, 0, 0])
            for k in range(5):
                got[k] += counts[k]
    path = tmp_path / "usage.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    _, _, [(info, steps)] = read("", fmt="claude-code", path=path)
    assert len(steps) == 1400
    total = [want["main"][k] + want["sub"][k] for k in range(5)]
    u = info.usage
    assert [
        u.input_tokens,
        u.output_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.requests,
    ] == total
    assert list(info.model_usage) == list(per_model)  # the first 64, in the file's order
    for model, m in info.model_usage.items():
        got = [m.input_tokens, m.output_tokens, m.cache_read_tokens, m.cache_write_tokens]
        assert [*got, m.requests] == per_model[model]
