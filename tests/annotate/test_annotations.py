"""Versioned annotations: immutable versions, stale parents refused, spans checked, export."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from lhbench.annotate import (
    AnnotationError,
    AnnotationSet,
    export_annotations,
    find_targets,
    from_ground_truth,
    ground_truth_json,
    quote_on_lines,
    save_version,
    validate_annotations,
)
from lhbench.envs.content import (
    GroundTruth,
    GtSpan,
    coverage,
    load_ground_truth,
    parse_citations,
)
from lhbench.store import StaleVersionError, Store
from tests.annotate.helpers import PACK_ID, TASK, make_pack

Q14 = "The cycle has four stages: evaporation, compression, condensation and expansion."


def content(*spans: dict[str, Any], notes: str = "") -> dict[str, Any]:
    return {
        "course": "Heat pumps",
        "global_notes": notes,
        "chapters": [
            {
                "id": "cycle",
                "title": "The cycle",
                "design_notes": "one slide per stage",
                "criteria": ["names four stages"],
                "spans": list(spans),
            }
        ],
    }


def span(start: int, end: int, quote: str, source: str = "heat-pump-primer") -> dict[str, Any]:
    return {"source_id": source, "start_line": start, "end_line": end, "quote": quote}


@pytest.fixture
def target(tmp_path: Path) -> Any:
    return make_pack(tmp_path / "pack")


def test_versions_are_immutable_and_chained(store: Store, target: Any) -> None:
    v1 = save_version(store, target, content(span(14, 14, Q14)), author="ann", parent=None)
    assert (v1.version, v1.parent, v1.author) == (1, None, "ann")
    v2 = save_version(store, target, content(span(14, 14, Q14), notes="v2"), author="bob", parent=1)
    assert (v2.version, v2.parent, v2.author) == (2, 1, "bob")
    # the first version is untouched by the second
    first = store.get_annotations(PACK_ID, TASK, 1)
    assert first is not None and first.content["global_notes"] == ""
    newest = store.get_annotations(PACK_ID, TASK)
    assert newest is not None and newest.version == 2 and newest.content["global_notes"] == "v2"
    assert [h.version for h in store.annotation_history(PACK_ID, TASK)] == [2, 1]
    # the history names versions without reading their content (many large saves stay cheap)
    (newest_only,) = store.annotation_history(PACK_ID, TASK, limit=1)
    assert (newest_only.version, newest_only.author, newest_only.content) == (2, "bob", {})
    assert store.get_annotations(PACK_ID, TASK, 7) is None
    assert store.get_annotations(PACK_ID, "other-task") is None


def test_a_save_on_a_stale_parent_is_refused_not_merged(store: Store, target: Any) -> None:
    save_version(store, target, content(), author="ann", parent=None)
    save_version(store, target, content(notes="bob's"), author="bob", parent=1)
    with pytest.raises(StaleVersionError) as err:
        save_version(store, target, content(notes="ann's"), author="ann", parent=1)
    assert err.value.head == 2 and "version 2 was saved since" in str(err.value)
    with pytest.raises(StaleVersionError):  # a second "first" version too
        save_version(store, target, content(), author="carol", parent=None)
    newest = store.get_annotations(PACK_ID, TASK)
    assert newest is not None and newest.content["global_notes"] == "bob's"


def test_concurrent_saves_on_one_parent_keep_exactly_one(store: Store, target: Any) -> None:
    save_version(store, target, content(), author="ann", parent=None)
    outcomes: list[str] = []
    barrier = threading.Barrier(4)

    def go(i: int) -> None:
        barrier.wait()
        try:
            store.save_annotations(PACK_ID, TASK, {"n": i}, author=f"u{i}", parent=1)
            outcomes.append("ok")
        except StaleVersionError:
            outcomes.append("stale")

    threads = [threading.Thread(target=go, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(outcomes) == ["ok", "stale", "stale", "stale"]
    assert [h.version for h in store.annotation_history(PACK_ID, TASK)] == [2, 1]


@pytest.mark.parametrize(
    ("spans", "where", "message"),
    [
        ([span(1, 1, "x", source="no-such-source")], "chapters[0].spans[0]", "no source"),
        ([span(30, 40, "x")], "chapters[0].spans[0]", "out of range: heat-pump-primer has 32"),
        ([span(15, 15, Q14)], "chapters[0].spans[0]", "is not the text of"),
        # the quote is on line 14, but the span claims lines 12-14: not tight
        ([span(12, 14, Q14)], "chapters[0].spans[0]", "is not the text of"),
        ([span(14, 13, Q14)], "chapters[0].spans[0]", "before start line"),
        ([span(14, 14, "")], "chapters[0].spans[0].quote", "at least 1 character"),
        ([span(0, 1, "x")], "chapters[0].spans[0].start_line", "greater than or equal to 1"),
        ([span(14, 14, Q14), span(1, 99999, "x")], "chapters[0].spans[1]", "out of range"),
    ],
)
def test_spans_that_do_not_hold_are_refused_with_their_place(
    store: Store, target: Any, spans: list[dict[str, Any]], where: str, message: str
) -> None:
    with pytest.raises(AnnotationError) as err:
        save_version(store, target, content(*spans), author="ann", parent=None)
    assert err.value.where == where and message in err.value.message, str(err.value)
    assert store.get_annotations(PACK_ID, TASK) is None  # nothing saved


def test_malformed_documents_are_refused(target: Any) -> None:
    sources = target.sources()
    bad: list[tuple[Any, str]] = [
        ({"chapters": [{"id": "Bad Id", "title": "t"}]}, "chapters[0].id"),
        ({"chapters": [{"id": "a", "title": ""}]}, "chapters[0].title"),
        ({"chapters": [{"id": "a", "title": "t"}, {"id": "a", "title": "u"}]}, ""),
        ({"chapters": [], "extra": 1}, "extra"),
        ({"chapters": [{"id": "a", "title": "t"}] * 101}, "chapters"),
        ("not an object", ""),
    ]
    for doc, where in bad:
        with pytest.raises(AnnotationError) as err:
            validate_annotations(doc, sources)
        assert err.value.where == where, (doc if isinstance(doc, str) else where, err.value)


def test_quotes_match_across_line_breaks_and_whitespace() -> None:
    lines = ["  The cycle has four", "stages:   evaporation and more.", "Next."]
    assert quote_on_lines("cycle has four stages: evaporation", lines[:2])
    assert quote_on_lines("four\nstages:", lines[:2])
    assert not quote_on_lines("four stages", lines[:3])  # does not reach the last line
    assert not quote_on_lines("stages: evaporation", lines[:2])  # does not start on line 1
    assert not quote_on_lines("cycle has five", lines[:2])
    assert not quote_on_lines("   ", lines[:1])


def test_export_feeds_the_coverage_check(store: Store, target: Any) -> None:
    q16 = "The compressor squeezes that gas"
    doc = content(span(14, 14, Q14), span(16, 16, q16))
    save_version(store, target, doc, author="ann", parent=None)
    save_version(store, target, content(span(14, 14, Q14)), author="ann", parent=1)
    path, saved = export_annotations(store, target, version=1)
    assert saved.version == 1 and path == target.ground_truth_file
    gt = load_ground_truth(path)  # the exact GroundTruth format
    assert isinstance(gt, GroundTruth) and [c.id for c in gt.chapters] == ["cycle"]
    ch = gt.chapters[0]
    assert (ch.design_notes, ch.criteria) == ("one slide per stage", ["names four stages"])
    assert [(s.source, s.start, s.end) for s in ch.spans] == [
        ("heat-pump-primer", 14, 14),
        ("heat-pump-primer", 16, 16),
    ]
    sources = target.sources()
    gts = [GtSpan(s.source, s.start, s.end, s.quote) for s in ch.spans]
    cited, _ = parse_citations("Four stages [heat-pump-primer:L14-L14].", "cycle.md")
    cov = coverage("cycle", cited, gts, sources)
    assert (cov.span_hit_rate, cov.line_recall, cov.line_precision) == (0.5, 0.5, 1.0)
    # the newest version (one span) by default
    path, saved = export_annotations(store, target)
    assert saved.version == 2 and len(load_ground_truth(path).chapters[0].spans) == 1
    text = path.read_text()
    assert text == ground_truth_json(AnnotationSet.model_validate(saved.content))
    assert json.loads(text)["chapters"][0]["spans"][0]["source"] == "heat-pump-primer"


def test_export_without_a_version_or_chapter_is_refused(store: Store, target: Any) -> None:
    from lhbench.errors import StoreError

    with pytest.raises(StoreError, match="no version saved"):
        export_annotations(store, target)
    save_version(store, target, {"chapters": []}, author="ann", parent=None)
    with pytest.raises(AnnotationError, match="no chapter"):
        export_annotations(store, target)
    with pytest.raises(StoreError, match="no version 5"):
        export_annotations(store, target, 5)


def test_the_packs_ground_truth_round_trips(target: Any) -> None:
    sources = target.sources()
    gt = target.ground_truth()
    assert gt is not None
    doc = from_ground_truth(gt, sources)
    assert validate_annotations(doc.model_dump(), sources) == doc
    assert json.loads(ground_truth_json(doc)) == gt.model_dump(mode="json")


def test_targets_prefer_configured_packs_and_skip_broken_ones(tmp_path: Path) -> None:
    make_pack(tmp_path / "packs" / "annot")
    broken = tmp_path / "packs" / "broken"
    broken.mkdir()
    (broken / "pack.yaml").write_text("id: [unclosed")
    found = find_targets([tmp_path / "packs"])
    assert (PACK_ID, TASK) in found and ("content-mini", TASK) in found
    assert found[(PACK_ID, TASK)].pack_dir == tmp_path / "packs" / "annot"


def test_cli_export_writes_the_newest_or_a_given_version_and_explains_errors(
    tmp_path: Path,
) -> None:
    from tests.cli.helpers import cli

    target = make_pack(tmp_path / "pack")
    db = f"sqlite:///{tmp_path / 'lhb.db'}"
    pack = str(target.pack_dir)
    with Store.open(db) as store:
        save_version(store, target, content(span(14, 14, Q14)), author="ann", parent=None)
        save_version(store, target, content(span(14, 14, Q14), notes="two"), author="bob", parent=1)
    ran = cli("content", "export-annotations", pack, TASK, "--db", db, "--version", "1", "--json")
    assert ran.exit_code == 0, ran.stderr
    assert json.loads(ran.stdout)["version"] == 1
    assert load_ground_truth(target.ground_truth_file).global_notes == ""
    ran = cli("content", "export-annotations", pack, TASK, "--db", db)
    assert ran.exit_code == 0 and "version 2 by bob" in ran.stdout.replace("\n", " ")
    assert load_ground_truth(target.ground_truth_file).global_notes == "two"
    for args, says in (
        ((pack, TASK, "--version", "9"), "no version 9"),
        ((pack, "nope"), "no task 'nope'"),
        ((str(tmp_path), TASK), "not a pack directory"),
    ):
        ran = cli("content", "export-annotations", *args, "--db", db)
        assert ran.exit_code == 2 and says in ran.stderr, (args, ran.stderr)
    assert load_ground_truth(target.ground_truth_file).global_notes == "two"


def test_export_never_writes_through_a_planted_hard_link(store: Store, target: Any) -> None:
    """A hard link at the old temporary name or at chapters.json leaves its other file alone."""
    import os

    save_version(store, target, content(span(14, 14, Q14)), author="ann", parent=None)
    out = target.ground_truth_file
    out.parent.mkdir(parents=True, exist_ok=True)
    victim = target.pack_dir.parent / "victim.txt"
    victim.write_text("host file")
    os.link(victim, out.with_suffix(".json.tmp"))
    if out.exists():
        out.unlink()
    os.link(victim, out)
    path, _ = export_annotations(store, target)
    assert victim.read_text() == "host file"
    assert path.read_text().startswith("{") and os.stat(path).st_nlink == 1
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".chapters-")]


def test_a_criterion_is_capped_like_the_notes() -> None:
    from pydantic import ValidationError

    from lhbench.annotate.model import MAX_NOTES

    doc = content(span(14, 14, Q14))
    doc["chapters"][0]["criteria"] = ["x" * (MAX_NOTES + 1)]
    with pytest.raises(ValidationError, match="criteria"):
        AnnotationSet.model_validate(doc)
