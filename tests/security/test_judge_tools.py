"""The judge's tools (files, SQL, trajectory) asked to do what a judge must never do."""

import asyncio
import os
import sqlite3
from pathlib import Path

import pytest
from fastmcp import Client

from lhbench.envs import PostgresDatabases
from lhbench.tools import build_fs_server, build_sql_server
from tests.security.helpers import bounded

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


def _sqlite(tmp_path: Path) -> str:
    db = tmp_path / "x.db"
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE t (a INTEGER)")
    c.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(300)])
    c.commit()
    c.close()
    return f"sqlite:///{db}"


def _intact(srv) -> None:
    after = call(srv, "query", {"sql": "SELECT COUNT(*), MIN(a) FROM t"}).content[0].text
    assert after.splitlines()[1] == "300 | 0", after


@pytest.fixture
def sqlite_tool(tmp_path: Path):
    return build_sql_server(_sqlite(tmp_path))


@pytest.fixture
def pg_tool():
    """The judge's SQL tool on a replayed PostgreSQL state, as the judge gets it."""
    if not PG_URL:
        pytest.skip("LHBENCH_TEST_PG_URL is not set (CI sets it; see .ci/run)")
    pg = PostgresDatabases(PG_URL, statement_timeout_ms=2000)
    try:
        url = pg.clone(
            pg.template("CREATE TABLE t (a INTEGER); INSERT INTO t SELECT generate_series(0, 299)")
        )
        database = url.rsplit("/", 1)[-1]
        yield build_sql_server(pg.reader_url(database))
    finally:
        pg.drop_all()


WRITES = {
    "update": "UPDATE t SET a = -1",
    "delete": "DELETE FROM t",
    "drop_table": "DROP TABLE t",
    "insert": "INSERT INTO t VALUES (999)",
    "create_table": "CREATE TABLE evil (x INTEGER)",
    "stacked_statements": "SELECT 1; DELETE FROM t",
    "alter_table": "ALTER TABLE t ADD COLUMN b INTEGER",
}


@pytest.mark.parametrize("sql", list(WRITES.values()), ids=list(WRITES))
def test_sqlite_judge_tool_writing(sqlite_tool, sql: str) -> None:
    with bounded(30):
        res = call(sqlite_tool, "query", {"sql": sql})
    assert res.is_error
    _intact(sqlite_tool)


@pytest.mark.parametrize("sql", list(WRITES.values()), ids=list(WRITES))
def test_postgres_judge_tool_writing(pg_tool, sql: str) -> None:
    with bounded(30):
        res = call(pg_tool, "query", {"sql": sql})
    assert res.is_error
    _intact(pg_tool)


def test_sqlite_judge_tool_attaching_a_file_elsewhere(sqlite_tool, tmp_path: Path) -> None:
    target = tmp_path / "planted.db"
    with bounded(30):
        res = call(sqlite_tool, "query", {"sql": f"ATTACH DATABASE '{target}' AS o"})
    assert res.is_error and not target.exists()


def test_sqlite_judge_tool_vacuum_into_a_file_elsewhere(sqlite_tool, tmp_path: Path) -> None:
    target = tmp_path / "copy.db"
    with bounded(30):
        res = call(sqlite_tool, "query", {"sql": f"VACUUM INTO '{target}'"})
    assert res.is_error and not target.exists()


def test_sqlite_judge_tool_fts3_tokenizer_pointer_leak(sqlite_tool) -> None:
    # fts3_tokenizer('simple') returns a pointer; handing one back crashes the process
    with bounded(30):
        leak = call(sqlite_tool, "query", {"sql": "SELECT hex(fts3_tokenizer('simple'))"})
        crash = call(
            sqlite_tool, "query", {"sql": "SELECT fts3_tokenizer('simple', x'4141414141414141')"}
        )
    assert leak.is_error and crash.is_error and "not authorized" in crash.content[0].text


def test_sqlite_judge_tool_load_extension(sqlite_tool) -> None:
    with bounded(30):
        res = call(sqlite_tool, "query", {"sql": "SELECT load_extension('/tmp/evil.so')"})
    assert res.is_error


def test_sqlite_judge_tool_zeroblob_bomb(sqlite_tool) -> None:
    with bounded(30, mb=200):
        res = call(sqlite_tool, "query", {"sql": "SELECT length(zeroblob(400000000))"})
        res2 = call(sqlite_tool, "query", {"sql": "SELECT randomblob(400000000)"})
    assert res.is_error and res2.is_error and "too big" in res.content[0].text


def test_sqlite_judge_tool_endless_recursive_query(sqlite_tool) -> None:
    sql = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r"
    with bounded(30):
        res = call(sqlite_tool, "query", {"sql": sql})
    assert res.is_error and "interrupted" in res.content[0].text


def test_sqlite_judge_tool_turning_query_only_off(sqlite_tool) -> None:
    with bounded(30):
        off = call(sqlite_tool, "query", {"sql": "PRAGMA query_only = OFF"})
        schema = call(sqlite_tool, "query", {"sql": "PRAGMA writable_schema = ON"})
        write = call(sqlite_tool, "query", {"sql": "DELETE FROM t"})
    assert off.is_error and schema.is_error and write.is_error
    _intact(sqlite_tool)


