"""Replaying a trajectory's SQL, and a verify script reading the result."""

import os
from pathlib import Path

import pytest

from lhbench.envs import PostgresDatabases, ReplayError, replay_sql, run_verify
from lhbench.envs.sql import dump_parts
from lhbench.schema import REPLAY_REFUSED_KEY, Role, Step, StepKind, Trajectory

PG_URL = os.environ.get("LHBENCH_TEST_PG_URL")


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


def test_a_plain_dump_splits_into_sql_and_copy_blocks() -> None:
    dump = (
        "-- Name: t; Type: TABLE; Owner: -\n\\restrict k1\nCREATE TABLE t (a int, b text);\n"
        "COPY public.t (a, b) FROM stdin;\n1\tx;y\n2\t\\N\n\\.\n"
        "SELECT 1;\n\\unrestrict k1\n"
    )
    assert list(dump_parts(dump)) == [
        ("-- Name: t; Type: TABLE; Owner: -\nCREATE TABLE t (a int, b text);\n", None),
        ("COPY public.t (a, b) FROM stdin", "1\tx;y\n2\t\\N\n"),
        ("SELECT 1;\n", None),
    ]
    with pytest.raises(ReplayError, match="no closing"):
        list(dump_parts("COPY t (a) FROM stdin;\n1\n"))
    with pytest.raises(ReplayError, match=r"psql command \(\\connect\)"):
        list(dump_parts("\\connect other\nSELECT 1;\n"))


@pytest.mark.skipif(not PG_URL, reason="LHBENCH_TEST_PG_URL is not set")
def test_postgres_replay_runs_each_call_whole(tmp_path: Path) -> None:
    import psycopg

    assert PG_URL is not None
    dump = (
        "-- a comment; with a quote: don't\nCREATE TABLE public.t (a integer, s text);\n"
        "COPY public.t (a, s) FROM stdin;\n1\tone\n2\t50%\n\\.\n"
    )
    traj = _traj(
        (
            "apply_migration",
            {
                "name": "fn",
                "query": "CREATE FUNCTION public.dbl(x int) RETURNS int AS $$ BEGIN "
                "RETURN x * 2; END; $$ LANGUAGE plpgsql; UPDATE t SET a = public.dbl(a);",
            },
        ),
        ("run-raw-sql", {"query": "UPDATE t SET s = s || ':done' WHERE s LIKE '%'"}),
        (
            "execute_sql",
            {"sql": "INSERT INTO t VALUES (7, 'x'); INSERT INTO t VALUES ('bad', 'y')"},
        ),
        ("execute_sql", {"sql": "BEGIN; INSERT INTO t VALUES (9, 'open')"}),
        ("execute_sql", {"sql": "DELETE FROM t"}),
    )
    traj.steps[8].metadata = {REPLAY_REFUSED_KEY: "refused by the importer"}
    pg = PostgresDatabases(PG_URL)
    try:
        state, report = replay_sql(dump, traj, tmp_path / "unused", postgres=pg)
        with psycopg.connect(state.url) as c:
            rows = sorted(c.execute("SELECT a, s FROM t").fetchall())
    finally:
        pg.drop_all()
    # the failing call is rolled back whole (no 7), the open BEGIN was committed (9)
    assert rows == [(2, "one:done"), (4, "50%:done"), (9, "open")]
    assert report.applied == 3
    assert report.skipped[0].endswith("execute_sql: refused by the importer")
    assert "invalid input syntax" in report.skipped[1]
