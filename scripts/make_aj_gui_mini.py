"""Generate the bundled ``aj-gui-mini`` pack (Agent-as-a-Judge, GUI/office domain, mini).

Run from the repository root: ``uv run python scripts/make_aj_gui_mini.py``. It writes
``src/lhbench/packs/data/aj-gui-mini``: nine office tasks (three each for Word, Excel and
PowerPoint), each with

- ``task.yaml`` (the instruction; ``tags.subdomain`` word / excel / powerpoint),
- ``golden/<document>`` (the document as the task wants it; hidden from agents),
- ``checker.json`` + ``verify.py`` (lhbench's checkers, written from OSWorld's
  compare_docx_files / compare_docx_tables / compare_table / compare_pptx_files
  semantics, comparing the final document with the golden file),
- ``trajectories/<name>/``: an OSWorld result directory as ``lib_run_single.py`` writes
  one — ``traj.jsonl`` (pyautogui actions), ``step_0.png`` and ``step_<n>_<ts>.png``
  screenshots, ``step_<n>_<ts>.xml`` accessibility trees, ``result.txt`` — plus
  ``final/<document>``, the document the agent left.

Every document state is built from a small model (paragraphs / cells / slides); the
screenshots are drawn from the same model (a window with the document's content, PIL),
the accessibility trees are written from it, shaped like OSWorld's AT-SPI XML. A
trajectory's name says what its author intended (``pass-*`` / ``fail-*``); its label
comes from running the task's checkers on its final document (``result.txt`` is written
from that run, and the tests check label and intent agree). Documents are written with
fixed timestamps so that the pack's content hash is stable across regenerations.
"""

from __future__ import annotations

import copy
import io
import json
import shutil
import sys
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import docx
import openpyxl
import pptx
import yaml
from docx.enum.text import WD_ALIGN_PARAGRAPH
from PIL import Image, ImageDraw
from pptx.util import Inches, Pt

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from lhbench.office.checkers import CheckerSpec, run_checkers

OUT = Path("src/lhbench/packs/data/aj-gui-mini")
FIXED = datetime(2026, 3, 1, 9, 0, 0)  # noqa: DTZ001  (naive: office files store UTC)
APP = {
    "word": "LibreOffice Writer",
    "excel": "LibreOffice Calc",
    "powerpoint": "LibreOffice Impress",
}
VERIFY = '''"""Label this task's final state: its checkers compare the document with the golden file."""
import sys
from pathlib import Path

from lhbench.office.checkers import verify_main

sys.exit(verify_main(Path(__file__).parent, sys.argv[1:]))
'''


