"""Ready-made stub scripts: answers a rubric judge or a pairwise judge would give.

They read the request the way a model would (the rubric's dimension ids are in the
prompt; the structured-output tool is in ``tools``) and answer with scores chosen by a
function the caller supplies, so tests know exactly what every judge said.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Callable

from lhbench.testing.stub import StubReply, StubRequest

__all__ = [
    "ScoreFn",
    "auto_script",
    "chapter_rubric_writer_script",
    "dimension_ids",
    "figma_agent_script",
    "hashed_scale_scores",
    "hashed_scores",
    "manifest_planner_script",
    "pairwise_judge_script",
    "rubric_judge_script",
    "run_mark",
    "stub_agent_script",
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


def _digest(*parts: str) -> int:
    return hashlib.sha256("|".join(parts).encode()).digest()[0]


_LEVELS = {"1-5": (1, 2, 3, 4, 5), "0-2": (0, 1, 2), "binary": (0, 1)}


def hashed_scale_scores(model: str, dimension: str, req: StubRequest) -> int:
    """A deterministic score on the dimension's own scale (1–5, 0–2 or binary)."""
    scales = dict(dimension_ids(req))
    levels = _LEVELS.get(scales.get(dimension, "1-5"), _LEVELS["1-5"])
    # the whole request: the evidence (transcript or artifacts) is what differs between runs
    text = req.last_user_text() or req.text()
    return levels[_digest(model, run_mark(req) or text, dimension) % len(levels)]


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


