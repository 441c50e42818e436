"""A data room (PDF, DOCX, PPTX, HTML, Markdown) to line-addressable Markdown.

:func:`extract_data_room` writes ``<out>/<source_id>.md`` for every source and
``<out>/sources.json`` (id, origin, sha256, extractor name and version, normaliser
version, line count, title). Line numbers are the 1-based line index of the Markdown file;
they only mean something for one extraction, so a pack freezes both files. Output depends
only on the input bytes and the extractor versions: a rerun is byte-identical.

Extractors (all MIT or Apache-2.0): pdfplumber for PDF (headings from font size, tables
as pipe tables), python-docx and python-pptx walkers (speaker notes kept as ``> Notes:``),
trafilatura for HTML (boilerplate removed). Every file is size-checked before it is
parsed, and DOCX/PPTX archives are checked for decompression bombs.
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from lhbench.envs.content.errors import SourceError
from lhbench.envs.content.normalize import NORMALIZER_VERSION, normalize_markdown

__all__ = [
    "EXTRACTORS",
    "MAX_SOURCE_BYTES",
    "SOURCES_FILE",
    "ExtractedSource",
    "extract_data_room",
    "extract_file",
    "source_id_for",
]

SOURCES_FILE = "sources.json"
MAX_SOURCE_BYTES = 64 * 1024 * 1024
MAX_UNZIPPED_BYTES = 256 * 1024 * 1024
MAX_ZIP_ENTRIES = 20_000
MAX_PDF_PAGES = 2_000
_HEADING_RATIO = 1.15


@dataclass(frozen=True)
class ExtractedSource:
    """One source after extraction: its id, Markdown and provenance."""

    id: str
    origin: str
    sha256: str
    extractor: str
    extractor_version: str
    markdown: str
    title: str

    @property
    def lines(self) -> int:
        """How many lines the Markdown has (its citable range is 1..lines)."""
        return self.markdown.count("\n")

    def record(self) -> dict[str, Any]:
        """The entry in ``sources.json``."""
        return {
            "id": self.id,
            "origin": self.origin,
            "sha256": self.sha256,
            "extractor": {
                "name": self.extractor,
                "version": self.extractor_version,
                "normalizer_version": NORMALIZER_VERSION,
            },
            "lines": self.lines,
            "title": self.title,
        }


def source_id_for(path: Path) -> str:
    """A source id from a file name: lower case, runs of other characters as ``-``."""
    sid = re.sub(r"[^a-z0-9]+", "-", path.stem.lower()).strip("-")
    return sid or "source"


def _table_md(rows: list[list[str | None]]) -> list[str]:
    """A table as pipe rows (the first row as header), cells on one line each."""
    clean = [
        [re.sub(r"\s+", " ", c or "").strip().replace("|", "\\|") for c in row]
        for row in rows
        if row and any((c or "").strip() for c in row)
    ]
    if not clean:
        return []
    width = max(len(r) for r in clean)
    clean = [r + [""] * (width - len(r)) for r in clean]
    out = ["| " + " | ".join(clean[0]) + " |", "|" + "---|" * width]
    out += ["| " + " | ".join(r) + " |" for r in clean[1:]]
    return out


def _pdf(path: Path) -> str:
    import pdfplumber

    def outside(bboxes: list[tuple[float, float, float, float]]) -> Callable[[Any], bool]:
        def keep(obj: Any) -> bool:
            if obj.get("object_type") != "char":
                return True
            x, y = (obj["x0"] + obj["x1"]) / 2, (obj["top"] + obj["bottom"]) / 2
            return not any(b[0] <= x <= b[2] and b[1] <= y <= b[3] for b in bboxes)

        return keep

    # per page, top to bottom: ("table", 0, rows) or ("line", size, [text]), a gap flag
    items: list[tuple[str, float, list[str], bool]] = []
    with pdfplumber.open(path) as pdf:
        if len(pdf.pages) > MAX_PDF_PAGES:
            raise SourceError(path, f"{len(pdf.pages)} pages (at most {MAX_PDF_PAGES})")
        sizes = [round(c["size"], 1) for p in pdf.pages for c in p.chars]
        body = statistics.median(sizes) if sizes else 0.0
        for page in pdf.pages:
            tables = page.find_tables()
            boxes = [t.bbox for t in tables]
            placed: list[tuple[float, str, float, list[str]]] = [
                (t.bbox[1], "table", 0.0, _table_md(t.extract())) for t in tables
            ]
            text_page = page.filter(outside(boxes)) if boxes else page
            for line in text_page.extract_text_lines(return_chars=True):
                size = statistics.median(round(c["size"], 1) for c in line["chars"])
                placed.append((line["top"], "line", size, [line["text"]]))
            placed.sort(key=lambda i: (i[0], i[1]))
            prev_bottom: float | None = None
            for top, kind, size, lines in placed:
                gap = prev_bottom is None or top - prev_bottom > max(size, body) * 0.9
                items.append((kind, size, lines, gap))
                prev_bottom = top + (size or body)
    headings = sorted({s for k, s, _, _ in items if k == "line" and s > body * _HEADING_RATIO})
    level = {s: min(len(headings) - i, 3) for i, s in enumerate(headings)}
    out: list[str] = []
    for kind, size, lines, gap in items:
        if kind == "table":
            out += ["", *lines, ""]
        elif size in level:
            out += ["", "#" * level[size] + " " + lines[0].strip(), ""]
        else:
            out += ([""] if gap else []) + lines
    return "\n".join(out)


def _docx(path: Path) -> str:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    doc = docx.Document(str(path))
    out: list[str] = []
    for child in doc.element.body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            para = Paragraph(child, doc)
            text = para.text.strip()
            if not text:
                continue
            style = (para.style.name if para.style is not None else "") or ""
            if style == "Title":
                out += ["", "# " + text, ""]
            elif m := re.match(r"Heading (\d)", style):
                out += ["", "#" * min(int(m.group(1)) + 1, 6) + " " + text, ""]
            elif "List" in style:
                out.append(("1. " if "Number" in style else "- ") + text)
            else:
                out += ["", text, ""]
        elif tag == "tbl":
            table = Table(child, doc)
            out += ["", *_table_md([[c.text for c in r.cells] for r in table.rows]), ""]
    return "\n".join(out)


def _pptx(path: Path) -> str:
    from pptx import Presentation

    deck = Presentation(str(path))
    out: list[str] = []
    for n, slide in enumerate(deck.slides, 1):
        title_shape = slide.shapes.title
        title = title_shape.text_frame.text.strip() if title_shape is not None else ""
        out += ["", f"## Slide {n}: {title}" if title else f"## Slide {n}", ""]
        for shape in slide.shapes:
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            if shape.has_table:
                rows = [[c.text for c in r.cells] for r in shape.table.rows]
                out += ["", *_table_md(rows), ""]
            elif shape.has_text_frame:
                paras = [p for p in shape.text_frame.paragraphs if "".join(r.text for r in p.runs)]
                for p in paras:
                    out.append("- " + "".join(r.text for r in p.runs).strip())
                out.append("")
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            text = notes.text.strip() if notes is not None else ""
            if text:
                out += ["", "> Notes: " + re.sub(r"\s+", " ", text), ""]
    return "\n".join(out)


def _html(path: Path) -> str:
    import trafilatura

    text = path.read_bytes().decode("utf-8", errors="replace")
    md = trafilatura.extract(
        text,
        output_format="markdown",
        include_tables=True,
        include_formatting=True,
        include_comments=False,
        with_metadata=False,
        deduplicate=False,
    )
    if md is None:
        raise SourceError(path, "no main text found in the HTML page")
    title = re.search(r"<title[^>]*>(.*?)</title>", text, re.S | re.I)
    head = "# " + " ".join(title.group(1).split()) + "\n\n" if title else ""
    first = md.lstrip().split("\n", 1)[0]
    return md if first.startswith("# ") or not head else head + md


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


# suffix -> (extractor name, distribution whose version is recorded, converter)
EXTRACTORS: dict[str, tuple[str, str, Callable[[Path], str]]] = {
    ".pdf": ("pdfplumber", "pdfplumber", _pdf),
    ".docx": ("python-docx", "python-docx", _docx),
    ".pptx": ("python-pptx", "python-pptx", _pptx),
    ".html": ("trafilatura", "trafilatura", _html),
    ".htm": ("trafilatura", "trafilatura", _html),
    ".md": ("markdown", "lhbench", _text),
    ".txt": ("text", "lhbench", _text),
}


def _check_zip(path: Path) -> None:
    """Refuse a DOCX/PPTX that is not a zip or would inflate beyond the limits."""
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceError(path, f"not a valid Office file (zip): {exc}") from None
    if len(infos) > MAX_ZIP_ENTRIES:
        raise SourceError(path, f"{len(infos)} archive entries (at most {MAX_ZIP_ENTRIES})")
    total = sum(i.file_size for i in infos)
    if total > MAX_UNZIPPED_BYTES:
        raise SourceError(path, f"inflates to {total} bytes (at most {MAX_UNZIPPED_BYTES})")


def _title(markdown: str, fallback: str) -> str:
    for line in markdown.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()[:200]
    return fallback


def extract_file(path: Path, *, origin: str | None = None) -> ExtractedSource:
    """Extract one file; :class:`SourceError` naming it when it cannot be read."""
    suffix = path.suffix.lower()
    if suffix not in EXTRACTORS:
        raise SourceError(
            path, f"unsupported file type {suffix!r}; expected one of {', '.join(EXTRACTORS)}"
        )
    if path.is_symlink() or not path.is_file():
        raise SourceError(path, "not a regular file (symlinks are refused)")
    size = path.stat().st_size
    if size > MAX_SOURCE_BYTES:
        raise SourceError(path, f"{size} bytes (at most {MAX_SOURCE_BYTES})")
    name, dist, convert = EXTRACTORS[suffix]
    if suffix in (".docx", ".pptx"):
        _check_zip(path)
    data = path.read_bytes()
    try:
        raw = convert(path)
    except SourceError:
        raise
    except Exception as exc:  # a broken file is the user's to fix, named, never a traceback
        raise SourceError(path, f"{name} could not read it: {type(exc).__name__}: {exc}") from None
    markdown = normalize_markdown(raw)
    if not markdown.strip():
        raise SourceError(path, f"{name} found no text in it")
    return ExtractedSource(
        id=source_id_for(path),
        origin=origin or path.name,
        sha256=hashlib.sha256(data).hexdigest(),
        extractor=name,
        extractor_version=version(dist),
        markdown=markdown,
        title=_title(markdown, path.stem),
    )


def extract_data_room(data_room: Path, out: Path) -> list[ExtractedSource]:
    """Extract every file of ``data_room`` into ``out`` (see module); the sources, by id.

    Hidden files are skipped. Two files with the same source id, an unsupported file or
    one that cannot be read is a :class:`SourceError` naming it; nothing is written then.
    """
    if not data_room.is_dir():
        raise SourceError(data_room, "not a directory")
    files = sorted(
        p
        for p in data_room.rglob("*")
        if not any(part.startswith(".") for part in p.relative_to(data_room).parts)
        and (p.is_file() or p.is_symlink())
    )
    if not files:
        raise SourceError(data_room, "the data room holds no files")
    sources: dict[str, ExtractedSource] = {}
    for path in files:
        src = extract_file(path, origin=path.relative_to(data_room).as_posix())
        if src.id in sources:
            raise SourceError(
                path, f"source id {src.id!r} is also the id of {sources[src.id].origin}; rename one"
            )
        sources[src.id] = src
    out.mkdir(parents=True, exist_ok=True)
    for sid, src in sorted(sources.items()):
        (out / f"{sid}.md").write_bytes(src.markdown.encode("utf-8"))
    doc = {"sources": [sources[s].record() for s in sorted(sources)]}
    (out / SOURCES_FILE).write_bytes((json.dumps(doc, indent=2, sort_keys=True) + "\n").encode())
    return [sources[s] for s in sorted(sources)]
