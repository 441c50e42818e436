"""Every check is an entry of the checks registry, run by the verify job through one path.

The built-ins (the verify script, hook checks, the Figma and content checks) are registered
by lhbench's own ``lhbench.checks`` entry point; a third party's check, registered the same
way (here: a distribution on ``sys.path`` with an ``entry_points.txt``, as ``pip install``
leaves it), is planned and run by the same job, for the packs its environment claims.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import lhbench
from lhbench.config import Settings
from lhbench.jobs.checks import Check
from lhbench.jobs.environments import ENVIRONMENTS, environment_for
from lhbench.jobs.packs import resolve_pack
from lhbench.jobs.verification import task_checks
from lhbench.plugins import check_registry
from lhbench.store import Store

BUILTIN = "lhbench.jobs.checks:BUILTIN_CHECKS"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Store]:
    """A SQLite store (the registry is what is tested, not the backend)."""
    s = Store.open(f"sqlite:///{tmp_path / 'checks.db'}")
    try:
        yield s
    finally:
        s.close()


def test_the_builtin_checks_are_registry_entries_from_lhbench_entry_point() -> None:
    infos = {i.name: i for i in check_registry().infos() if i.error is None}
    for name in ("verify", "hooks", "figma", "content"):
        assert infos[name].builtin and infos[name].target == BUILTIN, infos.get(name)
    # a planned check says which entry runs it; no per-domain flag on it
    assert {f.name for f in dataclasses.fields(Check)} == {
        "target",
        "source",
        "check_hash",
        "kind",
    }


def test_the_environment_names_the_figma_and_content_checks_with_unchanged_label_keys(
    tmp_path: Path, db: Store
) -> None:
    """The label sources and hashes are the ones stored before: no stored label goes stale."""
    from lhbench.envs.content.checks import CHECKS_VERSION as CONTENT_VERSION
    from lhbench.envs.figma import CHECKS_VERSION as FIGMA_VERSION
    from lhbench.packs import hash_tree

    settings = Settings(home=tmp_path / "home")
    figma = resolve_pack("figma-mini", settings, db)
    assert "figma" in environment_for(figma).checks
    task = figma.pack.tasks[0]
    [check] = [c for c in task_checks(figma, task) if c.kind == "figma"]
    assert figma.directory is not None
    gt = figma.directory / "ground_truth" / task.ground_truth[0]
    rubric = next(r.content_hash for r in figma.pack.rubrics if r.id == "figma-checks")
    assert check.source == f"figma:{task.id}/{task.ground_truth[0]}"
    assert (
        check.check_hash
        == hashlib.sha256(
            "|".join([task.content_hash, hash_tree(gt), rubric, FIGMA_VERSION]).encode()
        ).hexdigest()
    )

    content = resolve_pack("content-mini", settings, db)
    assert "content" in environment_for(content).checks
    task = content.pack.tasks[0]
    sources = {c.kind: c.source for c in task_checks(content, task)}
    assert sources == {"verify": f"verify:{task.id}/verify.py", "content": f"content:{task.id}"}
    [check] = [c for c in task_checks(content, task) if c.kind == "content"]
    assert content.directory is not None
    rubric = next((r.content_hash for r in content.pack.rubrics if r.id == "content-checks"), "")
    assert (
        check.check_hash
        == hashlib.sha256(
            "|".join(
                [
                    task.content_hash,
                    hash_tree(content.directory / "ground_truth"),
                    rubric,
                    CONTENT_VERSION,
                ]
            ).encode()
        ).hexdigest()
    )
    # a filesystem pack's environment runs neither
    samples = resolve_pack("lhbench-samples", settings, db)
    kinds = {c.kind for t in samples.pack.tasks for c in task_checks(samples, t)}
    assert kinds == {"verify", "hooks"}


PLUGIN = '''
"""Acme's words check (a TaskCheck) and the environment whose tasks run it."""
from __future__ import annotations

import asyncio

from lhbench.jobs.checks import Check
from lhbench.jobs.environments import ReplayEnvironment

CALLS = []