# -- writing documents deterministically -------------------------------------------------
def _fixed_zip(data: bytes) -> bytes:
    """The package re-zipped with fixed member times (and core properties' dates fixed)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                import re

                body = re.sub(
                    rb"(<dcterms:(created|modified)[^>]*>)[^<]*(</dcterms:\2>)",
                    rb"\g<1>2026-03-01T09:00:00Z\g<3>",
                    body,
                )
            zi = zipfile.ZipInfo(info.filename, date_time=(2026, 3, 1, 9, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(zi, body)
    return out.getvalue()


def save(obj: Any, path: Path) -> None:
    buf = io.BytesIO()
    obj.save(buf)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_fixed_zip(buf.getvalue()))


# -- Word ----------------------------------------------------------------------------------
# model: {"paras": [(text, style, align, bold_words)], "table": [[...]] | None}
def build_docx(m: dict[str, Any], path: Path) -> None:
    d = docx.Document()
    d.core_properties.author = "aj-gui-mini"
    d.core_properties.created = FIXED
    d.core_properties.modified = FIXED
    for n, (text, style, align, bold) in enumerate(m["paras"]):
        p = d.add_paragraph(style=style)
        if align == "center":
            p.alignment = WD_ALIGN_PARAGRAPH.CENTER
        words = text.split(" ")
        for i, w in enumerate(words):
            r = p.add_run(w + (" " if i < len(words) - 1 else ""))
            if w.strip(".,:") in bold:
                r.bold = True
        if m.get("table") and n == m.get("table_after", 0):
            rows = m["table"]
            t = d.add_table(rows=len(rows), cols=len(rows[0]))
            for i, row in enumerate(rows):
                for j, v in enumerate(row):
                    t.cell(i, j).text = v
    save(d, path)


def lines_docx(m: dict[str, Any]) -> list[str]:
    out = []
    for n, (text, style, align, _bold) in enumerate(m["paras"]):
        mark = "# " if style.startswith("Heading") else ""
        out.append(f"{mark}{text}" + ("   [centred]" if align == "center" else ""))
        if m.get("table") and n == m.get("table_after", 0):
            out += ["| " + " | ".join(r) + " |" for r in m["table"]]
    return out


def tree_docx(m: dict[str, Any], title: str) -> str:
    body = []
    for n, (text, style, align, bold) in enumerate(m["paras"]):
        attrs = f"name={quoteattr(text[:60])} style={quoteattr(style)}"
        if align == "center":
            attrs += ' alignment="center"'
        if bold:
            attrs += f" bold-words={quoteattr(' '.join(bold))}"
        role = "heading" if style.startswith("Heading") else "paragraph"
        body.append(f"          <{role} {attrs}>{_x(text)}</{role}>")
        if m.get("table") and n == m.get("table_after", 0):
            body.append(f'          <table name="Table1" rows="{len(m["table"])}">')
            for i, row in enumerate(m["table"]):
                for j, v in enumerate(row):
                    body.append(
                        f'            <table-cell name="{chr(65 + j)}{i + 1}">{_x(v)}</table-cell>'
                    )
            body.append("          </table>")
    return _frame(title, "document-text", "\n".join(body))


# -- Excel ---------------------------------------------------------------------------------
# model: {"cells": {"A1": value or "=formula"}, "formats": {"C2": "#,##0.00"}, "bold": [..]}
def build_xlsx(m: dict[str, Any], path: Path) -> None:
    wb = openpyxl.Workbook()
    wb.properties.created = FIXED
    wb.properties.modified = FIXED
    wb.properties.creator = "aj-gui-mini"
    ws = wb.active
    ws.title = m.get("sheet", "Sheet1")
    for coord, v in m["cells"].items():
        ws[coord] = v
    for coord, fmt in m.get("formats", {}).items():
        ws[coord].number_format = fmt
    for coord in m.get("bold", []):
        ws[coord].font = openpyxl.styles.Font(bold=True)
    save(wb, path)


def _grid(m: dict[str, Any]) -> list[list[str]]:
    cols = sorted({c[0] for c in m["cells"]})
    rows = sorted({int(c[1:]) for c in m["cells"]})
    out = [["", *cols]]
    for r in rows:
        out.append([str(r)] + [str(m["cells"].get(f"{c}{r}", "")) for c in cols])
    return out


def lines_xlsx(m: dict[str, Any]) -> list[str]:
    return ["  ".join(f"{v:<14.14}" for v in row) for row in _grid(m)]


def tree_xlsx(m: dict[str, Any], title: str) -> str:
    cells = []
    for coord, v in m["cells"].items():
        fmt = m.get("formats", {}).get(coord)
        extra = f" number-format={quoteattr(fmt)}" if fmt else ""
        cells.append(
            f"            <table-cell name={quoteattr(coord)} text={quoteattr(str(v))}{extra}/>"
        )
    body = (
        f"          <table name={quoteattr('Sheet ' + m.get('sheet', 'Sheet1'))}>\n"
        + "\n".join(cells)
        + "\n          </table>"
    )
    return _frame(title, "document-spreadsheet", body)


# -- PowerPoint ----------------------------------------------------------------------------
# model: {"slides": [{"title": str, "title_style": {"bold":..,"italic":..}, "bullets": [..],
#          "note": (text, left_in, top_in) | None}]}
def build_pptx(m: dict[str, Any], path: Path) -> None:
    prs = pptx.Presentation()
    prs.core_properties.created = FIXED
    prs.core_properties.modified = FIXED
    prs.core_properties.author = "aj-gui-mini"
    for s in m["slides"]:
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = s["title"]
        run = slide.shapes.title.text_frame.paragraphs[0].runs[0]
        style = s.get("title_style", {})
        if style.get("bold"):
            run.font.bold = True
        if style.get("italic"):
            run.font.italic = True
        body = slide.placeholders[1].text_frame
        for i, b in enumerate(s.get("bullets", [])):
            para = body.paragraphs[0] if i == 0 else body.add_paragraph()
            para.text = b
        if s.get("note"):
            text, left, top = s["note"]
            box = slide.shapes.add_textbox(Inches(left), Inches(top), Inches(3), Inches(0.6))
            box.name = "Note"
            box.text_frame.text = text
            box.text_frame.paragraphs[0].runs[0].font.size = Pt(14)
    save(prs, path)


def lines_pptx(m: dict[str, Any]) -> list[str]:
    out = []
    for n, s in enumerate(m["slides"], 1):
        st = s.get("title_style", {})
        marks = "".join(f" [{k}]" for k in ("bold", "italic") if st.get(k))
        out.append(f"Slide {n}: {s['title']}{marks}")
        out += [f"   • {b}" for b in s.get("bullets", [])]
        if s.get("note"):
            out.append(f"   [text box '{s['note'][0]}' at {s['note'][1]}in, {s['note'][2]}in]")
        out.append("")
    return out


def tree_pptx(m: dict[str, Any], title: str) -> str:
    body = []
    for n, s in enumerate(m["slides"], 1):
        body.append(f'          <document-presentation name="Slide {n}">')
        st = s.get("title_style", {})
        attrs = "".join(f' {k}="true"' for k in ("bold", "italic") if st.get(k))
        body.append(f'            <heading name="Title"{attrs}>{_x(s["title"])}</heading>')
        for b in s.get("bullets", []):
            body.append(f"            <list-item>{_x(b)}</list-item>")
        if s.get("note"):
            t, left, top = s["note"]
            body.append(
                f'            <text name="Note" x="{int(left * 96)}" y="{int(top * 96)}">{_x(t)}</text>'
            )
        body.append("          </document-presentation>")
    return _frame(title, "document-frame", "\n".join(body))


# -- screenshots and trees -----------------------------------------------------------------
def _x(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _frame(title: str, role: str, body: str) -> str:
    return (
        '<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
        'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component" name="main">\n'
        '  <application name="soffice">\n'
        f'    <frame name={quoteattr(title)} st:showing="true" st:active="true">\n'
        '      <panel name="">\n'
        f'        <{role} name="" st:focused="true">\n{body}\n        </{role}>\n'
        "      </panel>\n    </frame>\n  </application>\n</desktop-frame>\n"
    )


def screenshot(title: str, lines: list[str], status: str) -> bytes:
    img = Image.new("RGB", (640, 400), (236, 236, 236))
    d = ImageDraw.Draw(img)
    d.rectangle((0, 0, 640, 24), fill=(52, 58, 70))
    d.text((8, 6), title, fill=(255, 255, 255))
    d.rectangle((0, 24, 640, 46), fill=(214, 214, 214))
    d.text((8, 30), "File  Edit  View  Insert  Format  Tools  Window  Help", fill=(30, 30, 30))
    d.rectangle((40, 56, 600, 376), fill=(255, 255, 255), outline=(180, 180, 180))
    y = 66
    for line in lines[:20]:
        d.text((52, y), line[:80], fill=(20, 20, 20))
        y += 15
    d.rectangle((0, 382, 640, 400), fill=(214, 214, 214))
    d.text((8, 386), status, fill=(30, 30, 30))
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


KINDS: dict[str, tuple[str, Callable[..., None], Callable[..., list[str]], Callable[..., str]]] = {
    "word": (".docx", build_docx, lines_docx, tree_docx),
    "excel": (".xlsx", build_xlsx, lines_xlsx, tree_xlsx),
    "powerpoint": (".pptx", build_pptx, lines_pptx, tree_pptx),
}


# -- the tasks -----------------------------------------------------------------------------
def _contract(name: str, second: str | None = None) -> dict[str, Any]:
    second = second or name
    return {
        "paras": [
            ("Service agreement", "Title", None, []),
            (f"This agreement is made between {name} and the Client.", "Normal", None, []),
            (f"{second} shall deliver the services listed in Annex A.", "Normal", None, []),
            (f"Invoices from {name} are due within 30 days.", "Normal", None, []),
        ]
    }


def _memo(title_style: str, centre: bool, bold: list[str]) -> dict[str, Any]:
    return {
        "paras": [
            ("Office move", title_style, "center" if centre else None, []),
            ("The team moves to the fourth floor on 12 May.", "Normal", None, []),
            ("Deadline: pack your desk by 9 May.", "Normal", None, bold),
        ]
    }


def _supplies(table: list[list[str]] | None) -> dict[str, Any]:
    return {
        "paras": [
            ("Supply order", "Heading 1", None, []),
            ("Please order the items below before Friday.", "Normal", None, []),
        ],
        "table": table,
        "table_after": 0,
    }


BUDGET = {"A1": "Item", "B1": "Cost", "A2": "Rent", "B2": 1200, "A3": "Power", "B3": 180,
          "A4": "Internet", "B4": 45, "A5": "Cleaning", "B5": 90, "A6": "Total"}  # fmt: skip
PRICES = {"A1": "Product", "B1": "Units", "C1": "Price", "A2": "Lamp", "B2": 4, "C2": 19.5,
          "A3": "Desk", "B3": 2, "C3": 149, "A4": "Chair", "B4": 6, "C4": 89.99}  # fmt: skip
SCORES = [("Ada", 71), ("Ben", 93), ("Cleo", 85), ("Dev", 64)]


def _scores(order: list[tuple[str, int]]) -> dict[str, Any]:
    cells: dict[str, Any] = {"A1": "Name", "B1": "Score"}
    for i, (n, s) in enumerate(order, 2):
        cells[f"A{i}"], cells[f"B{i}"] = n, s
    return {"cells": cells}


def _deck(extra: bool, title: str = "Next steps", bullet: str = "Ship v2",
          style: dict[str, bool] | None = None, note: tuple[str, float, float] | None = None
          ) -> dict[str, Any]:  # fmt: skip
    slides: list[dict[str, Any]] = [
        {"title": "Quarterly review", "bullets": ["Revenue up 8%", "Two new clients"],
         "title_style": style or {}, "note": note},
    ]  # fmt: skip
    if extra:
        slides.append({"title": title, "bullets": [bullet]})
    return {"slides": slides}


def _with(m: dict[str, Any], **cells: Any) -> dict[str, Any]:
    m = copy.deepcopy(m)
    m["cells"].update(cells)
    return m


def _fmt(m: dict[str, Any], coords: list[str], fmt: str) -> dict[str, Any]:
    m = copy.deepcopy(m)
    m.setdefault("formats", {}).update({c: fmt for c in coords})
    return m


SORTED = sorted(SCORES, key=lambda x: -x[1])
MONEY = "#,##0.00"

# id, kind, document, instruction, initial model, golden model, checks, trajectories:
#   name -> list of (action, response, model after the action); the last model is final
TASKS: list[dict[str, Any]] = [
    {
        "id": "word-replace-name",
        "kind": "word",
        "document": "contract.docx",
        "instruction": 'In contract.docx, replace every "Acme Ltd" with "Borealis Group" and save.',
        "initial": _contract("Acme Ltd"),
        "golden": _contract("Borealis Group"),
        "checks": [{"func": "compare_docx_files", "options": {"ignore_blanks": True}}],
        "trajectories": {
            "pass-replace-all": [
                ("pyautogui.hotkey('ctrl', 'h')", "Open Find & Replace.", None),
                ("pyautogui.typewrite('Acme Ltd\\tBorealis Group')", "Fill both fields.", None),
                (
                    "pyautogui.click(512, 300)  # Replace All",
                    "Replace all.",
                    _contract("Borealis Group"),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "Every occurrence is replaced.", None),
            ],
            "fail-one-left": [
                ("pyautogui.doubleClick(230, 96)", "Select the first name.", None),
                (
                    "pyautogui.typewrite('Borealis Group')",
                    "Type the new name.",
                    _contract("Borealis Group", "Acme Ltd"),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "Replaced the company name.", None),
            ],
            "fail-not-saved": [
                ("pyautogui.hotkey('ctrl', 'h')", "Open Find & Replace.", None),
                (
                    "pyautogui.click(512, 300)  # Replace All",
                    "Replace all.",
                    "screen:" + "Borealis Group",
                ),
                ("DONE", "Done: all names replaced.", None),
            ],
        },
    },
    {
        "id": "word-add-table",
        "kind": "word",
        "document": "supplies.docx",
        "instruction": 'In supplies.docx, add a table under the heading with columns "Item" and "Qty": Pens 10, Paper 5.',
        "initial": _supplies(None),
        "golden": _supplies([["Item", "Qty"], ["Pens", "10"], ["Paper", "5"]]),
        "checks": [
            {"func": "compare_docx_tables"},
            {"func": "compare_docx_files"},
        ],
        "trajectories": {
            "pass-table": [
                ("pyautogui.hotkey('ctrl', 'f12')", "Insert a table.", None),
                (
                    "pyautogui.typewrite('Item\\tQty\\tPens\\t10\\tPaper\\t5')",
                    "Fill it.",
                    _supplies([["Item", "Qty"], ["Pens", "10"], ["Paper", "5"]]),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "Table added.", None),
            ],
            "fail-wrong-qty": [
                ("pyautogui.hotkey('ctrl', 'f12')", "Insert a table.", None),
                (
                    "pyautogui.typewrite('Item\\tQty\\tPens\\t10\\tPaper\\t50')",
                    "Fill it.",
                    _supplies([["Item", "Qty"], ["Pens", "10"], ["Paper", "50"]]),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "Table added with the quantities.", None),
            ],
        },
    },
    {
        "id": "word-format-memo",
        "kind": "word",
        "document": "memo.docx",
        "instruction": 'In memo.docx, give the title "Office move" the Heading 1 style, centre it, and make the word "Deadline" bold.',
        "initial": _memo("Normal", False, []),
        "golden": _memo("Heading 1", True, ["Deadline"]),
        "checks": [{"func": "compare_docx_formatting"}, {"func": "compare_docx_files"}],
        "trajectories": {
            "pass-formatted": [
                ("pyautogui.click(200, 70)", "Select the title.", None),
                ("pyautogui.hotkey('ctrl', '1')", "Heading 1.", _memo("Heading 1", False, [])),
                ("pyautogui.hotkey('ctrl', 'e')", "Centre it.", _memo("Heading 1", True, [])),
                (
                    "pyautogui.doubleClick(90, 130); pyautogui.hotkey('ctrl', 'b')",
                    "Bold Deadline.",
                    _memo("Heading 1", True, ["Deadline"]),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "Formatted.", None),
            ],
            "fail-not-centred": [
                ("pyautogui.click(200, 70)", "Select the title.", None),
                ("pyautogui.hotkey('ctrl', '1')", "Heading 1.", _memo("Heading 1", False, [])),
                (
                    "pyautogui.doubleClick(90, 130); pyautogui.hotkey('ctrl', 'b')",
                    "Bold Deadline.",
                    _memo("Heading 1", False, ["Deadline"]),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "Title styled, centred, and Deadline bold.", None),
            ],
        },
    },
    {
        "id": "excel-total-formula",
        "kind": "excel",
        "document": "budget.xlsx",
        "instruction": 'In budget.xlsx, put the total of B2:B5 in B6 as a formula ("=SUM(B2:B5)").',
        "initial": {"cells": BUDGET},
        "golden": {"cells": {**BUDGET, "B6": "=SUM(B2:B5)"}},
        "checks": [
            {
                "func": "compare_table",
                "options": {
                    "rules": [
                        {"type": "sheet_name"},
                        {"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"},
                        {
                            "type": "check_cell",
                            "sheet_idx": 0,
                            "coordinate": "B6",
                            "props": {"formula": {"method": "eq", "ref": "=SUM(B2:B5)"}},
                        },
                    ]
                },
            }
        ],
        "trajectories": {
            "pass-sum": [
                ("pyautogui.click(160, 150)  # B6", "Go to B6.", None),
                (
                    "pyautogui.typewrite('=SUM(B2:B5)\\n')",
                    "Enter the formula.",
                    {"cells": {**BUDGET, "B6": "=SUM(B2:B5)"}},
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "B6 holds the total.", None),
            ],
            "fail-typed-value": [
                ("pyautogui.click(160, 150)  # B6", "Go to B6.", None),
                (
                    "pyautogui.typewrite('1515\\n')",
                    "Type the total.",
                    {"cells": {**BUDGET, "B6": 1515}},
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "The total 1515 is in B6.", None),
            ],
            "fail-short-range": [
                ("pyautogui.click(160, 150)  # B6", "Go to B6.", None),
                (
                    "pyautogui.typewrite('=SUM(B2:B4)\\n')",
                    "Enter the formula.",
                    {"cells": {**BUDGET, "B6": "=SUM(B2:B4)"}},
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "Total formula added.", None),
            ],
        },
    },
    {
        "id": "excel-price-format",
        "kind": "excel",
        "document": "prices.xlsx",
        "instruction": 'In prices.xlsx, format C2:C4 with the number format "#,##0.00".',
        "initial": {"cells": PRICES},
        "golden": _fmt({"cells": PRICES}, ["C2", "C3", "C4"], MONEY),
        "checks": [
            {
                "func": "compare_table",
                "options": {
                    "rules": [
                        {"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"},
                        {
                            "type": "style",
                            "sheet_idx0": 0,
                            "sheet_idx1": "EI0",
                            "props": ["number_format"],
                        },
                    ]
                },
            }
        ],
        "trajectories": {
            "pass-formatted": [
                ("pyautogui.dragTo(260, 140)  # C2:C4", "Select C2:C4.", None),
                (
                    "pyautogui.hotkey('ctrl', '1'); pyautogui.typewrite('#,##0.00\\n')",
                    "Set the format.",
                    _fmt({"cells": PRICES}, ["C2", "C3", "C4"], MONEY),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "Formatted.", None),
            ],
            "fail-partial": [
                ("pyautogui.dragTo(260, 125)  # C2:C3", "Select the prices.", None),
                (
                    "pyautogui.hotkey('ctrl', '1'); pyautogui.typewrite('#,##0.00\\n')",
                    "Set the format.",
                    _fmt({"cells": PRICES}, ["C2", "C3"], MONEY),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "All prices formatted.", None),
            ],
        },
    },
    {
        "id": "excel-sort-scores",
        "kind": "excel",
        "document": "scores.xlsx",
        "instruction": 'In scores.xlsx, sort the rows under the header by "Score", highest first.',
        "initial": _scores(SCORES),
        "golden": _scores(SORTED),
        "checks": [
            {
                "func": "compare_table",
                "options": {
                    "rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]
                },
            },
        ],
        "trajectories": {
            "pass-descending": [
                ("pyautogui.click(60, 80)", "Select the table.", None),
                (
                    "pyautogui.click(300, 30)  # Data > Sort",
                    "Sort by Score, descending.",
                    _scores(SORTED),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "Sorted.", None),
            ],
            "fail-ascending": [
                ("pyautogui.click(60, 80)", "Select the table.", None),
                (
                    "pyautogui.click(300, 30)  # Data > Sort Ascending",
                    "Sort by Score.",
                    _scores(sorted(SCORES, key=lambda x: x[1])),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "Sorted by score.", None),
            ],
        },
    },
    {
        "id": "ppt-add-slide",
        "kind": "powerpoint",
        "document": "review.pptx",
        "instruction": 'In review.pptx, add a second slide titled "Next steps" with one bullet "Ship v2".',
        "initial": _deck(False),
        "golden": _deck(True),
        "checks": [{"func": "compare_pptx_files"}],
        "trajectories": {
            "pass-slide": [
                ("pyautogui.hotkey('ctrl', 'm')", "New slide.", None),
                ("pyautogui.typewrite('Next steps')", "Title.", None),
                (
                    "pyautogui.click(300, 200); pyautogui.typewrite('Ship v2')",
                    "Bullet.",
                    _deck(True),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "Slide added.", None),
            ],
            "fail-typo": [
                ("pyautogui.hotkey('ctrl', 'm')", "New slide.", None),
                ("pyautogui.typewrite('Next setps')", "Title.", None),
                (
                    "pyautogui.click(300, 200); pyautogui.typewrite('Ship v2')",
                    "Bullet.",
                    _deck(True, title="Next setps"),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "Added the Next steps slide.", None),
            ],
        },
    },
    {
        "id": "ppt-bold-title",
        "kind": "powerpoint",
        "document": "review.pptx",
        "instruction": 'In review.pptx, make the title "Quarterly review" on slide 1 bold.',
        "initial": _deck(False),
        "golden": _deck(False, style={"bold": True}),
        "checks": [{"func": "compare_pptx_files"}],
        "trajectories": {
            "pass-bold": [
                ("pyautogui.tripleClick(320, 80)", "Select the title.", None),
                ("pyautogui.hotkey('ctrl', 'b')", "Bold.", _deck(False, style={"bold": True})),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "Bold.", None),
            ],
            "fail-italic": [
                ("pyautogui.tripleClick(320, 80)", "Select the title.", None),
                (
                    "pyautogui.hotkey('ctrl', 'i')",
                    "Make it stand out.",
                    _deck(False, style={"italic": True}),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "The title is bold now.", None),
            ],
        },
    },
    {
        "id": "ppt-move-note",
        "kind": "powerpoint",
        "document": "review.pptx",
        "instruction": 'In review.pptx, move the text box "Draft" on slide 1 to the top-left corner (0.5 in, 0.5 in).',
        "initial": _deck(False, note=("Draft", 6.0, 6.5)),
        "golden": _deck(False, note=("Draft", 0.5, 0.5)),
        "checks": [{"func": "compare_pptx_files", "options": {"examine_shape": True}}],
        "trajectories": {
            "pass-moved": [
                ("pyautogui.click(700, 640)", "Select the Draft box.", None),
                (
                    "pyautogui.hotkey('f4'); pyautogui.typewrite('0.5\\t0.5\\n')",
                    "Position 0.5, 0.5.",
                    _deck(False, note=("Draft", 0.5, 0.5)),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "Moved.", None),
            ],
            "fail-dragged-near": [
                ("pyautogui.click(700, 640)", "Select the Draft box.", None),
                (
                    "pyautogui.dragTo(80, 80)",
                    "Drag it to the corner.",
                    _deck(False, note=("Draft", 0.8, 0.7)),
                ),
                ("pyautogui.hotkey('ctrl', 's')", "Save.", None),
                ("DONE", "The box is in the top-left corner.", None),
            ],
        },
    },
]


def write_trajectory(task: dict[str, Any], task_dir: Path, name: str, steps: list[Any]) -> bool:
    kind = task["kind"]
    _suffix, build, lines, tree = KINDS[kind]
    d = task_dir / "trajectories" / name
    d.mkdir(parents=True)
    title = f"{task['document']} - {APP[kind]}"
    model = task["initial"]
    saved = task["initial"]  # what is on disk: only a save writes it
    (d / "step_0.png").write_bytes(screenshot(title, lines(model), "opened"))
    (d / "step_0.xml").write_text(tree(model, title), encoding="utf-8")
    (d / "instruction.txt").write_text(task["instruction"] + "\n", encoding="utf-8")
    records = []
    for n, (action, response, after) in enumerate(steps, 1):
        screen_only = isinstance(after, str)
        if screen_only:  # the window shows the edit; the file never gets it
            shown = copy.deepcopy(model)
            old = "Acme Ltd"
            shown["paras"] = [(t.replace(old, after[7:]), s, a, b) for t, s, a, b in shown["paras"]]
            model = shown
        elif after is not None:
            model = after
        if "ctrl', 's'" in action:
            saved = model
        ts = f"20260301@{9 + n // 60:02d}{n % 60:02d}00"
        shot = f"step_{n}_{ts}.png"
        done = action in ("DONE", "FAIL")
        status = "saved" if saved is model else "modified (not saved)"
        (d / shot).write_bytes(screenshot(title, lines(model), status))
        (d / shot.replace(".png", ".xml")).write_text(tree(model, title), encoding="utf-8")
        records.append(
            {
                "response": response,
                "step_num": n,
                "action_timestamp": ts,
                "action": action,
                "reward": 0,
                "done": done,
                "info": {},
                "screenshot_file": shot,
            }
        )
    (d / "traj.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    build(saved, d / "final" / task["document"])
    ok, _ = run_checkers(CheckerSpec(task_dir), d / "final" / task["document"])
    (d / "result.txt").write_text(f"{1.0 if ok else 0.0}\n", encoding="utf-8")
    return ok


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "tasks").mkdir(parents=True)
    pack = {
        "id": "aj-gui-mini",
        "version": "1.0",
        "environment": "gui",
        "description": "Agent-as-a-Judge sample, GUI (office) domain: nine Word, Excel and "
        "PowerPoint tasks with OSWorld-shaped trajectories (screenshots, accessibility "
        "trees, the final document); labels come from checkers comparing the final "
        "document with a golden file.",
    }
    (OUT / "pack.yaml").write_text(
        "# Generated by scripts/make_aj_gui_mini.py; edit that script, not these files.\n"
        + yaml.safe_dump(pack, sort_keys=False),
        encoding="utf-8",
    )
    wrong = []
    for task in TASKS:
        td = OUT / "tasks" / task["id"]
        td.mkdir()
        _suffix, build, _, _ = KINDS[task["kind"]]
        spec = {
            "title": task["instruction"].split(",", 1)[-1].strip().rstrip(".")[:80],
            "instruction": task["instruction"],
            "environment": {"kind": "gui", "verify": "verify.py"},
            "tags": {"category": "gui", "subdomain": task["kind"]},
        }
        (td / "task.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
        build(task["golden"], td / "golden" / task["document"])
        checker = {
            "document": task["document"],
            "golden": f"golden/{task['document']}",
            "conj": "and",
            "checks": task["checks"],
        }
        (td / "checker.json").write_text(json.dumps(checker, indent=2) + "\n", encoding="utf-8")
        (td / "verify.py").write_text(VERIFY, encoding="utf-8")
        for name, steps in task["trajectories"].items():
            ok = write_trajectory(task, td, name, steps)
            if ok != name.startswith("pass-"):
                wrong.append(f"{task['id']}/{name}")
    if wrong:
        raise SystemExit(f"labels disagree with intent: {wrong}")
    readme = Path(__file__).read_text(encoding="utf-8").split('"""')[1]
    (OUT / "README.md").write_text(readme.strip() + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
