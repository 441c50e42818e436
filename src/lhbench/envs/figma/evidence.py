"""What the output judge sees of a Figma-to-code run: each frame's reference and capture.

The VLM output judge grades artifacts; without these it would see only the run's own
files. :func:`judge_artifacts` turns a :class:`~lhbench.envs.figma.checks.CheckReport`
into run artifacts, one pair per manifest frame (``figma-checks/<frame>/reference.png``,
the ground-truth frame, and ``figma-checks/<frame>/captured.png``, the built app's page,
both scaled to the same width) and ``figma-checks/findings.json``, the deterministic
findings (missing texts, colour outliers, route failures, blank or leaking frames) as
evidence. Stored with the run's artifacts, they reach the rubric judge's artifact
evidence unchanged, and the arena shows the captured frames with the reference beside.
"""

from __future__ import annotations

import hashlib
import io
import json
from typing import TYPE_CHECKING

from PIL import Image

from lhbench.schema import Artifact

if TYPE_CHECKING:
    from lhbench.envs.figma.checks import CheckReport

__all__ = ["EVIDENCE_WIDTH", "judge_artifacts"]

EVIDENCE_WIDTH = 640
_MAX_HEIGHT = 6000


def _png(path: str, width: int) -> bytes | None:
    try:
        with Image.open(path) as im:
            img = im.convert("RGB")
    except OSError:
        return None
    if img.width != width:
        h = max(1, round(img.height * width / img.width))
        img = img.resize((width, h), Image.Resampling.LANCZOS, reducing_gap=2.0)
    if img.height > _MAX_HEIGHT:
        img = img.crop((0, 0, width, _MAX_HEIGHT))
    buf = io.BytesIO()
    img.save(buf, "PNG", optimize=True)
    return buf.getvalue()


def _artifact(run_id: str, name: str, data: bytes, media_type: str) -> Artifact:
    return Artifact(
        run_id=run_id,
        name=name,
        media_type=media_type,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        content=data,
    )


def judge_artifacts(report: CheckReport, run_id: str) -> list[Artifact]:
    """Reference and captured frame per manifest frame, and the findings, as artifacts."""
    out: list[Artifact] = []
    findings = {
        "passed": report.passed(),
        "detail": report.detail(),
        "build": {"ok": report.build.ok, "reason": report.build.reason},
        "deploy_ok": report.deploy_ok,
        "frames": [],
    }
    for f in report.frames:
        d = f.as_dict()
        findings["frames"].append(  # type: ignore[attr-defined]
            {
                "name": f.name,
                "route": f.route,
                "url": f.url,
                "route_ok": f.route_ok,
                "blank": f.blank_reasons or False,
                "leak": f.leak_reasons or False,
                "errors": f.errors[:5],
                "scores": d["scores"],
                "findings": d["findings"],
            }
        )
        for kind, path in (("reference", f.gt_image), ("captured", f.screenshot)):
            data = _png(path, EVIDENCE_WIDTH) if path else None
            if data is not None:
                out.append(
                    _artifact(run_id, f"figma-checks/{f.slug}/{kind}.png", data, "image/png")
                )
    text = json.dumps(findings, indent=1, ensure_ascii=False).encode()
    out.append(_artifact(run_id, "figma-checks/findings.json", text, "application/json"))
    return out
