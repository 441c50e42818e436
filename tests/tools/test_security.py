import asyncio
import json
import os
import sqlite3
from pathlib import Path

import pytest
from fastmcp import Client

from lhbench.envs import PostgresDatabases
from lhbench.schema import Role, Step, StepKind, Trajectory
from lhbench.tools import build_fs_server, build_sql_server, build_trajectory_server

PG_URL = os.environ.get("LHBENCH_TEST_PG_URL")


def call(server, tool: str, args: dict):
    async def go():
        async with Client(server) as c:
            return await c.call_tool(tool, args, raise_on_error=False)

    return asyncio.run(go())


@pytest.fixture
def env(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "ok.txt").write_text("inside\nline2\nline3\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    (root / "link-file").symlink_to(secret)
    (root / "link-dir").symlink_to(tmp_path)
    return root


FS_ATTACKS = [
    ("read_file", {"path": "../secret.txt"}),
    ("read_file", {"path": "sub/../../secret.txt"}),
    ("read_file", {"path": "/etc/passwd"}),
    ("read_file", {"path": "link-file"}),
    ("read_file", {"path": "link-dir/secret.txt"}),
    ("read_file", {"path": "ok.txt\x00../../secret.txt"}),
    ("list_directory", {"path": ".."}),
    ("list_directory", {"path": "/"}),
    ("directory_tree", {"path": "link-dir"}),
    ("search_files", {"pattern": "*", "path": "../"}),
    ("get_file_info", {"path": "link-file"}),
    ("read_file", {"path": "~/../../etc/passwd"}),
]


@pytest.mark.parametrize(("tool", "args"), FS_ATTACKS)
def test_filesystem_escapes_are_refused(env: Path, tool: str, args: dict) -> None:
    res = call(build_fs_server(env), tool, args)
    text = res.content[0].text
    assert res.is_error, text
    assert "TOP-SECRET" not in text and "root:" not in text
    assert "refused" in text or "no such file" in text


def test_filesystem_tools_read_inside(env: Path) -> None:
    srv = build_fs_server(env)
    assert (
        call(srv, "read_file", {"path": "ok.txt", "start_line": 2, "end_line": 3}).content[0].text
        == "line2\nline3"
    )
    listing = call(srv, "list_directory", {}).content[0].text
    assert "[FILE] ok.txt" in listing and "[DIR]  sub" in listing
    # the search does not follow symlinks out of the root
    found = call(srv, "search_files", {"pattern": "*.txt"}).content[0].text
    assert found == "ok.txt"


def _sqlite(tmp_path: Path) -> str:
    db = tmp_path / "x.db"
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE t (a INTEGER)")
    c.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(300)])
    c.commit()
    c.close()
    return f"sqlite:///{db}"


SQL_ATTACKS = [
    "UPDATE t SET a = -1",
    "DELETE FROM t",
    "DROP TABLE t",
    "INSERT INTO t VALUES (999)",
    "CREATE TABLE evil (x INTEGER)",
    "SELECT 1; DELETE FROM t",
    "ALTER TABLE t ADD COLUMN b INTEGER",
]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_sql_writes_fail_in_the_database(tmp_path: Path, backend: str) -> None:
    if backend == "sqlite":
        url = _sqlite(tmp_path)
        attacks = [
            *SQL_ATTACKS,
            "PRAGMA query_only = OFF",
            f"ATTACH DATABASE '{tmp_path / 'other.db'}' AS o",
        ]
        pg = None
    else:
        if not PG_URL:
            pytest.skip("LHBENCH_TEST_PG_URL is not set (CI sets it; see .ci/run)")
        pg = PostgresDatabases(PG_URL)
        url = pg.clone(
            pg.template("CREATE TABLE t (a INTEGER); INSERT INTO t SELECT generate_series(0, 299)")
        )
        attacks = [*SQL_ATTACKS, "SET TRANSACTION READ WRITE", "COMMIT; UPDATE t SET a = -1"]
    try:
        srv = build_sql_server(url)
        escapes = 0
        for q in attacks:
            res = call(srv, "query", {"sql": q})
            after = call(srv, "query", {"sql": "SELECT COUNT(*), MIN(a) FROM t"}).content[0].text
            if not res.is_error and "SET TRANSACTION" not in q:
                escapes += 1
            assert after.splitlines()[1] == "300 | 0", (q, after)
        # SET TRANSACTION itself may be accepted, but a write after it still fails
        res = call(srv, "query", {"sql": "UPDATE t SET a = -1"})
        assert res.is_error
        assert escapes == 0
        capped = (
            call(srv, "query", {"sql": "SELECT a FROM t ORDER BY a", "max_rows": 500})
            .content[0]
            .text
        )
        assert capped.splitlines()[-1].startswith("[more rows left out: showing the first 200]")
        assert call(srv, "list_tables", {}).content[0].text == "t"
    finally:
        if pg is not None:
            pg.drop_all()
    if backend == "sqlite":
        assert not (tmp_path / "other.db").exists()


def test_trajectory_step_viewer(tmp_path: Path) -> None:
    t = Trajectory(
        run_id="r", steps=[Step(index=0, role=Role.USER, kind=StepKind.MESSAGE, content="do it")]
    )
    f = tmp_path / "t.json"
    f.write_text(t.model_dump_json())
    srv = build_trajectory_server(f)
    step = json.loads(call(srv, "view_trajectory_step", {"i": 0}).content[0].text)
    assert step == {"index": 0, "role": "user", "kind": "message", "content": "do it"}
    bad = call(srv, "view_trajectory_step", {"i": 5})
    assert bad.is_error and "steps 0..0" in bad.content[0].text
