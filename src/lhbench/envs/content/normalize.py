"""Normalise extracted Markdown so one line is one citable unit.

Extractors wrap lines at the page width (pdfplumber) or put a whole paragraph on one
line (trafilatura, python-docx); neither gives line numbers fine enough for
highlight-to-cite. After normalising: paragraphs are unwrapped (hyphenation at a line
end repaired) and split one sentence per line; headings, list items, table rows and
block-quote lines stay one per line; fenced code is kept verbatim; blocks are separated
by exactly one blank line. The result depends only on the input text, so a rerun of the
same extractor gives the same bytes.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["NORMALIZER_VERSION", "normalize_markdown", "split_sentences"]

NORMALIZER_VERSION = "1"

# A sentence ends at . ! or ? (optionally closed by a quote or bracket) followed by space
# and an upper-case letter, digit, quote or bracket. Common abbreviations do not end one.
_BOUNDARY = re.compile(r"(?<=[.!?])([\"'\u201d\u2019)\]]?)\s+(?=[A-Z0-9\"'\u201c\u2018(\[])")
_ABBREVIATIONS = (
    "e.g.",
    "i.e.",
    "etc.",
    "vs.",
    "cf.",
    "Dr.",
    "Mr.",
    "Mrs.",
    "Ms.",
    "Prof.",
    "Fig.",
    "No.",
    "approx.",
    "al.",
    "St.",
)
_LIST = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")


def split_sentences(text: str) -> list[str]:
    """A paragraph split into sentences (deterministic, regex-based)."""
    text = re.sub(r"\s+", " ", text).strip()
    if not text:
        return []
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        end = m.start() + len(m.group(1))
        head = text[start:end]
        if head.endswith(_ABBREVIATIONS) or re.search(r"\b[A-Z]\.$", head):
            continue  # an abbreviation or an initial, not a sentence end
        out.append(head.strip())
        start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


def _unwrap(lines: list[str]) -> str:
    """Lines of one paragraph joined with spaces, a hyphen at a line end repaired."""
    text = ""
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if text.endswith("-") and len(text) > 1 and text[-2].isalpha() and line[:1].islower():
            text = text[:-1] + line
        else:
            text = f"{text} {line}" if text else line
    return text


def _block_lines(block: list[str]) -> list[str]:
    first = block[0].lstrip()
    if first.startswith("#"):
        heading = [re.sub(r"\s+", " ", b.strip()) for b in block]
        return [heading[0]] + [s for b in heading[1:] for s in split_sentences(b)]
    if first.startswith("|"):
        return [b.rstrip() for b in block]
    if first.startswith(">"):
        body = _unwrap([b.lstrip()[1:] for b in block])
        return ["> " + s for s in split_sentences(body)]
    if _LIST.match(block[0]):
        items: list[list[str]] = []
        for b in block:
            if _LIST.match(b) or not items:
                items.append([b.strip()])
            else:
                items[-1].append(b)  # a wrapped list item continues
        return [re.sub(r"\s+", " ", _unwrap(i)) for i in items]
    return split_sentences(_unwrap(block))


def normalize_markdown(text: str) -> str:
    """Markdown with one sentence, heading, list item or table row per line (see module)."""
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = text.replace("\t", "    ").replace("\u00a0", " ").replace("\u00ad", "")
    text = "".join(ch for ch in text if ch == "\n" or unicodedata.category(ch)[0] != "C")
    blocks: list[list[str]] = []
    current: list[str] = []
    fence: list[str] | None = None
    for line in text.split("\n"):
        if fence is not None:
            fence.append(line.rstrip())
            if _FENCE.match(line):
                blocks.append(fence)
                fence = None
            continue
        if _FENCE.match(line):
            if current:
                blocks.append(current)
                current = []
            fence = [line.rstrip()]
            continue
        if not line.strip():
            if current:
                blocks.append(current)
                current = []
            continue
        # a heading, table or quote never shares a block with the paragraph around it
        kind = line.lstrip()[:1]
        if (
            current
            and (kind in "#|>" or current[0].lstrip()[:1] in "#|>")
            and (kind != current[0].lstrip()[:1] or kind == "#")
        ):
            blocks.append(current)
            current = []
        current.append(line)
    if fence is not None:
        blocks.append(fence)  # an unclosed fence keeps its text
    if current:
        blocks.append(current)
    out: list[str] = []
    for block in blocks:
        lines = block if _FENCE.match(block[0]) else _block_lines(block)
        if lines:
            if out:
                out.append("")
            out.extend(lines)
    return "\n".join(out) + "\n" if out else ""
