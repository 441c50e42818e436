"""Line citations: one syntax, deterministic checks, ground-truth coverage, remapping.

A citation is ``[source_id:L12-L15]`` (or ``[source_id:L12]`` for one line; several in
one bracket separated by ``;``). Each is checked in order, and the first check it fails is
its only finding, so a fabricated citation fails *exists* and nothing else:

1. **exists**: the source id is one of the extraction's sources;
2. **in_range**: ``1 <= start <= end <= line count``;
3. **supported**: the claim the citation closes (the sentence before it) is backed by the
   cited lines: quoted text ("…", at least three words) must appear in the span, exactly
   or with ``rapidfuzz.fuzz.partial_ratio`` >= ``QUOTE_MIN``; otherwise the claim must be
   found in the span exactly; else every number in it must occur in the span, and the
   claim must align with the span (``partial_ratio_alignment`` >= ``ALIGN_MIN``) or
   paraphrase it (at least ``RECALL_MIN`` of its content words occur in the span, a
   word matching exactly or with ``fuzz.ratio`` >= ``WORD_MIN``).

The support test is a deterministic proxy for entailment; a judge may overrule it.

Coverage (per ground-truth chapter): with C the cited (source, line) pairs and G the
annotated ones, line recall |C∩G|/|G|, line precision |C∩G|/|C|, span hit rate (GT spans
sharing a line with C). A GT span whose quote no longer sits on its lines (a different
extraction) is first remapped by quote anchoring (:func:`anchor_quote`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any

from rapidfuzz import fuzz

from lhbench.envs.content.sources import SourceSet

__all__ = [
    "ALIGN_MIN",
    "CITATION",
    "QUOTE_MIN",
    "RECALL_MIN",
    "WORD_MIN",
    "CitationCheck",
    "Coverage",
    "GtSpan",
    "ParsedCitation",
    "anchor_quote",
    "check_citation",
    "coverage",
    "parse_citations",
    "support",
]

QUOTE_MIN = 90.0
ALIGN_MIN = 92.0
RECALL_MIN = 0.7
WORD_MIN = 85.0
MAX_CLAIM_CHARS = 2_000

_ONE = r"([a-z0-9][a-z0-9_.\-]{0,119}):L(\d{1,9})(?:-L?(\d{1,9}))?"
CITATION = re.compile(r"\[\s*(" + _ONE + r"(?:\s*;\s*" + _ONE + r")*)\s*\]")
_ONE_RE = re.compile(_ONE)
# Looks like a citation but does not parse: reported as syntax, never silently ignored.
_LOOSE = re.compile(r"\[\s*[A-Za-z0-9_.\-]{1,120}\s*:[^\[\]\n]{0,40}L\s*\d[^\[\]\n]{0,40}\]")
_QUOTE = re.compile(r"[\"\u201c]([^\"\u201c\u201d]{3,400})[\"\u201d]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_STOP_WORDS = """a an the and or but of to in on at by for with from as is are was were be been
being it its this that these those which who whom whose what when where why how than then so
such not no can could may might will would shall should do does did has have had into over
under about above below between per each every any all more most less least very also only
just there their they them our your you we he she his her one two"""
_STOP = frozenset(_STOP_WORDS.split())


@dataclass(frozen=True)
class ParsedCitation:
    """One citation as written: where, what it cites, and the claim it closes."""

    file: str
    line: int
    raw: str
    source_id: str
    start: int
    end: int
    claim: str

    @property
    def where(self) -> str:
        """``file:line`` of the citation."""
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class CitationCheck:
    """A citation's result: ``failed`` is the first check it failed (None: it passed)."""

    citation: ParsedCitation
    failed: str | None
    message: str
    method: str = ""
    score: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            **asdict(self.citation),
            **{k: v for k, v in asdict(self).items() if k != "citation"},
        }


