"""The judges page's Agent-as-a-Judge part shows the report's numbers, escaped, cached.

A store holding one pack (three tasks in two domains; the second domain's and a
subdomain's names carry markup), labelled runs, and verdicts of an agent judge at two
tool budgets and tool sets, an LLM judge, and a second agent judge (its name carrying
markup) under two values of a ``modality`` setting, which nothing in lhbench knows: the
page shows its ablation because the report makes one for any setting that varies.
"""

from __future__ import annotations

import csv
import math
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from scipy import stats as sps

from lhbench.reporting import ReportData, write_report
from lhbench.schema import (
    ComplexityTags,
    EnvironmentKind,
    EnvironmentSpec,
    JudgeIdentity,
    JudgeKind,
    Label,
    Run,
    Task,
    TaskPack,
    Verdict,
)
from lhbench.store import Store
from tests.web.conftest import PASSWORD, add_user, login, no_xss, serve

SHOTS = Path("/work/notes/shots")
EVIL_DOMAIN = "data-systems<script>window.__xss='domain'</script>"
EVIL_SUB = "fs<img src=x onerror=window.__xss='sub'>"
EVIL_JUDGE = "openai:gui<script>window.__xss='judge'</script>"
EVIL_MODALITY = "a11y<script>window.__xss='axis'</script>"
TASKS = {
    "t1": ("search", "wide", EnvironmentKind.WEB),
    "t2": ("search", "deep", EnvironmentKind.WEB),
    "t3": (EVIL_DOMAIN, EVIL_SUB, EnvironmentKind.FILESYSTEM),
}
LABELS = {"r1": 1, "r2": 1, "r3": 0, "r4": 0, "r5": 1, "r6": 0}
LABELS.update({"r9": 1, "r10": 0, "r11": 1, "r12": 0})
TASK_OF = {**dict.fromkeys(["r1", "r2", "r3", "r4"], "t1"), "r5": "t2", "r6": "t2"}
TASK_OF.update(dict.fromkeys(["r9", "r10", "r11", "r12"], "t3"))
# (budget, repeat) -> run -> verdict, or (verdict, tools used[, stored failure tag])
SAID = {
    (20, 0): {
        "r1": "P", "r2": "P", "r3": ("P", ["open_url"]), "r4": "F",
        "r5": "P", "r6": ("P", ["view_trajectory_step"]),
        "r9": "P", "r10": ("P", []), "r11": "P", "r12": "F",
    },
    (20, 1): {
        "r1": "P", "r2": ("F", ["search"], "c"), "r3": "F", "r4": "F",
        "r5": "P", "r6": "F", "r9": "P", "r10": "F", "r11": "P", "r12": "F",
    },
    (5, 0): {"r1": ("F", []), "r2": ("F", []), "r3": "F", "r4": "F"},
}  # fmt: skip
# the markup-named judge: modality -> run -> verdict
GUI = {"screenshot": {"r1": "P", "r3": "P", "r9": "P"}, EVIL_MODALITY: {"r1": "P", "r3": "F"}}


def seed(store: Store) -> None:
    tasks = [
        Task(
            id=t,
            title=t,
            instruction="x",
            environment=EnvironmentSpec(kind=k),
            tags=ComplexityTags(category=c, subdomain=s),
        )
        for t, (c, s, k) in TASKS.items()
    ]
    store.save_pack(
        TaskPack(
            id="ajp",
            version="1.0",
            environment=EnvironmentKind.WEB,
            tasks=tasks,
            content_hash="c" * 64,
        )
    )
    for r in LABELS:
        store.save_run(Run(id=r, pack_id="ajp", task_id=TASK_OF[r], harness="h", model="m"))
    store.save_labels(
        [Label(run_id=r, passed=bool(v), source="verify:x") for r, v in LABELS.items()]
    )
    llm = JudgeIdentity(kind=JudgeKind.LLM, model="m")
    verdicts = [
        Verdict(id=f"llm-{r}", run_id=r, judge=llm, verdict="PASS", key=f"llm-{r}-key")
        for r in ("r1", "r2", "r3", "r4")
    ]
    for (budget, k), said in SAID.items():
        tool_set = "state" if budget == 5 else "state+trajectory"
        settings = {"tool_budget": budget, "tool_set": tool_set}
        judge = JudgeIdentity(kind=JudgeKind.AGENT, model="m", settings=settings)
        for r, what in said.items():
            what = (what, ["open_url"]) if isinstance(what, str) else what
            v, tools, tag = (*what, None) if len(what) == 2 else what
            verdicts.append(
                Verdict(
                    id=f"{r}-{budget}-{k}",
                    run_id=r,
                    judge=judge,
                    verdict="PASS" if v == "P" else "FAIL",
                    tools_used=tools,
                    tool_calls=len(tools),
                    repeat=k,
                    failure_mode=tag,
                    key=f"{r}-{budget}-{k}-key",
                )
            )
    for modality, said in GUI.items():
        judge = JudgeIdentity(
            kind=JudgeKind.AGENT, model=EVIL_JUDGE, settings={"modality": modality}
        )
        for r, v in said.items():
            verdicts.append(
                Verdict(
                    id=f"gui-{r}-{len(modality)}",
                    run_id=r,
                    judge=judge,
                    verdict="PASS" if v == "P" else "FAIL",
                    tools_used=["read_file"],
                    tool_calls=1,
                    key=f"gui-{r}-{len(modality)}-key",
                )
            )
    store.save_verdicts(verdicts)
    add_user(store, "boss", PASSWORD, admin=True)


