"""Human chapter-level votes: imported from a file, kept out of the arena, set against the
chapter scores in the report (LH-Bench Table 10 and App. J)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from lhbench.reporting import ReportData, write_report
from lhbench.schema import Scale
from lhbench.store import Store
from tests.cli.helpers import cli
from tests.factories import make_run
from tests.stats.test_course import _flat

THREE, FIVE = Scale.ZERO_TO_TWO, Scale.ONE_TO_FIVE
CHAPTERS = ["how-it-works", "efficiency", "installation"]  # content-mini's, in order
AGENTS = {
    "a": ("claude-code", "anthropic:opus"),
    "b": ("codex", "openai:gpt-5.2"),
    "g": ("gemini-cli", "google-gla:gemini"),
}
# chapter scores per run (3-point level, 5-point level) of every criterion
LEVELS = {
    "a": {"how-it-works": (2, 5), "efficiency": (1, 4), "installation": (2, 4)},
    "b": {"how-it-works": (1, 4), "efficiency": (1, 3), "installation": (2, 5)},
    "g": {"how-it-works": (1, 3), "efficiency": (0, 2)},  # installation not graded
}


def _store(tmp_path: Path) -> str:
    db = f"sqlite:///{tmp_path / 'votes.db'}"
    with Store.open(db) as store:
        for rid, (harness, model) in AGENTS.items():
            store.save_run(
                make_run(
                    rid, pack_id="content-mini", task_id="course", harness=harness, model=model
                )
            )
            grades = [
                g
                for chapter, (three, five) in LEVELS[rid].items()
                for g in (*_flat(rid, chapter, THREE, three), *_flat(rid, chapter, FIVE, five))
            ]
            store.save_chapter_grades(grades)
    return db


def _write(path: Path, lines: list[object]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


VOTES = [
    # the public data set's shape: harnesses and a 0-based chapter index, t for a tie
    {"id": "v1", "chapter_index": 0, "harness_a": "claude-code", "harness_b": "codex",
     "winner": "a", "reasoning": "clearer cycle", "duration_seconds": 41},
    {"id": "v2", "chapter_index": 1, "harness_a": "codex", "harness_b": "claude-code",
     "winner": "t"},
    # lhbench's own run ids and chapter ids
    {"id": "v3", "chapter_id": "installation", "run_a": "a", "run_b": "b", "winner": "b",
     "quality": 4, "annotator": "sme-2", "left": "b"},
    {"id": "v4", "chapter_id": "how-it-works", "run_a": "g", "run_b": "a", "winner": "b"},
    {"id": "v5", "chapter_id": "efficiency", "run_a": "b", "run_b": "g", "winner": "a"},
    {"id": "v6", "chapter_id": "installation", "run_a": "b", "run_b": "g", "winner": "a"},
]  # fmt: skip


def test_chapter_votes_are_imported_once_and_set_against_the_chapter_scores(
    tmp_path: Path,
) -> None:
    db = _store(tmp_path)
    path = _write(tmp_path / "votes.jsonl", VOTES)
    ran = cli("content", "import-votes", str(path), "--pack", "content-mini", "--db", db)
    assert ran.exit_code == 0, ran.stderr
    assert "6 chapter-level vote(s) read (1 tie(s)): 6 stored, 0 already stored" in ran.stdout
    again = cli("content", "import-votes", str(path), "--pack", "content-mini", "--db", db)
    assert "0 stored, 6 already stored" in again.stdout
    with Store.open(db) as store:
        votes = {
            v.chapter_id + ":" + v.run_a + v.run_b: v for v in store.list_votes(chapter_level=True)
        }
        assert set(votes) == {
            "how-it-works:ab", "efficiency:ba", "installation:ab", "how-it-works:ga",
            "efficiency:bg", "installation:bg",
        }  # fmt: skip
        v3 = votes["installation:ab"]
        assert (v3.winner, v3.quality, v3.annotator, v3.left) == ("b", 4, "sme-2", "b")
        assert votes["efficiency:ba"].winner == "tie" and votes["efficiency:ba"].annotator == "sme"
        # not arena votes: no run-level list, no Elo input
        assert store.list_votes() == [] and len(store.vote_columns(rater_kind="human")) == 0
        data = ReportData.from_store(store)
    assert data.votes == [] and len(data.chapter_votes) == 6
    files = write_report(data, tmp_path / "report")
    assert "No human preference votes yet" in files.markdown.read_text()  # arena untouched

    def rows(name: str) -> dict[str, dict[str, str]]:
        with (tmp_path / "report" / f"{name}.csv").open() as f:
            return {r[next(iter(r))]: r for r in csv.DictReader(f)}

    # outcomes from the chapter scores (3-point: a .5 vs b .5 on efficiency is a tie)
    # v1 a:1 b:.5 -> a | v2 b .5 a .5 -> tie | v3 a 1 b 1 -> tie | v4 g .5 a 1 -> b
    # v5 b .5 g 0 -> a | v6 g has no installation -> not matched
    three_h = ["a", "tie", "b", "b", "a"]
    three_s = ["a", "tie", "tie", "b", "a"]
    # 5-point: v1 1 vs .8 a | v2 .6 vs .8 b | v3 .8 vs 1 b | v4 .6 vs 1 b | v5 .6 vs .4 a
    five_s = ["a", "b", "b", "b", "a"]
    agree = rows("content_human_agreement")
    overall = agree["overall"]
    assert overall["3-point n"] == "5" and overall["5-point n"] == "5"
    assert float(overall["3-point agree %"]) == pytest.approx(100 * 4 / 5, abs=0.001)
    assert float(overall["5-point agree %"]) == pytest.approx(100 * 4 / 5, abs=0.001)
    labels = ["a", "b", "tie"]
    assert float(overall["3-point κ"]) == pytest.approx(
        cohen_kappa_score(three_h, three_s, labels=labels), abs=0.001
    )
    assert float(overall["5-point κ"]) == pytest.approx(
        cohen_kappa_score(three_h, five_s, labels=labels), abs=0.001
    )
    assert (overall["3-point human ties"], overall["3-point score ties"]) == ("1", "2")
    pair = "claude-code / anthropic:opus vs codex / openai:gpt-5.2"
    assert agree[pair]["3-point n"] == "3"
    # win rates, ties credited half: claude (a) in v1..v4 as a human: win, tie, loss, win
    wr = rows("content_win_rates")
    claude = wr["claude-code / anthropic:opus"]
    assert float(claude["human WR %"]) == pytest.approx(100 * 2.5 / 4, abs=0.05)
    assert claude["human n"] == "4"
    # scores 3-point on the matched v1..v4: win, tie, tie, win -> 3 / 4
    assert float(claude["scores WR 3-point %"]) == pytest.approx(75.0, abs=0.05)
    gemini = wr["gemini-cli / google-gla:gemini"]
    assert gemini["human n"] == "3" and gemini["3-point n"] == "2"  # v6 unmatched
    notes = files.markdown.read_text()
    assert "Votes not matched: 3-point 1, 5-point 1" in notes
    assert "LH-Bench Table 10" in notes and "LH-Bench App. J" in notes


BAD_LINES = [
    ("not json", "not JSON"),
    ([1, 2], "a vote is a JSON object, not list"),
    ({"chapter_index": 0, "run_a": "a", "run_b": "b", "winner": "a"}, "'id' is required"),
    ({"id": "w", "chapter_index": 0, "run_a": "a", "run_b": "b", "winner": "x"}, "'winner'"),
    ({"id": "b", "chapter_index": True, "run_a": "a", "run_b": "b", "winner": "a"}, "integer"),
    ({"id": "o", "chapter_index": 3, "run_a": "a", "run_b": "b", "winner": "a"}, "outside"),
    ({"id": "u", "chapter_id": "intro", "run_a": "a", "run_b": "b", "winner": "a"}, "'intro'"),
    (
        {
            "id": "m",
            "chapter_id": "efficiency",
            "chapter_index": 0,
            "run_a": "a",
            "run_b": "b",
            "winner": "a",
        },
        "chapter_index 0 is 'how-it-works'",
    ),
    ({"id": "r", "chapter_index": 0, "run_a": "zz", "run_b": "b", "winner": "a"}, "no such run"),
    (
        {
            "id": "h",
            "chapter_index": 0,
            "harness_a": "codex",
            "harness_b": "claude-code",
            "winner": "a",
        },
        "has 2 runs of task course",
    ),
    ({"id": "s", "chapter_index": 0, "run_a": "a", "run_b": "a", "winner": "a"}, "both sides"),
    (
        {"id": "q", "chapter_index": 0, "run_a": "a", "run_b": "b", "winner": "a", "quality": 6},
        "'quality'",
    ),
    ({"id": "v1", "chapter_index": 1, "run_a": "a", "run_b": "b", "winner": "a"}, "line 1"),
    ('{"id": "big", "pad": "' + "x" * 70_000 + '"}', "longer than 65536 bytes"),
    (
        {"id": "t", "task": "other", "chapter_index": 0, "run_a": "a", "run_b": "b", "winner": "a"},
        "task 'other' has no annotated chapters",
    ),
]


def test_a_bad_votes_file_stores_nothing_and_names_each_line(tmp_path: Path) -> None:
    db = _store(tmp_path)
    with Store.open(db) as store:  # a second codex run makes 'codex' ambiguous
        store.save_run(
            make_run("b2", pack_id="content-mini", task_id="course", harness="codex", model="x:y")
        )
    good = {"id": "v1", "chapter_index": 0, "run_a": "a", "run_b": "b", "winner": "a"}
    path = _write(tmp_path / "bad.jsonl", [good, *[line for line, _ in BAD_LINES]])
    ran = cli("content", "import-votes", str(path), "--pack", "content-mini", "--db", db)
    assert ran.exit_code == 2
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == len(BAD_LINES)
    for n, ((_, expected), line) in enumerate(zip(BAD_LINES, lines, strict=True), start=2):
        assert line.startswith(f"error: {path}:{n}:") and expected in line, (expected, line)
    with Store.open(db) as store:
        assert store.list_votes(chapter_level=None) == []  # nothing of the file stored
    empty = _write(tmp_path / "empty.jsonl", ["", "  "])
    none = cli("content", "import-votes", str(empty), "--pack", "content-mini", "--db", db)
    assert none.exit_code == 2 and "no votes in the file" in none.stderr