def _plain(text: str) -> str:
    """Lower-case text with Markdown markers, curly quotes and extra space removed."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    text = text.replace("\u201d", '"').replace("\u2013", "-").replace("\u2014", "-")
    text = re.sub(r"[*_`#>|]+", " ", text)
    text = re.sub(r"^\s*(?:[-+]|\d{1,3}[.)])\s+", " ", text, flags=re.M)
    return re.sub(r"\s+", " ", text).strip()


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", _plain(text))


def _claim_before(text: str) -> str:
    """The last sentence of ``text`` (the claim a citation right after it closes)."""
    text = CITATION.sub(" ", text)
    text = re.sub(r"^\s*(?:#+|[-*+]|\d{1,3}[.)]|>)\s*", "", text)
    text = re.sub(r"^\s*(?:Notes|Narration|Claim)\s*:\s*", "", text, flags=re.I)
    parts = [p for p in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"\u201c(])", text.strip()) if p.strip()]
    while parts and len(_words(parts[-1])) == 0:
        parts.pop()
    return (parts[-1].strip() if parts else "")[:MAX_CLAIM_CHARS]


def parse_citations(text: str, file: str) -> tuple[list[ParsedCitation], list[tuple[int, str]]]:
    """Every citation in ``text``, and (line, text) of bracketed things that look like one.

    The claim of a citation is the sentence it follows, on its own line; a citation at
    the very start of a line closes the previous line's last sentence.
    """
    out: list[ParsedCitation] = []
    malformed: list[tuple[int, str]] = []
    previous = ""
    for n, line in enumerate(text.splitlines(), 1):
        last = 0
        for m in CITATION.finditer(line):
            before = line[last : m.start()]
            claim = _claim_before(before) or _claim_before(previous)
            for one in _ONE_RE.finditer(m.group(1)):
                start = int(one.group(2))
                end = int(one.group(3)) if one.group(3) else start
                out.append(ParsedCitation(file, n, m.group(0), one.group(1), start, end, claim))
            last = m.end()
        rest = CITATION.sub(" ", line)
        malformed += [(n, s.group(0)) for s in _LOOSE.finditer(rest)]
        if line.strip():
            previous = line
    return out, malformed


def support(claim: str, span: str) -> tuple[bool, str, float]:
    """Whether ``span`` backs ``claim`` (see module): (supported, method, score 0-100)."""
    quotes = [q for q in _QUOTE.findall(claim) if len(_words(q)) >= 3]
    pspan = _plain(span)
    if quotes:
        worst = 100.0
        for q in quotes:
            pq = _plain(q)
            score = 100.0 if pq in pspan else fuzz.partial_ratio(pq, pspan)
            worst = min(worst, score)
        method = "quote-exact" if worst == 100.0 else "quote-fuzzy"
        return worst >= QUOTE_MIN, method, worst
    pclaim = _plain(claim)
    if not pclaim:
        return False, "empty-claim", 0.0
    if pclaim.rstrip(".!?") in pspan:
        return True, "exact", 100.0
    numbers = set(_NUMBER.findall(pclaim))
    missing_numbers = sorted(numbers - set(_NUMBER.findall(pspan)))
    if missing_numbers:  # a figure the span does not hold is never supported, however close
        return False, "numbers", 0.0
    align = fuzz.partial_ratio_alignment(pclaim, pspan)
    if align is not None and align.score >= ALIGN_MIN and len(pclaim) <= len(pspan):
        return True, "fuzzy", float(align.score)
    claim_words = [w for w in dict.fromkeys(_words(claim)) if w not in _STOP and len(w) > 2]
    span_words = set(_words(span))
    if not claim_words:
        return False, "no-content-words", 0.0
    hits = 0
    for w in claim_words:
        if w in span_words or any(fuzz.ratio(w, s) >= WORD_MIN for s in span_words):
            hits += 1
    recall = hits / len(claim_words)
    return recall >= RECALL_MIN, "paraphrase", round(100.0 * recall, 1)


def check_citation(c: ParsedCitation, sources: SourceSet) -> CitationCheck:
    """The checks of one citation, in order; the first failure is its finding."""
    if c.source_id not in sources:
        known = ", ".join(sources.ids[:12])
        return CitationCheck(c, "exists", f"no source {c.source_id!r} (sources: {known})")
    n = sources.line_count(c.source_id)
    if not 1 <= c.start <= c.end <= n:
        return CitationCheck(
            c, "in_range", f"L{c.start}-L{c.end} is outside {c.source_id} (lines 1-{n})"
        )
    span = "\n".join(sources.span(c.source_id, c.start, c.end))
    ok, method, score = support(c.claim, span)
    if ok:
        return CitationCheck(c, None, "supported", method, score)
    return CitationCheck(
        c,
        "supported",
        f"claim {c.claim[:300]!r} is not supported by {c.source_id}:L{c.start}-L{c.end} "
        f"({span[:300]!r}; {method} {score:.0f})",
        method,
        score,
    )


@dataclass(frozen=True)
class GtSpan:
    """An annotated ground-truth span: source, lines and the exact text highlighted."""

    source: str
    start: int
    end: int
    quote: str = ""


def anchor_quote(quote: str, text: str) -> tuple[int, int, float] | None:
    """Where ``quote`` sits in ``text``: (start line, end line, score), by fuzzy alignment."""
    if not quote.strip() or not text:
        return None
    exact = text.find(quote)
    if exact >= 0:
        start, end, score = exact, exact + len(quote), 100.0
    else:
        al = fuzz.partial_ratio_alignment(quote, text)
        if al is None or al.score < QUOTE_MIN:
            return None
        start, end, score = al.dest_start, al.dest_end, float(al.score)
    first = text.count("\n", 0, start) + 1
    last = text.count("\n", 0, max(end - 1, start)) + 1
    return first, last, score


def remap_span(span: GtSpan, sources: SourceSet) -> GtSpan | None:
    """``span`` on this extraction: as is when its quote is on its lines, else re-anchored."""
    if span.source not in sources:
        return None
    here = "\n".join(sources.span(span.source, span.start, span.end))
    if not span.quote or _plain(span.quote) in _plain(here):
        return span if span.start <= span.end <= sources.line_count(span.source) else None
    found = anchor_quote(span.quote, sources.text(span.source))
    if found is None:
        return None
    return GtSpan(span.source, found[0], found[1], span.quote)


@dataclass
class Coverage:
    """How much of one chapter's annotated spans its citations cover."""

    chapter: str
    line_recall: float
    line_precision: float | None
    span_hit_rate: float
    spans: int
    cited_lines: int
    missed: list[str] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        return asdict(self)


