"""Load and validate a task pack from disk, collecting every problem before failing.

Layout::

    pack.yaml                       id, version, environment, description
    tasks/<id>/task.yaml            one task (plus its initial state, verify script, …)
    rubrics/<id>.yaml               one rubric, with a version
    skills/<name>/SKILL.md          expert skill, YAML front matter with name/description
    skills/<name>/versions/<v>.md   named variants of the skill (ablations)
    ground_truth/                   curated reference artifacts
"""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import Field

from lhbench.errors import PackError, Problem
from lhbench.packs.hashing import hash_bytes, hash_tree
from lhbench.packs.yamlio import load_yaml, parse_yaml, validate_document
from lhbench.schema import (
    EnvironmentKind,
    McpServerSpec,
    Rubric,
    Schema,
    Skill,
    Task,
    TaskPack,
    VersionLabel,
)

__all__ = ["PACK_FILE", "PackManifest", "load_pack"]

PACK_FILE = "pack.yaml"


class PackManifest(Schema):
    """The header of a pack, as written in ``pack.yaml``."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.\-]*$")
    version: VersionLabel
    environment: EnvironmentKind
    description: str = ""
    mcp_servers: dict[str, McpServerSpec] = Field(default_factory=dict)
    versions: dict[str, list[str]] = Field(default_factory=dict)


def _front_matter(path: Path, problems: list[Problem]) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(file=path, message=f"cannot read: {exc}"))
        return None
    if not text.startswith("---"):
        problems.append(
            Problem(file=path, line=1, message="expected YAML front matter ('---' on line 1)")
        )
        return None
    end = text.find("\n---", 3)
    if end < 0:
        problems.append(Problem(file=path, line=1, message="front matter has no closing '---'"))
        return None
    try:
        meta, _ = parse_yaml(text[3:end], path, first_line=1)
    except PackError as exc:
        problems.extend(
            replace(p, message=f"front matter: {p.message.removeprefix('YAML syntax error: ')}")
            for p in exc.problems
        )
        return None
    if not isinstance(meta, dict):
        problems.append(Problem(file=path, line=2, message="front matter must be a mapping"))
        return None
    return meta


def _load_skill(skill_dir: Path, problems: list[Problem]) -> Skill | None:
    path = skill_dir / "SKILL.md"
    if not path.is_file():
        problems.append(Problem(file=skill_dir, message="skill directory has no SKILL.md"))
        return None
    meta = _front_matter(path, problems)
    if meta is None:
        return None
    name = meta.get("name")
    if name != skill_dir.name:
        problems.append(
            Problem(
                file=path,
                line=2,
                where="name",
                message=f"front matter name {name!r} must equal the directory name "
                f"{skill_dir.name!r}",
            )
        )
        return None
    versions = {
        v.stem: hash_bytes(v.read_bytes())
        for v in sorted((skill_dir / "versions").glob("*.md"))
        if v.is_file()
    }
    return Skill(
        name=skill_dir.name,
        description=str(meta.get("description", "")),
        content_hash=hash_bytes(path.read_bytes()),
        versions=versions,
    )


MAX_PACK_FILES = 50_000
MAX_PACK_FILE_BYTES = 512 << 20


def scan_pack_tree(root: Path, problems: list[Problem]) -> None:
    """Refuse what a pack must not hold: links leaving it, special files, bombs.

    A symlink may point inside the pack (a shared asset); one leading out (``/etc/shadow``,
    a home directory) would be copied into every workspace or read by the loader, so it is
    a problem. So are FIFOs, sockets and devices (reading one blocks or leaks), files over
    :data:`MAX_PACK_FILE_BYTES`, and more than :data:`MAX_PACK_FILES` entries.
    """
    base = root.resolve()
    count = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in (*dirnames, *filenames):
            count += 1
            if count > MAX_PACK_FILES:
                problems.append(
                    Problem(file=root, message=f"more than {MAX_PACK_FILES} files; refused")
                )
                return
            path = Path(dirpath) / name
            try:
                st = path.lstat()
            except OSError as exc:
                problems.append(Problem(file=path, message=f"cannot read: {exc}"))
                continue
            if stat.S_ISLNK(st.st_mode):
                target = Path(os.path.realpath(path))
                if not target.is_relative_to(base):
                    problems.append(
                        Problem(
                            file=path,
                            message=f"symlink leads outside the pack (to {os.readlink(path)}); "
                            "copy the file into the pack instead",
                        )
                    )
            elif stat.S_ISREG(st.st_mode):
                if st.st_size > MAX_PACK_FILE_BYTES:
                    problems.append(
                        Problem(
                            file=path,
                            message=f"{st.st_size} bytes; a pack file may have at most "
                            f"{MAX_PACK_FILE_BYTES}",
                        )
                    )
            elif not stat.S_ISDIR(st.st_mode):
                problems.append(
                    Problem(
                        file=path,
                        message="not a regular file (FIFO, socket or device); a pack holds "
                        "only files, directories and links within it",
                    )
                )


def _inside(base: Path, rel: str) -> Path | None:
    """``base/rel`` if it stays inside ``base``, else None."""
    target = (base / rel).resolve()
    return target if target.is_relative_to(base.resolve()) else None


def _check_task_refs(
    task: Task,
    task_dir: Path,
    task_file: Path,
    lines: dict[tuple[str | int, ...], int],
    pack_dir: Path,
    rubric_ids: set[str],
    skill_names: set[str],
    problems: list[Problem],
    mcp_names: set[str] | None = None,
) -> None:
    def problem(loc: tuple[str | int, ...], message: str) -> None:
        line = lines.get(loc) or lines.get(loc[:1])
        where = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in loc)
        problems.append(
            Problem(file=task_file, line=line, where=where.replace(".[", "["), message=message)
        )

    for i, rid in enumerate(task.rubrics):
        if rid not in rubric_ids:
            problem(("rubrics", i), f"unknown rubric {rid!r}; the pack has {sorted(rubric_ids)}")
    for i, name in enumerate(task.skills):
        if name not in skill_names:
            problem(("skills", i), f"unknown skill {name!r}; the pack has {sorted(skill_names)}")
    for i, name in enumerate(task.environment.mcp_servers):
        if name not in (mcp_names or set()):
            problem(
                ("environment", "mcp_servers", i),
                f"unknown MCP server {name!r}; pack.yaml mcp_servers has {sorted(mcp_names or ())}",
            )
    gt_root = pack_dir / "ground_truth"
    for i, ref in enumerate(task.ground_truth):
        target = _inside(gt_root, ref)
        if target is None or not target.exists():
            problem(("ground_truth", i), f"no file or directory ground_truth/{ref} in the pack")
    env = task.environment
    for key, rel in (
        ("initial_state", env.initial_state),
        ("database", env.database),
        ("verify", env.verify),
    ):
        if rel is None:
            continue
        target = _inside(task_dir, rel)
        if target is None or not target.exists():
            problem(("environment", key), f"{rel!r} does not exist in {task_dir.name}/")
    for i, hook in enumerate(env.hooks):
        target = _inside(task_dir, hook.check)
        if target is None or not target.is_file():
            problem(
                ("environment", "hooks", i, "check"),
                f"{hook.check!r} is not a file in {task_dir.name}/",
            )
    if env.checks:
        from lhbench.plugins import check_registry

        installed = check_registry()
        for i, name in enumerate(env.checks):
            if name not in installed:
                problem(
                    ("environment", "checks", i),
                    f"no state check {name!r} is installed (installed: "
                    f"{', '.join(sorted(installed)) or 'none'}; see lhbench plugins list)",
                )


def load_pack(path: Path | str) -> TaskPack:
    """Load the pack at ``path`` and check it whole.

    Raises:
        PackError: with one Problem (file, line, what was expected) per thing wrong.
    """
    root = Path(path)
    manifest_path = root / PACK_FILE
    if not manifest_path.is_file():
        raise PackError([Problem(file=manifest_path, message="not a task pack: pack.yaml missing")])
    problems: list[Problem] = []
    scan_pack_tree(root, problems)
    if problems:
        raise PackError(problems)

    def read(model: type[Any], file: Path) -> tuple[Any, dict[tuple[str | int, ...], int]]:
        try:
            data, lines = load_yaml(file)
        except PackError as exc:
            problems.extend(exc.problems)
            return None, {}
        obj, errs = validate_document(model, data, file, lines)
        problems.extend(errs)
        return obj, lines

    manifest, _ = read(PackManifest, manifest_path)

    rubrics: list[Rubric] = []
    for file in sorted((root / "rubrics").glob("*.y*ml")):
        rubric, lines = read(Rubric, file)
        if rubric is None:
            continue
        if rubric.id != file.stem:
            problems.append(
                Problem(
                    file=file,
                    line=lines.get(("id",)),
                    where="id",
                    message=f"rubric id {rubric.id!r} must equal the file name {file.stem!r}",
                )
            )
            continue
        rubrics.append(rubric.model_copy(update={"content_hash": hash_bytes(file.read_bytes())}))

    skills: list[Skill] = []
    skills_root = root / "skills"
    if skills_root.is_dir():
        for skill_dir in sorted(p for p in skills_root.iterdir() if p.is_dir()):
            skill = _load_skill(skill_dir, problems)
            if skill is not None:
                skills.append(skill)

    # References are checked against what exists on disk, so one broken rubric or skill
    # is reported once, not again by every task that names it.
    rubric_ids = {f.stem for f in (root / "rubrics").glob("*.y*ml")}
    skill_names = (
        {p.name for p in skills_root.iterdir() if p.is_dir()} if skills_root.is_dir() else set()
    )
    tasks: list[Task] = []
    tasks_root = root / "tasks"
    if tasks_root.is_dir():
        for task_dir in sorted(p for p in tasks_root.iterdir() if p.is_dir()):
            task_file = task_dir / "task.yaml"
            if not task_file.is_file():
                problems.append(Problem(file=task_dir, message="task directory has no task.yaml"))
                continue
            try:
                data, lines = load_yaml(task_file)
            except PackError as exc:
                problems.extend(exc.problems)
                continue
            if isinstance(data, dict):
                data.setdefault("id", task_dir.name)
            task, errs = validate_document(Task, data, task_file, lines)
            problems.extend(errs)
            if task is None:
                continue
            if task.id != task_dir.name:
                problems.append(
                    Problem(
                        file=task_file,
                        line=lines.get(("id",)),
                        where="id",
                        message=f"task id {task.id!r} must equal its directory {task_dir.name!r}",
                    )
                )
                continue
            _check_task_refs(
                task,
                task_dir,
                task_file,
                lines,
                root,
                rubric_ids,
                skill_names,
                problems,
                set(manifest.mcp_servers) if manifest else set(),
            )
            tasks.append(task.model_copy(update={"content_hash": hash_tree(task_dir)}))

    if problems or manifest is None:
        raise PackError(problems)
    return TaskPack(
        id=manifest.id,
        version=manifest.version,
        environment=manifest.environment,
        description=manifest.description,
        tasks=tasks,
        rubrics=rubrics,
        skills=skills,
        mcp_servers=manifest.mcp_servers,
        versions=manifest.versions,
        content_hash=hash_tree(root),
    )
