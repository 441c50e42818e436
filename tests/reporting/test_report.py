import csv
import hashlib
import re
from pathlib import Path

import pytest

from lhbench.packs import bundled_pack_dirs, load_pack
from lhbench.reporting import ReportData, write_report
from lhbench.schema import (
    DimensionScore,
    Grade,
    GradeStatus,
    JudgeIdentity,
    JudgeKind,
    Label,
    PreferenceVote,
    Scale,
    TierKind,
    Verdict,
)
from lhbench.stats import binary_metrics, bradley_terry_elo, cohen_kappa, t_ci
from lhbench.store import Store
from tests.cli.helpers import cli
from tests.conftest import PG_URL, _pg_database
from tests.factories import make_run
from tests.packs.test_loader import write_pack

DIMS = ("design_inspection", "token_extraction", "component_architecture", "build_verification")
W = (0.30, 0.25, 0.25, 0.20)
JUDGES = ("anthropic:sonnet", "google-gla:gemini", "openai:gpt")
GROUP_A = "claude-code / anthropic:opus"
GROUP_B = "codex / openai:gpt-5.2"


def _key(*parts: object) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


FIGMA = next(
    r
    for d in bundled_pack_dirs()
    if d.name == "lhbench-rubrics"
    for r in load_pack(d).rubrics
    if r.id == "figma-to-code"
)


def grade(run_id: str, judge: str, scores: tuple[int, ...], repeat: int = 0) -> Grade:
    return Grade(
        id=f"g-{run_id}-{judge}-{repeat}",
        run_id=run_id,
        rubric_id="figma-to-code",
        rubric_version="1.2",
        rubric_hash=FIGMA.content_hash,
        tier=TierKind.PROCESS,
        judge=JudgeIdentity(kind=JudgeKind.LLM, model=judge, family=judge.split(":")[0]),
        scores=[
            DimensionScore(dimension_id=d, scale=Scale.ONE_TO_FIVE, score=s)
            for d, s in zip(DIMS, scores, strict=True)
        ],
        tier_score=sum(w * s for w, s in zip(W, scores, strict=True)),
        repeat=repeat,
        key=_key(run_id, judge, repeat),
    )


