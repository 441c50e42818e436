"""The judges' tool worker: a replayed state's read-only tools, served inside the sandbox.

``python -I -m lhbench.tools.worker state [--root DIR] [--db URL] [--trajectory FILE]``,
``... web --index CORPUS.sqlite [--trajectory FILE]`` or ``... gui --state DIR [--modality
M] [--trajectory FILE]``. The same tool functions as the MCP servers
(:mod:`lhbench.tools.fs_server`, ``sql_server``, ``trajectory_server``, ``web_server``,
``gui_server``), without the MCP SDK: an agent judge starts one worker per verdict, and
importing the SDK alone took a second or more of CPU per start (the protocol stays with
the judge, in its own process: :mod:`lhbench.judges.tool_worker`).

The protocol is one JSON object per line. The worker's first line names its tools
(``{"tools": [{"name", "description", "parameters"}]}``, parameters as JSON Schema) or
says why it could not start (``{"error": "..."}``, exit 2). Then each request
``{"id", "tool", "args"}`` gets ``{"id", "ok": text}`` (or, for an answer with images,
``{"id", "ok": [{"text": ...} | {"image": base64, "format": "png"}, ...]}``) or
``{"id", "error": text}``: the
arguments are validated against the function's signature, a :class:`ToolFailure` is its
text, a crash is only "the tool crashed" (its traceback goes to stderr, the judge's log).
Requests are answered one at a time, in order; the worker ends at end of input.
"""

from __future__ import annotations

import argparse
import base64
import inspect
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from lhbench.tools.registry import Image, ToolFailure, ToolSet
from lhbench.tools.state_server import add_state_tools, state_arguments

__all__ = ["MAX_REQUEST_BYTES", "build_tools", "main", "serve"]

MAX_REQUEST_BYTES = 1 << 20  # one request line (a tool's arguments, from the judge model)


def build_tools(argv: list[str]) -> ToolSet:
    """The tool set the command line names (``state ...``, ``web ...`` or ``gui ...``).

    Raises:
        SystemExit: a bad command line (argparse's usage error).
        Exception: a target that cannot be served (a role that can write, a missing file).
    """
    ap = argparse.ArgumentParser(prog="python -m lhbench.tools.worker")
    sub = ap.add_subparsers(dest="kind", required=True)
    state_arguments(sub.add_parser("state", help="files or database, and trajectory"))
    web = sub.add_parser("web", help="the recorded web, and trajectory")
    web.add_argument("--index", type=Path, required=True)
    web.add_argument("--trajectory", type=Path)
    gui = sub.add_parser("gui", help="an office task's final document, and trajectory")
    gui.add_argument("--state", type=Path, required=True)
    gui.add_argument("--modality", choices=("screenshot", "a11y", "both"), default="both")
    gui.add_argument("--trajectory", type=Path)
    args = ap.parse_args(argv)
    tools = ToolSet()
    if args.kind == "state":
        if args.root is None and args.db is None and args.trajectory is None:
            ap.error("state: give at least one of --root, --db, --trajectory")
        add_state_tools(tools, root=args.root, db_url=args.db, trajectory=args.trajectory)
        return tools
    if args.kind == "web":
        from lhbench.tools.web_server import add_web_tools

        add_web_tools(args.index, tools)
    else:
        from lhbench.tools.gui_server import add_gui_tools

        add_gui_tools(args.state, args.modality, tools)
    if args.trajectory is not None:
        from lhbench.tools.trajectory_server import add_trajectory_tools

        add_trajectory_tools(args.trajectory, tools)
    return tools


class _Tool:
    """One function with its arguments' model (validation and JSON Schema)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        from pydantic import create_model

        self.fn = fn
        self.name = fn.__name__
        self.description = inspect.getdoc(fn) or ""
        fields: dict[str, Any] = {}
        for p in inspect.signature(fn, eval_str=True).parameters.values():
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[p.name] = (p.annotation, default)
        self.model = create_model(f"{self.name}Arguments", **fields)

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.model.model_json_schema(),
        }

    def call(self, args: object) -> dict[str, Any]:
        from pydantic import ValidationError
        from pydantic_core import to_json

        prefix = f"Error executing tool {self.name}"
        if not isinstance(args, dict):
            return {"error": f"{prefix}: the arguments are not an object"}
        try:
            validated = self.model.model_validate(args)
        except ValidationError as exc:
            return {"error": f"{prefix}: {exc}"}
        try:
            result = self.fn(**{k: getattr(validated, k) for k in type(validated).model_fields})
        except ToolFailure as exc:
            return {"error": f"{prefix}: {exc}"}
        except Exception:
            traceback.print_exc(file=sys.stderr)
            return {"error": f"{prefix}: the tool crashed"}
        if isinstance(result, str):
            return {"ok": result}
        if isinstance(result, (Image, list)):  # parts: text and images, as MCP's content
            return {"ok": [_part(r) for r in (result if isinstance(result, list) else [result])]}
        return {"ok": to_json(result, fallback=str).decode()}


def _part(item: object) -> dict[str, str]:
    if isinstance(item, Image):
        return {"image": base64.b64encode(item.data).decode(), "format": item.format}
    return {"text": item if isinstance(item, str) else str(item)}


def serve(tools: ToolSet, requests: IO[bytes], answers: IO[str]) -> None:
    """Answer ``requests`` (JSON lines) on ``answers`` until end of input."""
    served = {name: _Tool(fn) for name, fn in tools.functions.items()}
    _send(answers, {"tools": [t.definition() for t in served.values()]})
    while True:
        line = requests.readline(MAX_REQUEST_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_REQUEST_BYTES:
            _send(answers, {"id": None, "error": f"request over {MAX_REQUEST_BYTES} bytes"})
            return  # the rest of that line would be read as requests: stop here
        try:
            req = json.loads(line)
            rid, name, args = req.get("id"), req["tool"], req.get("args", {})
        except (ValueError, KeyError, TypeError, AttributeError):
            _send(answers, {"id": None, "error": "not a request: expected {id, tool, args}"})
            continue
        tool = served.get(name) if isinstance(name, str) else None
        if tool is None:
            _send(answers, {"id": rid, "error": f"no tool named {str(name)[:100]!r}"})
            continue
        _send(answers, {"id": rid, **tool.call(args)})


def _send(answers: IO[str], doc: dict[str, Any]) -> None:
    answers.write(json.dumps(doc, ensure_ascii=False) + "\n")
    answers.flush()


def main(argv: list[str] | None = None) -> None:
    """Build the named tools and serve them on stdin/stdout."""
    # stdout carries the protocol alone: anything a library prints goes to stderr
    # a file name that is not UTF-8 (os gives it with lone surrogates) goes out replaced,
    # never as an error that would end the worker
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", errors="replace")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    try:
        tools = build_tools(sys.argv[1:] if argv is None else argv)
    except Exception as exc:  # a role that can write, a missing or broken file: said, exit 2
        _send(answers, {"error": f"{type(exc).__name__}: {exc}"})
        sys.exit(2)
    serve(tools, sys.stdin.buffer, answers)


if __name__ == "__main__":
    main()
