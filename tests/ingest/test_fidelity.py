"""Each importer stores what the transcript meant: one fixture per class of real-file trouble."""

import json
from pathlib import Path

import pytest

from lhbench.ingest import FORMATS, ImportContext, detect_format, read_transcripts
from lhbench.schema import ErrorType, Role, RunStatus, StepKind, Trajectory
from lhbench.stats import error_events
from tests.ingest.helpers import ZSTD, write_zip

FIX = Path(__file__).parent / "fixtures"


def read(path: Path, fmt: str | None = None, **kw):
    form = FORMATS[fmt] if fmt else detect_format(path)
    ctx = ImportContext(path=path)
    out = [(info, list(steps)) for info, steps in read_transcripts(form, ctx, **kw)]
    return ctx, out


def kinds(steps):
    return [(s.role.value, s.kind.value) for s in steps]


def test_two_sessions_in_one_file_merge_with_the_last_deciding_the_status() -> None:
    ctx, [(info, steps)] = read(FIX / "claude_code_resumed.jsonl")
    assert ctx.skipped == []
    # the first session ended with a success result; the resumed one was cut off mid-call
    assert info.sessions == 2 and info.status == RunStatus.INCOMPLETE and info.error is None
    assert [s.index for s in steps] == list(range(len(steps)))
    assert [s.tool_call_id for s in steps if s.kind == StepKind.TOOL_CALL] == [
        "toolu_01Ka",
        "toolu_02Zc",
        "toolu_02Zd",
    ]
    assert info.cost_usd == pytest.approx(0.0412)  # only the first session reported a cost
    # the resumed session's SessionStart hooks belong to it, not to the finished session
    assert [s.kind for s in steps].count(StepKind.HOOK) == 2
    assert info.started_at.isoformat() == "2026-05-11T14:02:03.118000+00:00"
    assert info.ended_at.isoformat() == "2026-05-11T14:10:44.210000+00:00"


def test_split_sessions_gives_one_transcript_per_session() -> None:
    _, transcripts = read(FIX / "claude_code_resumed.jsonl", split_sessions=True)
    assert [(i.key, i.status, len(s)) for i, s in transcripts] == [
        ("s1", RunStatus.COMPLETED, 3),
        ("s2", RunStatus.INCOMPLETE, 5),
    ]
    (first, _), (second, steps2) = transcripts
    assert steps2[0].index == 0 and first.cost_usd == pytest.approx(0.0412)
    assert second.cost_usd is None and first.usage.output_tokens == 79
    # each session's usage is its own: the second counted its two (identical-usage) messages
    assert second.usage.input_tokens == 2 * 520 and second.usage.requests == 2


