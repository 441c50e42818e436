"""Task checkers of the GUI domain: the final document compared with a golden file.

Written from the semantics OSWorld publishes for its office checkers (``compare_table``
with its rules, ``compare_docx_files`` and ``compare_pptx_files`` with their options), as
lhbench's own code. Each checker answers ``(passed, detail)``: the first difference found,
named by sheet/cell, paragraph or slide/shape, or what matched.

A task names its checkers in ``checker.json`` beside its ``verify.py``::

    {"document": "budget.xlsx", "golden": "golden/budget.xlsx", "conj": "and",
     "checks": [{"func": "compare_table", "options": {"rules": [...]}}]}

and its ``verify.py`` calls :func:`verify_main`, which follows lhbench's verify protocol
(``--root STATE``: exit 0 pass, 1 fail, last line ``{"detail": ...}``).
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lhbench.office.documents import DocumentError, held_cells, load_docx, load_pptx, load_xlsx

__all__ = [
    "CHECKERS",
    "CheckerSpec",
    "compare_docx_files",
    "compare_docx_formatting",
    "compare_docx_tables",
    "compare_pptx_files",
    "compare_table",
    "run_checkers",
    "verify_main",
]

Result = tuple[bool, str]


# -- Excel: compare_table --------------------------------------------------------------------
def _sheet(idx: Any, result: Any, expected: Any) -> tuple[Any, str]:
    """A rule's sheet reference: an int (result's n-th), ``RI<n>``/``RN<name>``, ``EI``/``EN``."""
    key: int | str
    if isinstance(idx, int) and not isinstance(idx, bool):
        book, key = result, idx
    elif isinstance(idx, str) and idx[:2] in ("RI", "RN", "EI", "EN"):
        book = result if idx[0] == "R" else expected
        key = int(idx[2:]) if idx[1] == "I" else idx[2:]
    else:
        raise ValueError(f"sheet reference {idx!r}: expected n, RI<n>, RN<name>, EI<n>, EN<name>")
    if book is None:
        raise ValueError(f"sheet reference {idx!r} names the golden file, which there is not")
    names = book.sheetnames
    if isinstance(key, int):
        if not 0 <= key < len(names):
            raise KeyError(f"sheet #{key} (there are {len(names)})")
        key = names[key]
    if key not in names:
        raise KeyError(f"sheet {key!r}")
    return book[key], str(key)


def _grid(ws: Any, precision: int) -> dict[str, Any]:
    out = {}
    for c in held_cells(ws):  # the agent's workbook: never every cell of its range
        v = c.value
        if v is None or v == "":
            continue
        if isinstance(v, float):
            v = round(v, precision)
            if v == int(v):
                v = int(v)
        out[c.coordinate] = v
    return out


def _cell_prop(cell: Any, prop: str) -> Any:
    if prop == "number_format":
        return cell.number_format
    if prop in ("bold", "font_bold"):
        return bool(cell.font.b)
    if prop in ("italic", "font_italic"):
        return bool(cell.font.i)
    if prop == "font_name":
        return cell.font.name
    if prop == "font_size":
        return cell.font.sz
    if prop == "fill_color":
        return cell.fill.fgColor.rgb if cell.fill.fill_type else None
    if prop == "horizontal_alignment":
        return cell.alignment.horizontal
    raise ValueError(f"cell property {prop!r} is not known")


def _match(method: str, actual: Any, ref: Any) -> bool:
    """OSWorld's rule matching for one value: eq, ne, approx:<tol>, contains, re, gt, lt."""
    if method == "eq":
        return bool(actual == ref)
    if method == "ne":
        return bool(actual != ref)
    if method.startswith("approx:"):
        try:
            return math.isclose(float(actual), float(ref), abs_tol=float(method[7:]))
        except (TypeError, ValueError):
            return False
    if method == "contains":
        return str(ref) in str(actual)
    if method == "re":
        return re.search(str(ref), str(actual)) is not None
    if method in ("gt", "lt", "ge", "le"):
        try:
            a, r = float(actual), float(ref)
        except (TypeError, ValueError):
            return False
        return {"gt": a > r, "lt": a < r, "ge": a >= r, "le": a <= r}[method]
    raise ValueError(f"match method {method!r} is not known")