def coverage(
    chapter: str, cited: list[ParsedCitation], gt: list[GtSpan], sources: SourceSet
) -> Coverage:
    """Line recall and precision and span hit rate of ``cited`` against ``gt`` (see module)."""
    c_lines = {
        (c.source_id, n)
        for c in cited
        if c.source_id in sources and c.end - c.start < 10_000
        for n in range(c.start, c.end + 1)
    }
    mapped: list[GtSpan] = []
    unmapped: list[str] = []
    for s in gt:
        m = remap_span(s, sources)
        if m is None:
            unmapped.append(f"{s.source}:L{s.start}-L{s.end}")
        else:
            mapped.append(m)
    g_lines = {(s.source, n) for s in mapped for n in range(s.start, s.end + 1)}
    both = c_lines & g_lines
    hits = [s for s in mapped if any((s.source, n) in c_lines for n in range(s.start, s.end + 1))]
    missed = [f"{s.source}:L{s.start}-L{s.end}" for s in mapped if s not in hits]
    return Coverage(
        chapter=chapter,
        line_recall=len(both) / len(g_lines) if g_lines else 0.0,
        line_precision=len(both) / len(c_lines) if c_lines else None,
        span_hit_rate=len(hits) / len(gt) if gt else 0.0,
        spans=len(gt),
        cited_lines=len(c_lines),
        missed=missed + unmapped,
        unmapped=unmapped,
    )