@pytest.fixture(scope="module")
def aj_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("aj") / "aj.db"
    with Store.open(f"sqlite:///{path}") as store:
        seed(store)
    return path


@pytest.fixture
def aj_served(tmp_path: Path, aj_template: Path) -> Iterator[tuple[str, Store]]:
    db = tmp_path / "aj.db"
    shutil.copy(aj_template, db)
    store = Store.open(f"sqlite:///{db}")
    with serve(store, tmp_path) as srv:
        yield srv.url, store
    store.close()


def fetch_judges(base: str) -> str:
    with httpx.Client(base_url=base, follow_redirects=False, timeout=30) as c:
        page = c.get("/login").text
        token = page.split('name="csrf_token" value="')[1].split('"')[0]
        r = c.post("/login", data={"name": "boss", "password": PASSWORD, "csrf_token": token})
        assert r.status_code == 303, r.text[:300]
        r = c.get("/judges")
        assert r.status_code == 200
        return r.text


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def same(page_value: str, csv_value: str) -> bool:
    """A page cell's full-precision value equals the report CSV's (both empty/NaN too)."""
    a = float(page_value) if page_value not in ("", "None") else math.nan
    b = float(csv_value) if csv_value != "" else math.nan
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-9)


def test_page_numbers_equal_the_report_numbers(
    aj_served: tuple[str, Store], tmp_path: Path, page: object
) -> None:
    base, store = aj_served
    files = write_report(ReportData.from_store(store), tmp_path / "report")
    domains = read_csv(tmp_path / "report" / "aj_domains.csv")
    login(page, base, "boss")
    page.goto(f"{base}/judges")  # type: ignore[attr-defined]
    got = page.eval_on_selector_all(  # type: ignore[attr-defined]
        "table.aj-domains tbody tr",
        """rows => rows.map(r => ({
            model: r.closest('table').dataset.model,
            budget: r.closest('table').dataset.budget,
            settings: r.closest('table').dataset.settings,
            domain: r.dataset.domain, sub: r.dataset.subdomain,
            cells: Array.from(r.querySelectorAll('td.metric')).map(
                c => [c.dataset.v, c.dataset.lo, c.dataset.hi, c.innerText.trim()]),
            n: r.cells[r.cells.length - 1].innerText.trim()}))""",
    )
    # m agent@20: wide, deep, search, fs, domain; @5: wide, search; llm: wide, search;
    # the markup-named judge, per modality: a11y wide, search; screenshot wide, search,
    # its subdomain, its domain (modalities are never pooled)
    assert len(got) == len(domains) == 15
    csv_rows = {
        (r["judge model"], r["tool budget"], r["judge settings"], r["domain"], r["subdomain"]): r
        for r in domains
    }
    metrics = ("f1", "precision", "recall", "fpr", "fnr")
    for row in got:
        want = csv_rows[(row["model"], row["budget"], row["settings"], row["domain"], row["sub"])]
        assert row["n"] == want["n"]
        for m, (v, lo, hi, _) in zip(metrics, row["cells"], strict=True):
            assert same(v, want[m]), (row, m)
            assert same(lo, want[f"{m}_ci_low"]) and same(hi, want[f"{m}_ci_high"]), (row, m)
    # one cell by hand: budget 20, search/wide. repeat 0: tp2 fp1 tn1 -> F1 .8;
    # repeat 1: tp1 tn2 fn1 -> F1 2/3. Mean 73.3; t-CI half-width t(.975, 1)·s/√2, clipped
    wide = next(r for r in got if (r["budget"], r["sub"]) == ("20", "wide"))
    f1s = [0.8, 2 / 3]
    half = sps.t.ppf(0.975, df=1) * abs(f1s[0] - f1s[1]) / math.sqrt(2) / math.sqrt(2)
    v, lo, hi, text = wide["cells"][0]
    assert float(v) == pytest.approx(100 * sum(f1s) / 2)
    # the interval reaches past 0 and 100 (-11.4 to 158.0): clipped to what F1 can be
    assert 100 * (sum(f1s) / 2 - half) < 0 and 100 * (sum(f1s) / 2 + half) > 100
    assert (float(lo), float(hi)) == (0.0, 100.0)
    assert text.startswith("73.3") and "0.0" in text and "100.0" in text
    assert wide["n"] == "8"
    # recall: repeat 0 1.0, repeat 1 .5 -> 75
    assert float(wide["cells"][2][0]) == pytest.approx(75)

    # the overall: the report's aj_f1 row for the agent judge (every repeat of m's agent)
    overall = {
        (r["judge model"], r["agentic"], r["judge settings"]): r
        for r in read_csv(files.directory / "aj_f1.csv")
    }
    shown = page.eval_on_selector_all(  # type: ignore[attr-defined]
        "#aj-overall tbody tr",
        "rows => rows.map(r => [r.cells[0].querySelector('.mono').innerText, r.cells[1].innerText, "
        "(r.cells[0].querySelector('.settings') || {innerText: ''}).innerText, "
        "r.cells[2].dataset.v, r.cells[2].dataset.lo, r.cells[2].dataset.hi, "
        "r.cells[3].dataset.v, r.cells[5].innerText])",
    )
    # m's agent judge at two budgets (and tool sets) is two rows, never pooled; m's LLM
    # judge; the markup-named judge under two modalities
    assert len(shown) == 5
    for model, agentic, settings, v, lo, hi, pooled, n in shown:
        want = overall[(model, agentic, settings)]
        assert same(v, want["overall"]) and same(pooled, want["pooled F1"])
        assert same(lo, want["ci_low"]) and same(hi, want["ci_high"]) and n == want["n"]
    # by hand, budget 20: per repeat the mean of wide, deep and the markup-named
    # subdomain's F1. Repeat 0: (.8 + 2/3 + .8)/3; repeat 1: (2/3 + 1 + 1)/3
    b20 = next(r for r in shown if r[2] == "tool_budget=20, tool_set=state+trajectory")
    reps = [(0.8 + 2 / 3 + 0.8) / 3, (2 / 3 + 1 + 1) / 3]
    assert float(b20[3]) == pytest.approx(100 * sum(reps) / 2) and b20[7] == "20"
    text = page.inner_text("#aj")  # type: ignore[attr-defined]
    assert "unweighted mean of the subdomain F1 scores" in text
    assert "verdict(s) were errors and are left out" in text

    # failure modes and ablations: the report's tables, cell for cell
    for slug in (
        "aj_failure_mode_counts",
        "aj_turn_budget",
        "aj_tool_sets",
        "aj_ablation_modality",
    ):
        want_rows = read_csv(files.directory / f"{slug}.csv")
        page_rows = page.eval_on_selector_all(  # type: ignore[attr-defined]
            f"table#{slug} tbody tr",
            "rows => rows.map(r => Array.from(r.cells).map(c => c.innerText.trim()))",
        )
        assert len(page_rows) == len(want_rows) > 0, slug
        for prow, wrow in zip(page_rows, want_rows, strict=True):
            for cell, value in zip(prow, wrow.values(), strict=True):
                if (cell, value) == ("n/a", ""):
                    continue
                try:
                    assert float(cell) == pytest.approx(float(value), abs=0.006), slug
                except ValueError:
                    assert cell == value, slug
    counts = read_csv(files.directory / "aj_failure_mode_counts.csv")
    m_counts = {
        r["judge settings"]: [r[k] for k in ("(a)", "(b)", "(c)", "(d)", "untagged")]
        for r in counts
        if r["judge model"] == "m"
    }
    # wrong agent verdicts of m, one row per configuration: at budget 20 r3 (rule can't
    # tell), r6 (b), r10 (a), r2 rep1 (c); at budget 5 r1 and r2 (a)
    assert len(m_counts) == 2
    b20 = next(k for k in m_counts if "tool_budget=20" in k)
    b5 = next(k for k in m_counts if "tool_budget=5" in k)
    assert m_counts[b20] == ["1", "1", "1", "0", "1"] and m_counts[b5] == ["2", "0", "0", "0", "0"]
    modality = read_csv(files.directory / "aj_ablation_modality.csv")
    assert {r["modality"] for r in modality} == {"screenshot", EVIL_MODALITY}
    SHOTS.mkdir(parents=True, exist_ok=True)
    # 1280 px wide, as tall as the page (a full-page capture repeats the sticky bar)
    height = page.evaluate("document.documentElement.scrollHeight")  # type: ignore[attr-defined]
    page.set_viewport_size({"width": 1280, "height": min(height, 12000)})  # type: ignore[attr-defined]
    page.wait_for_timeout(150)  # type: ignore[attr-defined]
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280  # type: ignore[attr-defined]
    # no table of the AJ card scrolls sideways at 1280 px (every column in view)
    wide = page.eval_on_selector_all(  # type: ignore[attr-defined]
        "#aj .table-wrap", "ws => ws.filter(w => w.scrollWidth > w.clientWidth + 1).length"
    )
    assert wide == 0
    page.screenshot(path=str(SHOTS / "judges.png"))  # type: ignore[attr-defined]
    no_xss(page)


