"""A pack to annotate: the bundled content-mini, renamed, plus a hostile and a huge source.

``evil-notes`` carries markup in its title and lines (it must render inert); ``big-manual``
is a generated 10,000-line source (about 200 pages) with a heading every 250 lines.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from lhbench.annotate import AnnotationTarget, annotation_target

PACK_ID = "content-annot"
TASK = "course"
XSS_LINE = "<script>window.__xss='source'</script><img src=x onerror=window.__xss='img'>"
XSS_TITLE = "Evil <img src=x onerror=window.__xss='title'> notes"
BIG_LINES = 10_000


def big_manual() -> list[str]:
    lines = ["# Installer manual (generated)"]
    n = 1
    while len(lines) < BIG_LINES:
        if len(lines) % 250 == 0:
            lines.append(f"## Part {len(lines) // 250}")
        else:
            lines.append(f"Paragraph {n}: check the flow temperature at step {n} before moving on.")
            n += 1
    return lines


def make_pack(dest: Path) -> AnnotationTarget:
    """A copy of content-mini at ``dest`` with id ``content-annot`` and two extra sources."""
    from lhbench.packs import bundled_pack_dirs

    src = next(d for d in bundled_pack_dirs() if d.name == "content-mini")
    shutil.copytree(src, dest)
    manifest = dest / "pack.yaml"
    manifest.write_text(manifest.read_text().replace("id: content-mini", f"id: {PACK_ID}"))
    ctx = dest / "tasks" / TASK / "initial" / "context"
    index = json.loads((ctx / "sources.json").read_text())
    extra = {
        "evil-notes": (XSS_TITLE, ["# Notes <b>bold</b>", "", XSS_LINE, "Plain line."]),
        "big-manual": ("Installer manual", big_manual()),
    }
    for sid, (title, lines) in extra.items():
        text = "\n".join(lines) + "\n"
        (ctx / f"{sid}.md").write_text(text)
        index["sources"].append(
            {
                "extractor": {"name": "test", "normalizer_version": "1", "version": "0"},
                "id": sid,
                "lines": len(lines),
                "origin": f"{sid}.html",
                "sha256": hashlib.sha256(text.encode()).hexdigest(),
                "title": title,
            }
        )
    index["sources"].sort(key=lambda s: s["id"])
    (ctx / "sources.json").write_text(json.dumps(index, indent=2) + "\n")
    return annotation_target(dest, TASK)
