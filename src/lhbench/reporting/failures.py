"""Report sections on errors and recovery (LH-Bench Tables 11 and 12)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import astuple

from lhbench.reporting.data import AnyRun, ReportData, group_label
from lhbench.reporting.tables import Section, Table
from lhbench.schema import Trajectory
from lhbench.stats import AgentFailureRow, ErrorEvent, agent_table, error_events, type_table

__all__ = ["failures_section"]

# runs whose steps are held at once (the store reads them in slices of this size too)
_SLICE = 500

# a run with steps, its trajectory (lean: only the steps that can hold an error), its
# tool calls when counted by the store
_Walked = tuple[AnyRun, Trajectory, int | None]


def _walk(data: ReportData, runs: list[AnyRun]) -> Iterator[_Walked]:
    """Each run with steps, in order, with what the taxonomy reads of its steps."""
    if data.load_error_steps is not None and data.load_step_counts is not None:
        # lean: which runs have steps and their tool calls counted in the database; of
        # the steps, only tool calls, results, errors and hooks (what an error or its
        # recovery can be), read without validation
        counts = data.load_step_counts([r.id for r in runs])
        stepped = [r for r in runs if r.id in counts and counts[r.id].steps]
        walked = data.load_error_steps([r.id for r in stepped])
        for run, (run_id, steps) in zip(stepped, walked, strict=True):
            yield (
                run,
                Trajectory.model_construct(run_id=run_id, steps=steps),
                counts[run_id].tool_calls,
            )
        return
    for run, traj in zip(runs, data.trajectories([r.id for r in runs]), strict=True):
        if traj.steps:
            yield run, traj, None


def failures_section(data: ReportData, by: Sequence[str]) -> Section:
    """Failure taxonomy with recovery per type, and per-group recovery profiles."""
    sec = Section("Failures and recovery")
    if data.load_trajectory is None or not data.runs:
        sec.empty = "No runs with trajectories yet: import or run some."
        return sec
    runs = list(data.runs.values())
    # a slice of runs' steps at a time (a team's store has 600,000): only the error events
    # and the per-group counts are kept; each run's events are found once
    events: list[ErrorEvent] = []
    per_group: dict[str, list[int]] = {}
    loaded = 0
    batch: list[tuple[str, AnyRun, Trajectory]] = []
    batch_events: list[list[ErrorEvent]] = []
    batch_calls: list[int | None] = []

    def count() -> None:
        calls = None if None in batch_calls else [n or 0 for n in batch_calls]
        for row in agent_table(batch, batch_events, calls):
            acc = per_group.setdefault(row.group, [0] * 7)
            for i, n in enumerate(astuple(row)[1:]):
                acc[i] += n
        batch.clear()
        batch_events.clear()
        batch_calls.clear()

    for run, traj, tool_calls in _walk(data, runs):
        loaded += 1
        found = error_events(traj)
        events.extend(found)
        batch.append((group_label(run, by), run, traj))
        batch_events.append(found)
        batch_calls.append(tool_calls)
        if len(batch) == _SLICE:
            count()
    count()
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
