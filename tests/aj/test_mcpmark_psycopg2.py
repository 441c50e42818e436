"""MCPMark PostgreSQL checks written against psycopg2 (as the published ones are) label runs.

The fixture (written here, shaped after MCPMark's PostgreSQL tasks) has a verify.py that
imports psycopg2 and three logged runs: right, wrong, and one that never made the table.
Each replay gets a throwaway database cloned from the task's seed.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from lhbench.api import judge_states_async
from lhbench.config import Settings
from lhbench.ingest.mcpmark import import_mcpmark
from lhbench.store import Store

FIXTURE = Path(__file__).parent / "fixtures" / "mcpmark_psycopg2"
PG_URL = os.environ.get("LHBENCH_TEST_PG_URL")


def test_psycopg2_is_a_dependency_the_checks_can_import() -> None:
    import psycopg2

    assert psycopg2.__version__.startswith("2.")
    assert (
        "import psycopg2"
        in (FIXTURE / "tasks/postgres/standard/ledger/customer_totals/verify.py").read_text()
    )


@pytest.mark.skipif(not PG_URL, reason="LHBENCH_TEST_PG_URL is not set")
def test_psycopg2_verify_labels_postgres_trajectories(tmp_path: Path) -> None:
    imported = import_mcpmark(FIXTURE, tmp_path / "p")
    assert imported.tasks == ["postgres-ledger-customer_totals"] and imported.trajectories == 3
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        asyncio.run(
            judge_states_async(
                store=store,
                settings=Settings(home=tmp_path / "home"),
                pack=str(tmp_path / "p"),
                judge=None,
                postgres_url=PG_URL,
            )
        )
        labels = {lab.run_id: lab for lab in store.list_labels()}
        runs = {r.metadata["trajectory"]: r.id for r in store.list_runs()}
    by_log = {name: labels[rid] for name, rid in runs.items()}
    assert len(by_log) == 3, by_log
    got = {name: (lab.passed, lab.detail or "") for name, lab in by_log.items()}
    passed = sorted(name for name, (ok, _) in got.items() if ok)
    assert len(passed) == 1, got
    details = " ".join(d for _, d in got.values())
    # the failures are the check's own findings, not an import error in the sandbox
    assert "ModuleNotFoundError" not in details and "No module named" not in details, details
    assert "customer_totals matches the orders" in got[passed[0]][1]
    assert any("customer_totals table not found" in d for _, d in got.values()), got
    assert any("expected {7: 20.0, 9: 50.0, 11: 3.25}, got {7: 2.0" in d for _, d in got.values())
