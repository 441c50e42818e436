"""Search answers to judge, each split into items with one binary label per item.

A search task keeps its answers under ``tasks/<id>/answers/``: ``<answer>.json`` holds the
answer text and its items (``{"answer": str, "items": [{"id", "text", "sources"}]}``)
and ``<answer>.jsonl`` the answering agent's trajectory (lhbench's generic JSONL). Every
item becomes one run to label and judge (AJ-Bench labels the search domain per item).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lhbench.errors import PackError, Problem

__all__ = ["AnswerItem", "SearchAnswer", "load_answers"]

MAX_ANSWER_BYTES = 1_000_000
_ID = r"^[a-z0-9][a-z0-9._-]{0,79}$"


class AnswerItem(BaseModel):
    """One single-item unit of an answer: the claim to judge and the URLs it cites."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=_ID)
    text: str = Field(min_length=1, max_length=4000)
    sources: list[str] = Field(default_factory=list, max_length=20)


class SearchAnswer(BaseModel):
    """An agent's answer to a search task, split into items."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default="", pattern=r"^$|" + _ID)
    answer: str = Field(min_length=1, max_length=200_000)
    items: list[AnswerItem] = Field(min_length=1, max_length=500)

    def item(self, item_id: str) -> AnswerItem:
        """The item with this id (KeyError if none)."""
        for it in self.items:
            if it.id == item_id:
                return it
        raise KeyError(item_id)


def load_answers(task_dir: Path) -> list[SearchAnswer]:
    """The task's answers, in file-name order, with their ids from their file names.

    Raises:
        PackError: naming the file and JSON path of each problem.
    """
    out: list[SearchAnswer] = []
    problems: list[Problem] = []
    for f in sorted((task_dir / "answers").glob("*.json")):
        aid = f.stem
        if not re.match(_ID, aid):
            problems.append(Problem(f, f"answer id {aid!r} must match {_ID}"))
            continue
        if f.is_symlink() or not f.is_file():
            problems.append(Problem(f, "not a regular file"))
            continue
        if f.stat().st_size > MAX_ANSWER_BYTES:
            problems.append(Problem(f, f"larger than {MAX_ANSWER_BYTES} bytes"))
            continue
        if not f.with_suffix(".jsonl").is_file():
            problems.append(Problem(f, f"no trajectory {f.with_suffix('.jsonl').name} beside it"))
            continue
        try:
            ans = SearchAnswer.model_validate({**json.loads(f.read_bytes()), "id": aid})
        except (json.JSONDecodeError, UnicodeDecodeError, TypeError) as exc:
            problems.append(Problem(f, f"not a JSON object: {exc}"))
            continue
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or None
            problems.append(Problem(f, err["msg"], where=where))
            continue
        ids = [it.id for it in ans.items]
        dup = next((i for i in ids if ids.count(i) > 1), None)
        if dup is not None:
            problems.append(Problem(f, f"item id {dup!r} appears twice", where="items"))
            continue
        out.append(ans)
    if problems:
        raise PackError(problems)
    return out
