"""Every bundled pack through the CLI and through the Python API: the same stored work.

Each pack goes through the jobs a user runs on it twice, once by ``lhbench`` commands and
once by the ``lhbench`` functions, each into its own store: a pack with tasks and rubrics
has one task run by an agent, graded by a judge and checked again (``run``, ``judge``,
``verify``); then every pack is judged by Agent-as-a-Judge (``aj run``). The runs,
grades, labels and verdicts stored must be the same (ids, counts and pass/fail), whatever
the pack's environment. The Agent-as-a-Judge samples are cut to one task of each kind
(their other tasks are the same shapes; every sandboxed check costs a process start).
The local model stub answers every model (one server for both faces, so the same model
strings and the same keys).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import lhbench
from lhbench.config import Settings
from lhbench.errors import ConfigError
from lhbench.jobs.environments import environment_for
from lhbench.jobs.packs import resolve_pack
from lhbench.packs import bundled_pack_dirs, load_pack, resolve_pack_dir
from lhbench.store import Store
from lhbench.testing import ModelStub, auto_script
from lhbench.testing.scripts import verdict_judge_script
from tests.cli.helpers import cli

PACKS = [d.name for d in bundled_pack_dirs()]
# the samples with many fixture runs: how many tasks of each kind to keep
TRIMMED = {"aj-ds-mini": 1, "aj-gui-mini": 1, "aj-search-mini": 1}


def pack_arg(pack: str, tmp: Path) -> str:
    """The bundled pack's name, or a copy of it keeping the first tasks of each kind."""
    if pack not in TRIMMED:
        return pack
    src = resolve_pack_dir(pack)
    loaded = load_pack(src)
    keep: dict[str, list[str]] = {}
    for task in sorted(loaded.tasks, key=lambda t: t.id):
        kind = (task.environment.kind or loaded.environment).value
        prefix = task.id.split("-")[0]  # excel/ppt/word: one office kind each
        group = keep.setdefault(f"{kind}/{prefix}", [])
        if len(group) < TRIMMED[pack]:
            group.append(task.id)
    wanted = {t for ts in keep.values() for t in ts}
    dst = tmp / pack
    shutil.copytree(src, dst, ignore=lambda d, names: [
        n for n in names if Path(d).name == "tasks" and n not in wanted
    ])  # fmt: skip
    return str(dst)


Stored = tuple[
    list[str], dict[str, bool | None], list[tuple[str, str, str | None]], list[tuple[str, str]]
]


def stored(url: str) -> Stored:
    with Store.open(url) as store:
        runs = sorted(r.id for r in store.list_runs())
        labels = {lab.run_id: lab.passed for lab in store.list_labels()}
        verdicts = sorted((v.run_id, v.judge.kind.value, v.verdict) for v in store.list_verdicts())
        grades = sorted((g.run_id, g.key) for g in store.list_grades())
    return runs, labels, verdicts, grades


def agent_task(pack: str) -> str | None:
    """The task an agent runs in the parity test: the first, of a pack with rubrics."""
    loaded = load_pack(resolve_pack_dir(pack))
    if not loaded.tasks or not loaded.rubrics:
        return None  # fixtures to judge (AJ samples) or rubrics only: nothing to run
    return sorted(t.id for t in loaded.tasks)[0]


