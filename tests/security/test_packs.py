"""A task pack from outside: its YAML, its files, and the paths it (or a flag) names.

Loading a pack must be cheap and safe whatever it holds; everything wrong is a PackError
naming the file, never a hang, a blow-up or a read outside the pack.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from lhbench.errors import ConfigError, PackError
from lhbench.jobs.packs import check_versions
from lhbench.packs import load_pack
from tests.harness.helpers import write_harness_pack
from tests.security.helpers import CANARY, bounded

BOMB = "\n".join(
    ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    + [
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    ]
)


def _pack(tmp_path: Path) -> Path:
    return write_harness_pack(tmp_path / "pack")


def test_yaml_alias_bomb_in_a_task(tmp_path: Path) -> None:
    pack = _pack(tmp_path)
    task = pack / "tasks" / "greet" / "task.yaml"
    task.write_text(
        task.read_text()
        + "metadata:\n"
        + "\n".join("  " + line for line in BOMB.splitlines())
        + "\n"
    )
    assert task.stat().st_size < 1000
    with bounded(10, mb=100), pytest.raises(PackError, match="expands to more than"):
        load_pack(pack)


def test_yaml_alias_bomb_in_skill_front_matter(tmp_path: Path) -> None:
    pack = _pack(tmp_path)
    skill = pack / "skills" / "greeter" / "SKILL.md"
    skill.write_text(f"---\nname: greeter\n{BOMB}\n---\nbody\n")
    with bounded(10, mb=100), pytest.raises(PackError) as err:
        load_pack(pack)
    assert "SKILL.md" in str(err.value) and "expands" in str(err.value)


def test_yaml_document_over_the_size_limit(tmp_path: Path) -> None:
    pack = _pack(tmp_path)
    rubric = pack / "rubrics" / "huge.yaml"
    rubric.parent.mkdir(exist_ok=True)
    rubric.write_text("id: huge\nnotes: '" + "x" * (5 << 20) + "'\n")
    with bounded(10, mb=100), pytest.raises(PackError, match=r"huge.yaml.*at most"):
        load_pack(pack)


def test_fifo_in_the_initial_state(tmp_path: Path) -> None:
    pack = _pack(tmp_path)
    os.mkfifo(pack / "tasks" / "greet" / "initial" / "pipe")
    with bounded(10), pytest.raises(PackError, match=r"pipe.*not a regular file"):
        load_pack(pack)


def test_unix_socket_in_the_pack(tmp_path: Path) -> None:
    import socket

    pack = _pack(tmp_path)
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(pack / "tasks" / "greet" / "sock"))
    try:
        with bounded(10), pytest.raises(PackError, match="not a regular file"):
            load_pack(pack)
    finally:
        s.close()


def test_link_in_the_initial_state_to_a_host_secret(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text(CANARY)
    pack = _pack(tmp_path)
    (pack / "tasks" / "greet" / "initial" / "config").symlink_to(secret)
    with bounded(10), pytest.raises(PackError) as err:
        load_pack(pack)
    assert "leads outside the pack" in str(err.value) and CANARY not in str(err.value)


def test_linked_directory_leaving_the_pack(tmp_path: Path) -> None:
    pack = _pack(tmp_path)
    (pack / "tasks" / "greet" / "initial" / "etc").symlink_to("/etc")
    with bounded(10), pytest.raises(PackError, match="leads outside the pack"):
        load_pack(pack)


def test_link_inside_the_pack_is_allowed(tmp_path: Path) -> None:
    pack = _pack(tmp_path)
    (pack / "tasks" / "greet" / "initial" / "README-copy.md").symlink_to("README.md")
    with bounded(10):
        assert load_pack(pack).task("greet")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("initial_state", "../../../../../etc"),
        ("verify", "/etc/passwd"),
        ("database", "../../../secret.sql"),
    ],
)
def test_task_paths_leaving_the_task(tmp_path: Path, field: str, value: str) -> None:
    pack = _pack(tmp_path)
    task = pack / "tasks" / "greet" / "task.yaml"
    text = task.read_text().replace("  initial_state: initial\n", f"  {field}: {value!r}\n")
    task.write_text(text)
    with bounded(10), pytest.raises(PackError, match=f"environment.{field}"):
        load_pack(pack)


def test_hook_check_path_leaving_the_task(tmp_path: Path) -> None:
    pack = _pack(tmp_path)
    task = pack / "tasks" / "greet" / "task.yaml"
    task.write_text(task.read_text().replace("check: check.py", "check: ../../../../usr/bin/env"))
    with bounded(10), pytest.raises(PackError, match=r"hooks\[0\].check"):
        load_pack(pack)


@pytest.mark.parametrize(
    "value", ["../../../../etc/passwd", "../SKILL", "/etc/hostname", "v1/../v1"]
)
def test_versions_flag_naming_a_path(tmp_path: Path, value: str) -> None:
    pack = load_pack(_pack(tmp_path))
    with bounded(10), pytest.raises(ConfigError, match="no such skill version"):
        check_versions(pack, {"skill": value})


def test_pack_with_too_many_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lhbench.packs import loader

    monkeypatch.setattr(loader, "MAX_PACK_FILES", 50)
    pack = _pack(tmp_path)
    for i in range(60):
        (pack / "tasks" / "greet" / "initial" / f"f{i}.txt").write_text("x")
    with bounded(10), pytest.raises(PackError, match="more than 50 files"):
        load_pack(pack)


def test_pack_copied_into_the_workspace_is_not_touched_by_the_run(tmp_path: Path) -> None:
    # the initial state is copied per run; the agent's edits never reach the pack itself
    from tests.security.helpers import shell

    with bounded(60):
        _, out = shell(tmp_path, "echo changed > README.md; rm -rf ./*")
    initial = tmp_path / "pack" / "tasks" / "greet" / "initial" / "README.md"
    assert initial.read_text() == "# project\n"
    shutil.rmtree(Path(out.run.metadata["workspace"]), ignore_errors=True)
