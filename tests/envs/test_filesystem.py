"""Replaying a trajectory's file operations onto a copy of the initial state."""

from pathlib import Path

from lhbench.envs import replay_filesystem
from lhbench.schema import REPLAY_REFUSED_KEY, Role, Step, StepKind, Trajectory


def _traj(*calls: tuple[str, dict], failed: tuple[int, ...] = ()) -> Trajectory:
    steps = []
    for n, (name, args) in enumerate(calls):
        steps.append(
            Step(
                index=2 * n,
                role=Role.ASSISTANT,
                kind=StepKind.TOOL_CALL,
                tool_name=name,
                tool_call_id=f"c{n}",
                tool_input=args,
            )
        )
        steps.append(
            Step(
                index=2 * n + 1,
                role=Role.TOOL,
                kind=StepKind.TOOL_RESULT,
                tool_call_id=f"c{n}",
                is_error=n in failed,
            )
        )
    return Trajectory(run_id="t", steps=steps)


def test_replay_skips_failed_calls_and_escapes(tmp_path: Path) -> None:
    initial = tmp_path / "init"
    initial.mkdir()
    (initial / "a.txt").write_text("one\n")
    outside = tmp_path / "outside.txt"
    traj = _traj(
        ("write_file", {"path": "b.txt", "content": "two"}),
        ("write_file", {"path": "c.txt", "content": "never"}),
        ("write_file", {"path": "../outside.txt", "content": "escaped"}),
        ("edit_file", {"path": "a.txt", "edits": [{"oldText": "one", "newText": "uno"}]}),
        ("move_file", {"source": "b.txt", "destination": "d/b.txt"}),
        failed=(1,),
    )
    report = replay_filesystem(initial, traj, tmp_path / "state")
    state = tmp_path / "state"
    assert (state / "a.txt").read_text() == "uno\n" and (state / "d" / "b.txt").read_text() == "two"
    assert not (state / "c.txt").exists() and not outside.exists()
    assert report.applied == 3 and len(report.skipped) == 1 and "climbs out" in report.skipped[0]
    assert (initial / "a.txt").read_text() == "one\n"  # the initial state is untouched


def test_replay_skips_what_it_cannot_apply_and_says_why(tmp_path: Path) -> None:
    initial = tmp_path / "init"
    (initial / "d").mkdir(parents=True)
    (initial / "d" / "loop").symlink_to("loop")
    traj = _traj(
        ("write_file", {"path": "ok.txt", "content": "1"}),
        ("write_file", {"path": "/home/u/.mcpmark_backups/backup_x/a.txt", "content": "2"}),
        ("write_file", {"path": "d\\..\\..\\b.txt", "content": "3"}),
        ("write_file", {"path": "d/loop/c.txt", "content": "4"}),
        ("create_directory", {"path": "e"}),
    )
    # an importer marks a call it could not map into the task root: the replay skips it
    traj.steps[2].metadata = {REPLAY_REFUSED_KEY: "path leaves the task root"}
    report = replay_filesystem(initial, traj, tmp_path / "state")
    assert report.applied == 2 and (tmp_path / "state" / "ok.txt").read_text() == "1"
    assert [s.split(": ", 1)[1] for s in report.skipped] == [
        "path leaves the task root",
        "path 'd\\\\..\\\\..\\\\b.txt' is Windows-style; it cannot be replayed here",
        "Symlink loop from '" + str(tmp_path / "state" / "d" / "loop" / "c.txt") + "'",
    ]
    assert not list(tmp_path.glob("*.txt")) and not (tmp_path / "state" / "b.txt").exists()
