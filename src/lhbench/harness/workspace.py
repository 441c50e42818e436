"""Run workspaces.

The task's initial state copied per run, a volume of the run's own (``LHBENCH_VOLUME``:
nothing written there reaches another run or task), a scrubbed environment, and the
skill put where each harness looks for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from lhbench.envs.paths import replace_beneath
from lhbench.schema import Task, TaskPack

__all__ = [
    "ENV_ALLOW",
    "SQL_STATE_FILE",
    "Workspace",
    "install_skills",
    "prepare_workspace",
    "run_id_for",
    "scrubbed_env",
    "skill_text",
]

SQL_STATE_FILE = "database.sqlite"

ENV_ALLOW = ("PATH", "LANG", "LC_ALL", "TERM", "TZ", "SSL_CERT_FILE", "SSL_CERT_DIR")


def run_id_for(
    pack: TaskPack, task: Task, harness: str, model: str, versions: dict[str, str], repeat: int
) -> str:
    """A stable run id: the same command resumes the same run."""
    doc = json.dumps(
        [pack.id, pack.content_hash, task.id, harness, model, sorted(versions.items()), repeat]
    )
    digest = hashlib.sha256(doc.encode()).hexdigest()[:12]
    return f"{harness}-{task.id}-r{repeat}-{digest}"


def scrubbed_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Only allow-listed variables from the parent, plus HOME set to the run's home."""
    env = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
    env["HOME"] = str(home)
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class Workspace:
    """Where a run works: ``root`` (the task state), ``home``, and its own ``volume``."""

    root: Path
    home: Path
    volume: Path
    run_dir: Path
    resumed: bool


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


def skill_text(
    pack: TaskPack, pack_dir: Path, task: Task, versions: dict[str, str]
) -> dict[str, str]:
    """Name -> SKILL.md text for the task's skills; ``versions['skill']`` picks the variant.

    ``default`` (or no ``skill`` key) is SKILL.md, ``none`` no skill at all (the ablation
    baseline), any other value a ``versions/<value>.md`` the skill declares. A variant the
    pack does not declare is refused: it is never read as a path.
    """
    variant = versions.get("skill", "default")
    if variant == "none":
        return {}
    out = {}
    for name in task.skills:
        skill = next(s for s in pack.skills if s.name == name)
        base = pack_dir / "skills" / name
        if variant == "default":
            path = base / "SKILL.md"
        elif variant in skill.versions:
            path = base / "versions" / f"{variant}.md"
        else:
            raise ValueError(
                f"skill {name!r} has no version {variant!r}; "
                f"it has: {', '.join(sorted(skill.versions)) or 'none'}"
            )
        out[name] = path.read_text(encoding="utf-8")
    return out


def prepare_workspace(
    home_dir: Path, run_id: str, pack_dir: Path, task: Task, harness: str, model: str
) -> Workspace:
    """The run's directories; an existing workspace is kept (a restarted run resumes in it)."""
    run_dir = home_dir / "runs" / run_id
    root = run_dir / "workspace"
    resumed = root.exists()
    if not resumed:
        initial = (
            pack_dir / "tasks" / task.id / task.environment.initial_state
            if task.environment.initial_state
            else None
        )
        if initial is not None and initial.is_dir():
            shutil.copytree(initial, root, symlinks=True)
        else:
            root.mkdir(parents=True)
        if task.environment.database:
            # a SQL task's database, as a SQLite file the agent works on (its final state)
            dump = pack_dir / "tasks" / task.id / task.environment.database
            conn = sqlite3.connect(root / SQL_STATE_FILE)
            try:
                conn.executescript(dump.read_text(encoding="utf-8"))
                conn.commit()
            finally:
                conn.close()
    home = run_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    # the run's own: a volume shared by runs would carry answers or a poisoned cache from
    # one run (or task) to the next
    volume = run_dir / "volume"
    volume.mkdir(parents=True, exist_ok=True)
    return Workspace(root=root, home=home, volume=volume, run_dir=run_dir, resumed=resumed)


def install_skills(ws: Workspace, harness: str, skills: dict[str, str]) -> None:
    """Put each SKILL.md where the harness discovers skills (Codex and ours take them inline)."""
    for name, text in skills.items():
        if harness == "claude-code":
            target = ws.root / ".claude" / "skills" / name / "SKILL.md"
        elif harness == "gemini-cli":
            target = ws.root / ".gemini" / "skills" / name / "SKILL.md"
        else:
            continue
        # a kept workspace (a retried run) is the agent's: never write through its links
        replace_beneath(
            ws.root, target.relative_to(ws.root).as_posix(), text.encode("utf-8"), reset_links=True
        )
