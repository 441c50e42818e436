"""Runs, grades and verdicts as Inspect AI logs (``lhbench export inspect``).

Each group of runs sharing (pack, pack content, harness, model, versions) becomes one
Inspect ``EvalLog``, written as ``.eval`` (a zip: ``header.json``, ``samples/*.json``,
``summaries.json``) and/or ``.json``. Inspect is not imported here: the logs are plain
JSON in Inspect's log schema (version 2), and the test suite reads every one back with
``inspect_ai.log.read_eval_log`` as the oracle.

A run is a sample: ``id`` is the task, ``epoch`` the repeat + 1 (a second run with the
same task and repeat gets the run id as its sample id). The normalized transcript becomes
the sample's messages (tool calls on the assistant message that made them, results as
tool messages) and events (one ``tool`` event per call, ``info`` events for hooks,
compactions and harness errors). The grades become scores, one per rubric tier: the
value is the panel mean of the *current* grades (the same selection as the report:
stale rubric content and earlier judge settings are left out, and the log's metadata
says how many), the explanation names every judge's score and the grades behind it.
Verify labels are a ``verify`` score (``C``/``I``), agent-judge verdicts one score per
judge. Nothing of the run is invented: an unknown value is left out, not defaulted.
"""

from __future__ import annotations

import hashlib
import re
import statistics
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import orjson

from lhbench._version import __version__
from lhbench.judges.panel import TierKey, panel_scores, tier_keys
from lhbench.reporting.data import ReportData
from lhbench.schema import Grade, Label, Role, Run, RunStatus, Step, StepKind, Usage, Verdict
from lhbench.schema.grading import judge_labels

__all__ = ["ExportedLog", "InspectFormat", "export_inspect", "group_runs", "inspect_logs"]

InspectFormat = Literal["eval", "json"]
LOG_VERSION = 2
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class ExportedLog:
    """One written log: its group, files, and what it holds."""

    group: tuple[str, ...]
    paths: list[Path]
    samples: int
    scores: int
    excluded: list[str] = field(default_factory=list)


def _group_of(run: Run) -> tuple[str, ...]:
    versions = ",".join(f"{k}={v}" for k, v in sorted(run.versions.items()))
    return (run.pack_id, run.pack_hash, run.harness, run.model, versions)


def group_runs(runs: Iterable[Run], *, pack: str | None = None) -> dict[tuple[str, ...], list[Run]]:
    """Runs by (pack, pack hash, harness, model, versions), each group ordered stably."""
    groups: dict[tuple[str, ...], list[Run]] = defaultdict(list)
    for run in runs:
        if pack is None or run.pack_id == pack:
            groups[_group_of(run)].append(run)
    return {
        k: sorted(
            v,
            key=lambda r: (
                r.task_id,
                r.repeat,
                r.started_at or datetime.min.replace(tzinfo=UTC),
                r.id,
            ),
        )
        for k, v in sorted(groups.items())
    }


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.astimezone(UTC).isoformat()


def _inspect_model(model: str) -> str:
    # Inspect names models provider/model; lhbench provider:model
    return model.replace(":", "/", 1) if "/" not in model.split(":", 1)[0] else model


def _usage(u: Usage) -> dict[str, Any]:
    out: dict[str, Any] = {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "total_tokens": u.input_tokens + u.output_tokens,
        "input_tokens_cache_read": u.cache_read_tokens,
        "input_tokens_cache_write": u.cache_write_tokens,
        "reasoning_tokens": u.reasoning_tokens,
    }
    if u.cost_usd is not None:
        out["total_cost"] = u.cost_usd
    return out


def _tool_error(step: Step) -> dict[str, str] | None:
    if not step.is_error:
        return None
    return {"type": "unknown", "message": (step.tool_output or step.content or "error")[:2000]}