def seed_store(store: Store, tmp_path: Path) -> None:
    store.save_pack(load_pack(next(d for d in bundled_pack_dirs() if d.name == "lhbench-rubrics")))
    pack_dir = write_pack(tmp_path / "pack")
    for i, sub in ((3, "filesystem"), (4, "postgres")):
        d = pack_dir / "tasks" / f"t{i}"
        d.mkdir()
        (d / "task.yaml").write_text(
            f"title: T{i}\ninstruction: do {i}\ntags: {{subdomain: {sub}}}\n"
        )
    (pack_dir / "tasks" / "t1" / "task.yaml").write_text(
        (pack_dir / "tasks" / "t1" / "task.yaml")
        .read_text()
        .replace("category: files", "subdomain: filesystem")
    )
    (pack_dir / "tasks" / "t2" / "task.yaml").write_text(
        "title: T2\ninstruction: x\ntags: {subdomain: postgres}\n"
    )
    store.save_pack(load_pack(pack_dir))
    tasks = ["t1", "t2", "t3", "t4"]
    for t in tasks:
        store.save_run(
            make_run(
                f"a-{t}",
                pack_id="demo-pack",
                task_id=t,
                harness="claude-code",
                model="anthropic:opus",
                versions={"skill": "v1"},
            )
        )
        store.save_run(
            make_run(
                f"b-{t}",
                pack_id="demo-pack",
                task_id=t,
                harness="codex",
                model="openai:gpt-5.2",
                versions={"skill": "none" if t in ("t1", "t2") else "v1"},
            )
        )
        # group A: two judges say 4 everywhere, the third says 3 -> tier scores 4, 4, 3
        store.save_grade(grade(f"a-{t}", JUDGES[0], (4, 4, 4, 4)))
        store.save_grade(grade(f"a-{t}", JUDGES[1], (4, 4, 4, 4)))
        store.save_grade(grade(f"a-{t}", JUDGES[2], (3, 3, 3, 3)))
        # group B: everyone says (2, 3, 4, 5) -> 3.35
        for j in JUDGES:
            store.save_grade(grade(f"b-{t}", j, (2, 3, 4, 5)))
    # a parse failure: never a score
    store.save_grade(
        Grade(
            id="g-bad",
            run_id="b-t1",
            rubric_id="figma-to-code",
            rubric_version="1.2",
            rubric_hash=FIGMA.content_hash,
            tier=TierKind.PROCESS,
            judge=JudgeIdentity(kind=JudgeKind.LLM, model="openai:other"),
            status=GradeStatus.PARSE_ERROR,
            raw_output="I think it is a 4",
            key=_key("bad"),
        )
    )
    # human votes: A beats B on t1..t3, B beats A on t4, a tie on t2; left alternates
    outcomes = [("t1", "a"), ("t2", "a"), ("t3", "a"), ("t4", "b"), ("t2", "tie"), ("t1", "a")]
    for k, (t, w) in enumerate(outcomes):
        store.save_vote(
            PreferenceVote(
                id=f"v{k}",
                pack_id="demo-pack",
                task_id=t,
                run_a=f"a-{t}",
                run_b=f"b-{t}",
                left="a" if k % 2 == 0 else "b",
                winner=w,
                quality=4 if w == "a" else 3,
                annotator="ann",
            )
        )
    # verdicts vs labels: runs a-* pass, b-* fail
    for t in tasks:
        store.save_label(Label(run_id=f"a-{t}", passed=True, source="verify:verify.py"))
        store.save_label(Label(run_id=f"b-{t}", passed=False, source="verify:verify.py"))
    agent_pred = {  # repeat -> predictions on a-t1..a-t4, b-t1..b-t4
        0: [True, True, True, True, False, False, True, False],
        1: [True, True, False, True, False, False, False, False],
    }
    llm_pred = {
        0: [True, False, True, True, True, True, False, False],
        1: [True, True, True, True, True, True, True, False],
    }
    run_ids = [f"a-{t}" for t in tasks] + [f"b-{t}" for t in tasks]
    for kind, preds in (("agent", agent_pred), ("llm", llm_pred)):
        for rep, ps in preds.items():
            for rid, p in zip(run_ids, ps, strict=True):
                store.save_verdict(
                    Verdict(
                        id=f"{kind}-{rep}-{rid}",
                        run_id=rid,
                        judge=JudgeIdentity(kind=kind, model="openai:gpt-5-mini"),
                        verdict="PASS" if p else "FAIL",
                        repeat=rep,
                        key=_key(kind, rep, rid),
                    )
                )


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def seeded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """One seeded store and its report per backend, shared by the module's tests."""
    tmp = tmp_path_factory.mktemp(f"report-{request.param}")
    if request.param == "sqlite":
        urls = iter([f"sqlite:///{tmp / 'lhbench.db'}"])
    elif not PG_URL:
        pytest.skip("LHBENCH_TEST_PG_URL is not set (CI sets it; see .ci/run)")
    else:
        urls = _pg_database()
    url = next(urls)
    with Store.open(url) as store:
        seed_store(store, tmp)
        out = tmp / "report"
        write_report(ReportData.from_store(store), out, ablation="skill", baseline="none")
    yield url, out
    for _ in urls:  # the PostgreSQL database is dropped when its generator ends
        pass


@pytest.fixture
def report_dir(seeded: tuple[str, Path]) -> Path:
    return seeded[1]


@pytest.fixture
def store_url(seeded: tuple[str, Path]) -> str:
    return seeded[0]


def test_leaderboard_numbers(report_dir: Path) -> None:
    rows = {
        r["group"]: r for r in read_csv(report_dir / "leaderboard_figma-to-code_1_2_process.csv")
    }
    a, b = rows[GROUP_A], rows[GROUP_B]
    assert (a["rank"], b["rank"]) == ("1", "2")
    assert float(a["score"]) == pytest.approx(11 / 3)
    assert float(b["score"]) == pytest.approx(0.3 * 2 + 0.25 * 3 + 0.25 * 4 + 0.2 * 5)
    assert (a["n"], a["tasks"]) == ("4", "4")
    assert float(a["var"]) == pytest.approx(2 / 9)  # pvariance(4, 4, 3)
    assert float(b["var"]) == 0.0
    assert float(a["openai:gpt"]) == pytest.approx(3.0)
    # identical scores in every task: the CI collapses to the mean
    assert float(a["ci_low"]) == pytest.approx(11 / 3) and float(a["ci_high"]) == pytest.approx(
        11 / 3
    )


