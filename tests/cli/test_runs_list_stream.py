"""``lhbench runs list --json`` streams: its first run is printed before the rest are loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from sqlalchemy import event

from lhbench.schema import Label
from lhbench.store import Store
from lhbench.store.tables import RunRow
from tests.cli.helpers import cli
from tests.factories import make_run

N = 1_100


def test_runs_list_json_prints_before_every_run_is_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    with Store.open(url) as store:
        for i in range(N):
            store.save_run(make_run(f"r{i:05d}", versions={"skill": "v1" if i % 2 else "none"}))
        store.save_label(Label(run_id="r00003", passed=True, source="verify:verify.py"))
    loaded = [0]
    at_first_run: list[int] = []

    def bump(*_: object) -> None:
        loaded[0] += 1

    echo = typer.echo

    def watch(message: object = None, *args: object, **kw: object) -> None:
        if not at_first_run and '"id"' in str(message):
            at_first_run.append(loaded[0])
        echo(message, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(typer, "echo", watch)
    event.listen(RunRow, "load", bump)
    try:
        res = cli("runs", "list", "--db", url, "--json", cwd=tmp_path)
    finally:
        event.remove(RunRow, "load", bump)
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert [r["id"] for r in rows] == [f"r{i:05d}" for i in range(N)]
    assert rows[3]["passed"] is True and rows[4]["passed"] is None
    assert rows[1]["versions"] == {"skill": "v1"} and rows[1]["steps"] == 0
    # the first runs reached stdout after a page was loaded, not all N
    assert at_first_run and at_first_run[0] <= 500 < N == loaded[0]
    # the text is what one json.dumps of the whole list prints
    assert res.stdout == json.dumps(rows) + "\n"
