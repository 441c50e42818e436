"""Generate the bundled ``content-mini`` pack (programmatic content, mini).

Run from the repository root: ``uv run python scripts/make_content_mini.py``.

It writes, for one topic (domestic heat pumps, every figure invented for this sample):

1. a data room of five sources written here: two PDFs (reportlab), a DOCX (python-docx),
   a PPTX with speaker notes (python-pptx) and an HTML page with navigation, sidebar and
   footer boilerplate; Office and PDF files are written with fixed timestamps so the
   bytes are the same on every run;
2. the frozen extraction (``lhbench content extract``'s code) into the task's
   ``initial/context/``;
3. the annotated chapters (``ground_truth/course/chapters.json``): each span is an exact
   sentence chosen below, its lines found in the extraction by quote anchoring, never
   typed in;
4. a reference course (research notes, chapter plan, chapter scripts with inline
   citations resolved the same way, one slide deck per chapter) that passes every check;
5. the task, its verify script, and the rubrics (the five generic ones on both scales,
   copied from ``lhbench-rubrics``, and ``content-checks`` for the programmatic grade).
"""

from __future__ import annotations

import html
import json
import shutil
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from lhbench.envs.content import anchor_quote, extract_data_room, load_sources  # noqa: E402

OUT = ROOT / "src/lhbench/packs/data/content-mini"
TASK = "course"
FIXED_ZIP_TIME = (2026, 11, 1, 0, 0, 0)

# -- the sources ---------------------------------------------------------------------------

PRIMER = {
    "title": "Heat Pumps: A Primer",
    "sections": [
        (
            "How a heat pump moves heat",
            [
                "A heat pump does not burn fuel to make heat. "
                "It moves heat that already exists in outdoor air, ground or water into a building. "
                "Even air at minus ten degrees Celsius still holds usable heat energy.",
                "The pump uses a small amount of electricity to drive a compressor. "
                "For every unit of electricity it uses, a typical air-source unit delivers "
                "between two and a half and four units of heat.",
            ],
        ),
        (
            "The refrigeration cycle",
            [
                "The cycle has four stages: evaporation, compression, condensation and expansion. "
                "In the evaporator, a cold refrigerant absorbs heat from outdoor air and boils into a gas. "
                "The compressor squeezes that gas, which raises its temperature to around 60 degrees Celsius. "
                "In the condenser, the hot gas gives its heat to the water of the heating circuit and turns back into a liquid. "
                "The expansion valve then drops the pressure so the refrigerant is cold again and the cycle repeats.",
            ],
        ),
        (
            "Measuring efficiency",
            [
                "The coefficient of performance, or COP, is the heat delivered divided by the electricity used at one moment. "
                "A COP of 3 means three kilowatt-hours of heat for each kilowatt-hour of electricity. "
                "The seasonal coefficient of performance, or SCOP, averages the COP over a whole heating season. "
                "SCOP is the better guide to running costs because outdoor temperatures change through the year.",
            ],
        ),
    ],
    "table": [
        ["Component", "Role in the cycle"],
        ["Evaporator", "absorbs heat from outside"],
        ["Compressor", "raises pressure and temperature"],
        ["Condenser", "releases heat to the home"],
        ["Expansion valve", "lowers pressure"],
    ],
}

TRIAL = {
    "title": "Northwind Field Trial 2025",
    "sections": [
        (
            "Summary",
            [
                "The Northwind trial monitored 48 homes with air-source heat pumps from October 2024 to April 2025. "
                "All figures in this report are invented for the lhbench sample pack. "
                "The median seasonal COP across all homes was 3.1.",
            ],
        ),
        (
            "Findings",
            [
                "Homes with a flow temperature of 45 degrees Celsius or lower reached a median SCOP of 3.5. "
                "Homes running at 55 degrees Celsius or higher reached a median SCOP of only 2.6. "
                "Six homes had undersized radiators, and all six needed a flow temperature above 55 degrees. "
                "In January, the coldest month of the trial, the median daily COP fell to 2.4.",
                "Occupants reported that rooms felt comfortable once the system ran steadily for long periods. "
                "Turning the heat pump off during the day and boosting it in the evening lowered efficiency in every home that tried it.",
            ],
        ),
    ],
    "table": [
        ["House type", "Homes", "Median SCOP"],
        ["Detached", "14", "2.9"],
        ["Semi-detached", "20", "3.2"],
        ["Terraced", "14", "3.3"],
    ],
}