def test_decomposition_and_kappa_row(report_dir: Path) -> None:
    rows = read_csv(report_dir / "decomposition_figma-to-code_1_2_process.csv")
    a = next(r for r in rows if r["group"] == GROUP_A)
    assert float(a["design_inspection"]) == pytest.approx(11 / 3)
    kappa = next(r for r in rows if r["rank"] == "κ")
    # recompute the pooled pairwise κ by hand from the seeded scores
    ratings = {j: [] for j in JUDGES}
    for _task in range(4):
        for j in JUDGES:
            ratings[j] += [3] * 4 if (j == JUDGES[2]) else [4] * 4
        for j in JUDGES:
            ratings[j] += [2, 3, 4, 5]
    expected = [
        cohen_kappa(ratings[x], ratings[y], weights="quadratic", labels=[1, 2, 3, 4, 5])
        for x, y in ((0, 1), (0, 2), (1, 2))
        for x, y in [(JUDGES[x], JUDGES[y])]
    ]
    assert float(kappa["score"]) == pytest.approx(sum(expected) / 3)
    agreement = {r["version"]: r for r in read_csv(report_dir / "judge_agreement.csv")}
    assert agreement["1.2"]["author"] == "expert"
    assert (agreement["1.2"]["runs"], agreement["1.2"]["ratings"]) == ("8", "96")


def test_arena_numbers(report_dir: Path) -> None:
    rows = {r["group"]: r for r in read_csv(report_dir / "arena_elo.csv")}
    ref = bradley_terry_elo(
        [(GROUP_A, GROUP_B, w) for w in ("a", "a", "a", "b", "tie", "a")], seed=0
    )
    assert float(rows[GROUP_A]["elo"]) == pytest.approx(ref.ratings[GROUP_A])
    assert float(rows[GROUP_A]["ci_low"]) == pytest.approx(ref.ci[GROUP_A][0])
    assert (rows[GROUP_A]["wins"], rows[GROUP_A]["ties"], rows[GROUP_A]["games"]) == ("4", "1", "6")
    assert float(rows[GROUP_A]["win %"]) == pytest.approx(400 / 6)
    md = (report_dir / "report.md").read_text()
    # A is shown left in votes 0, 2, 4 (won 0 and 2; 4 is a tie); B left in 1, 3, 5 (won 3)
    assert "left-shown won 3/5" in md and "ties excluded" in md
    assert "left-shown won 3/6" in md and "counted as not-left" in md
    passes = {r["group"]: r for r in read_csv(report_dir / "arena_pass_rate.csv")}
    assert (passes[GROUP_A]["passed"], passes[GROUP_A]["n"]) == ("4", "4")
    assert (passes[GROUP_B]["passed"], passes[GROUP_B]["n"]) == ("0", "1")


def test_ablation_deltas(report_dir: Path) -> None:
    rows = read_csv(report_dir / "ablation_skill_figma-to-code_1_2_process.csv")
    b_rows = [r for r in rows if r["group"] == GROUP_B]
    assert [r["condition"] for r in b_rows] == ["none", "v1"]
    a_rows = [r for r in rows if r["group"] == GROUP_A]
    assert [r["condition"] for r in a_rows] == ["v1"]
    # group B ran t1, t2 without the skill and t3, t4 with it: no task is paired, so there
    # is no Δ (an unpaired difference would compare tasks, not conditions), and it says why
    deltas = read_csv(report_dir / "ablation_delta_skill_figma-to-code_1_2_process.csv")
    [b] = [r for r in deltas if r["group"] == GROUP_B]
    assert b["contrast"] == "Δ v1 − none" and b["paired tasks"] == "0" and b["overall"] == ""
    assert b["unpaired tasks"] == "demo-pack/t1, demo-pack/t2, demo-pack/t3, demo-pack/t4"


