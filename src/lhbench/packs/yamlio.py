"""YAML reading that remembers where every value stood, so errors can name the line."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from lhbench.errors import PackError, Problem

__all__ = ["LineMap", "format_loc", "load_yaml", "validate_document"]

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


def _walk(
    node: yaml.Node, loc: Loc, loader: yaml.SafeLoader, lines: LineMap, problems: list[Problem]
) -> None:
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
            _walk(value_node, (*loc, key), loader, lines, problems)
            lines[(*loc, key)] = line
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*loc, i), loader, lines, problems)


def load_yaml(path: Path) -> tuple[Any, LineMap]:
    """Parse one YAML file; returns the data and a map from location to 1-based line.

    Raises:
        PackError: on a syntax error or duplicate key, naming the file and line.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PackError([Problem(file=path, message=f"cannot read: {exc}")]) from None
    loader = yaml.SafeLoader(text)
    loader.name = str(path)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        lines: LineMap = {}
        problems: list[Problem] = []
        _walk(node, (), loader, lines, problems)
        if problems:
            raise PackError(problems)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "invalid YAML"
        raise PackError(
            [
                Problem(
                    file=path,
                    line=mark.line + 1 if mark else None,
                    message=f"YAML syntax error: {what}",
                )
            ]
        ) from None
    finally:
        loader.dispose()
    return data, lines


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