@pytest.mark.parametrize("pack", PACKS)
def test_cli_and_api_store_the_same_work(pack: str, tmp_path: Path) -> None:
    task = agent_task(pack)
    arg = pack_arg(pack, tmp_path)
    with ModelStub(auto_script()) as stub:
        agent = f"openai:stub-agent-a@{stub.base_url}"
        judge = f"openai:stub-judge-1@{stub.base_url}"
        cli_db = f"sqlite:///{tmp_path / 'cli.db'}"
        steps: list[tuple[str, ...]] = []
        if task is not None:
            steps += [
                ("run", arg, "--tasks", task, "--model", agent),
                ("judge", "--pack", pack, "--tier", "output", "--panel", judge),
                ("verify", "--pack", pack),
            ]
        steps.append(("aj", "run", arg, "--judge", "llm", "--model", judge))
        for step in steps:
            res = cli(*step, "--db", cli_db, cwd=tmp_path)
            assert res.exit_code == 0, (step, res.stderr[-2000:])
        asked = stub.count
        api_db = f"sqlite:///{tmp_path / 'api.db'}"
        place = {"settings": Settings(home=tmp_path / "api")}
        with Store.open(api_db) as store:
            if task is not None:
                ran = lhbench.run_agents(arg, tasks=[task], model=agent, store=store, **place)
                graded = lhbench.grade(pack, tier="output", panel=[judge], store=store, **place)
                checked = lhbench.verify(pack, store=store, **place)
                assert [r.id for r in ran.runs] == [r.id for r in graded.runs]
                assert {lab.run_id for lab in checked.labels} == {r.id for r in ran.runs}
                assert len(graded.grades) == 1 and graded.grades[0].status.value == "ok"
            got = lhbench.judge_states(arg, judge="llm", model=judge, store=store, **place)
        assert stub.count == 2 * asked  # the API asked the models for the same work
    cli_runs, cli_labels, cli_verdicts, cli_grades = stored(cli_db)
    api_runs, api_labels, api_verdicts, api_grades = stored(api_db)
    assert api_runs == cli_runs
    assert api_labels == cli_labels
    assert api_verdicts == cli_verdicts
    assert api_grades == cli_grades
    assert len(got.verdicts) == len(api_verdicts)
    assert sorted(r.id for r in got.runs) == sorted({v[0] for v in api_verdicts})
    # every stored run was labelled and judged
    assert set(cli_labels) == set(cli_runs)
    assert {v[0] for v in cli_verdicts} == set(cli_runs)
    if task is not None:
        assert len(cli_runs) == 1 and cli_grades  # one task run, graded
    if pack in TRIMMED:
        assert len(cli_runs) >= 4  # the cut pack still holds runs of every kind


def test_search_pack_through_the_api_judges_every_item(tmp_path: Path) -> None:
    # the API used to take a search pack for a file pack: 0 runs, 0 verdicts
    with (
        ModelStub(verdict_judge_script("PASS")) as stub,
        Store.open(f"sqlite:///{tmp_path / 's.db'}") as store,
    ):
        got = lhbench.judge_states(
            "aj-search-mini",
            judge="llm",
            model=f"openai:judge@{stub.base_url}",
            store=store,
            settings=Settings(home=tmp_path / "home"),
        ).verdicts
        assert len(store.list_runs()) == 60
        assert len(store.list_labels()) == 60
    assert len(got) == 60
    assert {v.verdict for v in got} == {"PASS"}


@pytest.mark.parametrize(
    ("pack", "option", "value", "says"),
    [
        ("aj-ds-mini", "modality", "a11y", "--modality: the sql environment does not take it"),
        ("aj-search-mini", "postgres_url", "postgresql://x@h/db", "--postgres-url: the search"),
        ("aj-gui-mini", "tool_set", "state", "--tool-set: the gui environment does not take it"),
        ("aj-search-mini", "tool_set", "everything", "--tool-set 'everything': expected one of"),
        ("aj-gui-mini", "modality", "smell", "--modality 'smell': expected one of"),
    ],
)
def test_an_option_of_another_environment_is_refused_before_any_work(
    pack: str, option: str, value: str, says: str, tmp_path: Path
) -> None:
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        with pytest.raises(ConfigError, match=says.replace("(", r"\(")):
            lhbench.judge_states(
                pack,
                judge="llm",
                model="openai:judge@http://127.0.0.1:9/v1",
                store=store,
                settings=Settings(home=tmp_path / "home"),
                **{option: value},
            )
        assert store.list_runs() == []


def test_each_bundled_pack_has_the_environment_of_its_domain(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        names = {p: environment_for(resolve_pack(p, settings, store)).name for p in PACKS}
    assert names["aj-search-mini"] == "search"
    assert names["aj-gui-mini"] == "gui"
    assert names["figma-mini"] == "figma-to-code"
    assert names["content-mini"] == "programmatic-content"
