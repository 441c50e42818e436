"""Office documents read safely: a ZIP check first, then python-docx, openpyxl, python-pptx.

DOCX, XLSX and PPTX files are ZIP archives. Before any library opens one,
:func:`check_package` reads its central directory and refuses a zip bomb (too many
members, too much uncompressed data, or an absurd compression ratio) — the libraries
would otherwise inflate whatever the archive claims. Readers return plain text for the
judge's tools: paragraphs with their styles and tables (Word), cell values AND formulas
with number formats (Excel), slides with their shapes, text and positions (PowerPoint).
Every reader bounds its output; nothing here writes to the document.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

__all__ = [
    "DOCUMENT_KINDS",
    "MAX_MEMBERS",
    "MAX_UNCOMPRESSED",
    "DocumentError",
    "check_package",
    "document_kind",
    "held_cells",
    "load_docx",
    "load_pptx",
    "load_xlsx",
    "read_docx",
    "read_pptx",
    "read_xlsx",
]

DOCUMENT_KINDS = {".docx": "word", ".xlsx": "excel", ".pptx": "powerpoint"}
MAX_DOCUMENT_BYTES = 50_000_000
MAX_MEMBERS = 2_000
MAX_UNCOMPRESSED = 200_000_000
MAX_RATIO = 200
MAX_CELLS = 2_000  # cells one read_xlsx call lists
MAX_OUTPUT = 20_000  # characters one read returns


class DocumentError(ValueError):
    """The document cannot be read (not an office file, a zip bomb, damaged)."""


def document_kind(path: Path) -> str:
    """``word``, ``excel`` or ``powerpoint`` from the file's suffix.

    Raises:
        DocumentError: for any other suffix.
    """
    kind = DOCUMENT_KINDS.get(Path(path).suffix.lower())
    if kind is None:
        raise DocumentError(f"{Path(path).name}: not a DOCX, XLSX or PPTX file")
    return kind


def check_package(path: Path) -> None:
    """Refuse what is not a regular, bounded ZIP package before a library opens it.

    Raises:
        DocumentError: naming the file and what is wrong with it.
    """
    path = Path(path)
    name = path.name
    if path.is_symlink() or not path.is_file():
        raise DocumentError(f"{name}: not a regular file")
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise DocumentError(f"{name}: {size} bytes (at most {MAX_DOCUMENT_BYTES})")
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise DocumentError(f"{name}: not an office document (ZIP): {exc}") from exc
    if len(infos) > MAX_MEMBERS:
        raise DocumentError(f"{name}: {len(infos)} archive members (at most {MAX_MEMBERS})")
    total = sum(i.file_size for i in infos)
    if total > MAX_UNCOMPRESSED:
        raise DocumentError(f"{name}: inflates to {total} bytes (at most {MAX_UNCOMPRESSED})")
    for i in infos:
        if i.file_size > 1_000_000 and i.file_size > MAX_RATIO * max(1, i.compress_size):
            fold = i.file_size // max(1, i.compress_size)
            raise DocumentError(
                f"{name}: member {i.filename[:100]!r} inflates {fold}-fold (a zip bomb?)"
            )


def load_docx(path: Path) -> Any:
    """A python-docx Document, after :func:`check_package`."""
    import docx

    check_package(path)
    try:
        return docx.Document(str(path))
    except Exception as exc:  # the library raises many kinds on a damaged file
        raise DocumentError(f"{Path(path).name}: python-docx cannot read it: {exc}") from exc


def load_xlsx(path: Path, *, formulas: bool = True) -> Any:
    """An openpyxl Workbook (formulas as written, or cached values), after the check."""
    import openpyxl  # type: ignore[import-untyped]

    check_package(path)
    try:
        return openpyxl.load_workbook(str(path), data_only=not formulas, read_only=False)
    except Exception as exc:
        raise DocumentError(f"{Path(path).name}: openpyxl cannot read it: {exc}") from exc


def load_pptx(path: Path) -> Any:
    """A python-pptx Presentation, after :func:`check_package`."""
    import pptx

    check_package(path)
    try:
        return pptx.Presentation(str(path))
    except Exception as exc:
        raise DocumentError(f"{Path(path).name}: python-pptx cannot read it: {exc}") from exc


def _cap(lines: list[str]) -> str:
    text = "\n".join(lines)
    if len(text) > MAX_OUTPUT:
        return text[:MAX_OUTPUT] + f"\n[cut: {len(text) - MAX_OUTPUT} more characters]"
    return text


def _run_style(run: Any) -> str:
    f = run.font
    marks = [
        m for m, on in (("bold", f.bold), ("italic", f.italic), ("underline", f.underline)) if on
    ]
    if getattr(f, "strike", None):  # Word only
        marks.append("strike")
    if f.name:
        marks.append(f"font={f.name}")
    if f.size is not None:
        marks.append(f"size={f.size.pt:g}pt")
    try:
        if f.color is not None and f.color.type is not None and f.color.rgb is not None:
            marks.append(f"color={f.color.rgb}")
    except (AttributeError, ValueError):
        pass
    return ",".join(marks)


def read_docx(path: Path, *, start: int = 1, count: int = 50) -> str:
    """Paragraphs ``start``.. (1-based) with style, alignment and run formatting; tables."""
    doc = load_docx(path)
    paras = doc.paragraphs
    start = max(1, start)
    count = max(1, min(count, 200))
    lines = [f"{len(paras)} paragraph(s), {len(doc.tables)} table(s)"]
    for n, p in enumerate(paras[start - 1 : start - 1 + count], start):
        align = p.paragraph_format.alignment
        head = f"[{n}] style={p.style.name if p.style is not None else '?'}"
        if align is not None:
            head += f" align={align.name.lower() if hasattr(align, 'name') else align}"
        runs = [f"«{r.text}»({_run_style(r)})" for r in p.runs if r.text and _run_style(r)]
        lines.append(f"{head}: {p.text}")
        if runs:
            lines.append("    runs: " + " ".join(runs)[:1000])
    if start - 1 + count < len(paras):
        lines.append(f"[{len(paras) - (start - 1 + count)} more: call again with start=]")
    for t, table in enumerate(doc.tables[:20], 1):
        lines.append(f"table {t}: {len(table.rows)} row(s) x {len(table.columns)} column(s)")
        for r, row in enumerate(table.rows[:50], 1):
            lines.append(f"  row {r}: " + " | ".join(c.text for c in row.cells)[:1000])
    return _cap(lines)


def held_cells(ws: Any, bounds: tuple[int, int, int, int] | None = None) -> list[Any]:
    """The cells a worksheet file holds, row by row, within ``bounds`` if given.

    ``bounds`` is ``(min_row, min_col, max_row, max_col)``. Never ``ws.cell`` or
    ``iter_rows`` over a range: openpyxl creates every empty cell of
    it, so a sheet holding A1 and XFD1048576 (a 5 KB file) would exhaust memory.
    """
    cells: dict[tuple[int, int], Any] = ws._cells
    if bounds is None:
        keys = sorted(cells)
    else:
        r0, c0, r1, c1 = bounds
        keys = sorted(k for k in cells if r0 <= k[0] <= r1 and c0 <= k[1] <= c1)
    return [cells[k] for k in keys]


def read_xlsx(path: Path, *, sheet: str | None = None, cells: str | None = None) -> str:
    """A sheet's cells (a range like ``A1:D20``, or the used range): value, formula, format."""
    from openpyxl.utils.cell import range_boundaries  # type: ignore[import-untyped]

    wb = load_xlsx(path, formulas=True)
    values = load_xlsx(path, formulas=False)
    names = wb.sheetnames
    name = sheet if sheet is not None else names[0]
    if name not in names:
        return f"(no sheet {name[:100]!r}; sheets: {', '.join(names)})"
    ws, wv = wb[name], values[name]
    lines = [f"sheets: {', '.join(names)}", f"sheet {name!r}: used range {ws.dimensions}"]
    try:
        if cells:
            min_col, min_row, max_col, max_row = range_boundaries(cells.strip().upper())
        else:
            min_col, min_row, max_col, max_row = 1, 1, ws.max_column, ws.max_row
    except (ValueError, TypeError):
        return f"(not a cell range: {cells!r:.100}; e.g. A1:D20)"
    min_col, min_row = min_col or 1, min_row or 1
    max_col, max_row = max_col or ws.max_column, max_row or ws.max_row
    max_col = min(max_col, ws.max_column)
    max_row = min(max_row, ws.max_row)
    shown = 0
    # only the cells the file holds, row by row: ``ws.cell`` would create every empty cell
    # of the range (a sheet with A1 and ZZ200000 is a 5 KB file and a memory bomb)
    held_values: dict[tuple[int, int], Any] = wv._cells
    for c in held_cells(ws, (min_row, min_col, max_row, max_col)):
        if c.value is None:
            continue
        if shown >= MAX_CELLS:
            lines.append(f"[more cells: ask for a smaller range than {cells or 'the sheet'}]")
            return _cap(lines)
        shown += 1
        vc = held_values.get((c.row, c.column))
        v = None if vc is None else vc.value
        text = f"{c.coordinate}: {v!r}"
        if isinstance(c.value, str) and c.value.startswith("="):
            text += f"  formula {c.value}"
        if c.number_format and c.number_format != "General":
            text += f"  format {c.number_format}"
        style = []
        if c.font is not None and c.font.b:
            style.append("bold")
        if c.fill is not None and c.fill.fgColor is not None and c.fill.fill_type:
            style.append(f"fill={c.fill.fgColor.rgb}")
        if style:
            text += "  " + ",".join(str(s) for s in style)
        lines.append(text)
    if shown == 0:
        lines.append("(no values in that range)")
    return _cap(lines)


