"""Statistics, aggregation and reports: the numbers users quote."""

from lhbench.analysis.agreement import PanelAgreement, panel_agreement
from lhbench.analysis.data import ReportData, group_label
from lhbench.analysis.elo import ELO_L2_PENALTY, EloResult, bradley_terry_elo
from lhbench.analysis.preference import (
    CycleResult,
    OutcomeAgreement,
    PairRecord,
    cycle_rate,
    head_to_head,
    outcome_agreement,
    position_bias,
)
from lhbench.analysis.report import ReportFiles, build_sections, write_report
from lhbench.analysis.scores import RunTierScore, panel_scores, tier_keys
from lhbench.analysis.stats import (
    BinaryMetrics,
    BinomialResult,
    KruskalResult,
    ProportionResult,
    binary_metrics,
    binomial_test,
    bootstrap_ci,
    cohen_kappa,
    cohens_h,
    krippendorff_alpha,
    kruskal_wallis,
    pass_rate,
    population_variance,
    proportion,
    t_ci,
)
from lhbench.analysis.tables import Table

__all__ = [
    "ELO_L2_PENALTY",
    "BinaryMetrics",
    "BinomialResult",
    "CycleResult",
    "EloResult",
    "KruskalResult",
    "OutcomeAgreement",
    "PairRecord",
    "PanelAgreement",
    "ProportionResult",
    "ReportData",
    "ReportFiles",
    "RunTierScore",
    "Table",
    "binary_metrics",
    "binomial_test",
    "bootstrap_ci",
    "bradley_terry_elo",
    "build_sections",
    "cohen_kappa",
    "cohens_h",
    "cycle_rate",
    "group_label",
    "head_to_head",
    "krippendorff_alpha",
    "kruskal_wallis",
    "outcome_agreement",
    "panel_agreement",
    "panel_scores",
    "pass_rate",
    "population_variance",
    "position_bias",
    "proportion",
    "t_ci",
    "tier_keys",
    "write_report",
]
