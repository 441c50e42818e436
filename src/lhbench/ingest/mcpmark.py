"""MCPMark's published task layout and trajectory logs, as an lhbench Agent-as-a-Judge pack.

MCPMark (the harness AJ-Bench's DS domain comes from) keeps a task at
``tasks/<service>/[standard/]<category>/<task>/`` with ``description.md`` (the
instruction), ``meta.json`` (``task_id``, ``task_name``, ``category_id``, ``difficulty``,
``tags``, ``mcp``, ``meta_data.stateUrl``) and ``verify.py``, which checks the final
state through environment variables: ``FILESYSTEM_TEST_DIR`` (filesystem) or
``POSTGRES_HOST/PORT/DATABASE/USERNAME/PASSWORD`` and ``DATABASE_URL`` (PostgreSQL); exit
0 is a pass. Its run logs keep, per task, ``messages.json`` (the chat messages) beside a
``meta.json`` whose ``task_name`` is ``<category>__<task>``.

Initial states are what MCPMark downloads per category; an import reads them from the
folder: ``test_environments/<category>/`` (filesystem) and ``postgres_state/<category>.sql``
(a plain SQL dump). The import writes a pack whose tasks run MCPMark's ``verify.py``
unchanged, through a small ``verify.py`` that speaks lhbench's protocol (``--root`` or
``--db``) and sets MCPMark's variables; it runs in the sandbox like any pack check.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lhbench.errors import PackError, Problem

__all__ = ["MCPMARK_SERVICES", "McpmarkImport", "import_mcpmark", "messages_to_steps"]

MCPMARK_SERVICES = {"filesystem": "filesystem", "postgres": "sql"}
MAX_JSON_BYTES = 50_000_000

_WRAPPER = '''"""lhbench's verify protocol around MCPMark's own verify.py (mcpmark_verify.py)."""
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
script = Path(__file__).with_name("mcpmark_verify.py")
r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
tail = [ln for ln in (r.stdout + r.stderr).strip().splitlines() if ln.strip()][-3:]
print(json.dumps({"detail": " | ".join(tail)[-500:]}))
sys.exit(r.returncode if r.returncode in (0, 1) else 2)
'''


@dataclass
class McpmarkImport:
    """What an import wrote: the pack, its tasks, and trajectories (and what it skipped)."""

    pack_dir: Path
    tasks: list[str] = field(default_factory=list)
    trajectories: int = 0
    skipped: list[str] = field(default_factory=list)


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


def _text(content: Any) -> str:
    """A message's content as text (a string, or OpenAI content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else json.dumps(content)


def messages_to_steps(messages: Any, where: Path) -> list[dict[str, Any]]:
    """MCPMark chat messages (OpenAI chat or Responses items) as generic-JSONL steps."""
    if not isinstance(messages, list):
        raise PackError([Problem(where, "expected a JSON list of messages")])
    steps: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise PackError([Problem(where, "a message is not an object", where=f"[{i}]")])
        role, kind = m.get("role"), m.get("type")
        if kind == "function_call":
            steps.append(_call(m.get("call_id") or m.get("id"), m.get("name"), m.get("arguments")))
        elif kind == "function_call_output":
            steps.append(_result(m.get("call_id"), m.get("output")))
        elif role == "tool":
            steps.append(_result(m.get("tool_call_id"), m.get("content")))
        elif role in ("user", "assistant", "system"):
            text = _text(m.get("content"))
            if text.strip():
                steps.append({"role": role, "kind": "message", "content": text})
            for c in m.get("tool_calls") or []:
                fn = c.get("function", {}) if isinstance(c, dict) else {}
                steps.append(_call(c.get("id"), fn.get("name"), fn.get("arguments")))
        else:
            raise PackError(
                [Problem(where, f"unknown message (role {role!r}, type {kind!r})", where=f"[{i}]")]
            )
    return steps


def _call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    args = arguments
    if isinstance(arguments, str):
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            args = {"raw": arguments}
    return {
        "role": "assistant",
        "kind": "tool_call",
        "tool_name": str(name or "unknown"),
        "tool_call_id": str(call_id or ""),
        "tool_input": args if isinstance(args, dict) else {"value": args},
    }


def _result(call_id: Any, output: Any) -> dict[str, Any]:
    return {
        "role": "tool",
        "kind": "tool_result",
        "tool_call_id": str(call_id or ""),
        "tool_output": _text(output),
    }