def read_pptx(path: Path, *, first: int = 1, last: int | None = None) -> str:
    """Slides ``first``..``last`` (1-based): layout, and each shape's kind, position, text."""
    prs = load_pptx(path)
    slides = list(prs.slides)
    first = max(1, first)
    last = min(len(slides), last if last is not None else first + 9, first + 49)
    emu = 914400  # per inch
    lines = [
        f"{len(slides)} slide(s), {prs.slide_width / emu:.2f} x {prs.slide_height / emu:.2f} in"
    ]
    for n in range(first, last + 1):
        s = slides[n - 1]
        lines.append(f"slide {n} (layout {s.slide_layout.name!r}):")
        for shape in list(s.shapes)[:100]:
            pos = (
                f"at ({(shape.left or 0) / emu:.2f}, {(shape.top or 0) / emu:.2f}) in, "
                f"{(shape.width or 0) / emu:.2f} x {(shape.height or 0) / emu:.2f} in"
            )
            kind = str(shape.shape_type).split(".")[-1].split(" ")[0].lower()
            line = f"  - {shape.name!r} {kind} {pos}"
            if shape.has_text_frame:
                for para in shape.text_frame.paragraphs:
                    styles = [
                        f"«{r.text}»({_run_style(r)})"
                        for r in para.runs
                        if r.text and _run_style(r)
                    ]
                    text = "".join(r.text for r in para.runs)
                    if text:
                        line += f"\n      level {para.level}: {text}"
                        if styles:
                            line += "  runs: " + " ".join(styles)[:500]
            if getattr(shape, "has_table", False) and shape.has_table:
                for r, row in enumerate(shape.table.rows, 1):
                    line += f"\n      row {r}: " + " | ".join(c.text for c in row.cells)[:500]
            lines.append(line)
    return _cap(lines)