def verdict_judge_script(verdict: str | None = "PASS") -> Callable[[StubRequest], StubReply]:
    """A script for verdict judges: look once at the state (when tools are offered), then answer.

    ``verdict=None`` picks PASS or FAIL from a hash of the request (a placeholder answer).
    """
    state_tools = ("list_directory", "list_tables")

    def script(req: StubRequest) -> StubReply:
        offered = [t for t in req.tool_names if t in state_tools]
        if offered and not req.tool_results():
            return StubReply.call(offered[0], {})
        out = next((t for t in req.tool_names if t == "final_result"), None)
        # a placeholder verdict from the prompt (the task and trajectory), for dry runs
        prompt = next(
            (str(m.get("content", "")) for m in req.messages if m.get("role") == "user"), ""
        )
        said = verdict or ("PASS" if _digest(req.model, prompt) % 2 else "FAIL")
        answer = {
            "verdict": said,
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


def pairwise_judge_script() -> Callable[[StubRequest], StubReply]:
    """A script for pairwise judges: first, second or tie from a hash of the request."""

    def script(req: StubRequest) -> StubReply:
        text = req.last_user_text() or req.text()
        preferred = ("first", "second", "tie")[_digest(req.model, text) % 3]
        answer = {
            "reasoning": "stub: a scripted placeholder, not a judgement",
            "preferred": preferred,
        }
        out = next((t for t in req.tool_names if t == "final_result"), None)
        return StubReply.call(out, answer) if out else StubReply(content=json.dumps(answer))

    return script


def stub_agent_script() -> Callable[[StubRequest], StubReply]:
    """A scripted agent for the native harness on any task (a dry run, not a model).

    It reads the manifest, lists the workspace, writes ``NOTES.md`` saying it is a stub,
    records the step, and finishes. Stateless: it counts its own earlier tool calls.
    """

    def script(req: StubRequest) -> StubReply:
        calls = [
            c.get("function", {}).get("name", "")
            for m in req.messages
            for c in (m.get("tool_calls") or [])
        ]
        task = next(
            (str(m.get("content", "")) for m in req.messages if m.get("role") == "user"), ""
        )
        plan: list[tuple[str, dict[str, object]]] = [
            ("read_manifest", {}),
            ("list_dir", {"path": "."}),
            (
                "write_file",
                {
                    "path": "NOTES.md",
                    "content": "# Notes\n\nWritten by the lhbench model stub (a scripted "
                    f"server, not a model) for the task:\n\n> {task.strip()[:300]}\n",
                },
            ),
            ("complete_step", {"step": "notes"}),
        ]
        offered = set(req.tool_names)
        for name, args in plan[len(calls) :]:
            if name in offered:
                return StubReply.call(name, args)
        return StubReply(content="Done. (The lhbench model stub answered: no model ran.)")

    return script


_LEVELS_ASKED = re.compile(r"give one anchor for each level: ([0-9, ]+)\.")
_CHAPTER_ASKED = re.compile(r"^Chapter: (.+) \(([a-z0-9][a-z0-9_\-]*)\)$", re.M)


def chapter_rubric_writer_script() -> Callable[[StubRequest], StubReply]:
    """A script for chapter-rubric synthesis: one dimension per chapter, an anchor per level.

    The anchors name the chapter and the level, so they are distinct and tests can tell
    which chapter a rubric was written for (a placeholder, never a judgement).
    """

    def script(req: StubRequest) -> StubReply:
        text = req.last_user_text() or req.text()
        asked = _LEVELS_ASKED.search(text)
        levels = [int(x) for x in asked.group(1).split(",")] if asked else [1, 2, 3, 4, 5]
        m = _CHAPTER_ASKED.search(text)
        cid = m.group(2) if m else "chapter"
        answer = {
            "dimensions": [
                {
                    "id": "annotator_criteria",
                    "name": f"Meets the annotator's criteria for {cid}",
                    "description": f"Whether chapter {cid} does what its annotator asked.",
                    "evidence": ["chapter text", "slides"],
                    "anchors": [
                        {"level": lv, "text": f"{cid}: level {lv} of the annotator's criteria"}
                        for lv in levels
                    ],
                }
            ]
        }
        tool = req.tool_names[0] if req.tool_names else "final_result"
        return StubReply.call(tool, answer)

    return script


def auto_script() -> Callable[[StubRequest], StubReply]:
    """The stub's default: answers whatever lhbench sends it, each in the expected shape.

    Rubric judges get scores on each dimension's own scale; chapter-rubric synthesis a
    one-dimension rubric on the scale asked; pairwise judges a preference;
    verdict judges look at the state once and answer; the native harness gets a short
    scripted tool loop. Every answer is a deterministic placeholder, never a judgement.
    """
    rubric = rubric_judge_script(hashed_scale_scores)
    pairwise = pairwise_judge_script()
    verdict = verdict_judge_script(None)
    agent = stub_agent_script()
    writer = chapter_rubric_writer_script()

    def output_fields(req: StubRequest) -> set[str]:
        for t in req.tools:
            fn = t.get("function", {})
            if fn.get("name") == "final_result":
                return set((fn.get("parameters") or {}).get("properties", {}))
        return set()

    def script(req: StubRequest) -> StubReply:
        fields = output_fields(req)
        if "preferred" in fields:
            return pairwise(req)
        if "verdict" in fields:
            return verdict(req)
        if "dimensions" in fields and _LEVELS_ASKED.search(req.last_user_text() or req.text()):
            return writer(req)
        if "dimensions" in fields or (not fields and dimension_ids(req)):
            return rubric(req)
        if "read_manifest" in req.tool_names:
            return agent(req)
        return StubReply(content="stub answer (the lhbench model stub: no model ran)")

    return script


def figma_agent_script(*, task_id: str = "stub-preview") -> Callable[[StubRequest], StubReply]:
    """A scripted Figma-to-code agent for the native harness (a dry run, not a model).

    It calls each of LH-Bench's nine design tools and Framelink's two on the file and
    frame the task names, writes a small page from the frame's texts under ``src/``,
    previews it (create, status, stop) and finishes. A design call refused with a 429 is
    repeated after the ``retry_after`` seconds it gives, doubled for each 429 in a row
    (the reply waits that long), as an agent recovering from a rate limit would.
    Stateless: everything comes from the conversation in the request. Tools are found by
    suffix (harnesses prefix MCP tools with the server's name).
    """

    def calls_and_results(req: StubRequest) -> list[tuple[str, dict[str, object], str | None]]:
        results = {
            m.get("tool_call_id"): str(m.get("content", ""))
            for m in req.messages
            if m.get("role") == "tool"
        }
        out = []
        for m in req.messages:
            for c in m.get("tool_calls") or []:
                fn = c.get("function", {})
                args = json.loads(fn.get("arguments") or "{}")
                out.append((str(fn.get("name", "")), args, results.get(c.get("id"))))
        return out

    def script(req: StubRequest) -> StubReply:
        task = next(
            (str(m.get("content", "")) for m in req.messages if m.get("role") == "user"), ""
        )
        key_m = re.search(r"Figma file ([A-Za-z0-9_-]+)", task)
        node_m = re.search(r"node (\d+:\d+)", task)
        key = key_m.group(1) if key_m else ""
        node = node_m.group(1) if node_m else "1:1"
        history = calls_and_results(req)
        seen = "\n".join(r or "" for _n, _a, r in history)
        texts = re.findall(r'"characters":\s*"((?:[^"\\]|\\.){3,80})"', seen)
        image_ref = re.search(r'"imageRef":\s*"([0-9a-f]{8,})"', seen)
        page = "\n".join(
            "<p>" + html.escape(json.loads('"' + t + '"')) + "</p>" for t in dict.fromkeys(texts)
        )
        plan: list[tuple[str, dict[str, object]]] = [
            ("get_figma_file", {"file_key": key}),
            ("get_page_node_id", {"file_key": key, "page_name": "Desktop"}),
            ("get_layer_node_id", {"file_key": key, "page_node_id": "0:1", "layer_name": "Home"}),
            ("get_node_tree", {"file_key": key, "node_id": node, "depth": 3}),
            ("get_node_styles", {"file_key": key, "node_id": node}),
            ("get_node_components", {"file_key": key, "node_id": node}),
            ("get_figma_file_nodes", {"file_key": key, "node_ids": node, "depth": 1}),
            (
                "get_page_visual_overview",
                {"file_key": key, "page_node_id": "0:1", "output_dir": "design/overview"},
            ),
            (
                "export_node_images",
                {"file_key": key, "node_ids": node, "output_dir": "ground_truth", "scale": 2},
            ),
            ("get_figma_data", {"fileKey": key, "nodeId": node, "depth": 2}),
            (
                "download_figma_images",
                {
                    "fileKey": key,
                    "localPath": "src/assets",
                    "nodes": [{"nodeId": node, "fileName": "frame-thumb.png"}]
                    + (
                        [{"nodeId": node, "imageRef": image_ref.group(1), "fileName": "photo.png"}]
                        if image_ref
                        else []
                    ),
                },
            ),
            (
                "write_file",
                {
                    "path": "src/index.html",
                    "content": '<!doctype html><html><head><meta charset="utf-8"><title>stub'
                    '</title></head><body><main id="app"><h1>Written by the lhbench model '
                    f"stub (no model ran)</h1>\n{page}\n</main></body></html>\n",
                },
            ),
            ("create_app_preview", {"task_id": task_id, "project_root": "."}),
            ("get_preview_status", {"task_id": task_id}),
            ("stop_app_preview", {"task_id": task_id}),
            ("complete_step", {"step": "figma-to-code"}),
        ]

        def offered(name: str) -> str | None:
            return next((t for t in req.tool_names if t == name or t.endswith("_" + name)), None)

        if history:
            name, args, result = history[-1]
            if result and "Figma API error: 429" in result:
                # back off: retry_after, doubled for each 429 in a row (a tool that makes
                # two requests needs two tokens back, not the one retry_after promises)
                refused = 0
                for _n, _a, r in reversed(history):
                    if not (r and "Figma API error: 429" in r):
                        break
                    refused += 1
                wait = re.search(r'"retry_after":\s*([0-9.]+)', result)
                base = float(wait.group(1)) if wait else 1.0
                return StubReply(
                    tool_calls=[(name, args)], latency=min(60.0, base * 2 ** (refused - 1)) + 0.2
                )
        done = sum(1 for _n, _a, r in history if r is not None and "Figma API error: 429" not in r)
        steps = [(tool, args) for name, args in plan if (tool := offered(name)) is not None]
        for tool, args in steps[done:]:
            return StubReply.call(tool, args)
        return StubReply(
            content="Built the page from the design and previewed it. (The lhbench model stub "
            "answered: no model ran.)"
        )

    return script