class WordsCheck:
    name = "acme-words"
    version = "2.0"
    description = "notes.md holds at least three words"
    needs_store = False

    def plan(self, pack, task):
        return [Check(pack.directory, f"acme-words:{task.id}", task.content_hash, self.name)]

    async def run(self, check, run, state, ctx):
        CALLS.append(run.id)
        notes = state.ref.root / "notes.md"
        words = len(notes.read_text().split()) if notes.is_file() else 0
        await asyncio.sleep(0)
        return check.label(run, words >= 3, f"{words} words", None)


class NotesEnvironment(ReplayEnvironment):
    name = "acme-notes"
    description = "notes packs: their verify script and the words check"
    checks = ("verify", "acme-words")

    def claims(self, pack):
        return pack.pack.id == "acme-notes"


CHECKS = [WordsCheck()]
ENVIRONMENT = NotesEnvironment()
'''


@pytest.fixture
def acme_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A distribution on sys.path declaring the check and the environment by entry point."""
    site = tmp_path / "site"
    dist = site / "acme_words-2.0.dist-info"
    dist.mkdir(parents=True)
    (site / "acme_words.py").write_text(PLUGIN)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-words\nVersion: 2.0\n")
    (dist / "entry_points.txt").write_text(
        "[lhbench.checks]\nacme = acme_words:CHECKS\n\n"
        "[lhbench.environments]\nacme = acme_words:ENVIRONMENT\n"
    )
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    check_registry().reload()
    ENVIRONMENTS.reload()
    yield
    monkeypatch.undo()
    check_registry().reload()
    ENVIRONMENTS.reload()


def _notes_pack(root: Path) -> Path:
    task = root / "tasks" / "notes"
    task.mkdir(parents=True)
    (root / "pack.yaml").write_text(
        "id: acme-notes\nversion: 1.0\nenvironment: filesystem\ndescription: notes\n"
    )
    (task / "task.yaml").write_text("title: Notes\ninstruction: Write notes.md.\n")
    (task / "verify.py").write_text(
        textwrap.dedent(
            """\
            import argparse, json, sys
            from pathlib import Path
            ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True)
            ok = (Path(ap.parse_args().root) / "notes.md").is_file()
            print(json.dumps({"detail": "notes.md written" if ok else "no notes.md"}))
            sys.exit(0 if ok else 1)
            """
        )
    )
    return root


def _transcript(path: Path, text: str) -> Path:
    lines = [
        {"type": "run", "model": "acme:writer"},
        {"role": "user", "kind": "message", "content": "write notes.md"},
        {
            "role": "assistant",
            "kind": "tool_call",
            "tool_name": "write_file",
            "tool_call_id": "c1",
            "tool_input": {"path": "notes.md", "content": text},
        },
        {"role": "tool", "kind": "tool_result", "tool_call_id": "c1", "tool_output": "ok"},
        {"type": "end", "status": "completed"},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_a_third_party_check_registered_like_the_builtins_runs_through_the_same_path(
    acme_plugin: None, tmp_path: Path, db: Store
) -> None:
    import acme_words  # type: ignore[import-not-found]

    infos = {i.name: i for i in check_registry().infos()}
    assert infos["acme-words"].distribution == "acme-words" and not infos["acme-words"].builtin
    assert infos["acme-words"].error is None
    pack = _notes_pack(tmp_path / "pack")
    settings = Settings(home=tmp_path / "home")
    runs = lhbench.import_transcripts(
        [
            _transcript(tmp_path / "long.jsonl", "three whole words"),
            _transcript(tmp_path / "short.jsonl", "two words"),
        ],
        pack=str(pack),
        task="notes",
        store=db,
        settings=settings,
    ).runs
    assert len(runs) == 2
    labels = {(lab.run_id, lab.source): lab for lab in db.list_labels()}
    long_run, short_run = runs
    # the plugin's environment named its check; the job ran it beside the verify script
    assert labels[(long_run.id, "acme-words:notes")].passed is True
    assert labels[(short_run.id, "acme-words:notes")].passed is False
    assert labels[(short_run.id, "acme-words:notes")].detail == "2 words"
    assert labels[(short_run.id, "verify:notes/verify.py")].passed is True
    assert sorted(acme_words.CALLS) == sorted([long_run.id, short_run.id])

    # stored like the built-ins' labels: a second verify finds them current, runs nothing
    again = lhbench.verify(pack=str(pack), store=db, settings=settings).labels
    assert {(lab.run_id, lab.source) for lab in again} == set(labels)
    assert len(acme_words.CALLS) == 2
