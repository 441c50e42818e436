"""An MCPMark-layout folder (written here from the published format) imported and labelled."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from lhbench.api import judge_states_async
from lhbench.config import Settings
from lhbench.errors import PackError
from lhbench.ingest.mcpmark import import_mcpmark, messages_to_steps
from lhbench.packs import load_pack
from lhbench.store import Store
from tests.cli.helpers import cli

FIXTURE = Path(__file__).parent / "fixtures" / "mcpmark"
PG_URL = os.environ.get("LHBENCH_TEST_PG_URL")


def label_runs(tmp_path: Path, pack: Path, postgres: str | None) -> dict[str, tuple[bool, object]]:
    """Run id -> (label from MCPMark's verify.py, MCPMark's own recorded success)."""
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        settings = Settings(home=tmp_path / "home")
        asyncio.run(
            judge_states_async(
                store=store, settings=settings, pack=str(pack), judge=None, postgres_url=postgres
            )
        )
        labels = {lab.run_id: lab for lab in store.list_labels()}
        out = {}
        for run in store.list_runs():
            lab = labels.get(run.id)
            assert lab is not None and lab.passed is not None, (run.id, lab)
            # MCPMark's recorded outcome is stored with the run, beside lhbench's label
            recorded = run.recorded_outcome
            assert recorded is not None and recorded.source.startswith("mcpmark:results/"), run
            out[run.id] = (lab.passed, recorded.passed)
        return out


def test_import_writes_a_pack_with_mcpmark_tasks(tmp_path: Path) -> None:
    res = cli("aj", "import-mcpmark", str(FIXTURE), "--out", str(tmp_path / "p"), "--json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["tasks"] == ["filesystem-notes-make_summary", "postgres-shop-raise_prices"]
    assert doc["trajectories"] == 4 and doc["skipped"] == []
    pack = load_pack(tmp_path / "p")
    fs = pack.task("filesystem-notes-make_summary")
    assert fs.environment.kind == "filesystem" and fs.tags.subdomain == "filesystem"
    assert "summary.txt" in (fs.instruction or "")
    assert pack.task("postgres-shop-raise_prices").environment.database == "seed.sql"
    # MCPMark's verify.py is kept unchanged beside the protocol wrapper
    src = FIXTURE / "tasks/filesystem/standard/notes/make_summary/verify.py"
    copied = tmp_path / "p/tasks/filesystem-notes-make_summary/mcpmark/verify.py"
    assert copied.read_bytes() == src.read_bytes()


def test_mcpmark_verify_labels_filesystem_trajectories(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(FIXTURE, src)
    shutil.rmtree(src / "tasks" / "postgres")
    import_mcpmark(src, tmp_path / "p")
    got = label_runs(tmp_path, tmp_path / "p", None)
    assert len(got) == 2
    assert sorted(lab for lab, _ in got.values()) == [False, True]
    assert all(lab == success for lab, success in got.values())


@pytest.mark.skipif(not PG_URL, reason="LHBENCH_TEST_PG_URL is not set")
def test_mcpmark_verify_labels_postgres_trajectories(tmp_path: Path) -> None:
    import_mcpmark(FIXTURE, tmp_path / "p")
    got = label_runs(tmp_path, tmp_path / "p", PG_URL)
    assert len(got) == 4
    assert all(lab == success for lab, success in got.values()), got
    pg = {k: v for k, v in got.items() if "postgres" in k}
    assert sorted(lab for lab, _ in pg.values()) == [False, True]


def test_messages_in_both_published_shapes() -> None:
    call = {"name": "read_file", "arguments": '{"path": "a"}'}
    chat = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": call}]},
        {"role": "tool", "tool_call_id": "c", "content": "x"},
    ]
    items = [
        {"type": "function_call", "call_id": "c", "name": "read_file", "arguments": "not json"},
        {"type": "function_call_output", "call_id": "c", "output": "x"},
    ]
    steps = messages_to_steps(chat, Path("m.json"))
    assert [s["kind"] for s in steps] == ["message", "tool_call", "tool_result"]
    assert steps[1]["tool_input"] == {"path": "a"}
    assert messages_to_steps(items, Path("m.json"))[0]["tool_input"] == {"raw": "not json"}


@pytest.mark.parametrize(
    ("messages", "what"),
    [({"role": "user"}, "JSON list"), ([1], "not an object"), ([{"role": "robot"}], "unknown")],
)
def test_bad_messages_name_file_and_place(messages: object, what: str) -> None:
    with pytest.raises(PackError, match=what) as exc:
        messages_to_steps(messages, Path("run/messages.json"))
    assert "run/messages.json" in str(exc.value)


def test_missing_initial_state_is_named(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(FIXTURE, src)
    shutil.rmtree(src / "test_environments")
    # MCPMark downloads states per category: the tasks that have one are imported, the
    # others (and their logs) are skipped with what is missing
    res = import_mcpmark(src, tmp_path / "p")
    assert res.tasks == ["postgres-shop-raise_prices"] and res.trajectories == 2
    assert any("test_environments/notes is missing" in s for s in res.skipped), res.skipped
    logs = [s for s in res.skipped if s.startswith("exp1/fixture-model__filesystem")]
    assert len(logs) == 2 and all("test_environments/notes" in s for s in logs), logs
    shutil.rmtree(src / "postgres_state")
    with pytest.raises(PackError, match="no task could be imported"):
        import_mcpmark(src, tmp_path / "p")


def test_recorded_outcome_is_mcpmarks_verdict_or_none() -> None:
    from lhbench.ingest.mcpmark import recorded_outcome
    from lhbench.schema import RECORDED_OUTCOME_KEY, Run

    verified = {
        "execution_result": {
            "success": False,
            "error_message": "Max turns (100) exceeded",
            "verification_error": "x",
            "verification_output": "a\nFAIL",
        }
    }
    got = recorded_outcome(verified, "results/r")
    assert got is not None and got.passed is False
    assert got.detail == "Max turns (100) exceeded | FAIL"
    assert got.source == "mcpmark:results/r/meta.json#execution_result.success"
    setup = {
        "execution_result": {
            "success": False,
            "error_message": "State Duplication Error",
            "verification_error": None,
            "verification_output": None,
        }
    }
    none = recorded_outcome(setup, "results/r")
    assert none is not None and none.passed is None and "did not verify" in none.detail
    assert recorded_outcome({"execution_result": {"success": "yes"}}, "r") is None
    assert recorded_outcome([], "r") is None
    run = Run(
        id="r",
        pack_id="p",
        task_id="t",
        harness="h",
        model="m",
        metadata={RECORDED_OUTCOME_KEY: {"passed": "maybe", "source": ""}},
    )
    assert run.recorded_outcome is None  # a malformed claim is no claim