def compare_table(result: Path, expected: Path | None, **options: Any) -> Result:
    """Workbooks compared by sequential rules (all must hold), as OSWorld's compare_table.

    Rules (``options["rules"]``): ``sheet_name`` (same sheet names in order);
    ``sheet_data`` (``sheet_idx0``, ``sheet_idx1``, ``precision`` = 4: the same values in
    every non-empty cell, floats rounded); ``check_cell`` (``sheet_idx``, ``coordinate``,
    ``props``: ``{"value"|"formula"|<style>: {"method", "ref"}}``); ``style``
    (``sheet_idx0``/``sheet_idx1``, ``props``: cell properties compared on every non-empty
    cell); ``freeze`` (the same frozen panes).
    """
    try:
        rf, rv = load_xlsx(result, formulas=True), load_xlsx(result, formulas=False)
        ef = load_xlsx(expected, formulas=True) if expected else None
        ev = load_xlsx(expected, formulas=False) if expected else None
    except DocumentError as exc:
        return False, str(exc)
    rules = options.get("rules") or []
    if not rules:
        raise ValueError("compare_table needs at least one rule")
    for n, r in enumerate(rules, 1):
        kind = r.get("type")
        try:
            if kind == "sheet_name":
                if ef is None or rf.sheetnames != ef.sheetnames:
                    return False, f"rule {n}: sheet names {rf.sheetnames} != {ef and ef.sheetnames}"
            elif kind == "sheet_data":
                prec = int(r.get("precision", 4))
                a, an = _sheet(r["sheet_idx0"], rv, ev)
                b, _ = _sheet(r["sheet_idx1"], rv, ev)
                ga, gb = _grid(a, prec), _grid(b, prec)
                if ga != gb:
                    diff = sorted(set(ga) ^ set(gb)) or sorted(k for k in ga if ga[k] != gb.get(k))
                    k = diff[0]
                    return False, (
                        f"rule {n}: {an}!{k} is {ga.get(k)!r}, expected {gb.get(k)!r} "
                        f"({len(diff)} cell(s) differ)"
                    )
            elif kind == "check_cell":
                ws, name = _sheet(r["sheet_idx"], rf, ef)
                wsv, _ = _sheet(r["sheet_idx"], rv, ev)
                coord = str(r["coordinate"])
                for prop, want in (r.get("props") or {}).items():
                    if prop == "value":
                        actual = wsv[coord].value
                    elif prop == "formula":
                        v = ws[coord].value
                        actual = v if isinstance(v, str) and v.startswith("=") else None
                    else:
                        actual = _cell_prop(ws[coord], prop)
                    if isinstance(actual, str) and prop == "formula":
                        actual = actual.replace(" ", "").upper()
                    if not _match(str(want.get("method", "eq")), actual, want.get("ref")):
                        return False, f"rule {n}: {name}!{coord} {prop} is {actual!r}, rule {want}"
            elif kind == "style":
                a, an = _sheet(r["sheet_idx0"], rf, ef)
                b, _ = _sheet(r["sheet_idx1"], rf, ef)
                for c in held_cells(b):
                    if c.value is None:
                        continue
                    for prop in r.get("props") or []:
                        x, y = _cell_prop(a[c.coordinate], prop), _cell_prop(c, prop)
                        if x != y:
                            return False, f"rule {n}: {an}!{c.coordinate} {prop} {x!r} != {y!r}"
            elif kind == "freeze":
                a, an = _sheet(r["sheet_idx0"], rf, ef)
                b, _ = _sheet(r["sheet_idx1"], rf, ef)
                if a.freeze_panes != b.freeze_panes:
                    return False, f"rule {n}: {an} frozen at {a.freeze_panes}, not {b.freeze_panes}"
            else:
                raise ValueError(f"rule type {kind!r} is not known")
        except KeyError as exc:
            return False, f"rule {n}: no {exc.args[0]}"
    return True, f"all {len(rules)} rule(s) hold"


