"""MCPMark's published task layout and trajectory logs, as an lhbench Agent-as-a-Judge pack.

MCPMark (the harness AJ-Bench's DS domain comes from) keeps a task at
``tasks/<service>/<suite>/<category>/<task>/`` (suite ``standard`` or ``easy``) with
``description.md`` (the instruction), ``meta.json`` (``task_id``, ``category_id``,
``difficulty``, …), ``verify.py`` and sometimes data its check reads (``customer_data.pkl``).
``verify.py`` checks the final state through environment variables: ``FILESYSTEM_TEST_DIR``
(filesystem) or ``POSTGRES_HOST/PORT/DATABASE/USERNAME/PASSWORD`` and ``DATABASE_URL``
(PostgreSQL; the ``supabase`` and ``insforge`` services run the same tasks); exit 0 is a
pass. A run log is a folder ``…/<category>__<task>/`` with ``messages.json`` (OpenAI chat
messages or Responses items) and ``meta.json`` (``mcp``, ``model_name`` and
``execution_result.success``: MCPMark's own verify on the live final state). The logs sit
under ``results/`` in any layout (``<model>__<service>[-easy]/<exp>/`` as MCPMark writes it,
``<server>/run-N/`` as its community experiments publish it).

Initial states are what MCPMark downloads per category; an import reads them from the
folder: ``test_environments/<category>/`` (filesystem) and ``postgres_state/<category>.sql``
(a plain SQL dump, as ``pg_dump`` or ``pg_restore -f`` writes it; a task MCPMark prepares
with its own script on an empty database reads ``postgres_state/<category>__<task>.sql``).
A task without one is skipped, and said so. The pack's tasks run MCPMark's ``verify.py``
unchanged (in ``mcpmark/`` beside its data) through a small ``verify.py`` that speaks
lhbench's protocol (``--root`` or ``--db``) and sets MCPMark's variables; it runs in the
sandbox like any check.

The filesystem server MCPMark runs is given the task's copy
(``/home/<user>/.mcpmark_backups/backup_<service>_<category>_<task>_<pid>``) and logs
absolute paths in it: they are rebased under the task root here
(:mod:`lhbench.ingest.mcpmark_paths`), and a call whose path leaves it is marked not
replayable, so its check is undecided rather than run on a state without that write.
MCPMark's recorded ``success`` is kept as the run's
:class:`~lhbench.schema.RecordedOutcome`, beside lhbench's own label.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lhbench.errors import PackError, Problem
from lhbench.ingest.mcpmark_logs import messages_to_steps, recorded_outcome, tool_output
from lhbench.ingest.mcpmark_paths import rebase_paths
from lhbench.schema import RECORDED_OUTCOME_KEY

__all__ = [
    "MCPMARK_SERVICES",
    "McpmarkImport",
    "import_mcpmark",
    "messages_to_steps",
    "recorded_outcome",
    "tool_output",
]

MCPMARK_SERVICES = {"filesystem": "filesystem", "postgres": "sql"}
# services that run the postgres tasks on another backend (MCPMark links their task trees)
SERVICE_ALIASES = {"supabase": "postgres", "insforge": "postgres"}
MAX_JSON_BYTES = 50_000_000
_TASK_FILES = {"description.md", "meta.json"}  # read into task.yaml, not copied

_WRAPPER = '''"""lhbench's verify protocol around MCPMark's own verify.py (in mcpmark/)."""
import argparse, json, os, subprocess, sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

ap = argparse.ArgumentParser(); ap.add_argument("--root"); ap.add_argument("--db")
a = ap.parse_args()
env = dict(os.environ)
if a.root:
    env["FILESYSTEM_TEST_DIR"] = a.root
if a.db:
    u = urlsplit(a.db)
    if not u.scheme.startswith("postgresql"):
        print(json.dumps({"detail": "MCPMark PostgreSQL checks need a PostgreSQL replay"}))
        sys.exit(3)
    env.update(
        POSTGRES_HOST=u.hostname or "127.0.0.1", POSTGRES_PORT=str(u.port or 5432),
        POSTGRES_DATABASE=u.path.lstrip("/"), POSTGRES_USERNAME=unquote(u.username or ""),
        POSTGRES_PASSWORD=unquote(u.password or ""), DATABASE_URL=a.db,
    )
script = Path(__file__).parent / "mcpmark" / "verify.py"
r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
tail = [ln for ln in (r.stdout + r.stderr).strip().splitlines() if ln.strip()][-3:]
detail = " | ".join(tail)[-500:]
code = r.returncode if r.returncode in (0, 1) else 2
if code == 1 and "Traceback (most recent call last)" in r.stderr:
    code, detail = 2, "MCPMark's verify.py crashed: " + detail  # no verdict, an error
if code == 1 and "in a read-only transaction" in r.stdout + r.stderr:
    # MCPMark runs its checks as the database's owner; lhbench's get a read-only role
    code, detail = 2, "MCPMark's check needs to write, lhbench's checks read only: " + detail
print(json.dumps({"detail": detail}))
sys.exit(code)
'''


@dataclass
class McpmarkImport:
    """What an import wrote: the pack, its tasks, trajectories, and what it left out.

    ``skipped`` names tasks and logs not imported and why; ``refused`` names the calls
    whose paths left the task root (their runs' checks will be undecided).
    """

    pack_dir: Path
    tasks: list[str] = field(default_factory=list)
    trajectories: int = 0
    skipped: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Task:
    id: str
    service: str
    suite: str
    category: str
    name: str


def _slug(*parts: str) -> str:
    s = "-".join(parts).lower()
    s = re.sub(r"[^a-z0-9_.-]+", "-", s).strip("-.")
    return s or "task"


def _read_json(path: Path) -> Any:
    if path.is_symlink() or not path.is_file():
        raise PackError([Problem(path, "not a regular file")])
    if path.stat().st_size > MAX_JSON_BYTES:
        raise PackError([Problem(path, f"larger than {MAX_JSON_BYTES} bytes")])
    try:
        return json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PackError([Problem(path, f"not JSON: {exc}")]) from None


def _task_dirs(src: Path) -> list[tuple[str, str, Path]]:
    """(service, suite, task dir) of every filesystem/postgres task under ``tasks/``."""
    out = []
    for service in MCPMARK_SERVICES:
        base = src / "tasks" / service
        if not base.is_dir() or base.is_symlink():
            continue
        for verify in sorted(base.rglob("verify.py")):
            d = verify.parent
            rel = d.relative_to(base).parts
            if len(rel) < 2 or not (d / "description.md").is_file() or d.is_symlink():
                continue
            suite = rel[0] if len(rel) >= 3 else "standard"
            out.append((service, suite, d))
    return out


def _copy_task_files(d: Path, dest: Path) -> None:
    """MCPMark's verify.py and the data beside it (regular files only: no link is followed)."""
    for f in sorted(d.rglob("*")):
        rel = f.relative_to(d)
        if f.is_symlink() or not f.is_file() or str(rel) in _TASK_FILES:
            continue
        if any(p.is_symlink() for p in f.parents if d in p.parents):
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dest / rel)