GUIDE = {
    "title": "Installer Guide: Sizing and Siting",
    "sections": [
        (
            "Heat loss survey",
            [
                "Size the heat pump from a room-by-room heat loss calculation, never from the old boiler's rating.",
                "An oversized unit cycles on and off often, which wastes energy and shortens the compressor's life.",
            ],
            [
                "Measure every room and record its wall, window and floor areas.",
                "Use the design outdoor temperature for the site's region.",
                "Add the heat loss of all rooms to find the design heat load.",
            ],
        ),
        (
            "Emitters and flow temperature",
            [
                "Each radiator must deliver its room's heat loss at the chosen flow temperature.",
                "At a flow temperature of 45 degrees Celsius, a radiator gives roughly half the heat it gives at 70 degrees.",
            ],
            [],
        ),
        (
            "Siting the outdoor unit",
            [
                "Leave at least 30 centimetres of clear space behind the outdoor unit and one metre in front of it.",
                "Keep the unit away from bedroom windows because the fan and compressor make noise.",
            ],
            [],
        ),
    ],
    "table": [
        ["Flow temperature", "Radiator output vs 70 °C", "Typical action"],
        ["55 °C", "about 70%", "upgrade a few radiators"],
        ["45 °C", "about 50%", "upgrade most radiators"],
        ["35 °C", "about 30%", "underfloor heating"],
    ],
}

DECK = [
    ("Heat pumps for installers", [], None, ""),
    (
        "Why flow temperature matters",
        [
            "Lower flow temperature, higher efficiency",
            "Every 1 °C lower flow adds about 2.5% to COP",
            "Weather compensation adjusts flow to outdoor temperature",
        ],
        None,
        "Stress that weather compensation should stay switched on. "
        "Many poor results in the field come from a fixed high flow temperature set at commissioning.",
    ),
    (
        "Noise limits",
        [],
        [
            ["Distance to window", "Limit"],
            ["1 m", "42 dB(A)"],
            ["3 m", "37 dB(A)"],
        ],
        "Check the noise level at the nearest neighbour's window before choosing the site.",
    ),
]

FAQ_ARTICLE = [
    ("h1", "Refrigerants in domestic heat pumps"),
    (
        "p",
        "Most new domestic heat pumps use either R32 or R290 as their refrigerant. "
        "R290 is propane, a natural refrigerant with a global warming potential of 3. "
        "R32 has a global warming potential of 675, far lower than the older R410A.",
    ),
    ("h2", "Is propane safe in a heat pump?"),
    (
        "p",
        "A monobloc unit keeps all of the R290 inside the outdoor unit, so no refrigerant enters the house. "
        "Installers must still keep the unit away from drains and cellar openings where heavy propane could collect.",
    ),
    ("h2", "Which refrigerant allows higher temperatures?"),
    (
        "p",
        "R290 units can reach flow temperatures of 70 degrees Celsius, which helps in homes with small radiators. "
        "Running at such high temperatures still lowers the COP.",
    ),
]
FAQ_TABLE = [
    ["Refrigerant", "GWP", "Type"],
    ["R290", "3", "natural"],
    ["R32", "675", "HFC"],
    ["R410A", "2088", "HFC"],
]


