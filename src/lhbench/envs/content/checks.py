"""Programmatic checks of a course against its frozen sources and annotated chapters.

:func:`check_course` reads the workspace (see :mod:`lhbench.envs.content.course`), checks
every citation in the research notes and chapters (exists, in range, supported: see
:mod:`lhbench.envs.content.citations`), that every annotated chapter was written, the
coverage of each chapter's annotated spans, the per-scene timing of video chapters
(:mod:`lhbench.envs.content.scenes`), and (when given) the slide-fit results. A
finding names its check, the file and line, and the offending citation as written.

:meth:`CourseReport.grade` turns the report into a programmatic grade on the pack's
``content-checks`` rubric; :meth:`CourseReport.passed` is the verification label (no
finding). Coverage is a score, never a failure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lhbench.envs.content.citations import (
    ALIGN_MIN,
    QUOTE_MIN,
    RECALL_MIN,
    WORD_MIN,
    CitationCheck,
    Coverage,
    GtSpan,
    ParsedCitation,
    check_citation,
    coverage,
    parse_citations,
)
from lhbench.envs.content.course import (
    CHAPTERS_DIR,
    NOTES_FILE,
    GroundTruth,
    course_files,
    read_course_file,
)
from lhbench.envs.content.scenes import SCENE_CHECKS, SceneMedia, check_scenes
from lhbench.envs.content.sources import SourceSet
from lhbench.envs.levels import measured_grade, programmatic_identity, share_level
from lhbench.schema import Grade, JudgeIdentity, Rubric

__all__ = [
    "CHECKS_VERSION",
    "CHECK_NAMES",
    "CourseReport",
    "Finding",
    "SlideResult",
    "check_course",
    "checks_identity",
    "level",
]

CHECKS_VERSION = "content-checks/1"
CHECK_NAMES = (
    "syntax",
    "exists",
    "in_range",
    "supported",
    "chapter_present",
    "notes",
    "slide_fit",
    *SCENE_CHECKS,
)


level = share_level


def checks_identity() -> JudgeIdentity:
    """Who graded: these checks, at this version, with their thresholds."""
    return programmatic_identity(
        "content-checks",
        CHECKS_VERSION,
        {
            "quote_min": QUOTE_MIN,
            "align_min": ALIGN_MIN,
            "recall_min": RECALL_MIN,
            "word_min": WORD_MIN,
        },
    )


@dataclass(frozen=True)
class Finding:
    """One failed check: which, where, the offending text, and why."""

    check: str
    where: str
    evidence: str
    message: str

    def __str__(self) -> str:
        return f"{self.check} at {self.where}: {self.evidence} — {self.message}"


@dataclass(frozen=True)
class SlideResult:
    """One slide's fit at one viewport (from :mod:`lhbench.envs.content.slides`)."""

    deck: str
    index: int
    viewport: str
    fits: bool
    reasons: tuple[str, ...] = ()


