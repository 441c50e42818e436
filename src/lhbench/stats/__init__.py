"""Pure statistics: agreement, intervals, F1 family, Elo, tests, taxonomy, ablations.

Every figure a report quotes is computed here (or, for panel scores, in
``lhbench.judges.panel``) and checked against the reference libraries in the tests.
Imports ``lhbench.schema`` only.
"""

from lhbench.stats.ablation import (
    PairedDelta,
    paired_deltas,
    pooled_by_runs,
    pooled_by_tasks,
)
from lhbench.stats.agreement import (
    PanelAgreement,
    cohen_kappa,
    krippendorff_alpha,
    panel_agreement,
    population_variance,
)
from lhbench.stats.binary import (
    BinaryMetrics,
    binary_metrics,
    macro_f1,
)
from lhbench.stats.course import (
    CourseScore,
    TieShare,
    course_scores,
    normalise,
    tie_share,
)
from lhbench.stats.elo import (
    ELO_L2_PENALTY,
    EloResult,
    bradley_terry_elo,
    fit_bt,
)
from lhbench.stats.intervals import (
    MIN_CLUSTERS,
    ProportionResult,
    bootstrap_ci,
    few_clusters_note,
    pass_rate,
    proportion,
    t_ci,
)
from lhbench.stats.label_agreement import LabelAgreement, label_agreement
from lhbench.stats.preference import (
    CycleResult,
    OutcomeAgreement,
    PairRecord,
    WinRate,
    cycle_rate,
    head_to_head,
    outcome_agreement,
    position_bias,
    win_rates,
)
from lhbench.stats.significance import (
    BinomialResult,
    KruskalResult,
    binomial_test,
    cohens_h,
    kruskal_wallis,
)
from lhbench.stats.taxonomy import (
    AgentFailureRow,
    ErrorEvent,
    ExtractionAgreement,
    TypeRow,
    agent_table,
    classify_text,
    error_events,
    extraction_agreement,
    type_table,
)

__all__ = [
    "ELO_L2_PENALTY",
    "MIN_CLUSTERS",
    "AgentFailureRow",
    "BinaryMetrics",
    "BinomialResult",
    "CourseScore",
    "CycleResult",
    "EloResult",
    "ErrorEvent",
    "ExtractionAgreement",
    "KruskalResult",
    "LabelAgreement",
    "OutcomeAgreement",
    "PairRecord",
    "PairedDelta",
    "PanelAgreement",
    "ProportionResult",
    "TieShare",
    "TypeRow",
    "WinRate",
    "agent_table",
    "binary_metrics",
    "binomial_test",
    "bootstrap_ci",
    "bradley_terry_elo",
    "classify_text",
    "cohen_kappa",
    "cohens_h",
    "course_scores",
    "cycle_rate",
    "error_events",
    "extraction_agreement",
    "few_clusters_note",
    "fit_bt",
    "head_to_head",
    "krippendorff_alpha",
    "kruskal_wallis",
    "label_agreement",
    "macro_f1",
    "normalise",
    "outcome_agreement",
    "paired_deltas",
    "panel_agreement",
    "pass_rate",
    "pooled_by_runs",
    "pooled_by_tasks",
    "population_variance",
    "position_bias",
    "proportion",
    "t_ci",
    "tie_share",
    "type_table",
    "win_rates",
]
