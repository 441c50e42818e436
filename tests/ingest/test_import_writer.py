"""A large import inserts through the step writer process: same steps, failures the run's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lhbench.schema import RunStatus
from lhbench.store import Store
from lhbench.store.bulk import StepAppender
from tests.ingest.helpers import import_paths

SESSION = "0b9e6f5a-3c1d-4e2f-9a8b-7c6d5e4f3a2b"


def _stream(path: Path, turns: int) -> Path:
    """A Claude Code stream-json transcript of ``turns`` (text, tool call, result) turns."""
    lines: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "session_id": SESSION, "model": "claude-opus-4-6"}
    ]
    for i in range(turns):
        mid = f"msg_{i:06d}"
        usage = {"input_tokens": 10 + i % 7, "output_tokens": 3, "cache_read_input_tokens": 5}
        ts = f"2026-03-02T10:{(i // 60) % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"
        for block in (
            {"type": "text", "text": f"turn {i}"},
            {"type": "tool_use", "id": f"toolu_{i:06d}", "name": "Bash", "input": {"n": i}},
        ):
            msg = {"id": mid, "role": "assistant", "content": [block], "usage": usage}
            lines.append({"type": "assistant", "message": msg, "timestamp": ts})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{i:06d}", "content": f"out {i}"}
        user = {"role": "user", "content": [result]}
        lines.append({"type": "user", "message": user, "timestamp": ts})
    lines.append({"type": "result", "subtype": "success", "num_turns": turns, "is_error": False})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


@pytest.fixture
def writer_use(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of batches each appender handed to its writer process."""
    used: list[int] = []
    close = StepAppender.close

    def spy(self: StepAppender, *, raise_errors: bool = True) -> None:
        try:
            close(self, raise_errors=raise_errors)
        finally:
            used.append(self.writer_batches)

    monkeypatch.setattr(StepAppender, "close", spy)
    return used


def _steps(store: Store, run_id: str) -> list[Any]:
    return [s.model_dump() for s in store.get_trajectory(run_id).steps]


def test_a_large_import_through_the_writer_stores_what_the_in_process_path_stores(
    tmp_path: Path, writer_use: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _stream(tmp_path / "big.jsonl", 4000)  # 12,000 steps: the third batch goes out
    with Store.open(f"sqlite:///{tmp_path / 'a.db'}") as store:
        res = import_paths(store, [src])
        assert res.failed == [] and res.steps == 12_000 and writer_use == [1]
        (run_id,) = res.run_ids
        run = store.get_run(run_id)
        got = _steps(store, run_id)
    assert run.status == RunStatus.COMPLETED and run.metadata["import"] == "done"
    assert run.usage.requests == 4000 and [s["index"] for s in got] == list(range(12_000))

    inline = Store.step_appender
    monkeypatch.setattr(
        Store,
        "step_appender",
        lambda self, run_id, **kw: inline(self, run_id, writer_after_rows=None),
    )
    with Store.open(f"sqlite:///{tmp_path / 'b.db'}") as other:
        res_b = import_paths(other, [src])
        assert writer_use == [1, 0]
        assert _steps(other, res_b.run_ids[0]) == got
        assert other.get_run(res_b.run_ids[0]).usage == run.usage


def test_a_batch_failing_in_the_writer_fails_the_run_and_keeps_a_prefix(
    tmp_path: Path, writer_use: list[int]
) -> None:
    src = _stream(tmp_path / "big.jsonl", 5000)  # 15,000 steps
    with Store.open(f"sqlite:///{tmp_path / 'a.db'}") as store:
        with store.engine.begin() as conn:  # the writer's batch (the third) fails
            conn.exec_driver_sql(
                "CREATE TRIGGER boom BEFORE INSERT ON steps WHEN NEW.idx = 12345 "
                "BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
            )
        res = import_paths(store, [src])
        assert writer_use == [1]
        (error,) = res.failed
        assert "disk on fire" in error
        (run,) = store.list_runs()
        assert run.status == RunStatus.FAILED and "disk on fire" in (run.error or "")
        assert "import stopped" in (run.error or "")
        idx = [s["index"] for s in _steps(store, run.id)]
        # the two in-process batches (~5,000 rows each); nothing of the failed one or after it
        assert idx == list(range(len(idx))) and 10_000 <= len(idx) < 12_345
        with store.engine.begin() as conn:
            conn.exec_driver_sql("DROP TRIGGER boom")
        again = import_paths(store, [src])  # the failed import is redone whole
        assert again.failed == [] and again.steps == 15_000
        assert store.get_run(run.id).status == RunStatus.COMPLETED


def test_a_large_file_goes_to_the_writer_from_its_first_batch(
    tmp_path: Path, writer_use: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lhbench.jobs import imports

    small = _stream(tmp_path / "small.jsonl", 4000)  # 12,000 steps in three batches
    size = small.stat().st_size
    with Store.open(f"sqlite:///{tmp_path / 'a.db'}") as store:
        # under the size: the first 10,000 rows in-process, the third batch to the writer
        monkeypatch.setattr(imports, "_WRITER_FROM_START", size + 1)
        first = import_paths(store, [small])
        # at the size: every batch to the writer, from the first
        monkeypatch.setattr(imports, "_WRITER_FROM_START", size)
        other = tmp_path / "other.jsonl"
        other.write_bytes(small.read_bytes().replace(b"turn 0", b"turn X"))
        second = import_paths(store, [other])
        assert writer_use == [1, 3]
        assert first.steps == second.steps == 12_000
        a, b = (_steps(store, r.run_ids[0]) for r in (first, second))
        assert [s["index"] for s in b] == list(range(12_000))
        assert [{**s, "content": None} for s in a] == [{**s, "content": None} for s in b]


def test_a_large_file_of_many_runs_starts_no_writer_per_run(
    tmp_path: Path, writer_use: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # an Inspect log's samples, or sessions split: a run each, each far under 10,000 steps;
    # a writer process from the first batch would be a process per run
    from lhbench.jobs import imports

    monkeypatch.setattr(imports, "_WRITER_FROM_START", 1)  # every file counts as large
    fixtures = Path(__file__).parent / "fixtures"
    with Store.open(f"sqlite:///{tmp_path / 'a.db'}") as store:
        inspect = import_paths(store, [fixtures / "inspect_log.json"])
        split = import_paths(store, [fixtures / "claude_code_resumed.jsonl"], split_sessions=True)
        assert inspect.runs == 2 and split.runs >= 2 and not inspect.failed + split.failed
        assert writer_use == [0] * (inspect.runs + split.runs)
        one = import_paths(store, [fixtures / "claude_code_stream.jsonl"])  # one run: at once
        assert one.runs == 1 and writer_use[-1] == 1