def test_a_result_written_before_its_call_follows_the_parent_chain() -> None:
    ctx, [(info, steps)] = read(FIX / "claude_code_session_out_of_order.jsonl")
    assert ctx.skipped == []
    assert kinds(steps) == [
        ("user", "message"),
        ("assistant", "message"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
        ("assistant", "message"),
    ]
    call, result = steps[2], steps[3]
    assert call.tool_call_id == result.tool_call_id == "toolu_01Qm"
    assert result.tool_name == "Read" and "no db" in result.tool_output
    # a finished session: the last message ends the turn and no call is left open
    assert info.status == RunStatus.COMPLETED and info.harness_version == "2.1.301"
    # usage repeats on both lines of msg_01Vx: counted once
    assert info.usage.requests == 2 and info.usage.output_tokens == 48 + 31


def test_sub_agent_steps_carry_its_id_and_usage_covers_every_model() -> None:
    _, [(info, steps)] = read(FIX / "claude_code_subagent.jsonl")
    sub = [s for s in steps if s.agent_id]
    assert {s.agent_id for s in sub} == {"toolu_01Tk"}
    assert kinds(sub) == [
        ("user", "message"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
        ("assistant", "message"),
    ]
    task_call = next(s for s in steps if s.tool_name == "Task")
    assert task_call.agent_id is None and steps.index(task_call) < steps.index(sub[0])
    assert info.task_text == "Remove unused CSS from the shop front page."
    assert info.model == "claude-opus-4-6"
    assert set(info.model_usage) == {"claude-opus-4-6", "claude-haiku-4-5"}
    haiku = info.model_usage["claude-haiku-4-5"]
    assert (haiku.input_tokens, haiku.output_tokens, haiku.cache_write_tokens) == (1500, 53, 900)
    # the total covers both models, as the stored cost does
    assert info.usage.input_tokens == 2050 + 1500 and info.usage.output_tokens == 109 + 53
    assert info.usage.cache_read_tokens == 8600 + 2100
    assert info.cost_usd == pytest.approx(0.1873)
    assert sum(u.cost_usd for u in info.model_usage.values()) == pytest.approx(0.1873)


def test_harness_text_is_not_a_user_turn_nor_the_task() -> None:
    _, [(info, steps)] = read(FIX / "claude_code_harness_text.jsonl")
    assert info.task_text == "Make the pricing table responsive below 640px."
    users = [s.content for s in steps if s.role == Role.USER]
    assert users == ["Make the pricing table responsive below 640px."]
    harness = [s.content for s in steps if s.role == Role.HARNESS and s.kind == StepKind.MESSAGE]
    assert [h.split("\n")[0][:30] for h in harness] == [
        "Caveat: The messages below wer",
        "<command-name>/model</command-",
        "<local-command-stdout>Set mode",
        "Base directory for this skill:",
        "<task-notification>",
        "This session is being continue",
    ]
    assert info.harness_version == "2.1.310" and info.status == RunStatus.COMPLETED
    assert [s.kind for s in steps].count(StepKind.COMPACTION) == 1


def test_codex_rollout_harness_context_exit_codes_parts_and_warnings() -> None:
    ctx, [(info, steps)] = read(FIX / "codex_rollout_harness.jsonl")
    assert ctx.skipped == []
    assert info.task_text == "Fix the failing date parsing test and push the branch."
    harness = [s.content[:25] for s in steps if s.role == Role.HARNESS]
    assert harness == [
        "<permissions instructions",
        "# AGENTS.md instructions ",
        "<environment_context>\n  <",
        "Heads up: Long threads an",
    ]
    results = {s.tool_call_id: s for s in steps if s.kind == StepKind.TOOL_RESULT}
    assert (results["call_Dt1"].exit_code, results["call_Dt1"].is_error) == (1, True)
    assert (results["call_Dt2"].exit_code, results["call_Dt2"].is_error) == (0, False)
    assert results["call_Dt2"].tool_output.startswith("Success. Updated")
    # a list of input_text parts is stored as its text, not as JSON
    assert results["call_Dt3"].tool_output == (
        "Exit code: 0\nWall time: 1.9 seconds\nOutput:\n\n42 passed in 1.71s\n"
    )
    assert results["call_Dt3"].exit_code == 0 and not results["call_Dt3"].is_error
    # unified exec: "Process exited with code 128"
    assert (results["call_Dt4"].exit_code, results["call_Dt4"].is_error) == (128, True)
    warning = next(s for s in steps if s.metadata.get("severity") == "warning")
    assert warning.kind == StepKind.MESSAGE and not warning.is_error
    events = error_events(Trajectory(run_id="r", steps=steps))
    assert [(e.step, e.operation) for e in events] == [
        (results["call_Dt1"].index, events[0].operation),
        (results["call_Dt4"].index, events[1].operation),
    ]
    assert events[1].type == ErrorType.GIT_ERROR
    # usage per model from the running token count, cached tokens out of the input count
    assert info.usage.input_tokens == 19500 - 11000 and info.usage.cache_read_tokens == 11000
    assert info.model_usage["gpt-5.2-codex"].input_tokens == 8200 - 3100
    assert info.model_usage["gpt-5.2"].output_tokens == 520 - 210
    assert info.model == "gpt-5.2" and info.harness_version == "0.161.0"
    assert info.status == RunStatus.COMPLETED


def test_codex_warning_item_is_not_an_error() -> None:
    _, [(info, steps)] = read(FIX / "codex_exec_warning.jsonl")
    assert steps[0].role == Role.HARNESS and steps[0].kind == StepKind.MESSAGE
    assert steps[0].metadata == {"severity": "warning"} and not steps[0].is_error
    traj = Trajectory(run_id="w", steps=steps)
    assert traj.errors == [] and error_events(traj) == []
    assert info.status == RunStatus.COMPLETED and info.error is None
    assert (info.usage.input_tokens, info.usage.cache_read_tokens) == (15200 - 9800, 9800)
    assert info.usage.reasoning_tokens == 128


@pytest.mark.parametrize(
    ("name", "steps_before"), [("osworld_crash.jsonl", 0), ("osworld_crash_after_steps.jsonl", 5)]
)
def test_osworld_crash_record_is_a_failed_run_with_its_message(
    name: str, steps_before: int
) -> None:
    assert detect_format(FIX / name).name == "osworld"
    _, [(info, steps)] = read(FIX / name)
    assert info.status == RunStatus.FAILED
    assert steps[-1].kind == StepKind.ERROR and steps[-1].is_error
    assert steps[-1].content == info.error and len(steps) == steps_before + 1
    assert ("Time limit exceeded" in info.error) or ("Remote end closed" in info.error)


def _eval_members() -> dict[str, bytes]:
    doc = json.loads((FIX / "inspect_log.json").read_text())
    members = {"header.json": json.dumps({k: v for k, v in doc.items() if k != "samples"}).encode()}
    for s in doc["samples"]:
        members[f"samples/{s['id']}_epoch_{s['epoch']}.json"] = json.dumps(s).encode()
    return members


def test_zstd_eval_members_are_read(tmp_path: Path) -> None:
    path = write_zip(tmp_path / "log.eval", _eval_members(), method=ZSTD)
    ctx, transcripts = read(path)
    assert ctx.skipped == [] and ctx.digest is not None
    by_key = {i.key: (i, s) for i, s in transcripts}
    assert sorted(by_key) == ["count-lines-e1", "move-files-e1"]
    info, steps = by_key["move-files-e1"]
    _, from_json = read(FIX / "inspect_log.json")
    assert steps == next(s for i, s in from_json if i.key == "move-files-e1")
    assert info.usage.reasoning_tokens == 64 and info.harness_version == "0.3.291"
    assert info.ended_at.isoformat() == "2026-06-10T09:30:19.500000+00:00"
    other, _ = by_key["count-lines-e1"]
    # no completed_at: the end is the start plus total_time
    assert (other.ended_at - other.started_at).total_seconds() == 2.0
    assert (other.usage.input_tokens, other.usage.cache_read_tokens) == (60, 30)


def test_eval_members_over_the_limits_are_refused_not_read(tmp_path: Path) -> None:
    members = _eval_members()
    import zstandard

    zeros = zstandard.ZstdCompressor().compress(b"\0" * (64 << 20))
    bomb = "samples/bomb_epoch_1.json"
    members[bomb] = b""
    honest = write_zip(
        tmp_path / "honest.eval",
        members,
        packed={bomb: zeros * 32},
        declared={bomb: 32 * (64 << 20)},
    )
    ctx, transcripts = read(honest)
    assert [i.key for i, _ in transcripts] == ["count-lines-e1", "move-files-e1"]
    assert any("zip bomb" in str(e) for e in ctx.skipped)
    lying = write_zip(
        tmp_path / "lying.eval", members, packed={bomb: zeros * 32}, declared={bomb: 1000}
    )
    ctx, transcripts = read(lying)
    assert len(transcripts) == 2
    assert any("larger than its header says" in str(e) for e in ctx.skipped)
