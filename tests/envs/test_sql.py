"""Replaying a trajectory's SQL, and a verify script reading the result."""

from pathlib import Path

from lhbench.envs import replay_sql, run_verify
from lhbench.schema import Role, Step, StepKind, Trajectory


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


def test_sql_replay_and_verify_script(tmp_path: Path) -> None:
    dump = "CREATE TABLE t (a INTEGER);\nINSERT INTO t VALUES (1), (2);\n"
    traj = _traj(
        ("execute_sql", {"sql": "UPDATE t SET a = a * 10; INSERT INTO t VALUES (3)"}),
        ("execute_sql", {"sql": "DELETE FROM t"}),
        failed=(1,),
    )
    state, report = replay_sql(dump, traj, tmp_path / "s.db")
    assert report.applied == 2
    script = tmp_path / "verify.py"
    script.write_text(
        "import argparse, json, sys\nfrom lhbench.envs.checks import sql_rows\n"
        "ap = argparse.ArgumentParser(); ap.add_argument('--db'); url = ap.parse_args().db\n"
        "got = sorted(r[0] for r in sql_rows(url, 'SELECT a FROM t'))\n"
        "print(json.dumps({'detail': str(got)})); sys.exit(0 if got == [3, 10, 20] else 1)\n"
    )
    res = run_verify(script, db_url=state.url)
    assert res.passed and res.detail == "[3, 10, 20]"
