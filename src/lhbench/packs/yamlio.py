"""YAML reading that remembers where every value stood, so errors can name the line."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from lhbench.errors import PackError, Problem

__all__ = [
    "MAX_YAML_BYTES",
    "MAX_YAML_NODES",
    "LineMap",
    "format_loc",
    "load_yaml",
    "parse_yaml",
    "validate_document",
]

# A pack file is written by hand: these are far above any real one, and keep a hostile
# one (a "billion laughs" of nested aliases, a huge file) from exhausting memory or time.
MAX_YAML_BYTES = 4 << 20
MAX_YAML_NODES = 200_000  # nodes visited with aliases expanded, as a validator would see them

M = TypeVar("M", bound=BaseModel)
Loc = tuple[str | int, ...]
LineMap = dict[Loc, int]


def format_loc(loc: Iterable[str | int]) -> str:
    """``('tiers', 0, 'weight')`` -> ``tiers[0].weight``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class _TooBig(Exception):
    pass


def _walk(
    node: yaml.Node,
    loc: Loc,
    loader: yaml.SafeLoader,
    lines: LineMap,
    problems: list[Problem],
    budget: list[int],
) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    lines[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[object, int] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str | int) or isinstance(key, bool):
                key = str(key)
            line = key_node.start_mark.line + 1
            if key in seen:
                problems.append(
                    Problem(
                        file=loader.name,
                        line=line,
                        where=format_loc((*loc, key)),
                        message=f"duplicate key '{key}' (first at line {seen[key]})",
                    )
                )
            seen[key] = line
            _walk(value_node, (*loc, key), loader, lines, problems, budget)
            lines[(*loc, key)] = line
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*loc, i), loader, lines, problems, budget)


def load_yaml(path: Path) -> tuple[Any, LineMap]:
    """Parse one YAML file; returns the data and a map from location to 1-based line.

    Raises:
        PackError: on a syntax error, duplicate key, or a file too big (or expanding to too
            many values through aliases), naming the file and line.
    """
    try:
        size = path.stat().st_size
        if size > MAX_YAML_BYTES:
            raise PackError(
                [
                    Problem(
                        file=path,
                        message=f"{size} bytes; a pack YAML file may have at most {MAX_YAML_BYTES}",
                    )
                ]
            )
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PackError([Problem(file=path, message=f"cannot read: {exc}")]) from None
    return parse_yaml(text, path)


def parse_yaml(text: str, path: Path, *, first_line: int = 1) -> tuple[Any, LineMap]:
    """Parse YAML ``text`` that stands at ``first_line`` of ``path`` (see :func:`load_yaml`)."""
    shift = first_line - 1
    if len(text) > MAX_YAML_BYTES:
        raise PackError([Problem(file=path, message=f"YAML text over {MAX_YAML_BYTES} characters")])
    loader = yaml.SafeLoader(text)
    loader.name = str(path)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        lines: LineMap = {}
        problems: list[Problem] = []
        _walk(node, (), loader, lines, problems, [MAX_YAML_NODES])
        if problems:
            raise PackError(
                [replace(p, line=p.line + shift if p.line else p.line) for p in problems]
            )
        data = loader.construct_document(node)
    except _TooBig:
        raise PackError(
            [
                Problem(
                    file=path,
                    line=first_line,
                    message=f"the document expands to more than {MAX_YAML_NODES} values "
                    "(nested YAML aliases?); refused",
                )
            ]
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "invalid YAML"
        raise PackError(
            [
                Problem(
                    file=path,
                    line=mark.line + 1 + shift if mark else None,
                    message=f"YAML syntax error: {what}",
                )
            ]
        ) from None
    except yaml.YAMLError as exc:
        raise PackError([Problem(file=path, message=f"YAML error: {exc}")]) from None
    finally:
        loader.dispose()
    return data, {k: v + shift for k, v in lines.items()}


def _line_for(loc: Loc, lines: LineMap) -> int | None:
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None


def validate_document(
    model: type[M], data: Any, path: Path, lines: LineMap, *, prefix: Loc = ()
) -> tuple[M | None, list[Problem]]:
    """Validate ``data`` as ``model``; on failure, one Problem per error with its line."""
    if not isinstance(data, dict):
        kind = "empty" if data is None else type(data).__name__
        return None, [Problem(file=path, line=1, message=f"expected a mapping, found {kind}")]
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False):
            loc = (*prefix, *err["loc"])
            msg = str(err["msg"]).removeprefix("Value error, ")
            if err["type"] == "missing":
                msg = "required field is missing"
            elif err["type"] == "extra_forbidden":
                msg = "unknown field (not part of the format)"
            elif err["type"] in ("enum", "literal_error"):
                msg = f"{msg}; found {err.get('input')!r}"
            problems.append(
                Problem(
                    file=path,
                    line=_line_for(loc, lines),
                    where=format_loc(loc) or None,
                    message=msg,
                )
            )
        return None, problems