def _pdf(path: Path, doc: dict[str, object]) -> None:
    from reportlab import rl_config

    rl_config.invariant = 1  # no creation date or random id: the same bytes every run
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

    styles = getSampleStyleSheet()
    flow: list[object] = [Paragraph(str(doc["title"]), styles["Title"]), Spacer(1, 12)]
    for heading, paras in doc["sections"]:  # type: ignore[attr-defined]
        flow.append(Paragraph(heading, styles["Heading2"]))
        for p in paras:
            flow += [Paragraph(p, styles["BodyText"]), Spacer(1, 6)]
    table = Table(doc["table"])
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.grey)]))
    flow += [Spacer(1, 12), table]
    SimpleDocTemplate(str(path), pagesize=A4, title=str(doc["title"]), author="lhbench").build(flow)


def _fix_zip(path: Path) -> None:
    """Rewrite an Office file with fixed entry times, so its bytes do not change per run."""
    with zipfile.ZipFile(path) as zf:
        entries = [(i.filename, zf.read(i)) for i in zf.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            info = zipfile.ZipInfo(name, FIXED_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)


def _docx(path: Path) -> None:
    import datetime as dt

    import docx

    d = docx.Document()
    when = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    d.core_properties.created = when
    d.core_properties.modified = when
    d.core_properties.author = "lhbench"
    d.add_heading(GUIDE["title"], level=0)
    for heading, paras, bullets in GUIDE["sections"]:  # type: ignore[misc]
        d.add_heading(heading, level=1)
        for p in paras:
            d.add_paragraph(p)
        for b in bullets:
            d.add_paragraph(b, style="List Bullet")
    rows = GUIDE["table"]
    t = d.add_table(rows=len(rows), cols=len(rows[0]))  # type: ignore[arg-type]
    for r, row in enumerate(rows):  # type: ignore[arg-type]
        for c, cell in enumerate(row):
            t.cell(r, c).text = cell
    d.save(str(path))
    _fix_zip(path)


def _pptx(path: Path) -> None:
    import datetime as dt

    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    when = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    deck.core_properties.created = when
    deck.core_properties.modified = when
    deck.core_properties.last_modified_by = "lhbench"
    deck.core_properties.author = "lhbench"
    for title, bullets, table, notes in DECK:
        if not bullets and table is None:
            slide = deck.slides.add_slide(deck.slide_layouts[0])
            slide.shapes.title.text = title
            slide.placeholders[1].text = "Field notes for installers"
        elif table is None:
            slide = deck.slides.add_slide(deck.slide_layouts[1])
            slide.shapes.title.text = title
            body = slide.placeholders[1].text_frame
            body.text = bullets[0]
            for b in bullets[1:]:
                body.add_paragraph().text = b
        else:
            slide = deck.slides.add_slide(deck.slide_layouts[5])
            slide.shapes.title.text = title
            shape = slide.shapes.add_table(
                len(table), len(table[0]), Inches(1), Inches(2), Inches(6), Inches(1.5)
            )
            for r, row in enumerate(table):
                for c, cell in enumerate(row):
                    shape.table.cell(r, c).text = cell
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    deck.save(str(path))
    _fix_zip(path)


def _html(path: Path) -> None:
    body = "\n".join(f"<{t}>{html.escape(x)}</{t}>" for t, x in FAQ_ARTICLE)
    rows = "".join(
        "<tr>"
        + "".join(f"<{'th' if i == 0 else 'td'}>{c}</{'th' if i == 0 else 'td'}>" for c in r)
        + "</tr>"
        for i, r in enumerate(FAQ_TABLE)
    )
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Refrigerants in domestic heat pumps</title></head>
<body>
<nav><a href="/">Home</a> | <a href="/faq">FAQ</a> | <a href="/contact">Contact us</a></nav>
<aside><h3>Popular questions</h3><ul><li><a href="/q/1">Do heat pumps work in winter?</a></li>
<li><a href="/q/2">How loud is a heat pump?</a></li></ul></aside>
<main><article>
{body}
<table>{rows}</table>
</article></main>
<footer>Copyright 2026 Example Heating Advice. All rights reserved. Cookie settings. Privacy policy.</footer>
</body></html>
"""
    path.write_text(page, encoding="utf-8")


def make_data_room(room: Path) -> None:
    """Write the five sources."""
    if room.exists():
        shutil.rmtree(room)
    room.mkdir(parents=True)
    _pdf(room / "heat-pump-primer.pdf", PRIMER)
    _pdf(room / "field-trial-2025.pdf", TRIAL)
    _docx(room / "installer-guide.docx")
    _pptx(room / "training-deck.pptx")
    _html(room / "refrigerant-faq.html")


# -- ground truth: annotated chapters (quotes; lines found by anchoring) --------------------

CHAPTERS = [
    {
        "id": "how-it-works",
        "title": "How a heat pump moves heat",
        "instruction": "Explain where a heat pump's heat comes from and walk through the four stages of the refrigeration cycle.",
        "design_notes": "One slide per stage of the cycle; keep the component table on its own slide.",
        "criteria": [
            "Names all four stages in the right order.",
            "Makes clear that heat is moved, not generated by burning fuel.",
        ],
        "spans": [
            (
                "heat-pump-primer",
                "It moves heat that already exists in outdoor air, ground or water into a building.",
            ),
            (
                "heat-pump-primer",
                "The cycle has four stages: evaporation, compression, condensation and expansion.",
            ),
            (
                "heat-pump-primer",
                "The compressor squeezes that gas, which raises its temperature to around 60 degrees Celsius.",
            ),
            (
                "heat-pump-primer",
                "The expansion valve then drops the pressure so the refrigerant is cold again and the cycle repeats.",
            ),
        ],
    },
    {
        "id": "efficiency",
        "title": "Measuring efficiency: COP and SCOP",
        "instruction": "Define COP and SCOP and show what the Northwind field trial found about flow temperature.",
        "design_notes": "Put the trial's two SCOP figures side by side.",
        "criteria": [
            "Defines COP as heat delivered over electricity used.",
            "Contrasts the SCOP at 45 °C and at 55 °C flow temperature.",
        ],
        "spans": [
            (
                "heat-pump-primer",
                "The coefficient of performance, or COP, is the heat delivered divided by the electricity used at one moment.",
            ),
            (
                "heat-pump-primer",
                "The seasonal coefficient of performance, or SCOP, averages the COP over a whole heating season.",
            ),
            (
                "field-trial-2025",
                "Homes with a flow temperature of 45 degrees Celsius or lower reached a median SCOP of 3.5.",
            ),
            (
                "field-trial-2025",
                "Homes running at 55 degrees Celsius or higher reached a median SCOP of only 2.6.",
            ),
            ("training-deck", "Every 1 °C lower flow adds about 2.5% to COP"),
        ],
    },
    {
        "id": "installation",
        "title": "Sizing, siting and refrigerants",
        "instruction": "Explain how to size a heat pump, what flow temperature means for radiators, where to put the outdoor unit, and how R290 and R32 compare.",
        "design_notes": "Use the installer guide's checklist as a numbered list.",
        "criteria": [
            "Sizes from a room-by-room heat loss calculation.",
            "Gives the global warming potential of R290 and R32.",
        ],
        "spans": [
            (
                "installer-guide",
                "Size the heat pump from a room-by-room heat loss calculation, never from the old boiler's rating.",
            ),
            (
                "installer-guide",
                "At a flow temperature of 45 degrees Celsius, a radiator gives roughly half the heat it gives at 70 degrees.",
            ),
            (
                "installer-guide",
                "Leave at least 30 centimetres of clear space behind the outdoor unit and one metre in front of it.",
            ),
            (
                "refrigerant-faq",
                "R290 is propane, a natural refrigerant with a global warming potential of 3.",
            ),
            (
                "refrigerant-faq",
                "R32 has a global warming potential of 675, far lower than the older R410A.",
            ),
        ],
    },
]

# -- the reference course: each claim and the sentence it cites ---------------------------

REFERENCE = {
    "how-it-works": [
        (
            "A heat pump moves heat that already exists in outdoor air, ground or water into a building.",
            "heat-pump-primer",
            "It moves heat that already exists in outdoor air, ground or water into a building.",
        ),
        (
            "Even air at minus ten degrees Celsius still holds usable heat energy.",
            "heat-pump-primer",
            "Even air at minus ten degrees Celsius still holds usable heat energy.",
        ),
        (
            "The cycle has four stages: evaporation, compression, condensation and expansion.",
            "heat-pump-primer",
            "The cycle has four stages: evaporation, compression, condensation and expansion.",
        ),
        (
            "The compressor squeezes the refrigerant gas and raises its temperature to around 60 degrees Celsius.",
            "heat-pump-primer",
            "The compressor squeezes that gas, which raises its temperature to around 60 degrees Celsius.",
        ),
        (
            "Finally the expansion valve drops the pressure, so the refrigerant is cold again and the cycle repeats.",
            "heat-pump-primer",
            "The expansion valve then drops the pressure so the refrigerant is cold again and the cycle repeats.",
        ),
    ],
    "efficiency": [
        (
            "The COP is the heat delivered divided by the electricity used at one moment.",
            "heat-pump-primer",
            "The coefficient of performance, or COP, is the heat delivered divided by the electricity used at one moment.",
        ),
        (
            "SCOP averages the COP over a whole heating season.",
            "heat-pump-primer",
            "The seasonal coefficient of performance, or SCOP, averages the COP over a whole heating season.",
        ),
        (
            "In the Northwind trial, homes at a flow temperature of 45 degrees Celsius or lower reached a median SCOP of 3.5.",
            "field-trial-2025",
            "Homes with a flow temperature of 45 degrees Celsius or lower reached a median SCOP of 3.5.",
        ),
        (
            "Homes running at 55 degrees Celsius or higher reached a median SCOP of only 2.6.",
            "field-trial-2025",
            "Homes running at 55 degrees Celsius or higher reached a median SCOP of only 2.6.",
        ),
        (
            'The training deck puts it simply: "every 1 °C lower flow adds about 2.5% to COP".',
            "training-deck",
            "Every 1 °C lower flow adds about 2.5% to COP",
        ),
    ],
    "installation": [
        (
            "Size the heat pump from a room-by-room heat loss calculation, never from the old boiler's rating.",
            "installer-guide",
            "Size the heat pump from a room-by-room heat loss calculation, never from the old boiler's rating.",
        ),
        (
            "At a flow temperature of 45 degrees Celsius a radiator gives roughly half the heat it gives at 70 degrees.",
            "installer-guide",
            "At a flow temperature of 45 degrees Celsius, a radiator gives roughly half the heat it gives at 70 degrees.",
        ),
        (
            "Leave at least 30 centimetres of clear space behind the outdoor unit and one metre in front of it.",
            "installer-guide",
            "Leave at least 30 centimetres of clear space behind the outdoor unit and one metre in front of it.",
        ),
        (
            "R290 is propane, a natural refrigerant with a global warming potential of 3.",
            "refrigerant-faq",
            "R290 is propane, a natural refrigerant with a global warming potential of 3.",
        ),
        (
            "R32 has a global warming potential of 675.",
            "refrigerant-faq",
            "R32 has a global warming potential of 675, far lower than the older R410A.",
        ),
    ],
}

SLIDE_CSS = """
html, body { margin: 0; padding: 0; background: #f4f1ea; font-family: 'DejaVu Sans', sans-serif; }
.slide { box-sizing: border-box; width: 100vw; height: 100vh; overflow: hidden; padding: 48px 64px;
         display: flex; flex-direction: column; gap: 18px; }
.slide h2 { font-size: 40px; margin: 0; color: #1d3557; }
.slide li { font-size: 26px; line-height: 1.35; color: #222; }
.slide .src { font-size: 16px; color: #555; }
"""


def _span_lines(sources: object, sid: str, quote: str) -> tuple[int, int]:
    found = anchor_quote(quote, sources.text(sid))  # type: ignore[attr-defined]
    if found is None or found[2] < 100:
        raise SystemExit(f"quote not found exactly in {sid}: {quote!r}")
    return found[0], found[1]


def write_pack() -> None:
    """Everything under ``OUT`` (the data room first, then what is made from it)."""
    make_data_room(OUT / "data_room")
    task_dir = OUT / "tasks" / TASK
    context = task_dir / "initial" / "context"
    if context.exists():
        shutil.rmtree(context)
    extract_data_room(OUT / "data_room", context)
    sources = load_sources(context)

    gt = {
        "course": "Heat pumps for installers",
        "global_notes": "Every figure must come from the data room; the trial figures are invented for this sample.",
        "chapters": [
            {
                **{k: v for k, v in ch.items() if k != "spans"},
                "spans": [
                    {"source": sid, "start": a, "end": b, "quote": q}
                    for sid, q in ch["spans"]  # type: ignore[union-attr]
                    for a, b in [_span_lines(sources, sid, q)]
                ],
            }
            for ch in CHAPTERS
        ],
    }
    gt_dir = OUT / "ground_truth" / TASK
    gt_dir.mkdir(parents=True, exist_ok=True)
    (gt_dir / "chapters.json").write_text(json.dumps(gt, indent=2, ensure_ascii=False) + "\n")

    ref = OUT / "reference" / TASK
    if ref.exists():
        shutil.rmtree(ref)
    (ref / "course/chapters").mkdir(parents=True)
    (ref / "course/slides").mkdir(parents=True)
    (ref / "research").mkdir(parents=True)
    plan = {
        "chapters": [
            {
                "id": ch["id"],
                "title": ch["title"],
                "goal": ch["instruction"],
                "format": "slides",
                "sources": sorted({s for s, _ in ch["spans"]}),
            }  # type: ignore[union-attr]
            for ch in CHAPTERS
        ]
    }
    (ref / "course/plan.json").write_text(json.dumps(plan, indent=2, ensure_ascii=False) + "\n")
    notes = []
    for ch in CHAPTERS:
        cid = str(ch["id"])
        lines = [f"# {ch['title']}", ""]
        items = []
        for claim, sid, quote in REFERENCE[cid]:
            a, b = _span_lines(sources, sid, quote)
            cite = f"[{sid}:L{a}-L{b}]" if a != b else f"[{sid}:L{a}]"
            lines.append(f"{claim} {cite}")
            items.append((claim, cite))
        (ref / f"course/chapters/{cid}.md").write_text("\n".join(lines) + "\n")
        claim, cite = items[0]
        notes.append({"id": f"n{len(notes) + 1}", "text": f"{claim} {cite}", "citations": [cite]})
        slides = [
            f'<section class="slide"><h2>{html.escape(str(ch["title"]))}</h2>'
            f'<p class="src">{html.escape(str(ch["instruction"]))}</p></section>'
        ]
        for i in range(0, len(items), 3):
            lis = "".join(f"<li>{html.escape(c)}</li>" for c, _ in items[i : i + 3])
            srcs = " ".join(html.escape(s) for _, s in items[i : i + 3])
            slides.append(
                f'<section class="slide"><h2>{html.escape(str(ch["title"]))}</h2>'
                f'<ul>{lis}</ul><p class="src">Sources: {srcs}</p></section>'
            )
        deck = (
            "<!doctype html><html><head><meta charset='utf-8'><style>"
            + SLIDE_CSS
            + "</style></head><body>\n"
            + "\n".join(slides)
            + "\n</body></html>\n"
        )
        (ref / f"course/slides/{cid}.html").write_text(deck)
    (ref / "research/notes.jsonl").write_text(
        "".join(json.dumps(n, ensure_ascii=False) + "\n" for n in notes)
    )


# -- the pack's files ------------------------------------------------------------------

PACK_YAML = """# Generated by scripts/make_content_mini.py; see README.md.
id: content-mini
version: "1.0"
environment: programmatic-content
description: >-
  One course task over a generated data room on domestic heat pumps (two PDFs, a DOCX,
  a PPTX with speaker notes, an HTML page), frozen as line-addressable Markdown, with
  three annotated chapters, a reference course that passes every check, the content
  tools over MCP, and the generic rubrics on both scales plus the programmatic checks.
mcp_servers:
  content:
    command: ['{python}', '-m', 'lhbench.tools.content_server', '--workspace', '{workspace}']
    env: {LHBENCH_IN_SANDBOX: "1"}
"""

INSTRUCTION = (
    "Turn the data room in context/ into a short course on domestic heat pumps for installers. "
    "Use the content tools: list_sources, read_source and search_sources to study the sources; "
    "record_note to keep research notes, each claim cited as [source_id:L12-L15] (the line numbers "
    "read_source shows); write_chapter_plan for the plan; write_chapter for each chapter's script. "
    "Write these chapters, with these ids:\n"
    + "".join(f"  - {c['id']}: {c['title']}. {c['instruction']}\n" for c in CHAPTERS)
    + "Every factual sentence in a chapter ends with its citation. Cite only lines that say what "
    "you claim; quote the source in double quotes when you use its words. Also write one HTML slide "
    'deck per chapter to course/slides/<chapter id>.html, one <section class="slide"> per slide, '
    "each slide fitting a 1280x720 viewport with text of at least 14 px."
)

CHECKS_RUBRIC = """# The course as the deterministic content checks score it (lhbench.envs.content.checks).
# Stored as a programmatic grade per run, beside the judges' generic rubrics, not blended.
id: content-checks
family: content-checks
version: "1.0"
title: Programmatic content, deterministic checks
author: expert
description: >-
  Citation validity (the source exists, the lines are in range), claim support (the cited
  lines back the claim: exact, fuzzy or paraphrase with every number present), coverage of
  the annotated spans per chapter, chapters written, and slides that fit the viewport.
tiers:
  - kind: output
    evidence_source: artifacts
    dimensions:
"""
_DIMS = [
    (
        "citation_validity",
        "Citation validity",
        0.25,
        "Citations whose source exists and whose lines are in range, over all citations.",
        "citations",
    ),
    (
        "claim_support",
        "Claim support",
        0.30,
        "Resolvable citations whose cited lines support the claim, over all resolvable citations.",
        "citations",
    ),
    (
        "source_coverage",
        "Annotated-source coverage",
        0.20,
        "Mean share of the expert-annotated spans each chapter cites.",
        "annotated spans",
    ),
    (
        "chapter_completeness",
        "Chapters written",
        0.05,
        "Annotated chapters with a chapter script, over all of them.",
        "chapters",
    ),
    (
        "slide_fit",
        "Slide fit",
        0.10,
        "Slides with no overflow, clipped text or text under the minimum size, over all slides.",
        "slides",
    ),
    (
        "scene_timing",
        "Scene timing",
        0.10,
        "Video scenes whose narration fits the scene, with a bounded tail and no long silence.",
        "scenes",
    ),
]


def _checks_rubric() -> str:
    out = CHECKS_RUBRIC
    for did, name, w, desc, what in _DIMS:
        out += f"""      - id: {did}
        name: {name}
        weight: {w}
        description: {desc}
        scale: 1-5
        anchors:
          1: Under 20% of the {what} pass.
          2: 20% to 50% pass.
          3: 50% to 75% pass.
          4: 75% to 95% pass.
          5: 95% or more pass.
"""
    return out


VERIFY = '''"""Label: every citation resolves and is supported, every annotated chapter written, slides not checked here."""
import argparse, json, sys
from pathlib import Path

from lhbench.envs.content import SourceError, check_course, load_ground_truth, load_sources

here = Path(__file__).resolve().parent
ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True)
root = Path(ap.parse_args().root)
sources = load_sources(here / "initial" / "context")
gt_file = here.parents[1] / "ground_truth" / here.name / "chapters.json"
gt = load_ground_truth(gt_file) if gt_file.is_file() else None
try:
    report = check_course(root, sources, gt)
except SourceError as exc:  # a symlinked, special or oversized course file: the agent's doing
    print(json.dumps({"detail": f"course file refused: {exc}"}))
    sys.exit(1)
note = "" if gt is not None else " (ground truth not readable: chapters and coverage unchecked)"
print(json.dumps({"detail": report.detail() + note}))
sys.exit(0 if report.passed() else 1)
'''

README = """# content-mini

A small programmatic-content pack made by lhbench (`scripts/make_content_mini.py`): one
course task over a data room on domestic heat pumps. Every source was written for this
pack and every figure in it is invented.

| path | what |
|---|---|
| `data_room/` | the sources: two PDFs (reportlab), a DOCX, a PPTX with speaker notes, an HTML page with nav/sidebar/footer boilerplate |
| `tasks/course/initial/context/` | the frozen extraction (`lhbench content extract data_room`): `<source_id>.md` and `sources.json` (sha256, extractor and version, line count); citations are line numbers in these files |
| `ground_truth/course/chapters.json` | three annotated chapters: instruction, design notes, criteria, and the highlighted spans (source, lines, exact quote) |
| `reference/course/` | a reference course (notes, plan, chapter scripts, slide decks) that passes every check |
| `tasks/course/verify.py` | the label: citations resolve and are supported, chapters written |
| `rubrics/content-generic-{5pt,3pt}.yaml` | the five generic rubrics on both scales (as in `lhbench-rubrics`) |
| `rubrics/content-checks.yaml` | the programmatic checks as a rubric (`lhbench content grade content-mini` stores one grade per run) |

How it was made: the spans were chosen as exact sentences of the sources and their line
numbers found in the extraction by quote anchoring; the reference course cites the same
lines, so its citations resolve by construction and the checks confirm they do. The
tests perturb copies of it (a fabricated source, an out-of-range span, a claim with a
changed figure, an overflowing slide) and check that exactly those checks fail.
"""


def write_pack_files() -> None:
    """pack.yaml, the task, its verify script, the rubrics, the README."""
    (OUT / "pack.yaml").write_text(PACK_YAML)
    (OUT / "README.md").write_text(README)
    rub = OUT / "rubrics"
    rub.mkdir(exist_ok=True)
    lib = ROOT / "src/lhbench/packs/data/lhbench-rubrics/rubrics"
    for name in ("content-generic-5pt.yaml", "content-generic-3pt.yaml"):
        shutil.copyfile(lib / name, rub / name)
    (rub / "content-checks.yaml").write_text(_checks_rubric())
    task_dir = OUT / "tasks" / TASK
    task = {
        "title": "A course on domestic heat pumps from a data room",
        "instruction": INSTRUCTION,
        "environment": {"initial_state": "initial", "mcp_servers": ["content"]},
        "ground_truth": [TASK],
        "rubrics": ["content-generic-5pt", "content-generic-3pt"],
        "tags": {"category": "course", "extra": {"chapters": len(CHAPTERS), "sources": 5}},
        "limits": {"wall_seconds": 3600, "tool_calls": 300},
        "arena": {"artifacts": ["course/**/*"]},
    }
    import yaml

    (task_dir / "task.yaml").write_text(
        yaml.safe_dump(task, sort_keys=False, allow_unicode=True, width=100)
    )
    (task_dir / "verify.py").write_text(VERIFY)
    (task_dir / "initial" / "README.md").write_text(
        "# Course workspace\n\ncontext/ holds the data room as line-numbered Markdown "
        "(sources.json lists it). Write research/notes.jsonl, course/plan.json, "
        "course/chapters/<id>.md and course/slides/<id>.html with the content tools.\n"
    )


if __name__ == "__main__":
    write_pack()
    write_pack_files()
    print(f"wrote {OUT.relative_to(ROOT)}")