# -- Word ------------------------------------------------------------------------------------
def _paragraphs(path: Path) -> list[str]:
    return [p.text for p in load_docx(path).paragraphs]


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def compare_docx_files(result: Path, expected: Path, **options: Any) -> Result:
    """Paragraph text compared, as OSWorld's compare_docx_files.

    Options: ``ignore_blanks`` (default on: whitespace runs collapse, the paragraphs are
    joined and compared whole), ``ignore_case``, ``ignore_order`` (paragraphs sorted),
    ``delete_empty_lines``, ``content_only``/``fuzzy_match`` (a similarity in 0..1 compared
    with ``threshold``, default 1.0). Without ``ignore_blanks``, the paragraph counts must
    agree and each paragraph must be equal.
    """
    try:
        a, b = _paragraphs(result), _paragraphs(expected)
    except DocumentError as exc:
        return False, str(exc)
    if options.get("ignore_order"):
        a, b = sorted(a), sorted(b)
    if options.get("delete_empty_lines"):
        a, b = [p for p in a if p.strip()], [p for p in b if p.strip()]
    lower = bool(options.get("ignore_case"))

    def case(s: str) -> str:
        return s.lower() if lower else s

    threshold = float(options.get("threshold", 1.0))
    fuzzy = bool(options.get("fuzzy_match") or options.get("content_only"))
    if options.get("ignore_blanks", True) or options.get("content_only"):
        ta = case(re.sub(r"\s+", " ", "\n".join(a)).strip())
        tb = case(re.sub(r"\s+", " ", "\n".join(b)).strip())
        if fuzzy:
            score = _ratio(ta, tb)
            return score >= threshold, f"text similarity {score:.3f} (threshold {threshold})"
        if ta != tb:
            at = next((i for i, (x, y) in enumerate(zip(ta, tb, strict=False)) if x != y), None)
            at = min(len(ta), len(tb)) if at is None else at
            return (
                False,
                f"text differs at character {at}: {ta[at : at + 40]!r} vs {tb[at : at + 40]!r}",
            )
        return True, "the text matches the golden file"
    if len(a) != len(b):
        return False, f"{len(a)} paragraph(s), the golden file has {len(b)}"
    if fuzzy:
        score = sum(_ratio(case(x), case(y)) for x, y in zip(a, b, strict=True)) / max(1, len(a))
        return score >= threshold, f"mean paragraph similarity {score:.3f} (threshold {threshold})"
    for n, (x, y) in enumerate(zip(a, b, strict=True), 1):
        if case(x) != case(y):
            return False, f"paragraph {n}: {x[:60]!r} vs {y[:60]!r}"
    return True, "every paragraph matches the golden file"


def compare_docx_tables(result: Path, expected: Path, **options: Any) -> Result:
    """The same tables: count, shape, and each cell's stripped text (OSWorld's semantics)."""
    try:
        ta, tb = load_docx(result).tables, load_docx(expected).tables
    except DocumentError as exc:
        return False, str(exc)
    if len(ta) != len(tb):
        return False, f"{len(ta)} table(s), the golden file has {len(tb)}"
    for t, (x, y) in enumerate(zip(ta, tb, strict=True), 1):
        if len(x.rows) != len(y.rows) or len(x.columns) != len(y.columns):
            return False, (
                f"table {t}: {len(x.rows)}x{len(x.columns)}, golden {len(y.rows)}x{len(y.columns)}"
            )
        for i in range(len(y.rows)):
            for j in range(len(y.columns)):
                if x.cell(i, j).text.strip() != y.cell(i, j).text.strip():
                    return False, f"table {t} cell ({i + 1},{j + 1}): {x.cell(i, j).text!r}"
    return True, f"{len(tb)} table(s) match"