def test_aj_meta_evaluation(report_dir: Path) -> None:
    labels = [True] * 4 + [False] * 4
    agent = {
        0: [True, True, True, True, False, False, True, False],
        1: [True, True, False, True, False, False, False, False],
    }
    llm = {
        0: [True, False, True, True, True, True, False, False],
        1: [True, True, True, True, True, True, True, False],
    }
    rows = read_csv(report_dir / "aj_f1.csv")
    by = {(r["judge model"], r["agentic"]): r for r in rows}

    def f1_by_sub(pred: dict[int, list[bool]], k: int) -> dict[str, float]:
        # subdomains come from the task tags: t1, t3 filesystem; t2, t4 postgres
        subs = {"filesystem": [0, 2, 4, 6], "postgres": [1, 3, 5, 7]}
        return {
            s: binary_metrics([labels[i] for i in ix], [pred[k][i] for i in ix]).f1
            for s, ix in subs.items()
        }

    got = by[("openai:gpt-5-mini", "✓")]
    # AJ-Bench's overall: per repeat, the mean of the subdomain F1s; then their mean
    agent_overall = [sum(f1_by_sub(agent, k).values()) / 2 for k in (0, 1)]
    llm_overall = [sum(f1_by_sub(llm, k).values()) / 2 for k in (0, 1)]
    assert float(got["overall"]) == pytest.approx(100 * sum(agent_overall) / 2)
    lo, hi = t_ci(agent_overall)  # two repeats: a wide interval, clipped to what F1 can be
    assert float(got["ci_low"]) == pytest.approx(100 * max(lo, 0.0))
    assert float(got["ci_high"]) == pytest.approx(100 * min(hi, 1.0))
    assert 0 <= float(got["ci_low"]) <= float(got["overall"]) <= float(got["ci_high"]) <= 100
    # the pooled F1 (every item in one F1) is shown beside it, labelled
    agent_pooled = [binary_metrics(labels, agent[k]).f1 for k in (0, 1)]
    assert float(got["pooled F1"]) == pytest.approx(100 * sum(agent_pooled) / 2)
    assert float(got["overall"]) != pytest.approx(float(got["pooled F1"]))
    fs_f1 = [f1_by_sub(agent, k)["filesystem"] for k in (0, 1)]
    assert float(got["filesystem"]) == pytest.approx(100 * sum(fs_f1) / 2)
    improvement = by[("openai:gpt-5-mini", "improvement")]
    assert float(improvement["overall"]) == pytest.approx(
        100 * (sum(agent_overall) - sum(llm_overall)) / 2
    )
    metrics = read_csv(report_dir / "aj_metrics.csv")
    fpr = next(r for r in metrics if r["agentic"] == "✗" and r["metric"] == "FPR")
    pooled = binary_metrics(labels * 2, llm[0] + llm[1])
    assert float(fpr["overall"]) == pytest.approx(100 * pooled.fpr)


def test_health_html_and_cli(report_dir: Path, store_url: str, tmp_path: Path) -> None:
    health = read_csv(report_dir / "grading_health.csv")
    bad = next(r for r in health if r["judge"] == "openai:other")
    assert (bad["ok"], bad["parse errors"]) == ("0", "1")
    html = (report_dir / "report.html").read_text()
    assert html.count("<svg") >= 4  # leaderboard, κ heatmap, Elo, AJ F1
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=['\"]https?:", html)
    res = cli(
        "report",
        "--db",
        store_url,
        "--out",
        str(tmp_path / "cli"),
        "--by",
        "harness,versions.skill",
    )
    assert res.exit_code == 0, res.stderr
    groups = {
        r["group"] for r in read_csv(tmp_path / "cli" / "leaderboard_figma-to-code_1_2_process.csv")
    }
    assert groups == {"claude-code / skill=v1", "codex / skill=none", "codex / skill=v1"}


def test_empty_store_sections_say_so(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'e.db'}") as s:
        files = write_report(ReportData.from_store(s), tmp_path / "r")
    md = files.markdown.read_text()
    assert "No grades or check results in the store yet" in md
    assert "No human preference votes yet" in md
    assert files.csv == []


def test_html_figures_are_the_shared_charts_captioned_by_their_tables(report_dir: Path) -> None:
    """Each plot is the web app's chart of its table's figures, under that table's title."""
    html = (report_dir / "report.html").read_text()
    figures = re.findall(r"<figure>(.*?)<figcaption>(.*?)</figcaption></figure>", html, re.S)
    by_caption = {caption: svg for svg, caption in figures}
    assert len(by_caption) == len(figures) == html.count("<figure>") >= 4
    for svg, _ in figures:
        assert svg.startswith('<svg class="chart"') and "<script" not in svg
    captions = dict(re.findall(r"<table id='([^']+)'><caption>(.*?)</caption>", html))
    # the leaderboard: one point per group, both groups named, in the table's order
    board = by_caption[captions["leaderboard_figma-to-code_1_2_process"]]
    assert board.count("<circle") == 2
    assert board.index(GROUP_A) < board.index(GROUP_B)
    # the κ heatmap: one cell per pair of judges, every judge named
    kappa = by_caption[captions["kappa_matrix_figma-to-code_1_2_process"]]
    assert kappa.count("<rect") == len(JUDGES) ** 2
    assert all(j in kappa for j in JUDGES)
    # the arena's Elo against the 1000 start, and the agent judges' F1 as grouped bars
    elo = next(svg for c, svg in by_caption.items() if c.startswith("Arena: "))
    assert "stroke-dasharray" in elo and "Elo" in elo
    f1 = by_caption["Judge F1 against labels"]
    assert "filesystem" in f1 and "postgres" in f1 and "overall" in f1 and "<rect" in f1
