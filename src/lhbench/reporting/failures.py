"""Report sections on errors and recovery (LH-Bench Tables 11 and 12)."""

from __future__ import annotations

from collections.abc import Sequence

from lhbench.reporting.data import ReportData
from lhbench.reporting.tables import Section, Table
from lhbench.schema import StepKind
from lhbench.stats import (
    AgentFailureRow,
    ErrorEvent,
    add_run,
    run_failures,
    type_table,
)

__all__ = ["failures_section"]


def failures_section(data: ReportData, by: Sequence[str]) -> Section:
    """Failure taxonomy with recovery per type, and per-group recovery profiles."""
    sec = Section("Failures and recovery")
    if data.load_trajectory is None or not data.runs:
        sec.empty = "No runs with trajectories yet: import or run some."
        return sec
    # per group: Table 12's counts (AgentFailureRow's fields); only error events are kept
    events: list[ErrorEvent] = []
    per_group: dict[str, list[int]] = {}
    loaded = 0
    labels = data.group_labels(by)  # every run's, computed once for every section
    if data.load_error_steps is not None and data.load_step_counts is not None:
        # lean: the database counts every run's steps and tool calls and flags the runs
        # that may hold an error, a preview or a deploy; only those runs' steps are read
        # (tool calls, results, errors and hooks, as plain tuples), a slice at a time
        counts = data.load_step_counts(list(data.runs))
        stepped = [(rid, n) for rid in data.runs if (n := counts.get(rid)) and n.steps]
        walked = data.load_error_steps([rid for rid, n in stepped if n.suspect])
        for rid, n in stepped:
            acc = per_group.get(group := labels[rid])
            if acc is None:
                acc = per_group[group] = [0] * 7
            loaded += 1
            if not n.suspect:
                acc[0] += 1  # no error, failed call, preview or deploy: a run and its calls
                acc[4] += n.tool_calls
                continue
            run_id, steps = next(walked)
            if run_id != rid:
                raise RuntimeError(f"steps of {run_id} read for run {rid}")
            found = run_failures(steps)
            events.extend(found.events)
            add_run(acc, found, n.tool_calls)
    else:
        runs = list(data.runs.values())
        for run, traj in zip(runs, data.trajectories([r.id for r in runs]), strict=True):
            if not traj.steps:
                continue
            loaded += 1
            found = run_failures(traj.steps)
            events.extend(found.events)
            calls = sum(1 for s in traj.steps if s.kind == StepKind.TOOL_CALL)
            add_run(per_group.setdefault(labels[run.id], [0] * 7), found, calls)
    if not loaded:
        sec.empty = "No runs with trajectories yet: import or run some."
        return sec
    types = Table(
        slug="failure_types",
        title=f"Failure taxonomy across {loaded} runs ({len(events)} errors)",
        columns=["error type", "count", "recovered", "recovery %"],
        digits=1,
        notes=[
            "Recovered: a later step of the same run succeeded at the same operation (same "
            "tool and target, same command, or the build/preview that failed); succeeded: no "
            "error flag, exit code 0 or none, no error payload, so a retry that failed again "
            "is not a recovery. n: error events."
        ],
    )
    rows = type_table(events)
    for r in rows:
        types.rows.append([r.type.value.replace("_", " "), r.count, r.recovered, 100 * r.rate])
    total_rec = sum(r.recovered for r in rows)
    types.rows.append(
        ["total", len(events), total_rec, 100 * total_rec / len(events) if events else float("nan")]
    )
    agents = Table(
        slug="failure_agents",
        title="Per-agent recovery (failure % = failed tool calls / tool calls)",
        columns=[
            "group",
            "runs",
            "errors",
            "failure %",
            "recovery %",
            "preview",
            "deploy",
            "tool calls",
        ],
        digits=1,
        notes=[
            "tool calls: every tool call of the group's runs (with or without a call id); "
            "failed: tool results with an error flag, a non-zero exit code or an error "
            "payload; recovery % = recovered errors / errors (as in the taxonomy table)."
        ],
    )
    for a in (AgentFailureRow(g, *n) for g, n in sorted(per_group.items())):
        agents.rows.append(
            [
                a.group,
                a.runs,
                a.errors,
                100 * a.failure_rate,
                100 * a.recovery_rate,
                f"{a.preview_runs}/{a.runs}",
                f"{a.deploy_runs}/{a.runs}",
                a.tool_calls,
            ]
        )
    sec.tables.extend([types, agents])
    return sec
