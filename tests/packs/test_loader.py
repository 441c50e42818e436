import textwrap
from pathlib import Path

import pytest

from lhbench.errors import PackError
from lhbench.packs import bundled_pack_dirs, load_pack
from lhbench.schema import AuthorKind, Scale, TierKind
from tests.cli.helpers import cli

RUBRIC = """\
id: demo
version: "2"
title: Demo rubric
tiers:
  - kind: process
    dimensions:
      - id: inspect
        name: Inspect
        weight: 0.6
        description: reads inputs
        anchors:
          1: none
          2: some
          3: most
          4: all
          5: all, early
      - id: verify
        name: Verify
        weight: 0.4
        description: checks work
        scale: 0-2
        anchors:
          0: never
          1: once
          2: always
"""


def write_pack(root: Path, *, rubric: str = RUBRIC, environment: str = "filesystem") -> Path:
    (root / "rubrics").mkdir(parents=True)
    (root / "pack.yaml").write_text(
        f"id: demo-pack\nversion: 1.0\nenvironment: {environment}\ndescription: test pack\n"
    )
    (root / "rubrics" / "demo.yaml").write_text(rubric)
    task = root / "tasks" / "t1"
    (task / "initial").mkdir(parents=True)
    (task / "initial" / "a.txt").write_text("hello\n")
    (task / "verify.py").write_text("print('ok')\n")
    (task / "task.yaml").write_text(
        textwrap.dedent(
            """\
            title: Move the file
            instruction: Move a.txt into done/.
            environment:
              initial_state: initial
              verify: verify.py
            ground_truth: [t1/expected.txt]
            rubrics: [demo]
            skills: [mover]
            tags: {category: files, frame_count: 2}
            """
        )
    )
    (root / "tasks" / "t2").mkdir()
    (root / "tasks" / "t2" / "task.yaml").write_text(
        "title: Chat\nturns:\n  - first\n  - second\nrubrics: [demo]\n"
    )
    (root / "ground_truth" / "t1").mkdir(parents=True)
    (root / "ground_truth" / "t1" / "expected.txt").write_text("done/a.txt\n")
    skill = root / "skills" / "mover"
    (skill / "versions").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: mover\ndescription: moves files\n---\n# Step 0\n")
    (skill / "versions" / "v0.md").write_text("---\nname: mover\n---\nno guidance\n")
    return root


def problems_of(root: Path) -> list[str]:
    with pytest.raises(PackError) as info:
        load_pack(root)
    return info.value.lines()


def test_valid_pack_loads_whole(tmp_path: Path) -> None:
    pack = load_pack(write_pack(tmp_path / "p"))
    assert (pack.id, pack.version, pack.environment.value) == ("demo-pack", "1.0", "filesystem")
    assert [t.id for t in pack.tasks] == ["t1", "t2"]
    assert pack.task("t2").user_turns == ["first", "second"]
    assert pack.task("t1").tags.frame_count == 2
    assert pack.rubric("demo").tier(TierKind.PROCESS).dimension("verify").scale == Scale.ZERO_TO_TWO
    assert pack.skills[0].name == "mover" and set(pack.skills[0].versions) == {"v0"}
    assert len(pack.content_hash) == 64 and all(t.content_hash for t in pack.tasks)


