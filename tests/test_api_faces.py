"""The CLI is a thin layer over the public functions: same options, same defaults, all passed.

For each job command, its flags (the Typer callback's parameters) must be the public
function's parameters, with the same meaning by default, and the command must hand every
one of them to that function. An option added to one face and not the other fails here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import lhbench
from lhbench.cli import aj, export, imports, judge, report, runs, verify
from lhbench.errors import LhbenchError
from lhbench.store import Store
from tests.cli.helpers import cli

# what only the command line has: where its store is, how it prints, the sandbox switch
CLI_ONLY = {"db", "as_json", "unsafe_no_sandbox"}
# what only Python callers pass: where the job runs, and models/notes given as objects
# (and whether a grade outcome carries Grade objects: the command prints figures)
API_ONLY = {
    "store",
    "settings",
    "progress",
    "agent_model",
    "judge_models",
    "judge_model",
    "notes",
    "with_grades",
}
MODEL = "openai:m@http://127.0.0.1:9/v1"

# command, its callback, the public function, the values a call needs, the command's args
FACES: list[tuple[str, Callable[..., Any], str, dict[str, Any], list[str]]] = [
    ("run", runs.run_, "run_agents", {"pack": "p", "model": "m"}, ["run", "p", "--model", MODEL]),
    ("judge", judge.judge, "grade", {"pack": "p"}, ["judge", "--pack", "p", "--panel", MODEL]),
    ("verify", verify.verify, "verify", {}, ["verify"]),
    ("import", imports.import_, "import_transcripts", {"paths": ["x"]}, ["import", "auto", "x"]),
    ("aj run", aj.aj_run, "judge_states", {"pack": "p"}, ["aj", "run", "p", "--model", MODEL]),
    ("report", report.report, "report", {}, ["report"]),
    ("export inspect", export.inspect, "export_inspect", {"out": "o"}, ["export", "inspect", "o"]),
]  # fmt: skip
IDS = [f[0] for f in FACES]


def _params(fn: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(fn).parameters)


@pytest.mark.parametrize(("command", "callback", "function", "needs", "argv"), FACES, ids=IDS)
def test_a_command_takes_exactly_its_functions_parameters(
    command: str, callback: Callable[..., Any], function: str, needs: object, argv: object
) -> None:
    flags = set(_params(callback)) - CLI_ONLY
    api = set(_params(getattr(lhbench, function))) - API_ONLY
    assert flags - api == set(), f"`lhbench {command}` has flags lhbench.{function} lacks"
    assert api - flags == set(), f"lhbench.{function} has parameters `lhbench {command}` lacks"


@pytest.mark.parametrize(("command", "callback", "function", "needs", "argv"), FACES, ids=IDS)
def test_a_commands_defaults_mean_what_the_functions_defaults_mean(
    command: str,
    callback: Callable[..., Any],
    function: str,
    needs: dict[str, Any],
    argv: object,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the options each face builds when given nothing but what a call needs
    monkeypatch.chdir(tmp_path)
    options = _options_type(function)
    flags = _params(callback)
    api = _params(getattr(lhbench, function))
    # (a flag the command line requires, such as FORMAT, has no default to compare)
    cli_defaults = {
        n: p.default
        for n, p in flags.items()
        if n in api and n not in needs and p.default is not inspect.Parameter.empty
    }
    assert options(**needs, **cli_defaults) == options(**needs)


def _options_type(function: str) -> type[Any]:
    types = {
        "run_agents": lhbench.RunOptions,
        "grade": lhbench.GradeOptions,
        "verify": lhbench.VerifyOptions,
        "import_transcripts": lhbench.ImportOptions,
        "judge_states": lhbench.JudgeOptions,
        "report": lhbench.ReportOptions,
        "export_inspect": lhbench.ExportOptions,
    }
    return types[function]


class _Reached(LhbenchError):
    """Raised by the stand-in function: the command got as far as calling it."""


@pytest.mark.parametrize(("command", "callback", "function", "needs", "argv"), FACES, ids=IDS)
def test_a_command_calls_its_function_with_every_option(
    command: str,
    callback: Callable[..., Any],
    function: str,
    needs: object,
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import lhbench.api

    real = getattr(lhbench.api, function)
    calls: list[dict[str, Any]] = []

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        calls.append(dict(inspect.signature(real).bind(*args, **kwargs).arguments))
        raise _Reached("reached")

    monkeypatch.setattr(lhbench.api, function, stand_in)
    url = f"sqlite:///{tmp_path / 'lhbench.db'}"
    Store.open(url).close()  # reading commands refuse a store that is not there
    (tmp_path / "x").write_text("{}\n")
    res = cli(*argv, "--db", url, cwd=tmp_path)
    assert calls, f"`lhbench {command}` did not call lhbench.api.{function}: {res.stderr}"
    [passed] = calls
    wanted = set(_params(real)) - API_ONLY
    assert wanted - set(passed) == set(), f"`lhbench {command}` left these to the default"
    assert passed["settings"] is not None and passed["store"] is not None
