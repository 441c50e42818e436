"""A command imports only what it uses (issue 26 item 4), guarded by module lists, not timings.

Each case runs the console entry point in a fresh interpreter and reads ``sys.modules``
after it: ``lhbench --help`` loads no database or model library, ``lhbench import`` no agent
stack, ``lhbench report`` no model stack. ``bench/startup.py`` measures the seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lhbench.schema import (
    DimensionScore,
    Grade,
    JudgeIdentity,
    JudgeKind,
    Label,
    Scale,
    TierKind,
    grade_key,
)
from lhbench.store import Store
from tests.cli.helpers import cli

FIXTURE = Path(__file__).parents[1] / "ingest" / "fixtures" / "claude_code_session.jsonl"

# What a command runs in a child: main() as the console script calls it, then the loaded
# modules (of those asked about) to a file, whatever the exit code.
_CHILD = """
import json, sys
out, watched, argv = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
sys.argv = ["lhbench", *argv]
from lhbench.cli import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 1
with open(out, "w") as f:
    json.dump({"code": code, "loaded": sorted(m for m in watched if m in sys.modules)}, f)
"""

# Libraries that cost tenths of a second each; the agent and judge stacks sit on pydantic-ai.
HEAVY = [
    "alembic",
    "fastapi",
    "httpx",
    "lhbench.harness.runner",
    "lhbench.judges.base",
    "lhbench.models.runtime",
    "matplotlib",
    "matplotlib.figure",
    "matplotlib.pyplot",
    "numpy",
    "pydantic",
    "pydantic_ai",
    "scipy",
    "scipy.sparse",
    "scipy.special",
    "scipy.stats",
    "sqlalchemy",
]


def _loaded(tmp_path: Path, *argv: str, cwd: Path | None = None) -> list[str]:
    out = tmp_path / "loaded.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LHBENCH_")}
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(out), json.dumps(HEAVY), *argv],
        capture_output=True,
        text=True,
        cwd=cwd or tmp_path,
        env=env,
        timeout=300,
    )
    result = json.loads(out.read_text())
    assert result["code"] == 0, proc.stdout + proc.stderr
    return list(result["loaded"])


@pytest.fixture(scope="module")
def empty_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty store file at the newest migration (a user's store after its first command)."""
    path = tmp_path_factory.mktemp("startup") / "lhbench.db"
    Store.open(f"sqlite:///{path}").close()
    return path


def _store_copy(empty_store: Path, tmp_path: Path) -> str:
    shutil.copy(empty_store, tmp_path / "lhbench.db")
    return f"sqlite:///{tmp_path / 'lhbench.db'}"


def test_help_loads_no_database_or_model_library(tmp_path: Path) -> None:
    assert _loaded(tmp_path, "--help") == []


def test_import_auto_loads_no_agent_judge_or_plot_stack(empty_store: Path, tmp_path: Path) -> None:
    url = _store_copy(empty_store, tmp_path)
    loaded = _loaded(tmp_path, "import", "auto", str(FIXTURE), "--db", url)
    # the store (SQLAlchemy) and the Step model (pydantic) are what importing writes with
    assert loaded == ["pydantic", "sqlalchemy"]
    with Store.open(url) as store:
        assert store.counts()["runs"] == 1


def test_report_loads_no_model_or_migration_stack(empty_store: Path, tmp_path: Path) -> None:
    url = _store_copy(empty_store, tmp_path)
    assert cli("import", "auto", str(FIXTURE), "--db", url).exit_code == 0
    loaded = _loaded(tmp_path, "report", "--db", url, "--out", str(tmp_path / "report"))
    for name in ("alembic", "fastapi", "httpx", "lhbench.harness.runner", "pydantic_ai"):
        assert name not in loaded
    assert "lhbench.judges.base" not in loaded and "lhbench.models.runtime" not in loaded
    assert (tmp_path / "report" / "report.html").is_file()


def test_report_draws_its_plots_without_matplotlib_or_scipy(
    empty_store: Path, tmp_path: Path
) -> None:
    """Leaderboard plot and pass rate drawn; neither matplotlib nor scipy (issue 26 item 4).

    matplotlib cost a report about 0.8 s to import and draw with, scipy.stats 0.5 s: plots
    are the SVG charts the web app draws (``lhbench.reporting.charts``), the Wilson interval
    scipy's formula with a stored normal quantile.
    """
    url = _store_copy(empty_store, tmp_path)
    assert cli("import", "auto", str(FIXTURE), "--db", url).exit_code == 0
    with Store.open(url) as store:
        (run,) = store.list_runs()
        grades = []
        for i, model in enumerate(("openai:judge-a", "anthropic:judge-b")):
            ident = JudgeIdentity(kind=JudgeKind.LLM, model=model)
            grades.append(
                Grade(
                    id=f"g{i}",
                    run_id=run.id,
                    rubric_id="process",
                    rubric_version="1.0",
                    rubric_hash="h" * 64,
                    tier=TierKind.PROCESS,
                    judge=ident,
                    scores=[
                        DimensionScore(dimension_id="plan", scale=Scale.ONE_TO_FIVE, score=3 + i)
                    ],
                    tier_score=3.0 + i,
                    key=grade_key(run.id, ident.key, "h" * 64, "process", 0),
                )
            )
        store.save_grades(grades)
        store.save_label(Label(run_id=run.id, passed=True, source="verify:t/verify.py"))
    out = tmp_path / "report"
    loaded = _loaded(tmp_path, "report", "--db", url, "--out", str(out))
    for name in ("matplotlib", "scipy", "scipy.stats", "scipy.sparse", "scipy.special"):
        assert name not in loaded, name
    html = (out / "report.html").read_text()
    assert "Pass rate" in html
    # the leaderboard plot was drawn (first; the judges' κ heatmap follows): one point per
    # group, labelled with the group
    figure = html.split("<figure>")[1]
    assert figure.count("<circle") == 1 and f"{run.harness} / {run.model}" in figure


def test_packages_load_names_on_first_use_and_every_public_name_resolves() -> None:
    code = """
import importlib, json, sys
pkgs = ["lhbench", "lhbench.jobs", "lhbench.models", "lhbench.judges"]
for p in pkgs:
    importlib.import_module(p)
impl = ["lhbench.api", "lhbench.jobs.options", "lhbench.jobs.common", "lhbench.jobs.agents",
        "lhbench.jobs.runner",
        "lhbench.models.runtime", "lhbench.models.calls", "lhbench.judges.base",
        "lhbench.judges.panel", "lhbench.store", "lhbench.schema"]
light = [m for m in impl if m in sys.modules]
heavy = "pydantic_ai" in sys.modules
missing = [
    f"{p}.{n}" for p in pkgs for n in sys.modules[p].__all__ if not hasattr(sys.modules[p], n)
]
print(json.dumps({"light": light, "heavy": heavy, "missing": missing}))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    # importing the packages ran none of their modules; asking for every name found each
    assert result["light"] == []
    assert result["missing"] == []
    assert result["heavy"] is False