def test_markup_in_names_is_shown_as_text(aj_served: tuple[str, Store], page: object) -> None:
    base, _ = aj_served
    html = fetch_judges(base)
    assert "<script>window.__xss" not in html and "<img src=x onerror" not in html
    assert "&lt;script&gt;window.__xss=&#39;domain&#39;&lt;/script&gt;" in html
    login(page, base, "boss")
    page.goto(f"{base}/judges")  # type: ignore[attr-defined]
    text = page.inner_text("#aj")  # type: ignore[attr-defined]
    for shown in (EVIL_DOMAIN, EVIL_SUB, EVIL_JUDGE, EVIL_MODALITY):
        assert shown in text, shown
    assert page.locator("#aj script, #aj img").count() == 0  # type: ignore[attr-defined]
    no_xss(page)


def test_empty_states_name_the_command(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'e.db'}")
    add_user(store, "boss", PASSWORD, admin=True)
    with serve(store, tmp_path) as srv:
        html = fetch_judges(srv.url)
        assert "lhbench aj run PACK --judge agent --model MODEL --repeats 3" in html
        # verdicts without labels: the AJ card says what fills it, no tables
        store.save_run(Run(id="r1", pack_id="p", task_id="t", harness="h", model="m"))
        store.save_verdicts(
            [
                Verdict(
                    id="v1",
                    run_id="r1",
                    judge=JudgeIdentity(kind=JudgeKind.AGENT, model="m"),
                    verdict="PASS",
                    key="v1-key-0",
                )
            ]
        )
        html = fetch_judges(srv.url)
        card = html.split('id="aj"', 1)[1]
        assert "No verdicts with labels yet" in card and "lhbench aj run PACK" in card
        assert "aj-domains" not in card and "aj-overall" not in card
    store.close()


def test_page_follows_the_store_and_is_cached(
    aj_served: tuple[str, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    import lhbench.web.judges_aj as mod

    calls: list[int] = []
    real = mod.aj_breakdown_section

    def counted(data: ReportData) -> object:
        calls.append(1)
        return real(data)

    monkeypatch.setattr(mod, "aj_breakdown_section", counted)
    base, store = aj_served

    def aj_card(html: str) -> str:
        return html.split('id="aj"', 1)[1].split("</section>", 1)[0]

    first = aj_card(fetch_judges(base))
    assert aj_card(fetch_judges(base)) == first
    assert len(calls) == 1  # same store version: computed once
    # a new label flips one run: the version changes and so do the numbers shown
    store.save_label(Label(run_id="r3", passed=True, source="verify:x"))  # a re-run check
    second = aj_card(fetch_judges(base))
    assert len(calls) == 2

    def f1_wide(html: str) -> str:
        row = re.search(r'data-budget="20".*?data-subdomain="wide">.*?data-v="([^"]+)"', html, re.S)
        assert row is not None
        return row.group(1)

    assert f1_wide(second) != f1_wide(first)