def _messages_and_events(
    steps: Sequence[Step], t0: datetime | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Chat messages and events from a normalized transcript."""
    messages: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}  # tool_call_id -> its tool event
    last_assistant: dict[str, Any] | None = None
    stamp = _iso(t0) or _iso(datetime.now(UTC))

    def when(step: Step) -> str:
        return _iso(step.timestamp) or stamp  # type: ignore[return-value]

    def assistant() -> dict[str, Any]:
        nonlocal last_assistant
        if last_assistant is None:
            last_assistant = {"role": "assistant", "content": [], "tool_calls": None}
            messages.append(last_assistant)
        return last_assistant

    for step in steps:
        if step.kind == StepKind.MESSAGE and step.role in (Role.SYSTEM, Role.USER):
            messages.append({"role": step.role.value, "content": step.content})
            last_assistant = None
        elif step.kind == StepKind.MESSAGE and step.role == Role.ASSISTANT:
            msg = assistant()
            if msg["tool_calls"]:  # text after tool calls starts a new message
                last_assistant = None
                msg = assistant()
            msg["content"].append({"type": "text", "text": step.content})
        elif step.kind == StepKind.THINKING:
            msg = assistant()
            msg["content"].append({"type": "reasoning", "reasoning": step.content})
        elif step.kind == StepKind.TOOL_CALL:
            msg = assistant()
            call_id = step.tool_call_id or f"call-{step.index}"
            call = {
                "id": call_id,
                "function": step.tool_name or "unknown",
                "arguments": step.tool_input or {},
                "type": "function",
            }
            msg["tool_calls"] = [*(msg["tool_calls"] or []), call]
            tool_event: dict[str, Any] = {
                "event": "tool",
                "timestamp": when(step),
                "type": "function",
                "id": call_id,
                "function": call["function"],
                "arguments": call["arguments"],
                "result": "",
            }
            calls[call_id] = tool_event
            events.append(tool_event)
        elif step.kind == StepKind.TOOL_RESULT:
            call_id = step.tool_call_id or f"call-{step.index}"
            msg_tool: dict[str, Any] = {
                "role": "tool",
                "content": step.tool_output if step.tool_output is not None else step.content,
                "tool_call_id": call_id,
                "function": step.tool_name,
            }
            if (error := _tool_error(step)) is not None:
                msg_tool["error"] = error
            messages.append(msg_tool)
            last_assistant = None
            if (call_event := calls.get(call_id)) is not None:
                call_event["result"] = msg_tool["content"]
                if error is not None:
                    call_event["error"] = error
        else:  # hooks, compactions, harness notes, errors: what happened, not a message
            events.append(
                {
                    "event": "info",
                    "timestamp": when(step),
                    "source": f"lhbench/{step.kind.value}",
                    "data": {
                        "index": step.index,
                        "role": step.role.value,
                        "kind": step.kind.value,
                        "content": step.content,
                        **({"tool_name": step.tool_name} if step.tool_name else {}),
                        **({"exit_code": step.exit_code} if step.exit_code is not None else {}),
                    },
                }
            )
    for m in messages:
        if m["role"] == "assistant" and not m["content"]:
            m["content"] = ""
    return messages, events


def _score_name(key: TierKey, keys: list[TierKey]) -> str:
    return key.unique_slug(keys)


def _rubric_scores(
    run_id: str, grades: list[Grade], keys: list[TierKey], by_key: dict[TierKey, Any]
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for key in keys:
        score = by_key[key].get(run_id)
        if score is None:
            continue
        behind = [
            g
            for g in grades
            if g.run_id == run_id
            and (g.rubric_id, g.rubric_version, g.tier.value, g.rubric_hash) == tuple(key)
        ]
        labels = judge_labels(g.judge for g in behind)
        lines = [
            f"Panel mean of {len(score.judge_scores)} judge(s) on {key.title} "
            f"(tier score = weighted sum of dimension scores; variance across judges "
            f"{score.variance:.4g})."
        ]
        for g in behind:
            if g.tier_score is None:
                continue
            dims = ", ".join(
                f"{s.dimension_id}={s.score if s.score is not None else 'unscorable'}"
                for s in g.scores
            )
            lines.append(f"- {labels[g.judge.key]} (repeat {g.repeat}): {g.tier_score:g} [{dims}]")
        out[_score_name(key, keys)] = {
            "value": score.mean,
            "explanation": "\n".join(lines),
            "metadata": {
                "rubric_id": key.rubric_id,
                "rubric_version": key.version,
                "rubric_hash": key.rubric_hash,
                "tier": key.tier,
                "judge_scores": score.judge_scores,
                "dimension_means": score.dimension_means,
                "variance": score.variance,
                "grade_ids": sorted(g.id for g in behind if g.tier_score is not None),
            },
        }
    return out


def _verdict_scores(verdicts: list[Verdict]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    labels = judge_labels(v.judge for v in verdicts)
    by_judge: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        if v.verdict is not None:
            by_judge[labels[v.judge.key]].append(v)
    for judge, vs in sorted(by_judge.items()):
        vs.sort(key=lambda v: (v.repeat, v.created_at))
        passed = [str(v.verdict) == "PASS" for v in vs]
        out[f"verdict:{judge}"] = {
            "value": "C" if statistics.fmean(passed) >= 0.5 else "I",
            "explanation": "\n".join(
                f"repeat {v.repeat}: {v.verdict} — " + "; ".join(v.evidence)[:1000] for v in vs
            ),
            "metadata": {
                "verdicts": [str(v.verdict) for v in vs],
                "verdict_ids": [v.id for v in vs],
                "judge_kind": vs[0].judge.kind.value,
                "tool_calls": [v.tool_calls for v in vs],
            },
        }
    return out


def _sample(
    run: Run,
    sample_id: str,
    data: ReportData,
    grades: list[Grade],
    keys: list[TierKey],
    by_key: dict[TierKey, Any],
) -> dict[str, Any]:
    task = data.task_of(run)
    steps = data.load_trajectory(run.id).steps if data.load_trajectory is not None else []
    messages, events = _messages_and_events(steps, run.started_at)
    if task is not None:
        prompt = task.instruction if task.instruction is not None else "\n\n".join(task.user_turns)
    else:
        prompt = next((m["content"] for m in messages if m["role"] == "user"), "")
    scores = _rubric_scores(run.id, grades, keys, by_key)
    label = data.label_of(run.id)
    if label is not None:
        decided = [lab for lab in data.labels if lab.run_id == run.id and lab.passed is not None]
        labels = [lab for lab in decided if isinstance(lab, Label)]
        if len(labels) != len(decided):
            raise TypeError("Inspect logs read labels as models: load the data without lean")
        sources = sorted(lab.source for lab in labels)
        scores["verify"] = {
            "value": "C" if label else "I",
            "explanation": "; ".join(
                f"{lab.source}: {'pass' if lab.passed else 'fail'} {lab.detail}".strip()
                for lab in labels
            )[:4000],
            "metadata": {"sources": sources},
        }
    scores.update(_verdict_scores([v for v in data.verdicts if v.run_id == run.id]))
    for name, sc in scores.items():
        events.append(
            {
                "event": "score",
                "timestamp": _iso(run.ended_at) or _iso(datetime.now(UTC)),
                "score": {k: sc[k] for k in ("value", "explanation") if k in sc},
                "target": None,
                "intermediate": False,
                "metadata": {"scorer": name},
            }
        )
    last_text = ""
    for m in reversed(messages):
        if m["role"] == "assistant":
            content = m["content"]
            last_text = (
                content
                if isinstance(content, str)
                else "".join(c.get("text", "") for c in content if c.get("type") == "text")
            )
            break
    model = _inspect_model(run.model)
    sample: dict[str, Any] = {
        "id": sample_id,
        "epoch": run.repeat + 1,
        "input": prompt,
        "target": "",
        "messages": messages,
        "output": {
            "model": model,
            "choices": [
                {
                    "message": {"role": "assistant", "content": last_text, "model": model},
                    "stop_reason": "stop" if run.status == RunStatus.COMPLETED else "unknown",
                }
            ],
            "completion": last_text,
            "usage": _usage(run.usage),
        },
        "scores": scores,
        "metadata": {
            "lhbench": {
                "run_id": run.id,
                "task_id": run.task_id,
                "status": run.status.value,
                "harness_version": run.harness_version,
                "source": run.source,
                "steps": len(steps),
            }
        },
        "events": events,
        "model_usage": {model: _usage(run.usage)},
        "uuid": run.id,
    }
    if run.started_at is not None:
        sample["started_at"] = _iso(run.started_at)
    if run.ended_at is not None:
        sample["completed_at"] = _iso(run.ended_at)
    if run.duration_s is not None:
        sample["total_time"] = run.duration_s
        sample["working_time"] = run.duration_s
    if run.status != RunStatus.COMPLETED and run.error:
        sample["error"] = {"message": run.error, "traceback": "", "traceback_ansi": ""}
    return sample


def _summary(sample: dict[str, Any]) -> dict[str, Any]:
    keep = (
        "id",
        "epoch",
        "input",
        "target",
        "metadata",
        "model_usage",
        "started_at",
        "completed_at",
        "total_time",
        "working_time",
        "uuid",
        "error",
    )
    out = {k: sample[k] for k in keep if k in sample}
    out["scores"] = {k: {"value": v["value"]} for k, v in sample["scores"].items()}
    out["message_count"] = len(sample["messages"])
    out["completed"] = True
    if "error" in out:
        out["error"] = out["error"]["message"]
    return out


def _metrics(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    names: list[str] = []
    for s in samples:
        names.extend(n for n in s["scores"] if n not in names)
    out = []
    for name in names:
        values = [s["scores"][name]["value"] for s in samples if name in s["scores"]]
        nums = [1.0 if v == "C" else 0.0 if v == "I" else float(v) for v in values]
        metric = "accuracy" if all(v in ("C", "I") for v in values) else "mean"
        out.append(
            {
                "name": name,
                "scorer": name,
                "scored_samples": len(values),
                "unscored_samples": len(samples) - len(values),
                "params": {},
                "metrics": {
                    metric: {"name": metric, "value": statistics.fmean(nums), "params": {}},
                    "n": {"name": "n", "value": len(values), "params": {}},
                },
            }
        )
    return out


def inspect_logs(
    data: ReportData, *, pack: str | None = None, notes: Sequence[str] = ()
) -> list[tuple[tuple[str, ...], dict[str, Any], list[dict[str, Any]]]]:
    """(group, EvalLog header, samples) per group of runs, as Inspect log JSON."""
    keys = tier_keys(data.grades)
    by_key = {k: panel_scores(data.grades, k) for k in keys}
    grades_by_run: dict[str, list[Grade]] = defaultdict(list)
    for g in data.grades:
        grades_by_run[g.run_id].append(g)
    out = []
    now = datetime.now(UTC)
    models = [r for r in data.runs.values() if isinstance(r, Run)]
    if len(models) != len(data.runs):
        raise TypeError("Inspect logs read runs as models: load the data without lean")
    for group, runs in group_runs(models, pack=pack).items():
        pack_id, pack_hash, harness, model, versions = group
        samples = []
        seen: set[tuple[str, int]] = set()
        for run in runs:
            sample_id = run.task_id
            if (sample_id, run.repeat) in seen:
                sample_id = run.id  # the same task and repeat twice (re-imported): keep both
            seen.add((sample_id, run.repeat))
            samples.append(_sample(run, sample_id, data, grades_by_run[run.id], keys, by_key))
        total = Usage()
        for r in runs:
            total = total + r.usage
        starts = [r.started_at for r in runs if r.started_at is not None]
        ends = [r.ended_at for r in runs if r.ended_at is not None]
        digest = hashlib.sha256("\x1f".join(group).encode()).hexdigest()
        imodel = _inspect_model(model)
        header: dict[str, Any] = {
            "version": LOG_VERSION,
            "status": "success",
            "eval": {
                "eval_id": digest[:22],
                "run_id": digest[22:44],
                "created": _iso(min(starts) if starts else now),
                "task": pack_id,
                "task_id": pack_hash or pack_id,
                "task_version": 0,
                "task_attribs": {},
                "task_args": {},
                "solver": harness,
                "solver_args": {
                    "versions": dict(kv.split("=", 1) for kv in versions.split(",") if kv)
                },
                "dataset": {
                    "name": pack_id,
                    "samples": len(samples),
                    "sample_ids": list(dict.fromkeys(s["id"] for s in samples)),
                    "shuffled": False,
                },
                "model": imodel,
                "model_args": {},
                "config": {"epochs": max((r.repeat + 1 for r in runs), default=1)},
                "packages": {"lhbench": __version__},
                "metadata": {
                    "lhbench": {
                        "pack_id": pack_id,
                        "pack_hash": pack_hash,
                        "harness": harness,
                        "model": model,
                        "versions": versions,
                        "exported_at": _iso(now),
                        "excluded": list(notes),
                        "scores": "panel mean of current grades per rubric tier; "
                        "verify = the task's checks; verdict:<judge> = agent-judge verdicts",
                    }
                },
            },
            "plan": {"name": "plan", "steps": [{"solver": harness, "params": {}}], "config": {}},
            "results": {
                "total_samples": len(samples),
                "completed_samples": sum(1 for r in runs if r.status == RunStatus.COMPLETED),
                "scores": _metrics(samples),
            },
            "stats": {
                "started_at": _iso(min(starts)) if starts else "",
                "completed_at": _iso(max(ends)) if ends else "",
                "model_usage": {imodel: _usage(total)},
            },
        }
        out.append((group, header, samples))
    return out


def _file_stem(group: tuple[str, ...]) -> str:
    pack_id, _hash, harness, model, _versions = group
    digest = hashlib.sha256("\x1f".join(group).encode()).hexdigest()[:10]
    return _SAFE.sub("-", f"{pack_id}_{harness}_{model}")[:120] + f"_{digest}"


def _dumps(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS)


def _write_eval(path: Path, header: dict[str, Any], samples: list[dict[str, Any]]) -> None:
    tmp = path.with_name(path.name + ".part")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for s in samples:
            name = _SAFE.sub("_", str(s["id"]))
            z.writestr(f"samples/{name}_epoch_{s['epoch']}.json", _dumps(s))
        z.writestr("summaries.json", _dumps([_summary(s) for s in samples]))
        z.writestr("header.json", _dumps(header))
    tmp.replace(path)


def _write_json(path: Path, header: dict[str, Any], samples: list[dict[str, Any]]) -> None:
    tmp = path.with_name(path.name + ".part")
    tmp.write_bytes(orjson.dumps({**header, "samples": samples}, option=orjson.OPT_INDENT_2))
    tmp.replace(path)


def export_inspect(
    data: ReportData,
    out: Path,
    *,
    pack: str | None = None,
    formats: Sequence[InspectFormat] = ("eval", "json"),
) -> list[ExportedLog]:
    """Write one Inspect log per (pack, harness, model, versions) group into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    notes = data.excluded.notes()
    written = []
    for group, header, samples in inspect_logs(data, pack=pack, notes=notes):
        stem = _file_stem(group)
        paths = []
        if "eval" in formats:
            _write_eval(p := out / f"{stem}.eval", header, samples)
            paths.append(p)
        if "json" in formats:
            _write_json(p := out / f"{stem}.json", header, samples)
            paths.append(p)
        written.append(
            ExportedLog(
                group=group,
                paths=paths,
                samples=len(samples),
                scores=sum(len(s["scores"]) for s in samples),
                excluded=notes,
            )
        )
    return written