def _task_dirs(src: Path) -> list[tuple[str, str, Path]]:
    """(service, category, task dir) of every filesystem/postgres task under ``tasks/``."""
    out = []
    for service in MCPMARK_SERVICES:
        base = src / "tasks" / service
        for verify in sorted(base.rglob("verify.py")) if base.is_dir() else []:
            d = verify.parent
            if (d / "description.md").is_file() and not d.is_symlink():
                out.append((service, d.parent.name, d))
    return out


def import_mcpmark(src: Path, out: Path, *, pack_id: str = "mcpmark") -> McpmarkImport:
    """Write an lhbench pack at ``out`` from an MCPMark folder at ``src``.

    Raises:
        PackError: a file is malformed (named, with the place), or no task was found.
    """
    src, out = Path(src), Path(out)
    tasks = _task_dirs(src)
    if not tasks:
        raise PackError([Problem(src / "tasks", "no filesystem or postgres task with verify.py")])
    if out.exists():
        shutil.rmtree(out)
    (out / "tasks").mkdir(parents=True)
    res = McpmarkImport(out)
    by_name: dict[tuple[str, str], str] = {}
    for service, category, d in tasks:
        meta = _read_json(d / "meta.json") if (d / "meta.json").is_file() else {}
        if not isinstance(meta, dict):
            raise PackError([Problem(d / "meta.json", "expected a JSON object")])
        category = str(meta.get("category_id") or category)
        name = str(meta.get("task_id") or d.name)
        tid = _slug(service, category, name)
        t = out / "tasks" / tid
        t.mkdir()
        shutil.copyfile(d / "verify.py", t / "mcpmark_verify.py")
        (t / "verify.py").write_text(_WRAPPER, encoding="utf-8")
        env: dict[str, Any] = {"kind": MCPMARK_SERVICES[service], "verify": "verify.py"}
        if service == "filesystem":
            initial = src / "test_environments" / category
            if not initial.is_dir():
                raise PackError([Problem(initial, f"missing: the initial state of {tid}")])
            shutil.copytree(initial, t / "initial", symlinks=True)
            env["initial_state"] = "initial"
        else:
            dump = src / "postgres_state" / f"{category}.sql"
            if not dump.is_file():
                raise PackError([Problem(dump, f"missing: the initial database of {tid}")])
            shutil.copyfile(dump, t / "seed.sql")
            env["database"] = "seed.sql"
        extra = {"mcpmark_category": category}
        if meta.get("difficulty"):
            extra["difficulty"] = str(meta["difficulty"])
        doc = {
            "title": str(meta.get("task_name") or name),
            "instruction": (d / "description.md").read_text(encoding="utf-8"),
            "environment": env,
            "tags": {
                "category": "data-systems",
                "subdomain": service,
                "extra": extra,
            },
        }
        (t / "task.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
        by_name[(service, f"{category}__{name}")] = tid
        res.tasks.append(tid)
    for msgs in sorted((src / "results").rglob("messages.json")):
        meta_file = msgs.with_name("meta.json")
        meta = _read_json(meta_file) if meta_file.is_file() else {}
        task_name = str(meta.get("task_name", msgs.parent.name)) if isinstance(meta, dict) else ""
        service = str(meta.get("mcp", "")) if isinstance(meta, dict) else ""
        target = by_name.get((service, task_name)) or next(
            (v for (s, n), v in by_name.items() if n == task_name), None
        )
        rel = msgs.parent.relative_to(src / "results")
        if target is None:
            res.skipped.append(f"{rel}: no imported task {task_name!r}")
            continue
        steps = messages_to_steps(_read_json(msgs), msgs)
        model = str(meta.get("model_name", "mcpmark")) if isinstance(meta, dict) else "mcpmark"
        success = (meta.get("execution_result") or {}).get("success") if meta else None
        header = {
            "type": "run",
            "session_id": str(rel),
            "model": model,
            "metadata": {"mcpmark_success": success, "mcpmark_log": str(rel)},
        }
        lines = [header, *steps, {"type": "end", "status": "completed"}]
        run_name = _slug(*rel.parts[:-1]) or "run"
        f = out / "tasks" / target / "trajectories" / f"{run_name}.jsonl"
        f.parent.mkdir(exist_ok=True)
        f.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        res.trajectories += 1
    (out / "pack.yaml").write_text(
        yaml.safe_dump(
            {
                "id": pack_id,
                "version": "1.0",
                "environment": "mixed",
                "description": f"Imported from MCPMark's task layout at {src.name}/ "
                "(filesystem and postgres); labels come from the tasks' own verify.py.",
            },
            sort_keys=False,
        ),
        encoding="utf-8",
    )
    return res
