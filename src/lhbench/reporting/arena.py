"""Report section on pairwise preference (LH-Bench Tables 9–10, Appendix J).

Elo with CIs, win rates, position bias, preference cycles, winner quality and pass rates,
and how other raters' pairwise outcomes agree with the humans'.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Literal, cast

from lhbench.reporting.data import AnyVote, ReportData
from lhbench.reporting.tables import Cell, Section, Table
from lhbench.schema import JudgeKind
from lhbench.stats import (
    EloResult,
    bradley_terry_elo,
    cohens_h,
    cycle_rate,
    head_to_head,
    kruskal_wallis,
    outcome_agreement,
    pass_rate,
    position_bias,
    win_rates,
)

__all__ = ["arena_section"]

Outcome = Literal["a", "b", "tie"]


def _vote_groups(data: ReportData, by: Sequence[str]) -> list[tuple[str, str, str, str, str]]:
    """(group a, group b, winner, task, rater kind) for votes whose runs are known."""
    out: list[tuple[str, str, str, str, str]] = []
    labels = data.group_labels(by)  # every run's, so a vote's runs are known when labelled
    for v in data.votes:
        ga, gb = labels.get(v.run_a), labels.get(v.run_b)
        if ga is None or gb is None or v.winner is None:
            continue
        if ga == gb:
            continue
        out.append((ga, gb, v.winner, v.task_id, v.rater_kind.value))
    return out


def _elo_votes(data: ReportData, by: Sequence[str]) -> list[tuple[AnyVote, str, str]]:
    """The human votes Elo rates: both runs known, in two different groups, with a winner.

    Position bias, cycles, winner quality and pass rates are read from this same set, so
    every figure of the section is about the same votes (and says how many).
    """
    out = []
    labels = data.group_labels(by)
    for v in data.votes:
        if v.rater_kind != JudgeKind.HUMAN or v.winner is None:
            continue
        ga, gb = labels.get(v.run_a), labels.get(v.run_b)
        if ga is None or gb is None:
            continue
        if ga != gb:
            out.append((v, ga, gb))
    return out


def arena_section(
    data: ReportData, by: Sequence[str], *, seed: int = 0
) -> tuple[Section, EloResult | None]:
    """Human preference (Table 9) and win rates by rater kind (Table 10)."""
    sec = Section("Preference arena")
    used = _elo_votes(data, by)
    human = [v for v, _, _ in used]
    triples = [(ga, gb, v.winner or "", v.task_id) for v, ga, gb in used]
    if not triples:
        sec.empty = "No human preference votes yet: the arena (`lhbench serve`) collects them."
        return sec, None
    left_out = sum(1 for v in data.votes if v.rater_kind == JudgeKind.HUMAN) - len(used)
    elo = bradley_terry_elo([(a, b, w) for a, b, w, _ in triples], seed=seed)
    table = Table(
        slug="arena_elo",
        title=f"Bradley–Terry Elo from {elo.n_votes} human votes "
        f"(95% bootstrap CI, {elo.n_bootstrap} rounds)",
        columns=[
            "rank",
            "group",
            "elo",
            "ci_low",
            "ci_high",
            "win %",
            "win % (ties ½)",
            "wins",
            "ties",
            "games",
        ],
        digits=1,
        notes=[
            *elo.notes,
            "win %: wins / games, a tie won by neither; win % (ties ½): a tie credited half "
            "to each side, as LH-Bench Table 10.",
        ],
    )
    rates = win_rates([(a, b, w) for a, b, w, _ in triples])
    for i, m in enumerate(elo.models, 1):
        table.rows.append(
            [
                i,
                m,
                elo.ratings[m],
                elo.ci[m][0],
                elo.ci[m][1],
                100 * elo.win_rate(m),
                100 * rates[m].rate_ties_half,
                elo.wins[m],
                elo.ties[m],
                elo.games(m),
            ]
        )
    left = [None if v.winner == "tie" else v.winner == v.left for v in human]
    lines = []
    rules: tuple[Literal["exclude", "include"], ...] = ("exclude", "include")
    for rule in rules:
        pb = position_bias(left, ties=rule)
        lines.append(
            f"Position bias: left-shown won {pb.k}/{pb.n} ({100 * pb.share:.1f}%), exact two-sided "
            f"binomial p = {pb.p_value:.4f}, ties {pb.ties}."
        )
    cyc = cycle_rate([(a, b, w) for a, b, w, _ in triples], groups=[t for *_, t in triples])
    lines.append(
        f"Preference cycles: {cyc.cycles}/{cyc.triads} triads intransitive "
        f"({'n/a' if math.isnan(cyc.rate) else f'{100 * cyc.rate:.1f}%'}), majorities per task; "
        f"{cyc.skipped_triads} triads skipped (a pair tied or not compared)."
    )
    quality: dict[str, list[int]] = defaultdict(list)
    for v, ga, gb in used:
        if v.winner != "tie" and v.quality is not None:
            quality[ga if v.winner == "a" else gb].append(v.quality)
    if len(quality) >= 2:
        kw = kruskal_wallis(*quality.values())
        lines.append(
            f"Winner quality by group (Kruskal–Wallis): H = {kw.statistic:.3f}, "
            f"p = {kw.p_value:.4f}, n = {sum(len(q) for q in quality.values())} rated wins"
            + (" (all ratings equal)" if kw.degenerate else "")
        )
    lines.append(
        f"Every figure here is over the {elo.n_votes} human votes Elo rates (both runs in the "
        "store, in two different groups)"
        + (f"; {left_out} other human vote(s) left out." if left_out else ".")
    )
    table.notes.extend(lines)
    sec.tables.append(table)
    sec.plots["arena_elo"] = elo

    h2h = Table(
        slug="arena_head_to_head",
        title="Head to head (exact binomial test on decisive votes, ties excluded)",
        columns=[
            "first",
            "second",
            "first wins",
            "second wins",
            "ties",
            "p",
            "h (vs 0.5)",
            "h (win rates)",
        ],
        digits=3,
        notes=[
            "h (vs 0.5): Cohen's h of first's share of the decisive head-to-head votes "
            "against an even split, as LH-Bench reports (h = 0.08 for its top two). "
            "h (win rates): Cohen's h between the two groups' overall win rates."
        ],
    )
    for rec in head_to_head([(a, b, w) for a, b, w, _ in triples]).values():
        h2h.rows.append(
            [
                rec.first,
                rec.second,
                rec.first_wins,
                rec.second_wins,
                rec.ties,
                rec.test.p_value if rec.test else None,
                rec.h,
                cohens_h(elo.win_rate(rec.first), elo.win_rate(rec.second)),
            ]
        )
    sec.tables.append(h2h)

    if quality:
        pr = Table(
            slug="arena_pass_rate",
            title="Winner pass rate (quality ≥ 4 passes, ≤ 3 fails), Wilson 95% CI",
            columns=["group", "passed", "n", "pass %", "ci_low %", "ci_high %"],
            digits=1,
        )
        for g, qs in sorted(quality.items()):
            res = pass_rate(qs, threshold=4)
            pr.rows.append([g, res.k, res.n, 100 * res.rate, 100 * res.ci[0], 100 * res.ci[1]])
        sec.tables.append(pr)

    by_rater = _vote_groups(data, by)
    kinds = sorted({t[4] for t in by_rater})
    if len(kinds) > 1:
        sec.tables.extend(_rater_tables(data, by_rater, kinds))
    return sec, elo


def _rater_tables(
    data: ReportData, triples: list[tuple[str, str, str, str, str]], kinds: list[str]
) -> list[Table]:
    wr = Table(
        slug="win_rates_by_rater",
        title="Win rate by rater kind",
        columns=[
            "group",
            *[c for k in kinds for c in (f"{k} WR %", f"{k} WR % (ties ½)", f"{k} games")],
        ],
        digits=1,
        notes=[
            "WR: wins / games (a tie won by neither); ties ½: a tie credited half to each "
            "side, as LH-Bench Table 10."
        ],
    )
    groups = sorted({g for a, b, *_ in triples for g in (a, b)})
    by_kind = {
        k: win_rates([(a, b, w) for a, b, w, _, kind in triples if kind == k]) for k in kinds
    }
    for g in groups:
        row: list[Cell] = [g]
        for k in kinds:
            r = by_kind[k].get(g)
            row += [100 * r.rate, 100 * r.rate_ties_half, r.games] if r else [math.nan, math.nan, 0]
        wr.rows.append(row)
    tables = [wr]
    # matched comparisons: one unordered pair of runs judged by humans and by a rater;
    # each non-human rater (each pairwise judge) is compared with the humans on its own
    # a rater is a judge configuration (its config hash: model, endpoint, settings,
    # prompt), never a model string: two configurations of one model are two rows
    humans: dict[tuple[str, str], list[str]] = defaultdict(list)
    raters: dict[tuple[str, str, str], dict[tuple[str, str], str]] = defaultdict(dict)
    configs_of: dict[tuple[str, str], set[str]] = defaultdict(set)
    for v in data.votes:
        if v.rater_kind != JudgeKind.HUMAN and v.winner is not None:
            configs_of[(v.rater_kind.value, v.annotator)].add(v.judge_key or "")
    for v in data.votes:
        if v.winner is None:
            continue
        a, b = sorted((v.run_a, v.run_b))
        outcome = (
            v.winner if v.winner == "tie" else ("a" if (v.winner == "a") == (v.run_a == a) else "b")
        )
        if v.rater_kind == JudgeKind.HUMAN:
            humans[(a, b)].append(outcome)
        else:
            raters[(v.rater_kind.value, v.annotator, v.judge_key or "")][(a, b)] = outcome
    agree = Table(
        slug="rater_agreement",
        title="Human vs. each other rater on matched comparisons (3-class A/B/tie, nominal κ)",
        columns=["rater kind", "rater", "n", "raw agreement", "κ", "human ties", "rater ties"],
        digits=3,
        notes=[
            "The human outcome of a pair with several human votes is their majority "
            "(a tie when there is none). One row per judge configuration (model, endpoint, "
            "settings and prompt); '[abc123]' names the configuration where one model has "
            "several."
        ],
    )
    for (kind, annotator, config), outcomes in sorted(raters.items()):
        several = len(configs_of[(kind, annotator)]) > 1
        name = f"{annotator} [{config[:6] or 'no config'}]" if several else annotator
        matched = [
            (_majority(humans[pair]), outcome)
            for pair, outcome in sorted(outcomes.items())
            if pair in humans
        ]
        if matched:
            res = outcome_agreement(
                [cast(Outcome, m[0]) for m in matched], [cast(Outcome, m[1]) for m in matched]
            )
            agree.rows.append(
                [kind, name, res.n, res.raw_agreement, res.kappa, res.ties_first, res.ties_second]
            )
    if agree.rows:
        tables.append(agree)
    return tables


def _majority(outcomes: list[str]) -> str:
    counts = {o: outcomes.count(o) for o in set(outcomes)}
    best = max(counts.values())
    winners = [o for o, n in counts.items() if n == best]
    return winners[0] if len(winners) == 1 else "tie"
