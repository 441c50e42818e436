"""Recorded outcomes vs lhbench's labels: how often a run's own system and lhbench agree.

An imported run can carry the outcome the system that made it recorded (MCPMark's
``execution_result.success``: its verify.py on the live final state). lhbench labels the
same run with the task's verify script on its *replayed* state. This table compares the
two, one row per recording system, over runs where both decided.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from lhbench.reporting.data import LabelLike
from lhbench.reporting.tables import Table
from lhbench.schema import RECORDED_OUTCOME_KEY, RecordedOutcome, Run
from lhbench.stats import label_agreement

if TYPE_CHECKING:
    from lhbench.store import Store

__all__ = ["recorded_agreement_table", "recorded_outcomes"]


def recorded_outcomes(store: Store) -> list[tuple[str, RecordedOutcome]]:
    """(run id, outcome) of every run that carries a recorded outcome, by run id.

    Only the runs whose metadata names one are read (a store of imports is the exception,
    a team's store of 100,000 runs has none).
    """
    out = []
    for run_id, meta in store.run_metadata_having(RECORDED_OUTCOME_KEY).items():
        if (rec := RecordedOutcome.from_metadata(meta)) is not None:
            out.append((run_id, rec))
    return out


def _verify_label(labels: Sequence[LabelLike]) -> LabelLike | None:
    mine = [lab for lab in labels if lab.source.startswith("verify:")]
    return min(mine, key=lambda x: x.source) if mine else None


def recorded_agreement_table(
    runs: Iterable[Run | tuple[str, RecordedOutcome]], labels: Iterable[LabelLike]
) -> Table | None:
    """The agreement table, or None when no run carries a recorded outcome.

    ``runs``: runs, or (run id, recorded outcome) pairs (:func:`recorded_outcomes`).
    """
    by_run: dict[str, list[LabelLike]] = defaultdict(list)
    for lab in labels:
        by_run[lab.run_id].append(lab)
    pairs: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    undecided: dict[str, int] = defaultdict(int)
    unlabelled: dict[str, int] = defaultdict(int)
    no_verdict: dict[str, int] = defaultdict(int)
    for run in runs:
        run_id, rec = (run.id, run.recorded_outcome) if isinstance(run, Run) else run
        if rec is None:
            continue
        system = rec.source.split(":", 1)[0]
        verify = _verify_label(by_run.get(run_id, []))
        if rec.passed is None:
            no_verdict[system] += 1
        elif verify is None:
            unlabelled[system] += 1
        elif verify.passed is None:
            undecided[system] += 1
        else:
            pairs[system].append((rec.passed, verify.passed))
    systems = sorted(set(pairs) | set(undecided) | set(unlabelled) | set(no_verdict))
    if not systems:
        return None
    table = Table(
        slug="recorded_vs_labels",
        title="Recorded outcomes vs lhbench's labels (runs both decided)",
        columns=[
            "recorded by",
            "n",
            "agree",
            "accuracy",
            "κ",
            "κ 95% CI",
            "both pass",
            "both fail",
            "recorded pass, lhbench fail",
            "recorded fail, lhbench pass",
            "lhbench undecided",
            "not labelled",
            "no recorded verdict",
        ],
    )
    for system in systems:
        got = pairs.get(system, [])
        agg = label_agreement([r for r, _ in got], [x for _, x in got]) if got else None
        table.rows.append(
            [
                system,
                len(got),
                agg.agree if agg else 0,
                agg.accuracy if agg else None,
                agg.kappa if agg else None,
                f"[{agg.kappa_ci[0]:.2f}, {agg.kappa_ci[1]:.2f}]" if agg else None,
                agg.both_pass if agg else 0,
                agg.both_fail if agg else 0,
                agg.a_pass_b_fail if agg else 0,
                agg.a_fail_b_pass if agg else 0,
                undecided.get(system, 0),
                unlabelled.get(system, 0),
                no_verdict.get(system, 0),
            ]
        )
    table.notes = [
        "recorded: the outcome the run's own system logged (MCPMark: execution_result.success, "
        "its verify.py on the live final state); lhbench: the task's verify label on the "
        "replayed final state.",
        "n: runs with both a recorded verdict and a decided lhbench label; accuracy = agree / n; "
        "κ: Cohen's κ (n/a when both used one class only); CI: 95% percentile bootstrap over "
        "runs, 1000 resamples (runs of one task are not independent: read it as optimistic).",
        "Left out: lhbench undecided (its replay could not apply every call, or the check "
        "could not run); not labelled (no verify label yet); no recorded verdict (the "
        "system's own setup failed).",
    ]
    return table
