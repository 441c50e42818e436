"""No silent mislabelling: versions checked against the pack, wrong imports fixable."""

import json
from pathlib import Path

import pytest

from lhbench.store import Store
from tests.cli.helpers import cli
from tests.factories import make_grade, make_run

FIX = Path(__file__).parent.parent / "ingest" / "fixtures"


@pytest.mark.parametrize(
    ("versions", "says"),
    [
        ("skill=v7", "available: default, none, v1"),
        ("skil=v1", "known: prompt, skill"),
        ("skill=../../etc", "no such skill version"),
        ("prompt=v9", "available: v0"),
    ],
)
def test_unknown_version_keys_and_values_exit_2_naming_what_exists(
    tmp_path: Path, versions: str, says: str
) -> None:
    db = f"sqlite:///{tmp_path / 'v.db'}"
    res = cli(
        "run",
        "lhbench-samples",
        "--model",
        "openai:x@http://127.0.0.1:9/v1",
        "--versions",
        versions,
        "--db",
        db,
    )
    assert res.exit_code == 2, res.stdout
    assert says in res.stderr
    with Store.open(db) as store:
        assert store.list_runs() == []  # nothing was recorded under a wrong tag


def test_a_wrong_format_does_not_block_the_right_one_and_replace_redoes_an_import(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'i.db'}"
    src = FIX / "codex_exec.jsonl"
    wrong = cli("import", "gemini-cli", str(src), "--db", db, "--json")
    assert wrong.exit_code == 2
    doc = json.loads(wrong.stdout)
    assert doc["runs"] == 0 and len(doc["failed_files"]) == 1
    assert "another format" in doc["failed_files"][0]
    right = cli("import", "auto", str(src), "--db", db, "--json")
    assert right.exit_code == 0 and json.loads(right.stdout)["runs"] == 1
    with Store.open(db) as store:
        [run] = store.list_runs()
        store.save_grade(make_grade(run.id, key="g" * 16))
    # the same file again: a no-op; with --replace: imported again, its grades gone with it
    assert json.loads(cli("import", "auto", str(src), "--db", db, "--json").stdout)["runs"] == 0
    again = json.loads(cli("import", "auto", str(src), "--db", db, "--replace", "--json").stdout)
    assert again["runs"] == 1
    with Store.open(db) as store:
        assert [r.id for r in store.list_runs()] == [run.id] and store.list_grades() == []


def test_runs_rm_removes_a_run_and_everything_about_it(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    with Store.open(db) as store:
        store.save_run(make_run("keep"))
        store.save_run(make_run("drop"))
        store.save_grade(make_grade("drop", key="d" * 16))
        store.save_grade(make_grade("keep", key="k" * 16))
    res = cli("runs", "rm", "drop", "--db", db)
    assert res.exit_code == 0 and "removed drop (1 grades)" in res.stdout
    with Store.open(db) as store:
        assert [r.id for r in store.list_runs()] == ["keep"]
        assert [g.run_id for g in store.list_grades()] == ["keep"]
    assert cli("runs", "rm", "nope", "--db", db).exit_code == 2


def test_json_never_holds_nan_and_report_by_task_works_on_tied_scores(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 't.db'}"
    with Store.open(db) as store:
        for i in range(3):  # every run scores the same: bootstrap bounds equal the mean
            store.save_run(make_run(f"r{i}", task_id="t1"))
            store.save_grade(make_grade(f"r{i}", scores=(3, 3, 3, 3), key=f"key-{i}" * 4))
    for by in ("task", "versions.skill", "harness,model,versions.skill"):
        res = cli("report", "--db", db, "--by", by, "--out", str(tmp_path / by))
        assert res.exit_code == 0, res.stderr
        assert (tmp_path / by / "report.html").is_file()
    # a judge that cannot be reached leaves runs without a score: null in JSON, never NaN
    models = {"j": {"model": "openai:j", "base_url": "http://127.0.0.1:9/v1", "max_retries": 0}}
    res = cli(
        "judge",
        "--pack",
        "pack",
        "--rubric",
        "figma-to-code",
        "--panel",
        "j",
        "--db",
        db,
        "--json",
        env={"LHBENCH_MODELS": json.dumps(models)},
    )
    assert res.exit_code == 0, res.stderr
    assert "NaN" not in res.stdout
    doc = json.loads(res.stdout)
    assert doc["failed"] == 3 and doc["failures"] == {"connection error": 3}
    assert {r["mean"] for r in doc["runs"]} == {None}
