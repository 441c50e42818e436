"""The read-only MCP servers doing their job: files, SQL and the trajectory, read inside."""

import asyncio
import json
import sqlite3
from pathlib import Path

from fastmcp import Client

from lhbench.schema import Role, Step, StepKind, Trajectory
from lhbench.tools import build_fs_server, build_sql_server, build_trajectory_server


def call(server, tool: str, args: dict):
    async def go():
        async with Client(server) as c:
            return await c.call_tool(tool, args, raise_on_error=False)

    return asyncio.run(go())


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "ok.txt").write_text("inside\nline2\nline3\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    (root / "link-file").symlink_to(secret)
    return root


def test_filesystem_tools_read_inside(tmp_path: Path) -> None:
    env = _root(tmp_path)
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


def table_db(tmp_path: Path) -> Path:
    """A SQLite file with table t(a, b) of 300 rows: (0, 'v0') .. (299, 'v299')."""
    db = tmp_path / "x.db"
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE t (a INTEGER, b TEXT)")
    c.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"v{i}") for i in range(300)])
    c.commit()
    c.close()
    return db


def test_sql_tool_lists_describes_and_caps_rows(tmp_path: Path) -> None:
    db = table_db(tmp_path)
    srv = build_sql_server(f"sqlite:///{db}")
    assert call(srv, "list_tables", {}).content[0].text == "t"
    assert call(srv, "describe_table", {"table": "t"}).content[0].text == "a, b"
    top = call(srv, "query", {"sql": "SELECT a, b FROM t ORDER BY a LIMIT 2"}).content[0].text
    assert top.splitlines() == ["a | b", "0 | v0", "1 | v1"]
    capped = call(srv, "query", {"sql": "SELECT a FROM t", "max_rows": 500}).content[0].text
    assert capped.splitlines()[-1] == "[more rows left out: showing the first 200]"
    assert len(capped.splitlines()) == 202


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