@dataclass
class CourseReport:
    """Everything the checks found in one course."""

    citations: list[CitationCheck] = field(default_factory=list)
    coverage: list[Coverage] = field(default_factory=list)
    slides: list[SlideResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    chapters: list[str] = field(default_factory=list)
    scenes: int = 0

    def failed_checks(self) -> set[str]:
        """The names of the checks with at least one finding."""
        return {f.check for f in self.findings}

    def passed(self) -> bool:
        """The label: no finding at all."""
        return not self.findings

    def share(self, *checks: str) -> float | None:
        """Share of citations that failed none of ``checks`` (None without citations)."""
        pool = self.citations
        if not pool:
            return None
        return sum(1 for c in pool if c.failed not in checks) / len(pool)

    def support_share(self) -> float | None:
        """Share of resolvable citations whose claim is supported."""
        pool = [c for c in self.citations if c.failed in (None, "supported")]
        if not pool:
            return None
        return sum(1 for c in pool if c.failed is None) / len(pool)

    def coverage_share(self) -> float | None:
        """Mean span hit rate over the annotated chapters."""
        if not self.coverage:
            return None
        return sum(c.span_hit_rate for c in self.coverage) / len(self.coverage)

    def slide_share(self) -> float | None:
        """Share of slides that fit every viewport (None when no deck was checked)."""
        decks: dict[tuple[str, int], bool] = {}
        for s in self.slides:
            decks[(s.deck, s.index)] = decks.get((s.deck, s.index), True) and s.fits
        return sum(decks.values()) / len(decks) if decks else None

    def scene_share(self) -> float | None:
        """Share of video scenes with no timing finding (None without video chapters)."""
        if not self.scenes:
            return None
        timing = ("scene_render", "narration_fits", "tail_padding", "silent_gap")
        bad = {f.where for f in self.findings if f.check in timing}
        return max(0.0, (self.scenes - len(bad)) / self.scenes)

    def detail(self) -> str:
        """One paragraph for a label."""
        n = len(self.citations)
        bad = {k: sum(1 for f in self.findings if f.check == k) for k in CHECK_NAMES}
        head = (
            f"{n} citations; "
            + ", ".join(f"{k} failed {v}" for k, v in bad.items() if v)
            + ("" if any(bad.values()) else "every check passed")
        )
        cov = self.coverage_share()
        if cov is not None:
            head += f"; annotated-span hit rate {cov:.2f}"
        first = "; ".join(str(f) for f in self.findings[:3])
        return (head + (f". First: {first}" if first else ""))[:2000]

    def _evidence(self, *checks: str) -> str:
        lines = [str(f) for f in self.findings if f.check in checks]
        return "\n".join(lines[:20]) + (
            f"\n… and {len(lines) - 20} more" if len(lines) > 20 else ""
        )

    def dimension_values(self) -> dict[str, tuple[float | None, str]]:
        """Measured share and evidence for each dimension of the ``content-checks`` rubric."""
        validity = self.share("syntax", "exists", "in_range")
        if validity is None:
            validity_ev = "the course holds no citation"
            validity = 0.0
        else:
            validity_ev = (
                self._evidence("syntax", "exists", "in_range") or "every citation resolves"
            )
        cov_lines = [
            f"{c.chapter}: span hit {c.span_hit_rate:.2f}, line recall {c.line_recall:.2f}"
            + (f", missed {', '.join(c.missed[:5])}" if c.missed else "")
            for c in self.coverage
        ]
        return {
            "citation_validity": (validity, validity_ev),
            "claim_support": (
                self.support_share(),
                self._evidence("supported") or "every resolvable citation supports its claim",
            ),
            "source_coverage": (self.coverage_share(), "\n".join(cov_lines) or "no annotations"),
            "chapter_completeness": (
                (len(self.chapters) - sum(1 for f in self.findings if f.check == "chapter_present"))
                / len(self.chapters)
                if self.chapters
                else None,
                self._evidence("chapter_present") or "every annotated chapter was written",
            ),
            "slide_fit": (self.slide_share(), self._evidence("slide_fit") or "every slide fits"),
            "scene_timing": (
                self.scene_share(),
                self._evidence(*SCENE_CHECKS) or "every scene's narration fits it",
            ),
        }

    def grade(self, run_id: str, rubric: Rubric, *, repeat: int = 0) -> Grade:
        """The programmatic grade on ``rubric``'s output tier, the findings as evidence."""
        return measured_grade(
            run_id,
            rubric,
            self.dimension_values(),
            judge=checks_identity(),
            binary_cut=0.95,
            raw_output=json.dumps(self.as_dict()),
            repeat=repeat,
            unmeasured="not measured",
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON (``lhbench content check --json``)."""
        return {
            "passed": self.passed(),
            "detail": self.detail(),
            "failed_checks": sorted(self.failed_checks()),
            "findings": [f.__dict__ for f in self.findings],
            "citations": [c.as_dict() for c in self.citations],
            "coverage": [c.as_dict() for c in self.coverage],
            "slides": [s.__dict__ for s in self.slides],
        }


def _notes_text(root: Path, findings: list[Finding]) -> str:
    """The notes file's note texts, one per line in file order (bad lines as findings)."""
    raw = read_course_file(root, NOTES_FILE)
    if raw is None:
        return ""
    out: list[str] = []
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            out.append("")
            continue
        try:
            doc = json.loads(line)
            text = doc["text"] if isinstance(doc, dict) else None
            if not isinstance(text, str):
                raise ValueError("no 'text' string")
        except (ValueError, KeyError) as exc:
            findings.append(Finding("notes", f"{NOTES_FILE}:{n}", line[:120], f"unreadable: {exc}"))
            out.append("")
            continue
        out.append(" ".join(text.split()))
    return "\n".join(out)


def check_course(
    root: Path,
    sources: SourceSet,
    ground_truth: GroundTruth | None = None,
    *,
    slides: list[SlideResult] | None = None,
    media: Mapping[str, SceneMedia] | None = None,
) -> CourseReport:
    """Check the course in workspace ``root`` (see module). Never raises on agent output.

    ``media``: ffprobe measurements of rendered video scenes (``measure_scenes``).

    Raises:
        SourceError: a course file is a symlink, a special file or too large.
    """
    report = CourseReport(slides=list(slides or []))
    texts: list[tuple[str, str]] = []
    notes = _notes_text(root, report.findings)
    if notes:
        texts.append((NOTES_FILE, notes))
    chapter_files = course_files(root, CHAPTERS_DIR, ".md")
    for rel in chapter_files:
        text = read_course_file(root, rel)
        if text is not None:
            texts.append((rel, text))
    per_chapter: dict[str, list[ParsedCitation]] = {}
    for rel, text in texts:
        cites, malformed = parse_citations(text, rel)
        for line, raw in malformed:
            report.findings.append(
                Finding("syntax", f"{rel}:{line}", raw, "not a citation; write [source_id:L12-L15]")
            )
        for c in cites:
            res = check_citation(c, sources)
            report.citations.append(res)
            if res.failed is not None:
                report.findings.append(Finding(res.failed, c.where, c.raw, res.message))
        if rel.startswith(CHAPTERS_DIR + "/"):
            per_chapter[Path(rel).stem] = cites
    if ground_truth is not None:
        for ch in ground_truth.chapters:
            report.chapters.append(ch.id)
            rel = f"{CHAPTERS_DIR}/{ch.id}.md"
            if ch.id not in per_chapter:
                report.findings.append(
                    Finding(
                        "chapter_present", rel, ch.title, "the annotated chapter was not written"
                    )
                )
            gt = [GtSpan(s.source, s.start, s.end, s.quote) for s in ch.spans]
            report.coverage.append(coverage(ch.id, per_chapter.get(ch.id, []), gt, sources))
    scene_findings, report.scenes = check_scenes(root, media)
    report.findings += [Finding(f.check, f.where, "", f.message) for f in scene_findings]
    for s in report.slides:
        if not s.fits:
            report.findings.append(
                Finding(
                    "slide_fit",
                    f"{s.deck}#slide-{s.index + 1}@{s.viewport}",
                    "; ".join(s.reasons)[:300],
                    "the slide does not fit the viewport",
                )
            )
    return report