def compare_docx_formatting(result: Path, expected: Path, **options: Any) -> Result:
    """Per paragraph: style name, alignment, and the bold/italic/underline of its text.

    Options ``examine_style``, ``examine_alignment``, ``examine_runs`` (default on). The
    paragraph counts must agree (empty paragraphs are skipped on both sides).
    """
    try:
        pa = [p for p in load_docx(result).paragraphs if p.text.strip()]
        pb = [p for p in load_docx(expected).paragraphs if p.text.strip()]
    except DocumentError as exc:
        return False, str(exc)
    if len(pa) != len(pb):
        return False, f"{len(pa)} non-empty paragraph(s), the golden file has {len(pb)}"

    def marks(p: Any) -> list[tuple[str, bool, bool, bool]]:
        return [(r.text, bool(r.bold), bool(r.italic), bool(r.underline)) for r in p.runs if r.text]

    def spans(p: Any) -> list[tuple[int, bool, bool, bool]]:
        # formatting per character, so run boundaries (an app splits runs freely) do not count
        return [(i, b, it, u) for t, b, it, u in marks(p) for i in range(len(t))]

    for n, (x, y) in enumerate(zip(pa, pb, strict=True), 1):
        if options.get("examine_style", True) and x.style.name != y.style.name:
            return False, f"paragraph {n}: style {x.style.name!r}, golden {y.style.name!r}"
        if options.get("examine_alignment", True):
            ax, ay = x.paragraph_format.alignment, y.paragraph_format.alignment
            if (ax or 0) != (ay or 0):
                return False, f"paragraph {n}: alignment {ax}, golden {ay}"
        if options.get("examine_runs", True):
            sx = [m[1:] for m in spans(x)]
            sy = [m[1:] for m in spans(y)]
            if sx != sy:
                return False, f"paragraph {n}: bold/italic/underline differ ({x.text[:40]!r})"
    return True, f"{len(pb)} paragraph(s) formatted as the golden file"


# -- PowerPoint ------------------------------------------------------------------------------
_PPTX_DEFAULTS = {
    "examine_number_of_slides": True,
    "examine_shape": True,
    "examine_text": True,
    "examine_font_name": True,
    "examine_font_size": True,
    "examine_font_bold": True,
    "examine_font_italic": True,
    "examine_color_rgb": True,
    "examine_font_underline": True,
    "examine_alignment": True,
}


def _color(font: Any) -> Any:
    try:
        return font.color.rgb if font.color is not None and font.color.type is not None else None
    except (AttributeError, ValueError):
        return None


def compare_pptx_files(result: Path, expected: Path, **options: Any) -> Result:
    """Presentations compared slide by slide, shape by shape, as OSWorld's compare_pptx_files.

    Options (each on unless set false): ``examine_number_of_slides``, ``examine_shape``
    (position and size, relative tolerance ``approximately_tolerance`` = 0.005),
    ``examine_text``, ``examine_font_name``/``_size``/``_bold``/``_italic``/``_underline``,
    ``examine_color_rgb``, ``examine_alignment``. Shapes pair up in order.
    """
    unknown = set(options) - set(_PPTX_DEFAULTS) - {"approximately_tolerance"}
    if unknown:
        raise ValueError(f"compare_pptx_files: unknown option(s) {sorted(unknown)}")
    opt = {**_PPTX_DEFAULTS, **options}
    tol = float(options.get("approximately_tolerance", 0.005))
    try:
        pa, pb = load_pptx(result), load_pptx(expected)
    except DocumentError as exc:
        return False, str(exc)
    sa, sb = list(pa.slides), list(pb.slides)
    if opt["examine_number_of_slides"] and len(sa) != len(sb):
        return False, f"{len(sa)} slide(s), the golden file has {len(sb)}"

    def close(x: int | None, y: int | None) -> bool:
        x, y = x or 0, y or 0
        return x == y or abs(x - y) <= tol * max(abs(x), abs(y))

    for s, (x, y) in enumerate(zip(sa, sb, strict=False), 1):
        shx, shy = list(x.shapes), list(y.shapes)
        if len(shx) != len(shy):
            return False, f"slide {s}: {len(shx)} shape(s), the golden file has {len(shy)}"
        for k, (a, b) in enumerate(zip(shx, shy, strict=True), 1):
            where = f"slide {s} shape {k} ({b.name!r})"
            if opt["examine_shape"] and not all(
                close(getattr(a, d), getattr(b, d)) for d in ("left", "top", "width", "height")
            ):
                return False, f"{where}: position/size differ"
            if a.has_text_frame != b.has_text_frame:
                return False, f"{where}: one has text, the other not"
            if not b.has_text_frame:
                continue
            if opt["examine_text"] and a.text_frame.text.strip() != b.text_frame.text.strip():
                return False, f"{where}: text {a.text_frame.text[:60]!r}"
            for p, (pa_, pb_) in enumerate(
                zip(a.text_frame.paragraphs, b.text_frame.paragraphs, strict=False), 1
            ):
                if opt["examine_alignment"] and (pa_.alignment or 0) != (pb_.alignment or 0):
                    return False, f"{where} paragraph {p}: alignment {pa_.alignment}"
                for ra, rb in zip(pa_.runs, pb_.runs, strict=False):
                    fa, fb = ra.font, rb.font
                    for key, va, vb in (
                        ("examine_font_name", fa.name, fb.name),
                        ("examine_font_size", fa.size, fb.size),
                        ("examine_font_bold", bool(fa.bold), bool(fb.bold)),
                        ("examine_font_italic", bool(fa.italic), bool(fb.italic)),
                        ("examine_font_underline", bool(fa.underline), bool(fb.underline)),
                        ("examine_color_rgb", _color(fa), _color(fb)),
                    ):
                        if opt[key] and va != vb:
                            what = key.removeprefix("examine_")
                            return False, f"{where} paragraph {p}: {what} {va!r}, golden {vb!r}"
    return True, f"{len(sb)} slide(s) match the golden file"