def test_content_hash_follows_content(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p")
    first = load_pack(root)
    assert load_pack(root).content_hash == first.content_hash
    (root / "tasks" / "t1" / "initial" / "a.txt").write_text("changed\n")
    second = load_pack(root)
    assert second.content_hash != first.content_hash
    assert second.task("t1").content_hash != first.task("t1").content_hash
    assert second.task("t2").content_hash == first.task("t2").content_hash
    assert second.rubric("demo").content_hash == first.rubric("demo").content_hash


@pytest.mark.parametrize(
    ("edit", "file", "line", "needle"),
    [
        # weights summing to 0.9: reported at the tier (line 5)
        (lambda r: r.replace("weight: 0.4", "weight: 0.3"), "rubrics/demo.yaml", 5, "sum to 0.9"),
        # a scale level without an anchor: reported at the dimension (line 7)
        (
            lambda r: r.replace("          4: all\n", ""),
            "rubrics/demo.yaml",
            7,
            "level(s) 4 have no anchor",
        ),
        # a YAML syntax error on line 4
        (
            lambda r: r.replace("tiers:", "tiers: [oops"),
            "rubrics/demo.yaml",
            5,
            "YAML syntax error",
        ),
        # a duplicate dimension id
        (
            lambda r: r.replace("id: verify", "id: inspect"),
            "rubrics/demo.yaml",
            5,
            "duplicate dimension id",
        ),
        # a weight out of range names its own line (9)
        (
            lambda r: r.replace("weight: 0.6", "weight: 1.6"),
            "rubrics/demo.yaml",
            9,
            "less than or equal to 1",
        ),
        # an unknown field names its line
        (
            lambda r: r.replace("title: Demo rubric", "title: Demo rubric\ncolour: red"),
            "rubrics/demo.yaml",
            4,
            "unknown field",
        ),
    ],
)
def test_bad_rubric_gives_one_line_with_file_and_line(
    tmp_path: Path, edit: object, file: str, line: int, needle: str
) -> None:
    root = write_pack(tmp_path / "p", rubric=edit(RUBRIC))  # type: ignore[operator]
    lines = problems_of(root)
    assert len(lines) >= 1
    rubric_lines = [ln for ln in lines if file in ln]
    assert len(rubric_lines) == 1, lines
    assert f"{root / file}:{line}:" in rubric_lines[0]
    assert needle in rubric_lines[0]


def test_unknown_environment_kind(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p", environment="spaceship")
    [problem] = problems_of(root)
    assert problem.startswith(f"{root / 'pack.yaml'}:3: environment:")
    assert "'spaceship'" in problem and "filesystem" in problem


def test_broken_references_are_each_reported(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p")
    task_yaml = root / "tasks" / "t1" / "task.yaml"
    text = task_yaml.read_text()
    text = text.replace("rubrics: [demo]", "rubrics: [nope]").replace(
        "skills: [mover]", "skills: [x]"
    )
    text = text.replace("verify: verify.py", "verify: ../../escape.py")
    task_yaml.write_text(text)
    (root / "ground_truth" / "t1" / "expected.txt").unlink()
    lines = problems_of(root)
    assert len(lines) == 4, lines
    joined = "\n".join(lines)
    assert f"{task_yaml}:7: rubrics[0]: unknown rubric 'nope'" in joined
    assert f"{task_yaml}:8: skills[0]: unknown skill 'x'" in joined
    assert f"{task_yaml}:6: ground_truth[0]: no file" in joined
    assert f"{task_yaml}:5: environment.verify:" in joined


def test_duplicate_yaml_key_and_skill_name(tmp_path: Path) -> None:
    root = write_pack(tmp_path / "p")
    (root / "pack.yaml").write_text("id: a\nversion: 1\nid: b\nenvironment: sql\n")
    (root / "skills" / "mover" / "SKILL.md").write_text("---\nname: other\n---\n")
    lines = problems_of(root)
    assert any(
        f"{root / 'pack.yaml'}:3: id: duplicate key 'id' (first at line 1)" in ln for ln in lines
    )
    assert any("SKILL.md:2: name:" in ln and "'other'" in ln for ln in lines)


def test_bundled_rubrics_carry_the_papers_weights() -> None:
    [root] = [d for d in bundled_pack_dirs() if d.name == "lhbench-rubrics"]
    pack = load_pack(root)
    v12 = pack.rubric("figma-to-code")
    assert (v12.version, v12.author) == ("1.2", AuthorKind.EXPERT)
    process = v12.tier("process")
    assert [d.weight for d in process.dimensions] == [0.30, 0.25, 0.25, 0.20]
    output = v12.tier("output")
    assert [d.weight for d in output.dimensions] == [0.20, 0.18, 0.14, 0.12, 0.10, 0.10, 0.08, 0.08]
    behavior = v12.tier("behavior")
    assert not behavior.enabled and {d.weight for d in behavior.dimensions} == {0.125}
    assert len(behavior.dimensions) == 8
    v11 = pack.rubric("figma-to-code-v1.1")
    assert (v11.family, v11.version, v11.author) == ("figma-to-code", "1.1", AuthorKind.LLM)
    assert [d.weight for d in v11.tier("process").dimensions] == [
        0.07,
        0.20,
        0.15,
        0.15,
        0.10,
        0.12,
        0.13,
        0.08,
    ]
    for variant, scale in (
        ("content-generic-5pt", Scale.ONE_TO_FIVE),
        ("content-generic-3pt", Scale.ZERO_TO_TWO),
    ):
        dims = pack.rubric(variant).tier("output").dimensions
        assert len(dims) == 5 and {d.scale for d in dims} == {scale}
        assert {d.weight for d in dims} == {0.2}


def test_cli_validate_exit_code_and_no_traceback(tmp_path: Path) -> None:
    good = write_pack(tmp_path / "good")
    bad = write_pack(tmp_path / "bad", rubric=RUBRIC.replace("weight: 0.4", "weight: 0.3"))
    ok = cli("packs", "validate", str(good))
    assert ok.exit_code == 0, ok.stderr
    assert "ok demo-pack 1.0: 2 task(s)" in ok.stdout
    res = cli("packs", "validate", str(bad))
    assert res.exit_code == 2
    assert "Traceback" not in res.stderr
    err_lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(err_lines) == 1
    assert f"{bad / 'rubrics/demo.yaml'}:5:" in err_lines[0] and "sum to 0.9" in err_lines[0]


def test_mcp_servers_load_and_unknown_ones_are_reported(tmp_path: Path) -> None:
    from tests.harness.helpers import write_harness_pack

    root = write_harness_pack(tmp_path / "ok", mcp=True)
    pack = load_pack(root)
    argv = pack.mcp_servers["notes"].argv("/py", "/ws")
    assert argv == ["/py", "-m", "lhbench.tools", "fs", "/ws"]
    assert pack.task("greet").environment.mcp_servers == ["notes"]

    bad = write_harness_pack(tmp_path / "bad", mcp=True)
    task_yaml = bad / "tasks" / "greet" / "task.yaml"
    task_yaml.write_text(
        task_yaml.read_text().replace("mcp_servers: [notes]", "mcp_servers: [nope]")
    )
    [line] = problems_of(bad)
    assert (
        str(task_yaml) in line and "environment.mcp_servers[0]: unknown MCP server 'nope'" in line
    )
