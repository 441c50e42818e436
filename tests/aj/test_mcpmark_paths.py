"""MCPMark filesystem logs name absolute paths in the task's backup copy: rebased, or refused.

A refused write must leave its run's check undecided (never a verdict on a state without
that write), and MCPMark's recorded outcome is stored beside lhbench's label.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from lhbench.api import judge_states_async
from lhbench.config import Settings
from lhbench.ingest.mcpmark import import_mcpmark, messages_to_steps, tool_output
from lhbench.schema import REPLAY_REFUSED_KEY, Label, Run
from lhbench.store import Store
from tests.aj.mcpmark_logs import ROOT, call_result, items, layout, meta
from tests.cli.helpers import cli

SUMMARY = "a.md\nb.md\n"  # what the fixture task's verify.py accepts
ALLOWED = ("list_allowed_directories", {}, f"Allowed directories:\n{ROOT}", False)


def _label(tmp: Path, src: Path) -> list[tuple[Run, Label]]:
    import_mcpmark(src, tmp / "p")
    with Store.open(f"sqlite:///{tmp / 's.db'}") as store:
        asyncio.run(
            judge_states_async(
                store=store, settings=Settings(home=tmp / "home"), pack=str(tmp / "p"), judge=None
            )
        )
        labels = {lab.run_id: lab for lab in store.list_labels()}
        return [(run, labels[run.id]) for run in store.list_runs()]


def _written(tmp: Path, content: str) -> list[Path]:
    """Files anywhere under ``tmp`` holding exactly ``content`` (the logs hold it escaped)."""
    return [
        p
        for p in tmp.rglob("*")
        if p.is_file() and not p.is_symlink() and p.read_bytes() == content.encode()
    ]


def _log(*calls: tuple[str, dict[str, Any], str, bool], success: bool = True) -> Any:
    return items(*calls), meta("notes__make_summary", "filesystem", success)


@pytest.mark.parametrize("allowed", [True, False], ids=["server-named-root", "backup-dir-root"])
def test_absolute_paths_are_rebased_under_the_task_root(tmp_path: Path, allowed: bool) -> None:
    calls = [
        ("directory_tree", {"path": ROOT}, "notes/ a.md b.md readme.txt", False),
        ("read_multiple_files", {"paths": [f"{ROOT}/notes/a.md", f"{ROOT}/notes/b.md"]}, "", False),
        (
            "write_file",
            {"path": f"{ROOT}//summary.txt", "content": SUMMARY},
            "Successfully wrote",
            False,
        ),
    ]
    src = layout(
        tmp_path,
        {"m__filesystem/exp/notes__make_summary": _log(*([ALLOWED] if allowed else []), *calls)},
        postgres=False,
    )
    [(run, label)] = _label(tmp_path, src)
    # the write landed in the replayed task root, so MCPMark's own check passes there
    assert label.passed is True, label
    recorded = run.recorded_outcome
    assert recorded is not None and recorded.passed is True
    assert recorded.source == (
        "mcpmark:results/m__filesystem/exp/notes__make_summary/meta.json#execution_result.success"
    )
    traj = next((tmp_path / "p/tasks/filesystem-notes-make_summary/trajectories").glob("*.jsonl"))
    steps = [json.loads(x) for x in traj.read_text().splitlines()[1:-1]]
    calls_in = [s["tool_input"] for s in steps if s["kind"] == "tool_call"]
    assert {"path": "summary.txt", "content": SUMMARY} in calls_in
    assert {"paths": ["notes/a.md", "notes/b.md"]} in calls_in


BACKUPS = "/home/alice/.mcpmark_backups"
ESCAPES = {
    "dotdot-into-another-backup": f"{ROOT}/../backup_filesystem_other_task_7/summary.txt",
    "dotdot-out-of-the-home": f"{ROOT}/../../../../tmp/summary.txt",
    "a-different-backup-root": f"{BACKUPS}/backup_filesystem_notes_make_summary_5/summary.txt",
    "another-users-copy": ROOT.replace("/alice/", "/bob/") + "/summary.txt",
    "windows-style": "C:\\Users\\alice\\.mcpmark_backups\\backup_filesystem_notes_1\\summary.txt",
    "windows-separators": f"{ROOT}/notes\\..\\..\\summary.txt",
    "nul-byte": f"{ROOT}/summary.txt\x00.md",
    "home-relative": "~/summary.txt",
    "relative-dotdot": "notes/../../summary.txt",
}


@pytest.mark.parametrize("path", list(ESCAPES.values()), ids=list(ESCAPES))
def test_a_write_outside_the_task_root_leaves_the_label_undecided(
    tmp_path: Path, path: str
) -> None:
    src = layout(
        tmp_path,
        {
            "m__filesystem/exp/notes__make_summary": _log(
                ALLOWED,
                ("write_file", {"path": path, "content": SUMMARY}, "Successfully wrote", False),
            )
        },
        postgres=False,
    )
    res = import_mcpmark(src, tmp_path / "p")
    assert len(res.refused) == 1 and "write_file" in res.refused[0], res.refused
    [(run, label)] = _label(tmp_path, src)
    # never a FAIL decided on the initial state: the run's one write could not be replayed
    assert label.passed is None, label
    assert label.error is not None and label.error.startswith("replay incomplete"), label
    assert _written(tmp_path, SUMMARY) == []  # nothing written, inside the state or out
    assert run.recorded_outcome is not None and run.recorded_outcome.passed is True


def test_a_symlink_in_the_initial_state_does_not_lead_a_write_out(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    src = layout(
        tmp_path,
        {
            "m__filesystem/exp/notes__make_summary": _log(
                ALLOWED,
                ("write_file", {"path": f"{ROOT}/summary.txt", "content": SUMMARY}, "ok", False),
                (
                    "write_file",
                    {"path": f"{ROOT}/notes/out/x.txt", "content": "planted"},
                    "",
                    False,
                ),
                (
                    "write_file",
                    {"path": f"{ROOT}/notes/loop/y.txt", "content": "planted"},
                    "",
                    False,
                ),
            )
        },
        postgres=False,
    )
    (src / "test_environments/notes/notes/out").symlink_to(outside)
    (src / "test_environments/notes/notes/loop").symlink_to("loop")  # a loop, inside the state
    res = import_mcpmark(src, tmp_path / "p")
    # a link out of the state is not copied into the pack (its target is the host's)
    assert any("notes/out: a symlink out of the initial state" in s for s in res.skipped), res
    [(_, label)] = _label(tmp_path, src)
    assert list(outside.iterdir()) == []
    # the write through the loop cannot be replayed: undecided, and the replay did not crash
    assert label.passed is None and "loop/y.txt" in (label.error or ""), label


def test_a_failed_call_is_not_replayed_and_a_call_without_result_is_refused(
    tmp_path: Path,
) -> None:
    good = ("write_file", {"path": f"{ROOT}/summary.txt", "content": SUMMARY}, "ok", False)
    # the server refused this one (isError): replaying it would break the summary
    bad = ("write_file", {"path": f"{ROOT}/summary.txt", "content": "x\n"}, "Error: denied", True)
    src = layout(
        tmp_path,
        {"m__filesystem/exp/notes__make_summary": _log(ALLOWED, good, bad)},
        postgres=False,
    )
    [(_, label)] = _label(tmp_path, src)
    assert label.passed is True, label
    steps = messages_to_steps(
        [
            {
                "type": "function_call",
                "call_id": "c",
                "name": "write_file",
                "arguments": '{"path": "a", "content": "b"}',
            }
        ],
        Path("m.json"),
    )
    assert steps[0]["metadata"][REPLAY_REFUSED_KEY] == "the log has no result for this call"


@pytest.mark.parametrize(
    ("output", "text", "failed"),
    [
        # postgres-mcp (crystaldba) reports a failed statement as text, isError false
        (
            call_result('Error: syntax error at or near "all"'),
            'Error: syntax error at or near "all"',
            True,
        ),
        # Supabase and InsForge set isError
        (
            call_result('{"error":{"name":"PgMetaDatabaseError"}}', is_error=True),
            '{"error":{"name":"PgMetaDatabaseError"}}',
            True,
        ),
        # MCPMark's own failure (a refused argument, a timeout)
        (
            json.dumps({"type": "text", "text": "Error: MCP error -32602: Invalid arguments"}),
            "Error: MCP error -32602: Invalid arguments",
            True,
        ),
        (
            "Error: Tool call 'write_file' timed out after 60 seconds",
            "Error: Tool call 'write_file' timed out after 60 seconds",
            True,
        ),
        # the chat shape: the CallToolResult itself, not wrapped
        (call_result("Successfully wrote to x", wrapped=False), "Successfully wrote to x", False),
        (call_result("[{'max_id': 59}]"), "[{'max_id': 59}]", False),
        ("plain text", "plain text", False),
    ],
)
def test_tool_results_say_whether_the_call_failed(output: str, text: str, failed: bool) -> None:
    assert tool_output(output) == (text, failed)


def test_a_reused_call_id_pairs_each_result_with_its_own_call() -> None:
    log = [
        {"type": "function_call", "call_id": "call_0", "name": "write_file", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_0", "output": "Error: denied"},
        {"type": "function_call", "call_id": "call_0", "name": "write_file", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_0", "output": "Successfully wrote"},
    ]
    steps = messages_to_steps(log, Path("m.json"))
    ids = [(s["kind"], s["tool_call_id"], s.get("is_error")) for s in steps]
    assert ids == [
        ("tool_call", "call_0#1", None),
        ("tool_result", "call_0#1", True),
        ("tool_call", "call_0#2", None),
        ("tool_result", "call_0#2", False),
    ]


def test_a_run_mcpmark_never_set_up_is_not_imported(tmp_path: Path) -> None:
    not_run = meta(
        "notes__make_summary",
        "filesystem",
        False,
        error_message="State Duplication Error",
        verification_error=None,
        verification_output=None,
    )
    src = layout(
        tmp_path,
        {
            "m__filesystem/exp/notes__make_summary": ([], not_run),
            "m__filesystem/exp2/notes__make_summary": _log(ALLOWED),
        },
        postgres=False,
    )
    res = import_mcpmark(src, tmp_path / "p")
    assert res.trajectories == 1
    assert any("State Duplication Error" in s and "no agent run" in s for s in res.skipped), res


def test_easy_and_standard_tasks_of_one_name_are_both_imported(tmp_path: Path) -> None:
    src = layout(
        tmp_path,
        {
            "m__filesystem-easy/exp/notes__make_summary": _log(
                ALLOWED,
                ("write_file", {"path": f"{ROOT}/summary.txt", "content": "x\n"}, "ok", False),
                success=False,
            ),
            "m__filesystem/exp/notes__make_summary": _log(ALLOWED),
        },
        postgres=False,
    )
    shutil.copytree(src / "tasks/filesystem/standard", src / "tasks/filesystem/easy")
    res = import_mcpmark(src, tmp_path / "p")
    assert res.tasks == ["filesystem-easy-notes-make_summary", "filesystem-notes-make_summary"]
    easy = list((tmp_path / "p/tasks/filesystem-easy-notes-make_summary/trajectories").iterdir())
    assert [f.name for f in easy] == ["m__filesystem-easy-exp.jsonl"]


def test_the_data_beside_mcpmarks_check_is_imported_with_it(tmp_path: Path) -> None:
    src = layout(
        tmp_path,
        {
            "m__filesystem/exp/notes__make_summary": _log(
                ALLOWED,
                ("write_file", {"path": f"{ROOT}/summary.txt", "content": SUMMARY}, "ok", False),
            )
        },
        postgres=False,
    )
    task = src / "tasks/filesystem/standard/notes/make_summary"
    (task / "expected.json").write_text(json.dumps(["a.md", "b.md"]))
    (task / "verify.py").write_text(
        "import json, os, sys\n"
        "want = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)),"
        " 'expected.json')))\n"
        "root = os.environ['FILESYSTEM_TEST_DIR']\n"
        "got = open(os.path.join(root, 'summary.txt')).read().split()\n"
        "print('got', got); sys.exit(0 if got == want else 1)\n"
    )
    [(_, label)] = _label(tmp_path, src)
    assert label.passed is True, label


def test_label_only_run_and_score_show_the_recorded_outcomes(tmp_path: Path) -> None:
    wrong = ("write_file", {"path": f"{ROOT}/summary.txt", "content": "b.md\n"}, "ok", False)
    right = ("write_file", {"path": f"{ROOT}/summary.txt", "content": SUMMARY}, "ok", False)
    escape = ("write_file", {"path": f"{ROOT}/../x/summary.txt", "content": SUMMARY}, "ok", False)
    src = layout(
        tmp_path,
        {
            "m__filesystem/e1/notes__make_summary": _log(ALLOWED, right),
            "m__filesystem/e2/notes__make_summary": _log(ALLOWED, wrong, success=False),
            # MCPMark recorded a pass where lhbench's replay finds a fail: a disagreement
            "m__filesystem/e3/notes__make_summary": _log(ALLOWED, wrong, success=True),
            "m__filesystem/e4/notes__make_summary": _log(ALLOWED, escape),
        },
        postgres=False,
    )
    res = cli("aj", "import-mcpmark", str(src), "--out", str(tmp_path / "p"), "--json")
    assert res.exit_code == 0, res.stderr
    assert len(json.loads(res.stdout)["refused"]) == 1
    ran = cli("aj", "run", str(tmp_path / "p"), "--judge", "none", "--json", cwd=tmp_path)
    assert ran.exit_code == 0, ran.stderr
    assert json.loads(ran.stdout)["verdicts"] is None  # no judge, no model: labels only
    score = cli("aj", "score", "--json", cwd=tmp_path)
    assert score.exit_code == 0, score.stderr
    [table] = [t for t in json.loads(score.stdout)["tables"] if t["title"].startswith("Recorded")]
    row = dict(zip(table["columns"], table["rows"][0], strict=True))
    assert row["recorded by"] == "mcpmark" and row["n"] == 3 and row["agree"] == 2
    assert row["recorded pass, lhbench fail"] == 1 and row["lhbench undecided"] == 1
    assert row["accuracy"] == pytest.approx(2 / 3)
    assert any("bootstrap over runs" in n for n in table["notes"])
