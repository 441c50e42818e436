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
    "manifest_planner_script",
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


def manifest_planner_script(
    steps: tuple[str, ...] = ("one", "two", "three"),
) -> Callable[[StubRequest], StubReply]:
    """A scripted agent for the native harness, driven by its manifest.

    It reads the manifest, then for each step not yet completed writes ``<step>.txt`` and
    records the step; it finishes when all are done. Stateless: everything it decides
    comes from the conversation in the request.
    """

    def script(req: StubRequest) -> StubReply:
        calls: list[tuple[str, str, dict[str, object]]] = []
        for m in req.messages:
            for c in m.get("tool_calls") or []:
                fn = c.get("function", {})
                calls.append(
                    (c.get("id", ""), fn.get("name", ""), json.loads(fn.get("arguments") or "{}"))
                )
        results = {
            m.get("tool_call_id"): str(m.get("content", ""))
            for m in req.messages
            if m.get("role") == "tool"
        }
        if not calls:
            return StubReply.call("read_manifest", {})
        done: set[str] = set()
        for cid, name, args in calls:
            if name == "read_manifest" and cid in results:
                done |= set(json.loads(results[cid]).get("completed_steps", []))
            if name == "complete_step" and cid in results:
                done.add(str(args.get("step")))
        _last_id, last_name, last_args = calls[-1]
        if last_name == "write_file":
            return StubReply.call(
                "complete_step", {"step": str(last_args["path"]).removesuffix(".txt")}
            )
        pending = [s for s in steps if s not in done]
        if pending:
            return StubReply.call(
                "write_file", {"path": f"{pending[0]}.txt", "content": pending[0]}
            )
        return StubReply(content=f"All steps done: {', '.join(steps)}.")

    return script