def _suite_of(rel: Path) -> str:
    """The task suite a log belongs to: ``<model>__<service>-easy`` names a non-standard one."""
    services = "|".join([*MCPMARK_SERVICES, *SERVICE_ALIASES])
    for part in rel.parts:
        m = re.search(rf"__(?:{services})-([a-z0-9_]+)$", part)
        if m:
            return m.group(1)
    return "standard"


def import_mcpmark(src: Path, out: Path, *, pack_id: str = "mcpmark") -> McpmarkImport:
    """Write an lhbench pack at ``out`` from an MCPMark folder at ``src``.

    Raises:
        PackError: a file is malformed (named, with the place), or no task could be imported.
    """
    src, out = Path(src), Path(out)
    found = _task_dirs(src)
    if not found:
        raise PackError([Problem(src / "tasks", "no filesystem or postgres task with verify.py")])
    if out.exists():
        shutil.rmtree(out)
    (out / "tasks").mkdir(parents=True)
    res = McpmarkImport(out)
    by_name: dict[tuple[str, str, str], _Task] = {}
    not_imported: dict[tuple[str, str, str], str] = {}
    for service, suite, d in found:
        meta = _read_json(d / "meta.json") if (d / "meta.json").is_file() else {}
        if not isinstance(meta, dict):
            raise PackError([Problem(d / "meta.json", "expected a JSON object")])
        category = str(meta.get("category_id") or d.parent.name)
        name = str(meta.get("task_id") or d.name)
        tid = _slug(service, *([] if suite == "standard" else [suite]), category, name)
        key = (service, suite, f"{category}__{name}")
        if (out / "tasks" / tid).exists():
            res.skipped.append(f"task {tid}: a second task of that name at {d}")
            continue
        why = _write_task(src, d, out / "tasks" / tid, service, category, name, meta, res.skipped)
        if why:
            not_imported[key] = why
            res.skipped.append(f"task {tid}: {why}")
            continue
        by_name[key] = _Task(tid, service, suite, category, name)
        res.tasks.append(tid)
    if not res.tasks:
        raise PackError([Problem(src / "tasks", "no task could be imported: " + res.skipped[0])])
    _import_logs(src, out, res, by_name, not_imported)
    (out / "pack.yaml").write_text(
        yaml.safe_dump(
            {
                "id": pack_id,
                "version": "1.0",
                "environment": "mixed",
                "description": f"Imported from MCPMark's task layout at {src.name}/ "
                "(filesystem and postgres); labels come from the tasks' own verify.py, "
                "MCPMark's recorded outcomes are kept beside them.",
            },
            sort_keys=False,
        ),
        encoding="utf-8",
    )
    return res


