"""The GUI domain's checkers, option by option (semantics after OSWorld's metrics)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lhbench.office.checkers import (
    CheckerSpec,
    compare_docx_files,
    compare_docx_formatting,
    compare_docx_tables,
    compare_pptx_files,
    compare_table,
    run_checkers,
    verify_main,
)
from lhbench.office.documents import DocumentError, check_package
from tests.envs.gui.helpers import make_docx, make_pptx, make_xlsx, zip_bomb


def test_compare_docx_files_options(tmp_path: Path) -> None:
    gold = make_docx(tmp_path / "g.docx", ["Hello world", "Second line"])
    spaced = make_docx(tmp_path / "a.docx", ["Hello   world", "Second line "])
    upper = make_docx(tmp_path / "b.docx", ["HELLO WORLD", "SECOND LINE"])
    swapped = make_docx(tmp_path / "c.docx", ["Second line", "Hello world"])
    typo = make_docx(tmp_path / "d.docx", ["Hello wordl", "Second line"])
    # ignore_blanks is on by default: whitespace runs do not count
    assert compare_docx_files(spaced, gold)[0]
    assert not compare_docx_files(spaced, gold, ignore_blanks=False)[0]
    assert not compare_docx_files(upper, gold)[0]
    assert compare_docx_files(upper, gold, ignore_case=True)[0]
    assert not compare_docx_files(swapped, gold)[0]
    assert compare_docx_files(swapped, gold, ignore_order=True)[0]
    ok, detail = compare_docx_files(typo, gold)
    assert not ok and "character 9" in detail
    assert compare_docx_files(typo, gold, fuzzy_match=True, threshold=0.9)[0]
    assert not compare_docx_files(typo, gold, fuzzy_match=True, threshold=0.99)[0]
    three = make_docx(tmp_path / "e.docx", ["Hello world", "Second line", ""])
    assert "3 paragraph(s)" in compare_docx_files(three, gold, ignore_blanks=False)[1]
    assert compare_docx_files(three, gold, ignore_blanks=False, delete_empty_lines=True)[0]


def test_compare_docx_tables_and_formatting(tmp_path: Path) -> None:
    gold = make_docx(tmp_path / "g.docx", ["Title", "Body"], table=[["a", "1"], ["b", "2"]],
                     bold="Title", style="Heading 1")  # fmt: skip
    same = make_docx(tmp_path / "s.docx", ["Title", "Body"], table=[["a", "1"], ["b", " 2 "]],
                     bold="Title", style="Heading 1")  # fmt: skip
    other = make_docx(tmp_path / "o.docx", ["Title", "Body"], table=[["a", "1"], ["b", "3"]])
    assert compare_docx_tables(same, gold)[0]  # cell text is compared stripped
    ok, detail = compare_docx_tables(other, gold)
    assert not ok and "(2,2)" in detail
    assert compare_docx_formatting(same, gold)[0]
    ok, detail = compare_docx_formatting(other, gold)
    assert not ok and "style" in detail
    assert not compare_docx_formatting(other, gold, examine_style=False)[0]  # bold differs
    assert compare_docx_formatting(other, gold, examine_style=False, examine_runs=False)[0]


def test_compare_table_rules(tmp_path: Path) -> None:
    cells = {"A1": "x", "B1": 1.23456, "B2": "=B1*2"}
    gold = make_xlsx(tmp_path / "g.xlsx", cells, formats={"B1": "0.00"}, freeze="A2")
    near = make_xlsx(tmp_path / "n.xlsx", {**cells, "B1": 1.23457}, formats={"B1": "0.00"})
    typed = make_xlsx(tmp_path / "t.xlsx", {**cells, "B2": 2.46912}, sheets=("Data",))

    def rules(*rs: dict[str, object]) -> dict[str, object]:
        return {"rules": list(rs)}

    data = {"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}
    assert compare_table(near, gold, **rules(data))[0]  # rounded to 4 digits
    assert not compare_table(near, gold, **rules({**data, "precision": 5}))[0]
    assert not compare_table(typed, gold, **rules({"type": "sheet_name"}))[0]
    formula = {"type": "check_cell", "sheet_idx": 0, "coordinate": "B2",
               "props": {"formula": {"method": "eq", "ref": "=B1*2"}}}  # fmt: skip
    assert compare_table(near, gold, **rules(formula))[0]
    ok, detail = compare_table(typed, gold, **rules(formula))
    assert not ok and "Data!B2 formula" in detail
    style = {"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["number_format"]}
    assert compare_table(near, gold, **rules(style))[0]
    assert "number_format" in compare_table(typed, gold, **rules(style))[1]
    freeze = {"type": "freeze", "sheet_idx0": "RI0", "sheet_idx1": "ENSheet1"}
    assert "frozen" in compare_table(near, gold, **rules(freeze))[1]
    approx = {"type": "check_cell", "sheet_idx": "RNSheet1", "coordinate": "B1",
              "props": {"value": {"method": "approx:0.001", "ref": 1.2345}}}  # fmt: skip
    assert compare_table(near, gold, **rules(approx))[0]
    missing = {"type": "sheet_data", "sheet_idx0": "RNNope", "sheet_idx1": "EI0"}
    assert "no sheet 'Nope'" in compare_table(near, gold, **rules(missing))[1]
    with pytest.raises(ValueError, match="rule type"):
        compare_table(near, gold, **rules({"type": "telepathy"}))
    # sequential rules: all must hold
    assert not compare_table(typed, gold, **rules(data, formula))[0]


def test_compare_pptx_files_options(tmp_path: Path) -> None:
    gold = make_pptx(tmp_path / "g.pptx", ["One", "Two"])
    moved = make_pptx(tmp_path / "m.pptx", ["One", "Two"], box_at=1.5)
    bold = make_pptx(tmp_path / "b.pptx", ["One", "Two"], bold=True)
    short = make_pptx(tmp_path / "s.pptx", ["One"])
    assert compare_pptx_files(make_pptx(tmp_path / "c.pptx", ["One", "Two"]), gold)[0]
    ok, detail = compare_pptx_files(moved, gold)
    assert not ok and "position" in detail
    assert compare_pptx_files(moved, gold, examine_shape=False)[0]
    assert "font_bold" in compare_pptx_files(bold, gold)[1]
    assert compare_pptx_files(bold, gold, examine_font_bold=False)[0]
    assert "1 slide(s)" in compare_pptx_files(short, gold)[1]
    with pytest.raises(ValueError, match="unknown option"):
        compare_pptx_files(short, gold, examine_mood=True)


def test_zip_bomb_and_junk_are_refused_not_inflated(tmp_path: Path) -> None:
    bomb = zip_bomb(tmp_path / "bomb.docx")
    assert bomb.stat().st_size < 2_000_000
    with pytest.raises(DocumentError, match="inflates"):
        check_package(bomb)
    ok, detail = compare_docx_files(bomb, make_docx(tmp_path / "g.docx", ["x"]))
    assert not ok and "inflates" in detail
    junk = tmp_path / "junk.xlsx"
    junk.write_bytes(b"not a zip at all")
    assert not compare_table(junk, junk, rules=[{"type": "sheet_name"}])[0]
    link = tmp_path / "link.docx"
    link.symlink_to(make_docx(tmp_path / "real.docx", ["x"]))
    with pytest.raises(DocumentError, match="regular file"):
        check_package(link)


def test_checker_spec_and_verify_protocol(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = tmp_path / "task"
    (task / "golden").mkdir(parents=True)
    make_docx(task / "golden" / "r.docx", ["Final text"])
    spec = {"document": "r.docx", "golden": "golden/r.docx",
            "checks": [{"func": "compare_docx_files"}]}  # fmt: skip
    (task / "checker.json").write_text(json.dumps(spec))
    state = tmp_path / "state"
    state.mkdir()
    make_docx(state / "document.docx", ["Final text"])
    assert verify_main(task, ["--root", str(state)]) == 0
    make_docx(state / "document.docx", ["Draft text"])
    assert verify_main(task, ["--root", str(state)]) == 1
    assert (
        "compare_docx_files: FAIL" in json.loads(capsys.readouterr().out.splitlines()[-1])["detail"]
    )
    (state / "document.docx").unlink()
    assert verify_main(task, ["--root", str(state)]) == 1
    # "or": one passing check is enough
    spec["conj"] = "or"
    fuzzy = {"fuzzy_match": True, "threshold": 0.5}
    spec["checks"].append({"func": "compare_docx_files", "options": fuzzy})
    (task / "checker.json").write_text(json.dumps(spec))
    make_docx(state / "document.docx", ["Final tex"])
    assert run_checkers(CheckerSpec(task), state / "document.docx")[0]
    for bad in ({**spec, "golden": "../../etc/passwd"}, {**spec, "checks": [{"func": "eval"}]}):
        (task / "checker.json").write_text(json.dumps(bad))
        with pytest.raises(ValueError):
            CheckerSpec(task)


@pytest.mark.parametrize("far", ["ZZ200000", "XFD1048576"])
def test_a_sparse_sheet_is_read_by_its_cells_not_its_range(tmp_path: Path, far: str) -> None:
    """Two cells far apart (a 5 KB file) must not make the reader build every empty cell."""
    import time
    import tracemalloc

    from lhbench.office.documents import read_xlsx

    doc = make_xlsx(tmp_path / "sparse.xlsx", {"A1": "start", far: "end"})
    assert doc.stat().st_size < 20_000
    tracemalloc.start()
    started = time.monotonic()
    try:
        text = read_xlsx(doc)
        ranged = read_xlsx(doc, cells=f"A1:{far}")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 10
    assert peak < 64 * 2**20, peak
    for out in (text, ranged):
        assert "A1: 'start'" in out and f"{far}: 'end'" in out


def test_the_table_checker_reads_a_sparse_agent_workbook_by_its_cells(tmp_path: Path) -> None:
    """The agent writes the final workbook: A1 plus XFD1048576 must not become a memory bomb."""
    import tracemalloc

    gold = make_xlsx(tmp_path / "gold.xlsx", {"A1": "start"})
    agent = make_xlsx(tmp_path / "agent.xlsx", {"A1": "start", "XFD1048576": "end"})
    data = {"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}
    style = {"type": "style", "sheet_idx0": "EI0", "sheet_idx1": 0, "props": ["number_format"]}
    tracemalloc.start()
    try:
        ok, detail = compare_table(agent, gold, rules=[data])
        styled, _ = compare_table(agent, gold, rules=[style])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, peak
    assert not ok and detail  # the extra cell is a difference, found without the range
    assert styled  # number formats of the cells the agent wrote: the same


def test_a_checker_spec_without_a_document_is_a_clear_error(tmp_path: Path) -> None:
    from lhbench.office.checkers import CheckerSpec

    (tmp_path / "checker.json").write_text(json.dumps({"checks": []}))
    with pytest.raises(ValueError, match=r"checker\.json: expected"):
        CheckerSpec(tmp_path)
