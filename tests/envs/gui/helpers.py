"""Small office documents built for the GUI tests (python-docx, openpyxl, python-pptx)."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import docx
import openpyxl
import pptx
from pptx.util import Inches


def make_docx(path: Path, paras: list[str], *, table: list[list[str]] | None = None,
              bold: str | None = None, style: str = "Normal") -> Path:  # fmt: skip
    d = docx.Document()
    for i, text in enumerate(paras):
        p = d.add_paragraph(style=style if i == 0 else "Normal")
        r = p.add_run(text)
        r.bold = bold is not None and bold in text
    if table:
        t = d.add_table(rows=len(table), cols=len(table[0]))
        for i, row in enumerate(table):
            for j, v in enumerate(row):
                t.cell(i, j).text = v
    d.save(str(path))
    return path


def make_xlsx(
    path: Path,
    cells: dict[str, Any],
    *,
    formats: dict[str, str] | None = None,
    sheets: tuple[str, ...] = ("Sheet1",),
    freeze: str | None = None,
) -> Path:
    wb = openpyxl.Workbook()
    wb.active.title = sheets[0]
    for name in sheets[1:]:
        wb.create_sheet(name)
    ws = wb[sheets[0]]
    for k, v in cells.items():
        ws[k] = v
    for k, f in (formats or {}).items():
        ws[k].number_format = f
    if freeze:
        ws.freeze_panes = freeze
    wb.save(str(path))
    return path


def make_pptx(path: Path, titles: list[str], *, box_at: float = 1.0, bold: bool = False) -> Path:
    prs = pptx.Presentation()
    for t in titles:
        s = prs.slides.add_slide(prs.slide_layouts[5])
        s.shapes.title.text = t
        s.shapes.title.text_frame.paragraphs[0].runs[0].font.bold = bold
        box = s.shapes.add_textbox(Inches(box_at), Inches(box_at), Inches(2), Inches(1))
        box.text_frame.text = "note"
    prs.save(str(path))
    return path


def zip_bomb(path: Path, *, inner: str = "word/document.xml", mb: int = 300) -> Path:
    """A DOCX-named archive with one member inflating to ``mb`` MiB of zeros."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        with zf.open(inner, "w", force_zip64=True) as f:
            chunk = b"\0" * (1 << 20)
            for _ in range(mb):
                f.write(chunk)
    return path