def test_judge_tool_huge_values_and_rows_are_cut_and_say_so(sqlite_tool) -> None:
    with bounded(30, mb=200):
        wide = call(sqlite_tool, "query", {"sql": "SELECT printf('%.*c', 5000000, 'x')"})
        many = call(
            sqlite_tool,
            "query",
            {"sql": "SELECT printf('%.*c', 1500, 'y') FROM t", "max_rows": 200},
        )
    text = wide.content[0].text
    assert len(text) < 10_000 and "[value cut: 5000000 characters]" in text
    rows = many.content[0].text
    assert len(rows) <= 70_000 and "[output cut at" in rows


def test_postgres_judge_tool_set_transaction_read_write(pg_tool) -> None:
    with bounded(30):
        res = call(
            pg_tool, "query", {"sql": "SET TRANSACTION READ WRITE; INSERT INTO t VALUES (5)"}
        )
        res2 = call(pg_tool, "query", {"sql": "COMMIT; BEGIN READ WRITE; DELETE FROM t"})
        res3 = call(
            pg_tool,
            "query",
            {"sql": "SET default_transaction_read_only = off; UPDATE t SET a = 1"},
        )
    assert res.is_error and res2.is_error and res3.is_error
    _intact(pg_tool)


def test_postgres_judge_tool_copy_to_program(pg_tool, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    with bounded(30):
        res = call(pg_tool, "query", {"sql": f"COPY t TO PROGRAM 'touch {marker}'"})
    assert res.is_error and not marker.exists()


def test_postgres_judge_tool_reading_server_files(pg_tool) -> None:
    with bounded(30):
        a = call(pg_tool, "query", {"sql": "SELECT pg_read_file('/etc/passwd')"})
        b = call(pg_tool, "query", {"sql": "SELECT lo_import('/etc/passwd')"})
        c = call(pg_tool, "query", {"sql": "SELECT * FROM pg_ls_dir('.')"})
    for r in (a, b, c):
        assert r.is_error and "root:" not in r.content[0].text


def test_postgres_judge_tool_becoming_superuser(pg_tool) -> None:
    with bounded(30):
        a = call(pg_tool, "query", {"sql": "SET ROLE postgres"})
        b = call(
            pg_tool, "query", {"sql": "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"}
        )
    assert a.is_error
    assert b.content[0].text.splitlines()[1] == "False"


def test_postgres_judge_tool_stalling_with_pg_sleep(pg_tool) -> None:
    with bounded(20):
        res = call(pg_tool, "query", {"sql": "SELECT pg_sleep(600)"})
    assert res.is_error and "timeout" in res.content[0].text


def test_postgres_judge_tool_memory_hungry_sort(pg_tool) -> None:
    sql = "SELECT g FROM generate_series(1, 50000000) g ORDER BY g DESC LIMIT 1"
    with bounded(30):
        res = call(pg_tool, "query", {"sql": sql})
    # work_mem spills the sort to disk, temp_file_limit or the timeout stops it
    assert res.is_error


def test_sandboxed_state_worker_refuses_every_escape(env: Path, tmp_path: Path) -> None:
    """The state's tool worker exactly as the agent judge starts it, in the sandbox."""
    from pydantic_ai import ModelRetry

    from lhbench.judges import StateRef, VerdictItem, VerdictJudge
    from lhbench.judges.tool_worker import ToolWorker
    from lhbench.models import resolve_model
    from lhbench.schema import Run, Trajectory

    spec = resolve_model("openai:judge@http://127.0.0.1:9/v1", {})
    judge = VerdictJudge(object(), spec, agentic=True)  # type: ignore[arg-type]  # never asked
    traj = tmp_path / "trajectory.json"
    traj.write_text(Trajectory(run_id="r").model_dump_json())
    run = Run(id="r", pack_id="p", task_id="t", harness="fixture", model="m")
    item = VerdictItem(run, None, Trajectory(run_id="r"), StateRef("s", env, None, traj))
    [prepared] = judge._tool_commands(item)
    assert prepared.backend != "none" and "lhbench.tools.worker" in prepared.argv

    async def go() -> list[str]:
        worker = ToolWorker(prepared, tmp_path / "tools.log", start_timeout=120)
        texts = []
        async with worker as toolset:
            assert {"read_file", "view_trajectory_step"} <= set(toolset.tools)
            assert not set(toolset.tools) & {"write_file", "query", "fetch"}
            assert "inside" in await worker.call("read_file", {"path": "ok.txt"})
            for tool, args in FS_ATTACKS:
                with pytest.raises(ModelRetry) as refused:
                    await worker.call(tool, args)
                texts.append(str(refused.value))
        return texts

    try:
        texts = asyncio.run(go())
    finally:
        prepared.close()
    for text in texts:
        assert "TOP-SECRET" not in text and "root:" not in text
        assert "refused" in text or "no such file" in text, text