def _links_out(initial: Path, dropped: list[str]) -> Callable[[str, list[str]], set[str]]:
    """A copytree filter leaving out symlinks that lead outside the initial state."""
    top = os.path.realpath(initial)

    def ignore(folder: str, names: list[str]) -> set[str]:
        out = set()
        for name in names:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                target = os.path.realpath(path)
                if target != top and not target.startswith(top + os.sep):
                    out.add(name)
                    dropped.append(f"{path}: a symlink out of the initial state, left out")
        return out

    return ignore


def _write_task(
    src: Path,
    d: Path,
    t: Path,
    service: str,
    category: str,
    name: str,
    meta: dict[str, Any],
    dropped: list[str],
) -> str | None:
    """Write one task (its initial state first); why it cannot be imported, or None."""
    env: dict[str, Any] = {"kind": MCPMARK_SERVICES[service], "verify": "verify.py"}
    if service == "filesystem":
        initial = src / "test_environments" / category
        if not initial.is_dir() or initial.is_symlink():
            return f"no initial state: {initial} is missing"
        t.mkdir()
        shutil.copytree(initial, t / "initial", symlinks=True, ignore=_links_out(initial, dropped))
        env["initial_state"] = "initial"
    else:
        # the task's own database (one MCPMark builds with prepare_environment.py), else
        # its category's
        dumps = [src / "postgres_state" / f"{x}.sql" for x in (f"{category}__{name}", category)]
        dump = next((x for x in dumps if x.is_file() and not x.is_symlink()), None)
        if dump is None:
            how = (
                " (MCPMark builds it with prepare_environment.py on an empty database)"
                if (d / "prepare_environment.py").is_file()
                else ""
            )
            return f"no initial database: {dumps[1]} is missing{how}"
        t.mkdir()
        shutil.copyfile(dump, t / "seed.sql")
        env["database"] = "seed.sql"
    _copy_task_files(d, t / "mcpmark")
    (t / "verify.py").write_text(_WRAPPER, encoding="utf-8")
    extra = {"mcpmark_category": category, "mcpmark_task": name}
    if meta.get("difficulty"):
        extra["difficulty"] = str(meta["difficulty"])
    doc = {
        "title": str(meta.get("task_name") or name),
        "instruction": (d / "description.md").read_text(encoding="utf-8"),
        "environment": env,
        "tags": {"category": "data-systems", "subdomain": service, "extra": extra},
    }
    (t / "task.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return None


def _import_logs(
    src: Path,
    out: Path,
    res: McpmarkImport,
    by_name: dict[tuple[str, str, str], _Task],
    not_imported: dict[tuple[str, str, str], str],
) -> None:
    results = src / "results"
    for msgs in sorted(results.rglob("messages.json")) if results.is_dir() else []:
        rel = msgs.parent.relative_to(results)
        meta_file = msgs.with_name("meta.json")
        meta = _read_json(meta_file) if meta_file.is_file() else {}
        if not isinstance(meta, dict):
            raise PackError([Problem(meta_file, "expected a JSON object")])
        task_name = str(meta.get("task_name") or msgs.parent.name)
        mcp = str(meta.get("mcp") or "")
        service = SERVICE_ALIASES.get(mcp, mcp)
        key = (service, _suite_of(rel), task_name)
        target = by_name.get(key) or (
            None if mcp else next((v for k, v in by_name.items() if k[2] == task_name), None)
        )
        outcome = recorded_outcome(meta, f"results/{rel}")
        if target is None:
            why = not_imported.get(key) or (
                f"not a filesystem or postgres run (mcp {mcp!r})"
                if service not in MCPMARK_SERVICES
                else f"no imported task {task_name!r}"
            )
            res.skipped.append(f"{rel}: {why}")
            continue
        if outcome is not None and outcome.passed is None:
            res.skipped.append(f"{rel}: {outcome.detail}: no agent run to judge")
            continue
        steps = messages_to_steps(_read_json(msgs), msgs)
        if target.service == "filesystem":
            task_key = f"{target.category}_{target.name}"
            for why in rebase_paths(steps, task_key):
                res.refused.append(f"{rel}: {why}")
        metadata: dict[str, Any] = {"mcpmark_log": str(rel), "mcpmark_service": mcp or service}
        if outcome is not None:
            metadata[RECORDED_OUTCOME_KEY] = outcome.model_dump(mode="json")
        header = {
            "type": "run",
            "session_id": str(rel),
            "model": str(meta.get("model_name") or "mcpmark"),
            "metadata": metadata,
        }
        lines = [header, *steps, {"type": "end", "status": "completed"}]
        f = out / "tasks" / target.id / "trajectories" / f"{_slug(*rel.parts[:-1]) or 'run'}.jsonl"
        if f.exists():
            res.skipped.append(f"{rel}: a second log of {task_name} in the same folder")
            continue
        f.parent.mkdir(exist_ok=True)
        f.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        res.trajectories += 1