CHECKERS: dict[str, Callable[..., Result]] = {
    "compare_table": compare_table,
    "compare_docx_files": compare_docx_files,
    "compare_docx_tables": compare_docx_tables,
    "compare_docx_formatting": compare_docx_formatting,
    "compare_pptx_files": compare_pptx_files,
}


class CheckerSpec:
    """A task's ``checker.json``: the document to check, its golden file, the checks."""

    def __init__(self, task_dir: Path) -> None:
        path = task_dir / "checker.json"
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: {exc}") from exc
        if (
            not isinstance(doc, dict)
            or not isinstance(doc.get("checks"), list)
            or not isinstance(doc.get("document"), str)
        ):
            raise ValueError(f"{path}: expected {{document, golden, checks: [...]}}")
        self.document = str(doc["document"])
        golden = doc.get("golden")
        self.golden = (task_dir / golden).resolve() if golden else None
        if self.golden is not None and not self.golden.is_relative_to(task_dir.resolve()):
            raise ValueError(f"{path}: golden file {golden!r} is outside the task")
        self.conj = str(doc.get("conj", "and"))
        self.checks = doc["checks"]
        for c in self.checks:
            if c.get("func") not in CHECKERS:
                raise ValueError(f"{path}: checker {c.get('func')!r} is not known")


def run_checkers(spec: CheckerSpec, document: Path) -> Result:
    """Every check of the spec on ``document``; ``and`` (default) or ``or`` of the results."""
    results = [
        CHECKERS[c["func"]](document, spec.golden, **(c.get("options") or {})) for c in spec.checks
    ]
    ok = all(r[0] for r in results) if spec.conj == "and" else any(r[0] for r in results)
    detail = "; ".join(
        f"{c['func']}: {'ok' if r[0] else 'FAIL'} ({r[1]})"
        for c, r in zip(spec.checks, results, strict=True)
    )
    return ok, detail


def verify_main(task_dir: Path, argv: list[str] | None = None) -> int:
    """A GUI task's ``verify.py``: ``--root STATE``; exit 0 pass / 1 fail, a JSON detail line."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, required=True)
    args = ap.parse_args(argv)
    spec = CheckerSpec(Path(task_dir))
    suffix = Path(spec.document).suffix.lower()
    document = args.root / f"document{suffix}"
    if not document.is_file():
        print(json.dumps({"detail": f"no final document {spec.document!r} in the state"}))
        return 1
    ok, detail = run_checkers(spec, document)
    print(json.dumps({"detail": detail[:1500]}))
    sys.stdout.flush()
    return 0 if ok else 1
