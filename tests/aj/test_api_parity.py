"""Agent-as-a-Judge through the CLI and through the Python API: the same stored work.

Every bundled pack is judged twice, once by ``lhbench aj run`` and once by
``lhbench.judge_states``, each into its own store; the runs, labels and verdicts stored
must be the same (ids, counts and pass/fail), whatever the pack's environment. The
Agent-as-a-Judge samples are cut to one task of each kind (their other tasks are the same
shapes; every sandboxed check costs a process start), the others are judged whole.
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
from lhbench.testing import ModelStub
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


def stored(url: str) -> tuple[list[str], dict[str, bool | None], list[tuple[str, str, str | None]]]:
    with Store.open(url) as store:
        runs = sorted(r.id for r in store.list_runs())
        labels = {lab.run_id: lab.passed for lab in store.list_labels()}
        verdicts = sorted((v.run_id, v.judge.kind.value, v.verdict) for v in store.list_verdicts())
    return runs, labels, verdicts


@pytest.mark.parametrize("pack", PACKS)
def test_cli_and_api_store_the_same_judgements(pack: str, tmp_path: Path) -> None:
    with ModelStub(verdict_judge_script("FAIL")) as stub:
        model = f"openai:judge@{stub.base_url}"
        cli_db = f"sqlite:///{tmp_path / 'cli.db'}"
        res = cli(
            "aj", "run", pack, "--judge", "llm", "--model", model, "--db", cli_db, cwd=tmp_path
        )
        assert res.exit_code == 0, res.stderr[-2000:]
        asked = stub.count
        api_db = f"sqlite:///{tmp_path / 'api.db'}"
        with Store.open(api_db) as store:
            got = lhbench.judge_states(
                pack,
                judge="llm",
                model=model,
                store=store,
                settings=Settings(home=tmp_path / "api"),
            ).verdicts
        assert stub.count == 2 * asked  # the API asked the model for the same verdicts
    cli_runs, cli_labels, cli_verdicts = stored(cli_db)
    api_runs, api_labels, api_verdicts = stored(api_db)
    assert api_runs == cli_runs
    assert api_labels == cli_labels
    assert api_verdicts == cli_verdicts
    assert len(got) == len(api_verdicts) == asked
    # every stored run of a pack with fixtures was labelled and judged
    assert set(cli_labels) == set(cli_runs)
    assert {v[0] for v in cli_verdicts} == set(cli_runs)
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
