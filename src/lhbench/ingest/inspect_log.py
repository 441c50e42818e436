"""Inspect AI eval logs, ``.eval`` and ``.json``; each sample (per epoch) is one trajectory.

``.eval`` is a zip of ``header.json`` and ``samples/*.json``; ``.json`` is one EvalLog
document with its samples inline.

Sample messages follow Inspect's ChatMessage shapes: ``role`` system/user/assistant/tool;
``content`` a string or a list of content items (``text``, ``reasoning``, …); assistant
``tool_calls`` (``id``, ``function``, ``arguments``); tool messages with ``tool_call_id``,
``function`` and ``error`` (``{type, message}``).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from typing import Any

from lhbench.errors import TranscriptError
from lhbench.ingest.base import (
    ImportContext,
    StepBuilder,
    TranscriptInfo,
    guarded,
    parse_time,
)
from lhbench.schema import Role, RunStatus, Step, StepKind, Usage

__all__ = ["read_inspect", "sniff_inspect"]

FORMAT = "inspect"

Transcript = tuple[TranscriptInfo, Iterator[Step]]


def sniff_inspect(path_suffix: str, objs: list[dict[str, Any]]) -> bool:
    """``.eval`` files, or a JSON document with ``eval`` and ``samples``."""
    return path_suffix == ".eval" or any(
        "eval" in o and ("samples" in o or "version" in o) for o in objs
    )


def _content(content: Any) -> tuple[str, str]:
    """(text, reasoning) of a message's content."""
    if isinstance(content, str):
        return content, ""
    text, reasoning = [], []
    for item in content or []:
        if isinstance(item, dict) and item.get("type") == "reasoning":
            reasoning.append(str(item.get("reasoning") or item.get("summary") or ""))
        elif isinstance(item, dict) and item.get("type") == "text":
            text.append(str(item.get("text", "")))
    return "\n".join(text), "\n".join(reasoning)


def _sample_steps(
    ctx: ImportContext, sample: dict[str, Any], info: TranscriptInfo, ordinal: int
) -> Iterator[Step]:
    b = StepBuilder()

    def handle() -> Iterator[Step]:
        for m in sample.get("messages") or []:
            role = m["role"]
            text, reasoning = _content(m.get("content"))
            if role == "system":
                yield b.make(Role.SYSTEM, StepKind.MESSAGE, content=text)
            elif role == "user":
                info.task_text = info.task_text or text
                yield b.make(Role.USER, StepKind.MESSAGE, content=text)
            elif role == "assistant":
                if reasoning:
                    yield b.make(Role.ASSISTANT, StepKind.THINKING, content=reasoning)
                if text:
                    yield b.make(Role.ASSISTANT, StepKind.MESSAGE, content=text)
                for call in m.get("tool_calls") or []:
                    args = call.get("arguments")
                    yield b.make(
                        Role.ASSISTANT,
                        StepKind.TOOL_CALL,
                        tool_name=call["function"],
                        tool_call_id=call["id"],
                        tool_input=args if isinstance(args, dict) else {"arguments": args},
                    )
            elif role == "tool":
                err = m.get("error")
                yield b.make(
                    Role.TOOL,
                    StepKind.TOOL_RESULT,
                    tool_call_id=m.get("tool_call_id") or f"anon-{b.count}",
                    tool_name=m.get("function"),
                    tool_output=text
                    if not err
                    else f"{text}\n{err.get('type')}: {err.get('message')}".strip(),
                    is_error=bool(err),
                )
            else:
                raise ValueError(f"unknown message role {role!r}")
        if sample.get("error"):
            err = sample["error"]
            info.error = err.get("message") if isinstance(err, dict) else str(err)
            yield b.make(Role.HARNESS, StepKind.ERROR, content=info.error or "", is_error=True)

    yield from guarded(ctx, ordinal, FORMAT, handle)
    usage = Usage()
    for u in (sample.get("model_usage") or {}).values():
        usage = usage + Usage(
            input_tokens=int(u.get("input_tokens") or 0),
            output_tokens=int(u.get("output_tokens") or 0),
            cache_read_tokens=int(u.get("input_tokens_cache_read") or 0),
            cache_write_tokens=int(u.get("input_tokens_cache_write") or 0),
        )
    info.usage = usage
    info.status = RunStatus.FAILED if sample.get("error") else RunStatus.COMPLETED
    info.metadata.update({"scores": sample.get("scores"), "target": sample.get("target")})


def _info(ctx: ImportContext, header: dict[str, Any], sample: dict[str, Any]) -> TranscriptInfo:
    ev = header.get("eval") or {}
    sid = sample.get("id")
    epoch = sample.get("epoch", 1)
    return TranscriptInfo(
        source=str(ctx.path),
        key=f"{sid}-e{epoch}",
        session_id=str(ev.get("run_id") or ""),
        model=ev.get("model"),
        harness_version=str(ev.get("packages", {}).get("inspect_ai") or "") or None,
        started_at=parse_time(ev.get("created")),
        metadata={"task": ev.get("task"), "sample_id": sid, "epoch": epoch},
    )


def read_inspect(ctx: ImportContext) -> Iterator[Transcript]:
    """One trajectory per sample and epoch."""
    if ctx.path.suffix == ".eval":
        try:
            zf = zipfile.ZipFile(ctx.path)
        except zipfile.BadZipFile as exc:
            ctx.problem(1, f"{FORMAT}: not a .eval zip archive: {exc}")
            return
        with zf:
            names = zf.namelist()
            header = json.loads(zf.read("header.json")) if "header.json" in names else {}
            samples = sorted(n for n in names if n.startswith("samples/") and n.endswith(".json"))
            for k, name in enumerate(samples, 1):
                try:
                    sample = json.loads(zf.read(name))
                except json.JSONDecodeError as exc:
                    ctx.problem(exc.lineno, f"{FORMAT}: {name}: not valid JSON: {exc.msg}")
                    continue
                info = _info(ctx, header, sample)
                yield info, _sample_steps(ctx, sample, info, k)
        return
    try:
        doc = json.loads(ctx.path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise TranscriptError(
            ctx.path, exc.lineno, f"{FORMAT}: not valid JSON: {exc.msg}"
        ) from None
    if not isinstance(doc, dict):
        ctx.problem(1, f"{FORMAT}: expected an EvalLog object")
        return
    for k, sample in enumerate(doc.get("samples") or [], 1):
        if not isinstance(sample, dict):
            ctx.problem(1, f"{FORMAT}: samples[{k - 1}] is not an object")
            continue
        info = _info(ctx, doc, sample)
        yield info, _sample_steps(ctx, sample, info, k)
