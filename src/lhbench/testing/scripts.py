"""Ready-made stub scripts: answers a rubric judge or a pairwise judge would give.

They read the request the way a model would (the rubric's dimension ids are in the
prompt; the structured-output tool is in ``tools``) and answer with scores chosen by a
function the caller supplies, so tests know exactly what every judge said.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable

from lhbench.testing.stub import StubReply, StubRequest

__all__ = [
    "ScoreFn",
    "dimension_ids",
    "hashed_scores",
    "rubric_judge_script",
    "run_mark",
    "verdict_judge_script",
]

ScoreFn = Callable[[str, str, StubRequest], int | None]
_DIM = re.compile(
    r"^### ([a-z0-9][a-z0-9_\-]*): .*\(weight [0-9.]+, scale (1-5|0-2|binary)\)$", re.M
)
_MARK = re.compile(r"RUN-MARK:([A-Za-z0-9_\-]+)")


def dimension_ids(req: StubRequest) -> list[tuple[str, str]]:
    """(dimension id, scale) pairs named in the rubric part of the prompt."""
    text = req.last_user_text() or req.text()
    return _DIM.findall(text)


def run_mark(req: StubRequest) -> str:
    """The ``RUN-MARK:<id>`` a test put in a trajectory, to tell runs apart ('' if none)."""
    m = _MARK.search(req.last_user_text() or req.text())
    return m.group(1) if m else ""


def hashed_scores(model: str, dimension: str, req: StubRequest) -> int:
    """A deterministic 1–5 score per (model, run mark, dimension)."""
    digest = hashlib.sha256(f"{model}|{run_mark(req)}|{dimension}".encode()).digest()
    return 1 + digest[0] % 5


def rubric_judge_script(score: ScoreFn = hashed_scores) -> Callable[[StubRequest], StubReply]:
    """A script answering rubric-judge requests through the output tool."""

    def script(req: StubRequest) -> StubReply:
        tool = req.tool_names[0] if req.tool_names else None
        dims = dimension_ids(req)
        answers = []
        for dim, _scale in dims:
            s = score(req.model, dim, req)
            answers.append(
                {
                    "dimension_id": dim,
                    "evidence": f"stub evidence for {dim}",
                    "score": s,
                    "unscorable_reason": None if s is not None else "not shown",
                }
            )
        payload = {"dimensions": answers}
        if tool is None:
            return StubReply(content=json.dumps(payload))
        return StubReply.call(tool, payload)

    return script


def verdict_judge_script(verdict: str = "PASS") -> Callable[[StubRequest], StubReply]:
    """A script for verdict judges: look once at the state (when tools are offered), then answer."""
    state_tools = ("list_directory", "list_tables")

    def script(req: StubRequest) -> StubReply:
        offered = [t for t in req.tool_names if t in state_tools]
        if offered and not req.tool_results():
            return StubReply.call(offered[0], {})
        out = next((t for t in req.tool_names if t == "final_result"), None)
        answer = {
            "verdict": verdict,
            "evidence": [f"looked at {len(req.tool_results())} tool result(s)"],
            "confidence": 0.5,
        }
        return StubReply.call(out, answer) if out else StubReply(content=json.dumps(answer))

    return script
